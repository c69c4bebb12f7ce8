package measure

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// knownLog: client i of 5 (key k<i>) sends i requests in second 0 and i
// more in second 30 of one minute, so its busiest second has i requests and
// its minute 2i. Across 5 clients nearest rank gives p50 = rank ⌈2.5⌉ = 3,
// p95 = rank ⌈4.75⌉ = 5, p99 = rank ⌈4.95⌉ = 5: per second 3, 5, 5 and per
// minute 6, 10, 10. One bad line and one keyless line.
func knownLog() string {
	var b strings.Builder
	for _, s := range []int{0, 30} {
		for i := 1; i <= 5; i++ {
			for n := range i {
				fmt.Fprintf(&b, "10.0.0.%d - - [01/Jan/2024:00:00:%02d +0000] \"GET /v1/items/%d HTTP/1.1\" 200 5 \"-\" \"UA\" \"k%d\"\n", i, s, n, i)
			}
		}
	}
	b.WriteString("10.0.0.9 - - [01/Jan/2024:00:00:59 +0000] \"GET /health HTTP/1.1\" 200 5 \"-\" \"UA\" \"-\"\n")
	b.WriteString("not a log line\n")
	return b.String()
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeClock advances by step at each call.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(step); return t }
}

func runCmd(t *testing.T, stdin string, terminal bool, clock func() time.Time, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, terminal, clock)
	return code, out.String(), errb.String()
}

func TestText(t *testing.T) {
	path := writeTemp(t, knownLog())
	code, out, errs := runCmd(t, "", false, fakeClock(0), "-key", "header:X-API-Key", path)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"read 32 lines", "31 requests, 5 clients, 1 without a key, 1 bad lines",
		// window, p50, p95, p99, max, busiest client, service peak (15 in second 0, 31 in the minute)
		"1s    3    5    5    5              k5            15",
		"1m    6   10   10   10              k5            31",
		"GET  /v1/items/{id}  30  96.8%",
		"no [time] field: 1", `line 32: no [time] field: "not a log line"`,
		"calculator (percentiles per minute):",
		"clients 5, p50 6, p95 10, p99 10, peak 5/s for 1s",
		"/?clients=5&p50=6&p95=10&p99=10&peak=5&peak_seconds=1&percentile_unit=minute",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestJSONAndStdin(t *testing.T) {
	code, out, errs := runCmd(t, knownLog(), false, fakeClock(0), "-json", "-key", "header:X-API-Key", "-window", "1s", "-")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var rep struct {
		Result struct {
			Clients int
			Windows []struct{ Seconds, P50, P95, P99, Max int64 }
		}
		CalculatorWindow string `json:"calculator_window"`
		Calculator       struct {
			P99            float64 `json:"p99"`
			PercentileUnit string  `json:"percentile_unit"`
		}
		Query string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	w := rep.Result.Windows
	if rep.Result.Clients != 5 || len(w) != 1 || w[0].Seconds != 1 || w[0].P50 != 3 || w[0].P95 != 5 || w[0].P99 != 5 || w[0].Max != 5 {
		t.Errorf("result %+v, want 5 clients, one 1 s window 3 5 5 5", rep.Result)
	}
	if rep.CalculatorWindow != "1s" || rep.Calculator.P99 != 5 || rep.Calculator.PercentileUnit != "second" ||
		rep.Query != "clients=5&p50=3&p95=5&p99=5&percentile_unit=second" {
		t.Errorf("calculator %+v", rep)
	}
}

func TestFormatsAndFields(t *testing.T) {
	jsonLog := `{"ts":"2024-01-01T00:00:00Z","user":"u1","verb":"GET","uri":"/a/1"}` + "\n" +
		`{"ts":"2024-01-01T00:00:00Z","user":"u1","req":"GET /a/2 HTTP/1.1"}` + "\n"
	code, out, errs := runCmd(t, jsonLog, false, fakeClock(0), "-format", "json", "-key", "field:user",
		"-time-field", "ts", "-method-field", "verb", "-path-field", "uri", "-request-field", "req", "-calc-window", "1s")
	if code != exitOK || !strings.Contains(out, "clients 1, p50 2, p95 2, p99 2") || !strings.Contains(out, "GET  /a/{id}  2") {
		t.Errorf("json: exit %d, stderr %q, output:\n%s", code, errs, out)
	}
	csvLog := "when;addr;request\n2024-01-01T00:00:00Z;1.2.3.4;GET /x HTTP/1.1\n"
	code, out, errs = runCmd(t, csvLog, false, fakeClock(0), "-format", "csv", "-comma", ";", "-time-field", "when", "-ip-field", "addr")
	if code != exitOK || !strings.Contains(out, "1 requests, 1 clients") {
		t.Errorf("csv: exit %d, stderr %q, output:\n%s", code, errs, out)
	}
}

func TestProgress(t *testing.T) {
	line := `1.2.3.4 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"` + "\n"
	log := strings.Repeat(line, 140000) // progress is offered at 65536 and 131072 lines
	tests := []struct {
		name      string
		terminal  bool
		step      time.Duration
		wantLines int
	}{
		{"terminal, slow clock: both offers shown", true, time.Second, 2},
		{"terminal, fast reading: none within 250 ms", true, time.Millisecond, 0},
		{"not a terminal", false, time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCmd(t, log, tt.terminal, fakeClock(tt.step), "-json")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if got := strings.Count(errs, "lines, "); got != tt.wantLines {
				t.Errorf("%d progress lines, want %d: %q", got, tt.wantLines, errs)
			}
			if tt.wantLines > 0 && !strings.Contains(errs, "\r65536 lines, ") {
				t.Errorf("progress %q lacks the line count", errs)
			}
		})
	}
}

func TestSQL(t *testing.T) {
	code, out, _ := runCmd(t, "", false, fakeClock(0), "-sql", "postgres", "-table", "logs.requests", "-time-column", "ts", "-key-column", "api_key")
	if code != exitOK || !strings.Contains(out, `FROM "logs"."requests" AS r`) || !strings.Contains(out, "VALUES (1), (60)") {
		t.Errorf("postgres: exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", false, fakeClock(0), "-sql", "clickhouse", "-table", "t", "-time-column", "at", "-key-column", "ip", "-epoch", "-window", "10s")
	if code != exitOK || !strings.Contains(out, "ARRAY JOIN [10] AS seconds") || !strings.Contains(out, "floor(r.`at`)") {
		t.Errorf("clickhouse: exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", false, fakeClock(0), "-sql", "duckdb", "-table", "requests", "-time-column", "ts", "-key-column", "ip")
	if code != exitOK || !strings.Contains(out, `FROM "requests" AS r`) || !strings.Contains(out, "list_sort(list(rate))") {
		t.Errorf("duckdb: exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", false, fakeClock(0), "-sql", "duckdb", "-parquet", "logs/*.parquet", "-time-column", "ts", "-key-column", "ip")
	if code != exitOK || !strings.Contains(out, `FROM read_parquet('logs/*.parquet') AS r`) {
		t.Errorf("duckdb -parquet: exit %d:\n%s", code, out)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"format", "", []string{"-format", "xml"}, exitUsage, `format "xml"`},
		{"key", "", []string{"-key", "cookie:x"}, exitUsage, "-key"},
		{"field key in combined", "", []string{"-key", "field:x"}, exitUsage, "no named fields"},
		{"window", "", []string{"-window", "1500ms"}, exitUsage, "whole seconds"},
		{"window syntax", "", []string{"-window", "soon"}, exitUsage, "-window"},
		{"calc window", "", []string{"-calc-window", "10s"}, exitUsage, "-calc-window"},
		{"calc window not measured", "", []string{"-window", "1s", "-calc-window", "1m"}, exitUsage, "not among"},
		{"two files", "", []string{"a", "b"}, exitUsage, "one log at a time"},
		{"comma", "", []string{"-comma", ";;"}, exitUsage, "-comma"},
		{"top", "", []string{"-top", "0"}, exitUsage, "-top 0"},
		{"sql dialect", "", []string{"-sql", "mysql"}, exitUsage, "postgres, clickhouse or duckdb"},
		{"parquet without sql", "", []string{"-parquet", "a.parquet"}, exitUsage, "-parquet needs -sql duckdb"},
		{"parquet in postgres", "", []string{"-sql", "postgres", "-parquet", "a.parquet", "-time-column", "t", "-key-column", "k"}, exitUsage, "-sql duckdb"},
		{"parquet and table", "", []string{"-sql", "duckdb", "-parquet", "a.parquet", "-table", "t", "-time-column", "t", "-key-column", "k"}, exitUsage, "want one of them"},
		{"sql table", "", []string{"-sql", "postgres", "-table", "x;y", "-time-column", "t", "-key-column", "k"}, exitUsage, `table "x;y"`},
		{"flag", "", []string{"-nope"}, exitUsage, "flag provided but not defined"},
		{"missing file", "", []string{"/nonexistent/access.log"}, exitLog, "no such file"},
		{"no parseable line", "hello\nworld\n", nil, exitLog, "no parseable line in 2 lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCmd(t, tt.stdin, false, fakeClock(0), tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, tt.code, tt.want)
			}
		})
	}
	if code, _, _ := runCmd(t, "", false, fakeClock(0), "-h"); code != exitOK {
		t.Errorf("-h: exit %d, want 0", code)
	}
}
