package measure

import (
	"strings"
	"testing"
	"time"
)

// TestClickHouse compares the ClickHouse query with a text written by hand:
// the expectation spells out the definition (windows by intDiv of the Unix
// time, a client's busiest window, element ⌈p·N⌉ of the sorted rates) in
// ClickHouse functions. TestClickHouseLive runs it on a real server.
func TestClickHouse(t *testing.T) {
	got, err := ClickHouse(Table{Name: "web.access_log", Time: "ts", Key: "api_key"}, []time.Duration{time.Minute, time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := "-- ratelab: per-client request rates of `web`.`access_log`, keyed by `api_key`.\n" +
		"-- A client's rate: its most requests in one window of `seconds`, windows aligned to the Unix epoch.\n" +
		"-- Percentiles across clients by nearest rank: element ceil(p * N) of the sorted rates.\n" +
		"SELECT seconds AS window_seconds,\n" +
		"  count() AS clients,\n" +
		"  arrayElement(arraySort(groupArray(rate)), toUInt64(greatest(1, ceil(0.5 * count())))) AS p50,\n" +
		"  arrayElement(arraySort(groupArray(rate)), toUInt64(greatest(1, ceil(0.95 * count())))) AS p95,\n" +
		"  arrayElement(arraySort(groupArray(rate)), toUInt64(greatest(1, ceil(0.99 * count())))) AS p99,\n" +
		"  max(rate) AS max\n" +
		"FROM (\n" +
		"  -- per client: its busiest window\n" +
		"  SELECT seconds, client, max(n) AS rate\n" +
		"  FROM (\n" +
		"    -- per client and window: its requests\n" +
		"    SELECT seconds, toString(r.`api_key`) AS client, intDiv(toInt64(toUnixTimestamp(r.`ts`)), seconds) AS slot, count() AS n\n" +
		"    FROM `web`.`access_log` AS r\n" +
		"    ARRAY JOIN [1, 60] AS seconds\n" +
		"    WHERE r.`ts` IS NOT NULL AND r.`api_key` IS NOT NULL AND client NOT IN ('', '-')\n" +
		"    GROUP BY seconds, client, slot\n" +
		"  )\n" +
		"  GROUP BY seconds, client\n" +
		")\n" +
		"GROUP BY seconds\n" +
		"ORDER BY seconds\n"
	if got != want {
		t.Errorf("ClickHouse query:\n%s\nwant:\n%s", got, want)
	}

	got, err = ClickHouse(Table{Name: "t", Time: "unix_time", Key: "ip", TimeIsEpoch: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"intDiv(toInt64(floor(r.`unix_time`)), seconds)", "FROM `t` AS r", "toString(r.`ip`)"} {
		if !strings.Contains(got, w) {
			t.Errorf("epoch query lacks %q:\n%s", w, got)
		}
	}
}

func TestPostgreSQLText(t *testing.T) {
	got, err := PostgreSQL(Table{Name: "Requests", Time: "at", Key: "client_ip", TimeIsEpoch: true}, []time.Duration{5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`WITH windows (seconds) AS (VALUES (5)),`,
		`floor(r."at"::numeric / w.seconds) AS slot`,
		`FROM "Requests" AS r CROSS JOIN windows AS w`,
		`r."client_ip"::text NOT IN ('', '-')`,
		`percentile_disc(0.99) WITHIN GROUP (ORDER BY rate) AS p99,`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("query lacks %q:\n%s", w, got)
		}
	}
}

// TestDuckDBText checks the parts of DuckDB's query that differ from
// PostgreSQL's; conformance/duckdb runs it on a real DuckDB.
func TestDuckDBText(t *testing.T) {
	tests := []struct {
		name  string
		table Table
		want  []string
	}{
		{"timestamp", Table{Name: "logs.Requests", Time: "ts", Key: "api_key"}, []string{
			`WITH windows (seconds) AS (VALUES (1), (60)),`,
			`floor(epoch(r."ts") / w.seconds) AS slot`,
			`FROM "logs"."Requests" AS r CROSS JOIN windows AS w`,
			`CAST(r."api_key" AS VARCHAR) NOT IN ('', '-')`,
			`list_sort(list(rate))[CAST(ceil(CAST(0.95 AS DOUBLE) * count(*)) AS BIGINT)] AS p95,`,
		}},
		{"epoch", Table{Name: "t", Time: "at", Key: "ip", TimeIsEpoch: true}, []string{
			`floor(CAST(r."at" AS DOUBLE) / w.seconds) AS slot`,
		}},
		// A Parquet glob is a string literal; its quote is doubled, so the
		// literal ends where read_parquet's argument does.
		{"parquet", Table{Parquet: "logs/o'brien-*.parquet", Time: "ts", Key: "api_key"}, []string{
			`-- ratelab: per-client request rates of read_parquet('logs/o''brien-*.parquet'), keyed by "api_key".`,
			`FROM read_parquet('logs/o''brien-*.parquet') AS r CROSS JOIN windows AS w`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DuckDB(tt.table, []time.Duration{time.Minute, time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("query lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestSQLNames checks that names that could break out of their quotes, or
// are not plain identifiers, are refused by every dialect.
func TestSQLNames(t *testing.T) {
	tests := []struct {
		name  string
		table Table
		want  string
	}{
		{"quote in table", Table{Name: `t"; DROP TABLE x; --`, Time: "ts", Key: "k"}, "table"},
		{"backtick in key", Table{Name: "t", Time: "ts", Key: "k`x"}, "key column"},
		{"space in time", Table{Name: "t", Time: "my ts", Key: "k"}, "time column"},
		{"three parts", Table{Name: "a.b.c", Time: "ts", Key: "k"}, `table "a.b.c": want table or schema.table`},
		{"empty part", Table{Name: "a.", Time: "ts", Key: "k"}, "table"},
		{"leading digit", Table{Name: "1t", Time: "ts", Key: "k"}, "table"},
		{"too long", Table{Name: strings.Repeat("t", 64), Time: "ts", Key: "k"}, "table"},
		{"empty key", Table{Name: "t", Time: "ts"}, "key column"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for dialect, f := range map[string]func(Table, []time.Duration) (string, error){"postgres": PostgreSQL, "clickhouse": ClickHouse, "duckdb": DuckDB} {
				q, err := f(tt.table, nil)
				if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
					t.Errorf("%s: err = %v, want one starting %q; query:\n%s", dialect, err, tt.want, q)
				}
			}
		})
	}
	if _, err := PostgreSQL(Table{Name: "t", Time: "ts", Key: "k"}, []time.Duration{time.Millisecond}); err == nil {
		t.Error("a 1 ms window: no error")
	}
	if _, err := ClickHouse(Table{Name: "_t9", Time: "T_1", Key: "k"}, []time.Duration{time.Hour}); err != nil {
		t.Errorf("valid names: %v", err)
	}
}

// TestParquetRefused: Parquet files are DuckDB's alone, never beside a
// table, and never with a character that could end the query's comment
// line or hide in the path.
func TestParquetRefused(t *testing.T) {
	ok := Table{Parquet: "requests.parquet", Time: "ts", Key: "k"}
	for dialect, f := range map[string]func(Table, []time.Duration) (string, error){"postgres": PostgreSQL, "clickhouse": ClickHouse} {
		if q, err := f(ok, nil); err == nil || !strings.Contains(err.Error(), "-sql duckdb") {
			t.Errorf("%s: err = %v, want Parquet refused for DuckDB's query; query:\n%s", dialect, err, q)
		}
	}
	tests := []struct {
		name  string
		table Table
		want  string
	}{
		{"and a table", Table{Name: "t", Parquet: "a.parquet", Time: "ts", Key: "k"}, `table "t" and Parquet files "a.parquet": want one of them`},
		{"newline", Table{Parquet: "a.parquet\n; DROP TABLE x; --", Time: "ts", Key: "k"}, "parquet files"},
		{"carriage return", Table{Parquet: "a\r.parquet", Time: "ts", Key: "k"}, "parquet files"},
		{"NUL", Table{Parquet: "a\x00.parquet", Time: "ts", Key: "k"}, "parquet files"},
		{"not UTF-8", Table{Parquet: "a\xff.parquet", Time: "ts", Key: "k"}, "parquet files"},
		{"too long", Table{Parquet: strings.Repeat("a", maxParquetPath+1), Time: "ts", Key: "k"}, "parquet files"},
		{"bad column", Table{Parquet: "a.parquet", Time: "t s", Key: "k"}, "time column"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := DuckDB(tt.table, nil)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err = %v, want one starting %q; query:\n%s", err, tt.want, q)
			}
		})
	}
	if _, err := DuckDB(Table{Parquet: strings.Repeat("a", maxParquetPath), Time: "ts", Key: "k"}, nil); err != nil {
		t.Errorf("a path of %d bytes: %v", maxParquetPath, err)
	}
}

// FuzzDuckDBParquet: whatever Parquet path DuckDB's query accepts stays
// inside its string literal, its quotes doubled: the query has as many
// lines as for a plain path (no line break ends the comment the path is
// quoted in), and with the literal taken out it is the plain path's
// query, byte for byte.
func FuzzDuckDBParquet(f *testing.F) {
	for _, p := range []string{"requests.parquet", "logs/*.parquet", "o'brien.parquet", "a'); DROP TABLE x; --", "''", "a\nb", "\u2028", "s3://bucket/k=v/*.parquet"} {
		f.Add(p)
	}
	plain, err := DuckDB(Table{Parquet: "x", Time: "ts", Key: "k"}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string) {
		q, err := DuckDB(Table{Parquet: path, Time: "ts", Key: "k"}, nil)
		if err != nil {
			return
		}
		if n, want := strings.Count(q, "\n"), strings.Count(plain, "\n"); n != want || strings.ContainsRune(q, '\r') {
			t.Fatalf("Parquet path %q: the query has %d lines, a plain path's %d (or a carriage return):\n%s", path, n, want, q)
		}
		lit := "read_parquet('" + strings.ReplaceAll(path, "'", "''") + "')"
		if got := strings.ReplaceAll(q, lit, "read_parquet('x')"); got != plain {
			t.Fatalf("Parquet path %q: with its literal taken out the query differs from a plain path's:\n%s", path, q)
		}
	})
}
