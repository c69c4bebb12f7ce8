// Package duckdb proves measure.DuckDB's query on a real DuckDB, in a
// module of its own so that the main module does not depend on the DuckDB
// driver (github.com/duckdb/duckdb-go/v2, which uses cgo and links the
// DuckDB library its bindings ship as Go modules).
//
// What it proves: the 40 000 generated requests that measure's
// PostgreSQL and ClickHouse tests load (written by measure's
// TestSQLFixture, which this test runs with go test in the main module),
// loaded into an in-memory DuckDB, give with measure.DuckDB's query the
// clients, p50, p95, p99 and max per window (1 s, 10 s, 1 min) that
// measure.Measure reads from the same requests as a log: with times as
// TIMESTAMP, TIMESTAMPTZ and fractional Unix seconds, and with NULL keys,
// which must not count as clients. It also pins why the query does not use
// quantile_disc: DuckDB's rounds the rank exactly, not as float64 does.
//
// Run it with
//
//	(cd conformance/duckdb && go test ./...)
//
// It needs a C compiler (cgo) and the go command, which it runs.
package duckdb
