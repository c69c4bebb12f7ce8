package accesslog

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// rec is a record with copied bytes, for comparing.
type rec struct {
	Line   int64
	Time   time.Time
	Key    string
	Method string
	Path   string
}

// readAll reads every record of log with cfg.
func readAll(t *testing.T, log string, cfg Config) ([]rec, *Reader) {
	t.Helper()
	rd, err := NewReader(strings.NewReader(log), cfg)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	var out []rec
	for i := 0; rd.Scan(); i++ {
		if i > 1000 {
			t.Fatal("more than 1000 records")
		}
		r := rd.Record()
		out = append(out, rec{r.Line, r.Time(), string(r.Key), string(r.Method), string(r.Path)})
	}
	return out, rd
}

// at is a time in a zone offset east of UTC by off hours: the independent
// reference for the hand-written time parsers.
func at(y int, mo time.Month, d, h, mi, s, nanos int, offHours float64) time.Time {
	z := time.FixedZone("", int(offHours*3600))
	return time.Date(y, mo, d, h, mi, s, nanos, z).UTC()
}

func TestCombined(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		line string
		want rec
	}{
		{
			name: "nginx combined keyed by ip",
			line: `203.0.113.7 - - [10/Oct/2000:13:55:36 -0700] "GET /v1/orders/123?x=1 HTTP/1.1" 200 2326 "-" "curl/8.0"`,
			want: rec{1, at(2000, 10, 10, 13, 55, 36, 0, -7), "203.0.113.7", "GET", "/v1/orders/123?x=1"},
		},
		{
			name: "ipv6 address, user, east zone with minutes",
			line: `2001:db8::1 - alice [29/Feb/2024:00:00:59 +0530] "POST /login HTTP/2.0" 302 0 "https://x/" "UA"`,
			want: rec{1, at(2024, 2, 29, 0, 0, 59, 0, 5.5), "2001:db8::1", "POST", "/login"},
		},
		{
			name: "header key, first extra field",
			cfg:  Config{Key: Key{Kind: KeyHeader, Name: "X-API-Key"}},
			line: `10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "Mozilla/5.0 (X11)" "key-abc" "0.003"`,
			want: rec{1, at(2024, 1, 1, 0, 0, 0, 0, 0), "key-abc", "GET", "/"},
		},
		{
			name: "header key, second extra field",
			cfg:  Config{Key: Key{Kind: KeyHeader, Name: "X-Tenant"}, Extra: 2},
			line: `10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "UA" "key-abc" "tenant-9"`,
			want: rec{1, at(2024, 1, 1, 0, 0, 0, 0, 0), "tenant-9", "GET", "/"},
		},
		{
			name: "apache escaped quotes in agent before the key",
			cfg:  Config{Key: Key{Kind: KeyHeader, Name: "X-API-Key"}},
			line: `10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "say \"hi\" \\" "k1"`,
			want: rec{1, at(2024, 1, 1, 0, 0, 0, 0, 0), "k1", "GET", "/a"},
		},
		{
			name: "nginx hex-escaped quote in the request",
			line: `10.0.0.2 - - [31/Dec/1999:23:59:60 -0000] "GET /a\x22b HTTP/1.0" 404 0 "-" "-"`,
			want: rec{1, at(2000, 1, 1, 0, 0, 0, 0, 0), "10.0.0.2", "GET", `/a\x22b`},
		},
		{
			name: "request without protocol, lower-case month, CRLF",
			line: "10.0.0.3 - - [05/jun/2023:12:00:00 +0200] \"GET /old\" 200 1 \"-\" \"-\"\r\n",
			want: rec{1, at(2023, 6, 5, 12, 0, 0, 0, 2), "10.0.0.3", "GET", "/old"},
		},
		{
			name: "common format without referer and agent",
			line: `10.0.0.4 - - [05/Jun/2023:12:00:00 +0000] "DELETE /v1/x/9 HTTP/1.1" 204 -`,
			want: rec{1, at(2023, 6, 5, 12, 0, 0, 0, 0), "10.0.0.4", "DELETE", "/v1/x/9"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rd := readAll(t, tt.line, tt.cfg)
			if err := rd.Err(); err != nil {
				t.Fatalf("Err: %v (bad: %+v)", err, rd.Bad())
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Fatalf("got %+v, want %+v (bad: %+v)", got, tt.want, rd.Bad())
			}
		})
	}
}

// TestCombinedTimeCache parses a sequence that exercises the cache: the
// same second, the next second of the cached minute, a new minute, a new
// zone with the same local clock, and a bad second in the cached minute.
func TestCombinedTimeCache(t *testing.T) {
	lines := []string{
		"[10/Oct/2000:13:55:36 -0700]",
		"[10/Oct/2000:13:55:36 -0700]",
		"[10/Oct/2000:13:55:59 -0700]",
		"[10/Oct/2000:13:56:00 -0700]",
		"[10/Oct/2000:13:56:00 +0000]",
		"[10/Oct/2000:13:56:6x +0000]",
		"[10/Oct/2000:13:56:61 +0000]",
		"[10/Oct/2000:13:56:01 +0000]",
	}
	want := []time.Time{
		at(2000, 10, 10, 13, 55, 36, 0, -7),
		at(2000, 10, 10, 13, 55, 36, 0, -7),
		at(2000, 10, 10, 13, 55, 59, 0, -7),
		at(2000, 10, 10, 13, 56, 0, 0, -7),
		at(2000, 10, 10, 13, 56, 0, 0, 0),
		{},
		{},
		at(2000, 10, 10, 13, 56, 1, 0, 0),
	}
	var c clfCache
	for i, l := range lines {
		ns, ok := c.parse([]byte(l[1 : len(l)-1]))
		if ok != !want[i].IsZero() || ok && !time.Unix(0, ns).Equal(want[i]) {
			t.Errorf("step %d: %s: got %v %v, want %v", i, l, time.Unix(0, ns).UTC(), ok, want[i])
		}
	}
}

func TestBadLines(t *testing.T) {
	// One line per reason of the combined format, and good lines between.
	good := `10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "UA" "k"`
	log := strings.Join([]string{
		good,      // 1
		"garbage", // 2 no [time]: no space
		"10.0.0.1 - - 01/Jan/2024 \"GET / HTTP/1.1\"",                                     // 3 no [time]: no bracket
		"10.0.0.1 - - [01/Jan/2024:00:00:00 +0000",                                        // 4 no [time]: no closing bracket
		"10.0.0.1 - - [31/Apr/2024:00:00:00 +0000] \"GET / HTTP/1.1\"",                    // 5 bad time: 31 April
		"10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] 200",                                   // 6 no quoted request
		"10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] \"GET / HTTP/1.1",                      // 7 no request: unterminated
		"10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] \"-\" 400 0 \"-\" \"-\" \"k\"",         // 8 bad request
		"10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"UA\"", // 9 no key field
		"",   // 10 blank: skipped, not bad
		good, // 11
		"10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"UA\" \"" + strings.Repeat("x", 300) + "\"", // 12 too long
		"x [", // 13 no [time]
		"y [", // 14 no [time]: a fifth, past the examples
		good,  // 15
	}, "\n")
	cfg := Config{Key: Key{Kind: KeyHeader, Name: "X-API-Key"}, MaxLine: 200}
	got, rd := readAll(t, log, cfg)
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Line != 1 || got[1].Line != 11 || got[2].Line != 15 {
		t.Errorf("records %+v, want lines 1, 11 and 15", got)
	}
	if rd.Lines() != 15 {
		t.Errorf("Lines = %d, want 15", rd.Lines())
	}
	bad := rd.Bad()
	want := map[Reason]int64{
		ReasonNoTime: 5, ReasonBadTime: 1, ReasonNoRequest: 2, ReasonBadRequest: 1,
		ReasonNoKeyField: 1, ReasonTooLong: 1,
	}
	if bad.Count != 11 {
		t.Errorf("Count = %d, want 11", bad.Count)
	}
	for r, n := range want {
		if bad.ByReason[r] != n {
			t.Errorf("ByReason[%q] = %d, want %d", r, bad.ByReason[r], n)
		}
	}
	if len(bad.ByReason) != len(want) {
		t.Errorf("ByReason = %v, want %v", bad.ByReason, want)
	}
	// Examples: 3 of the 5 no-time lines (2, 3, 4), one of each other.
	var lines []int64
	for _, ex := range bad.Examples {
		lines = append(lines, ex.Line)
		if len(ex.Text) > 200 {
			t.Errorf("example of line %d has %d bytes, want at most 200", ex.Line, len(ex.Text))
		}
	}
	wantLines := []int64{2, 3, 4, 5, 6, 7, 8, 9, 12}
	if len(lines) != len(wantLines) {
		t.Fatalf("example lines %v, want %v", lines, wantLines)
	}
	for i := range lines {
		if lines[i] != wantLines[i] {
			t.Fatalf("example lines %v, want %v", lines, wantLines)
		}
	}
	if bad.Examples[0].Reason != ReasonNoTime || bad.Examples[0].Text != "garbage" {
		t.Errorf("first example %+v, want line 2 %q garbage", bad.Examples[0], ReasonNoTime)
	}
}

func TestLongLineAtEnd(t *testing.T) {
	// A line longer than the reader's buffer, last and without a newline.
	long := strings.Repeat("z", 100_000)
	good := `10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "UA"`
	got, rd := readAll(t, good+"\n"+long, Config{MaxLine: 1024})
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || rd.Bad().ByReason[ReasonTooLong] != 1 || rd.Lines() != 2 {
		t.Errorf("got %d records, bad %+v, lines %d; want 1, one too long, 2", len(got), rd.Bad().ByReason, rd.Lines())
	}
}

func TestNoRecords(t *testing.T) {
	for _, f := range []Format{Combined, JSON, CSV} {
		t.Run(string(f), func(t *testing.T) {
			log := "time,remote_addr,method,path\nnot a log line at all\n"
			if f == CSV {
				log = "time,remote_addr,method,path\nyesterday,1.2.3.4,GET,/\n"
			}
			_, rd := readAll(t, log, Config{Format: f})
			err := rd.Err()
			if !errors.Is(err, ErrNoRecords) {
				t.Fatalf("Err = %v, want ErrNoRecords", err)
			}
			line := "line 1"
			if f == CSV {
				line = "line 2" // after the header
			}
			for _, w := range []string{string(f) + " format", "expected", line, "combined", "json", "csv"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	_, rd := readAll(t, "", Config{})
	if !errors.Is(rd.Err(), ErrNoRecords) {
		t.Errorf("empty log: Err = %v, want ErrNoRecords", rd.Err())
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"format", Config{Format: "xml"}, `format "xml"`},
		{"field key in combined", Config{Key: Key{Kind: KeyField, Name: "user"}}, "combined format has no named fields"},
		{"key without name", Config{Format: JSON, Key: Key{Kind: KeyField}}, "a name is required"},
		{"key kind", Config{Key: Key{Kind: "cookie", Name: "x"}}, `key kind "cookie"`},
		{"extra", Config{Extra: 65}, "extra 65"},
		{"max line", Config{MaxLine: 10}, "max line 10"},
		{"comma", Config{Format: CSV, Comma: '"'}, "comma"},
		{"examples", Config{Examples: -1}, "examples -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReader(strings.NewReader(""), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		in   string
		want Key
		ok   bool
	}{
		{"ip", Key{Kind: KeyIP}, true},
		{"header:X-API-Key", Key{Kind: KeyHeader, Name: "X-API-Key"}, true},
		{"field:user.id", Key{Kind: KeyField, Name: "user.id"}, true},
		{"field:", Key{}, false},
		{"ip:x", Key{}, false},
		{"ip:", Key{}, false},
		{"cookie:x", Key{}, false},
		{"", Key{}, false},
	}
	for _, tt := range tests {
		got, err := ParseKey(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseKey(%q) = %+v, %v; want %+v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if tt.ok && got.String() != tt.in {
			t.Errorf("ParseKey(%q).String() = %q", tt.in, got.String())
		}
	}
}

// TestMaxLine: a line of exactly MaxLine bytes is read, one byte more is
// too long, with LF or CRLF ends.
func TestMaxLine(t *testing.T) {
	line := `1.2.3.4 - - [01/Jan/2024:00:00:00 +0000] "GET /`
	line += strings.Repeat("a", 100-len(line)-len(` HTTP/1.1"`)) + ` HTTP/1.1"`
	if len(line) != 100 {
		t.Fatalf("line has %d bytes", len(line))
	}
	for _, eol := range []string{"\n", "\r\n"} {
		for _, max := range []int{100, 99} {
			got, rd := readAll(t, line+eol+line+eol, Config{MaxLine: max})
			want := 2
			if max == 99 {
				want = 0
			}
			if len(got) != want || rd.Bad().ByReason[ReasonTooLong] != int64(2-want) {
				t.Errorf("MaxLine %d, end %q: %d records, bad %v; want %d records", max, eol, len(got), rd.Bad().ByReason, want)
			}
		}
	}
}
