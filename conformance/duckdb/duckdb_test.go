package duckdb

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/measure"
)

// windows are the windows measure's live SQL tests measure.
var windows = []time.Duration{time.Second, 10 * time.Second, time.Minute}

// fixture runs measure's TestSQLFixture (at most 5 minutes, compiling
// included) to write the generated requests into a temporary directory,
// and returns it.
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command, to run measure's TestSQLFixture: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "test", "-count=1", "-run", "^TestSQLFixture$", "./measure")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "RATELAB_SQL_FIXTURE_OUT="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test -run TestSQLFixture ./measure: %v\n%s", err, out)
	}
	for _, f := range []string{"access.log", "rows.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("TestSQLFixture wrote no %s: %v", f, err)
		}
	}
	return dir
}

// rows runs query and returns its rows with the columns joined by commas.
func rows(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rs, err := db.Query(query)
	if err != nil {
		t.Fatalf("%v\nquery:\n%s", err, query)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		s := make([]string, len(vals))
		for i, v := range vals {
			s[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(s, ","))
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%v\nquery:\n%s", err, query)
	}
	return out
}

func exec1(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%v\nquery:\n%s", err, query)
	}
}

// TestDuckDB loads the generated requests into an in-memory DuckDB, as
// tables and as Parquet files DuckDB writes, and checks that
// measure.DuckDB's query gives the numbers measure.Measure reads from the
// same requests as a log.
func TestDuckDB(t *testing.T) {
	dir := fixture(t)
	log, err := os.ReadFile(filepath.Join(dir, "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := measure.Measure(context.Background(), bytes.NewReader(log), accesslog.Config{Key: accesslog.Key{Kind: accesslog.KeyHeader, Name: "X-API-Key"}}, measure.Options{Windows: windows})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, w := range res.Windows {
		if w.Late != 0 {
			t.Errorf("window %v: %d late requests; the generator keeps within 3 windows", w.Window, w.Late)
		}
		want = append(want, fmt.Sprintf("%d,%d,%d,%d,%d,%d", w.Seconds, res.Clients, w.P50, w.P95, w.P99, w.Max))
	}
	if w := res.Windows[0]; !(w.P50 < w.P95 && w.P95 < w.P99 && w.P99 < w.Max) {
		t.Errorf("1 s window %+v: want p50 < p95 < p99 < max, a generator that spreads clients", w)
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one in-memory database, one connection
	if v := rows(t, db, "SELECT version()"); len(v) == 1 {
		t.Logf("DuckDB %s", v[0])
	}
	// A schema and a capitalised table, the times as TIMESTAMP (UTC), and
	// rows with NULL keys, which the log cannot have.
	exec1(t, db, `CREATE SCHEMA logs`)
	exec1(t, db, `CREATE TABLE logs."Requests" (ts TIMESTAMP, api_key VARCHAR)`)
	exec1(t, db, `INSERT INTO logs."Requests" SELECT * FROM read_csv(?, header = false, columns = {'ts': 'TIMESTAMP', 'api_key': 'VARCHAR'})`, filepath.Join(dir, "rows.csv"))
	exec1(t, db, `INSERT INTO logs."Requests" SELECT TIMESTAMP '2024-06-01 12:00:00' + to_seconds(i % 3), NULL FROM range(50) AS s(i)`)
	if got := rows(t, db, `SELECT count(*), count(api_key) FROM logs."Requests"`); !slices.Equal(got, []string{"40050,40000"}) {
		t.Fatalf("table has (rows, keys) %v, want 40050,40000", got)
	}
	exec1(t, db, `CREATE TABLE tz AS SELECT timezone('UTC', ts) AS ts, api_key FROM logs."Requests"`)
	exec1(t, db, `CREATE TABLE epoch AS SELECT epoch(ts) + 0.75 AS at, api_key AS "Key" FROM logs."Requests"`)
	// The same requests as an access log kept in Parquet: two files of
	// one glob, in a directory whose name has a quote (the literal's
	// quote doubled), one file of epoch seconds.
	pq := filepath.Join(t.TempDir(), "o'brien")
	if err := os.Mkdir(pq, 0o755); err != nil {
		t.Fatal(err)
	}
	lit := strings.ReplaceAll(pq, "'", "''")
	exec1(t, db, `COPY (SELECT * FROM logs."Requests" WHERE api_key IS NULL OR api_key < 'm') TO '`+lit+`/part-1.parquet' (FORMAT parquet)`)
	exec1(t, db, `COPY (SELECT * FROM logs."Requests" WHERE api_key >= 'm') TO '`+lit+`/part-2.parquet' (FORMAT parquet)`)
	exec1(t, db, `COPY epoch TO '`+lit+`/epoch.parquet' (FORMAT parquet)`)
	if got := rows(t, db, `SELECT count(*) FROM read_parquet('`+lit+`/part-*.parquet')`); !slices.Equal(got, []string{"40050"}) {
		t.Fatalf("the Parquet files hold %v rows, want 40050", got)
	}

	tests := []struct {
		name  string
		table measure.Table
	}{
		{"timestamp", measure.Table{Name: "logs.Requests", Time: "ts", Key: "api_key"}},
		{"timestamptz", measure.Table{Name: "tz", Time: "ts", Key: "api_key"}},
		{"epoch seconds", measure.Table{Name: "epoch", Time: "at", Key: "Key", TimeIsEpoch: true}},
		{"parquet glob", measure.Table{Parquet: filepath.Join(pq, "part-*.parquet"), Time: "ts", Key: "api_key"}},
		{"parquet epoch seconds", measure.Table{Parquet: filepath.Join(pq, "epoch.parquet"), Time: "at", Key: "Key", TimeIsEpoch: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := measure.DuckDB(tt.table, windows)
			if err != nil {
				t.Fatal(err)
			}
			got := rows(t, db, q)
			t.Logf("window_seconds,clients,p50,p95,p99,max: DuckDB %v, Measure %v", got, want)
			if !slices.Equal(got, want) {
				t.Errorf("DuckDB (window_seconds,clients,p50,p95,p99,max):\n got %v\nwant %v (Measure)\nquery:\n%s", got, want, q)
			}
		})
	}
	if got := rows(t, db, `SELECT typeof(ts) FROM tz LIMIT 1`); !slices.Equal(got, []string{"TIMESTAMP WITH TIME ZONE"}) {
		t.Errorf("tz.ts is %v, want TIMESTAMP WITH TIME ZONE", got)
	}

	// Why the query sorts a list rather than call quantile_disc: of 1…100,
	// quantile_disc's 0.07 quantile is 7, float64's nearest rank (Measure's,
	// PostgreSQL's) 8; and p as a DOUBLE gives float64's rank, where the
	// DECIMAL literal gives 7.
	seq := make([]int64, 100)
	for i := range seq {
		seq[i] = int64(i + 1)
	}
	if got := rows(t, db, `SELECT quantile_disc(x, 0.07) FROM range(1, 101) AS s(x)`); !slices.Equal(got, []string{"7"}) || measure.Percentile(seq, 0.07) != 8 {
		t.Errorf("quantile_disc(0.07) of 1…100 = %v, Percentile = %d; the doc of measure.DuckDB says 7 and 8", got, measure.Percentile(seq, 0.07))
	}
	if got := rows(t, db, `SELECT ceil(CAST(0.07 AS DOUBLE) * 100), ceil(0.07 * 100)`); !slices.Equal(got, []string{"8,7"}) {
		t.Errorf("ceil of 0.07·100 as DOUBLE and as DECIMAL = %v, want 8,7", got)
	}
}
