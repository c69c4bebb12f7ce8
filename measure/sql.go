package measure

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Table names a warehouse table with one row per request, and the columns
// to measure. Names are validated (letters, digits and underscores, not
// starting with a digit, at most 63 bytes; the table may be qualified as
// schema.table or database.table) and always quoted, so they are matched
// exactly as written, case included: PostgreSQL folds unquoted names to
// lower case when a table is created, so give them in lower case unless
// they were created quoted.
//
// With DuckDB the rows may come from Parquet files instead of a table:
// Parquet names a file, or a glob of them, that the query reads with
// read_parquet (as a string literal, its quotes doubled; control
// characters are refused, at most 4096 bytes), and Name stays empty.
type Table struct {
	Name    string // the table, "requests" or "schema.requests"
	Parquet string // DuckDB: the Parquet file or glob to read instead of a table
	Time    string // the request time: a timestamp column, or Unix seconds with TimeIsEpoch
	Key     string // the client key; cast to text, NULL, '' and '-' mean no client
	// TimeIsEpoch says Time holds Unix seconds (a number, fractions
	// allowed) rather than a timestamp.
	TimeIsEpoch bool
}

// The SQL's result has one row per window, shortest first, with columns
//
//	window_seconds, clients, p50, p95, p99, max
//
// computed as the package doc defines them: a client's rate is its most
// requests in one window of window_seconds aligned to the Unix epoch (UTC;
// a PostgreSQL timestamp without time zone is taken as UTC), and the
// percentiles are across clients by nearest rank, ⌈p·N⌉ in float64. On the
// same requests they equal Result.Windows' Clients, P50, P95, P99 and Max
// (Late aside: SQL has no reading order, so it counts every request).

// PostgreSQL returns a query that measures t in PostgreSQL (12 or later),
// using percentile_disc, which is nearest rank.
func PostgreSQL(t Table, windows []time.Duration) (string, error) {
	if t.Parquet != "" {
		return "", errParquet
	}
	return standardSQL(t, windows, sqlDialect{
		slot:      "floor(extract(epoch FROM r.%s) / w.seconds)",
		epochSlot: "floor(r.%s::numeric / w.seconds)",
		text:      "r.%s::text",
		rank:      "by nearest rank (percentile_disc)",
		quantile:  "percentile_disc(%s) WITHIN GROUP (ORDER BY rate)",
	})
}

// ClickHouse returns a query that measures t in ClickHouse (its live test
// runs it on 18.16, Debian 12's version). It sorts each window's rates into an array and
// takes element ⌈p·N⌉ (1-based), which is nearest rank; ClickHouse's
// quantileExactLow is not, since it takes 0-based element ⌊p·N⌋ (for 100
// clients, p99 would be the 100th rate, not the 99th). It is written for
// 18.16, which has no WITH name AS (subquery), so the steps are nested
// subqueries, and where a NULL key passes the NOT IN of the empty string
// and "-" (its test saw it counted as a client), so the key has its own
// IS NOT NULL.
func ClickHouse(t Table, windows []time.Duration) (string, error) {
	if t.Parquet != "" {
		return "", errParquet
	}
	q, err := t.quoted('`')
	if err != nil {
		return "", err
	}
	secs, err := windowSeconds(windows)
	if err != nil {
		return "", err
	}
	list := make([]string, len(secs))
	for i, s := range secs {
		list[i] = strconv.FormatInt(s, 10)
	}
	slot := fmt.Sprintf("intDiv(toInt64(toUnixTimestamp(r.%s)), seconds)", q.time)
	if t.TimeIsEpoch {
		slot = fmt.Sprintf("intDiv(toInt64(floor(r.%s)), seconds)", q.time)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- ratelab: per-client request rates of %s, keyed by %s.\n", q.name, q.key)
	b.WriteString("-- A client's rate: its most requests in one window of `seconds`, windows aligned to the Unix epoch.\n")
	b.WriteString("-- Percentiles across clients by nearest rank: element ceil(p * N) of the sorted rates.\n")
	b.WriteString("SELECT seconds AS window_seconds,\n")
	b.WriteString("  count() AS clients,\n")
	for _, p := range percentiles {
		fmt.Fprintf(&b, "  arrayElement(arraySort(groupArray(rate)), toUInt64(greatest(1, ceil(%s * count())))) AS %s,\n", p.level, p.name)
	}
	b.WriteString("  max(rate) AS max\n")
	b.WriteString("FROM (\n")
	b.WriteString("  -- per client: its busiest window\n")
	b.WriteString("  SELECT seconds, client, max(n) AS rate\n")
	b.WriteString("  FROM (\n")
	b.WriteString("    -- per client and window: its requests\n")
	fmt.Fprintf(&b, "    SELECT seconds, toString(r.%s) AS client, %s AS slot, count() AS n\n", q.key, slot)
	fmt.Fprintf(&b, "    FROM %s AS r\n", q.name)
	fmt.Fprintf(&b, "    ARRAY JOIN [%s] AS seconds\n", strings.Join(list, ", "))
	fmt.Fprintf(&b, "    WHERE r.%s IS NOT NULL AND r.%s IS NOT NULL AND client NOT IN ('', '-')\n", q.time, q.key)
	b.WriteString("    GROUP BY seconds, client, slot\n")
	b.WriteString("  )\n")
	b.WriteString("  GROUP BY seconds, client\n")
	b.WriteString(")\n")
	b.WriteString("GROUP BY seconds\n")
	b.WriteString("ORDER BY seconds\n")
	return b.String(), nil
}

// DuckDB returns a query that measures t in DuckDB (its live test, in
// conformance/duckdb, runs it on the version that module's driver
// bundles). DuckDB matches quoted names case-insensitively, unlike
// PostgreSQL and ClickHouse. A timestamp's Unix seconds are epoch(), which
// takes a TIMESTAMP as UTC. Its quantile_disc is nearest rank computed
// without float64's rounding (of 1…100, its 0.07 quantile is 7, where
// ⌈0.07·100⌉ in float64 is 8, as in Percentile and PostgreSQL's
// percentile_disc), so the query sorts each window's rates into a list and
// takes element ⌈p·N⌉ (1-based) with p a DOUBLE: as a DECIMAL literal,
// 0.07·100 would be exactly 7 too. With t.Parquet it reads Parquet files
// (read_parquet) instead of a table.
func DuckDB(t Table, windows []time.Duration) (string, error) {
	return standardSQL(t, windows, sqlDialect{
		slot:      "floor(epoch(r.%s) / w.seconds)",
		epochSlot: "floor(CAST(r.%s AS DOUBLE) / w.seconds)",
		text:      "CAST(r.%s AS VARCHAR)",
		rank:      "by nearest rank: element ceil(p * N) of the sorted rates",
		quantile:  "list_sort(list(rate))[CAST(ceil(CAST(%s AS DOUBLE) * count(*)) AS BIGINT)]",
	})
}

// sqlDialect is what PostgreSQL's and DuckDB's queries write differently;
// each is a format taking one quoted name (the time or key column) or, for
// quantile, the percentile's level.
type sqlDialect struct {
	slot, epochSlot string // the request's window slot, from a timestamp or Unix seconds
	text            string // the key as text
	rank            string // how the percentiles are taken, for the header comment
	quantile        string // one percentile of rate in a GROUP BY seconds
}

// standardSQL writes the query both dialects share: the windows as VALUES,
// each client's most requests in one window, then per window the clients,
// the percentiles and the maximum.
func standardSQL(t Table, windows []time.Duration, d sqlDialect) (string, error) {
	q, err := t.quoted('"')
	if err != nil {
		return "", err
	}
	secs, err := windowSeconds(windows)
	if err != nil {
		return "", err
	}
	values := make([]string, len(secs))
	for i, s := range secs {
		values[i] = "(" + strconv.FormatInt(s, 10) + ")"
	}
	slot := fmt.Sprintf(d.slot, q.time)
	if t.TimeIsEpoch {
		slot = fmt.Sprintf(d.epochSlot, q.time)
	}
	key := fmt.Sprintf(d.text, q.key)
	var b strings.Builder
	fmt.Fprintf(&b, "-- ratelab: per-client request rates of %s, keyed by %s.\n", q.name, q.key)
	b.WriteString("-- A client's rate: its most requests in one window of `seconds`, windows aligned to the Unix epoch.\n")
	fmt.Fprintf(&b, "-- Percentiles across clients %s.\n", d.rank)
	fmt.Fprintf(&b, "WITH windows (seconds) AS (VALUES %s),\n", strings.Join(values, ", "))
	b.WriteString("per_window AS (\n")
	fmt.Fprintf(&b, "  SELECT w.seconds, %s AS client, %s AS slot, count(*) AS n\n", key, slot)
	fmt.Fprintf(&b, "  FROM %s AS r CROSS JOIN windows AS w\n", q.name)
	fmt.Fprintf(&b, "  WHERE r.%s IS NOT NULL AND r.%s IS NOT NULL AND %s NOT IN ('', '-')\n", q.time, q.key, key)
	b.WriteString("  GROUP BY 1, 2, 3\n")
	b.WriteString("),\n")
	b.WriteString("per_client AS (\n")
	b.WriteString("  SELECT seconds, client, max(n) AS rate FROM per_window GROUP BY 1, 2\n")
	b.WriteString(")\n")
	b.WriteString("SELECT seconds AS window_seconds,\n")
	b.WriteString("  count(*) AS clients,\n")
	for _, p := range percentiles {
		fmt.Fprintf(&b, "  "+d.quantile+" AS %s,\n", p.level, p.name)
	}
	b.WriteString("  max(rate) AS max\n")
	b.WriteString("FROM per_client\n")
	b.WriteString("GROUP BY seconds\n")
	b.WriteString("ORDER BY seconds;\n")
	return b.String(), nil
}

var percentiles = []struct{ level, name string }{{"0.5", "p50"}, {"0.95", "p95"}, {"0.99", "p99"}}

// errParquet refuses Parquet files to a dialect that does not read them.
var errParquet = errors.New("only the DuckDB query (-sql duckdb) reads Parquet files")

// maxParquetPath bounds Table.Parquet.
const maxParquetPath = 4096

type quotedTable struct{ name, time, key string }

func (t Table) quoted(quote byte) (quotedTable, error) {
	var q quotedTable
	if t.Parquet != "" {
		if t.Name != "" {
			return q, fmt.Errorf("table %q and Parquet files %q: want one of them", t.Name, t.Parquet)
		}
		if len(t.Parquet) > maxParquetPath || !utf8.ValidString(t.Parquet) || strings.ContainsFunc(t.Parquet, unicode.IsControl) {
			return q, fmt.Errorf("parquet files %q: want a path or glob of at most %d bytes of UTF-8 without control characters", t.Parquet, maxParquetPath)
		}
		q.name = "read_parquet('" + strings.ReplaceAll(t.Parquet, "'", "''") + "')"
		return q, t.quoteColumns(quote, &q)
	}
	parts := strings.Split(t.Name, ".")
	if len(parts) > 2 {
		return q, fmt.Errorf("table %q: want table or schema.table", t.Name)
	}
	for i, p := range parts {
		if err := checkIdent("table", t.Name, p); err != nil {
			return q, err
		}
		parts[i] = string(quote) + p + string(quote)
	}
	q.name = strings.Join(parts, ".")
	return q, t.quoteColumns(quote, &q)
}

// quoteColumns checks and quotes t's time and key columns into q.
func (t Table) quoteColumns(quote byte, q *quotedTable) error {
	for _, c := range []struct {
		field, name string
		dst         *string
	}{{"time column", t.Time, &q.time}, {"key column", t.Key, &q.key}} {
		if err := checkIdent(c.field, c.name, c.name); err != nil {
			return err
		}
		*c.dst = string(quote) + c.name + string(quote)
	}
	return nil
}

// checkIdent accepts [A-Za-z_][A-Za-z0-9_]{0,62}: such a name needs no
// escaping inside quotes in either dialect.
func checkIdent(field, whole, id string) error {
	ok := len(id) >= 1 && len(id) <= 63
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9'
	}
	if !ok {
		return fmt.Errorf("%s %q: want letters, digits and underscores, not starting with a digit, 1 to 63 bytes", field, whole)
	}
	return nil
}

func windowSeconds(windows []time.Duration) ([]int64, error) {
	if windows == nil {
		windows = DefaultWindows
	}
	ws := slices.Clone(windows)
	slices.Sort(ws)
	ws = slices.Compact(ws)
	if len(ws) == 0 || len(ws) > maxWindows {
		return nil, fmt.Errorf("windows: %d given, want 1 to %d", len(ws), maxWindows)
	}
	secs := make([]int64, len(ws))
	for i, w := range ws {
		if w < time.Second || w > maxWindow || w%time.Second != 0 {
			return nil, fmt.Errorf("window %v: want whole seconds from 1s to 24h", w)
		}
		secs[i] = int64(w / time.Second)
	}
	return secs, nil
}
