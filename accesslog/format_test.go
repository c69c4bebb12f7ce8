package accesslog

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestJSON(t *testing.T) {
	t0 := at(2024, 3, 1, 12, 0, 0, 0, 0)
	tests := []struct {
		name string
		cfg  Config
		line string
		want rec
	}{
		{
			name: "default fields, RFC 3339 with fraction and zone",
			line: `{"time":"2024-03-01T13:00:00.250+01:00","remote_addr":"10.1.1.1","method":"GET","path":"/v1/a?b=1","status":200}`,
			want: rec{1, t0.Add(250 * time.Millisecond), "10.1.1.1", "GET", "/v1/a?b=1"},
		},
		{
			name: "every field renamed",
			cfg: Config{Format: JSON, Fields: Fields{
				Time: "ts", IP: "client", Method: "verb", Path: "uri", Request: "req",
			}},
			line: `{"ts":"2024-03-01T12:00:00Z","client":"c1","verb":"PUT","uri":"/x","time":"junk","path":"/ignored"}`,
			want: rec{1, t0, "c1", "PUT", "/x"},
		},
		{
			name: "renamed request field used when method and path are absent",
			cfg:  Config{Format: JSON, Fields: Fields{Request: "req"}},
			line: `{"time":"2024-03-01T12:00:00Z","remote_addr":"c1","req":"PATCH /y/1 HTTP/1.1"}`,
			want: rec{1, t0, "c1", "PATCH", "/y/1"},
		},
		{
			name: "header key reads the nginx variable's field; CLF time",
			cfg:  Config{Format: JSON, Key: Key{Kind: KeyHeader, Name: "X-API-Key"}},
			line: `{"time":"01/Mar/2024:12:00:00 +0000","http_x_api_key":"k\u00e9y","request":"GET / HTTP/1.1"}`,
			want: rec{1, t0, "kéy", "GET", "/"},
		},
		{
			name: "field key as a number; epoch seconds with fraction",
			cfg:  Config{Format: JSON, Key: Key{Kind: KeyField, Name: "user_id"}},
			line: `{"time":1709294400.5,"user_id":42,"method":"GET","path":"/"}`,
			want: rec{1, t0.Add(500 * time.Millisecond), "42", "GET", "/"},
		},
		{
			name: "epoch milliseconds as a string, escaped path, nested values skipped",
			line: ` {"meta":{"a":[1,{"b":"}"}]},"time":"1709294400123","remote_addr":"c","method":"GET","path":"\/a\"b","x":true,"y":null} `,
			want: rec{1, t0.Add(123 * time.Millisecond), "c", "GET", `/a"b`},
		},
		{
			name: "epoch micro and nanoseconds, last duplicate wins",
			line: `{"time":1709294400000001,"time":1709294400000000002,"remote_addr":"c","method":"GET","path":"/"}`,
			want: rec{1, t0.Add(2), "c", "GET", "/"},
		},
		{
			name: "null key is no key",
			line: `{"time":"2024-03-01 12:00:00","remote_addr":null,"method":"GET","path":"/"}`,
			want: rec{1, t0, "", "GET", "/"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cfg.Format == "" {
				tt.cfg.Format = JSON
			}
			got, rd := readAll(t, tt.line, tt.cfg)
			if err := rd.Err(); err != nil {
				t.Fatalf("Err: %v", err)
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestJSONBadLines(t *testing.T) {
	lines := []struct {
		line string
		why  Reason
	}{
		{`[1,2]`, ReasonNotJSON},
		{`{"time":"2024-03-01T12:00:00Z",}`, ReasonNotJSON},
		{`{"time":"2024-03-01T12:00:00Z"} x`, ReasonNotJSON},
		{`{"time":"2024-03-01T12:00:00Z","path":"\q"}`, ReasonNotJSON},
		{`{"time":"2024-03-01T12:00:00Z","remote_addr":"c","method":"GET"`, ReasonNotJSON},
		{`{"remote_addr":"c","method":"GET","path":"/"}`, ReasonMissing},
		{`{"time":"2024-03-01T12:00:00Z","remote_addr":"c","method":"GET"}`, ReasonMissing},
		{`{"time":true,"remote_addr":"c","method":"GET","path":"/"}`, ReasonBadValue},
		{`{"time":"2024-03-01T12:00:00Z","remote_addr":"c","method":1,"path":"/"}`, ReasonBadValue},
		{`{"time":"2024-03-01T12:00:00Z","remote_addr":{"ip":"c"},"method":"GET","path":"/"}`, ReasonBadValue},
		{`{"time":"2024-02-30T12:00:00Z","remote_addr":"c","method":"GET","path":"/"}`, ReasonBadTime},
		{`{"time":"1e9","remote_addr":"c","method":"GET","path":"/"}`, ReasonBadTime},
		{`{"time":"2024-03-01T12:00:00Z","remote_addr":"c","request":"-"}`, ReasonBadRequest},
		{`{"time":"2024-03-01T12:00:00Z","remote_addr":"c","method":"GET","path":"/"}`, ""},
	}
	var log []string
	for _, l := range lines {
		log = append(log, l.line)
	}
	got, rd := readAll(t, strings.Join(log, "\n"), Config{Format: JSON, Examples: 10})
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Line != int64(len(lines)) {
		t.Errorf("records %+v, want only the last line", got)
	}
	ex := rd.Bad().Examples
	if len(ex) != len(lines)-1 {
		t.Fatalf("%d examples, want %d: %+v", len(ex), len(lines)-1, ex)
	}
	for i, e := range ex {
		if e.Line != int64(i+1) || e.Reason != lines[i].why {
			t.Errorf("line %d: got %d %q, want %q", i+1, e.Line, e.Reason, lines[i].why)
		}
	}
}

func TestCSV(t *testing.T) {
	t0 := at(2024, 3, 1, 12, 0, 0, 0, 0)
	tests := []struct {
		name string
		cfg  Config
		log  string
		want []rec
	}{
		{
			name: "default columns, quoted fields, BOM, CRLF",
			log: "\xef\xbb\xbftime,remote_addr,method,path,agent\r\n" +
				"2024-03-01T12:00:00Z,10.0.0.1,GET,\"/a,b\",\"say \"\"hi\"\"\"\r\n" +
				"1709294401,10.0.0.2,POST,/c,\n",
			want: []rec{
				{2, t0, "10.0.0.1", "GET", "/a,b"},
				{3, t0.Add(time.Second), "10.0.0.2", "POST", "/c"},
			},
		},
		{
			name: "every column renamed, semicolons, request column",
			cfg: Config{Format: CSV, Comma: ';', Fields: Fields{
				Time: "ts", IP: "ip", Method: "m", Path: "p", Request: "r",
			}},
			log: "ts;ip;m;p;r\n" +
				"2024-03-01T12:00:00Z;c1;GET;/x;\n" +
				"2024-03-01T12:00:00Z;c2;;;DELETE /y HTTP/1.1\n",
			want: []rec{
				{2, t0, "c1", "GET", "/x"},
				{3, t0, "c2", "DELETE", "/y"},
			},
		},
		{
			name: "field key and header key columns",
			cfg:  Config{Format: CSV, Key: Key{Kind: KeyField, Name: "tenant"}},
			log:  "tenant,time,request\nacme,01/Mar/2024:13:00:00 +0100,GET /z HTTP/1.1\n",
			want: []rec{{2, t0, "acme", "GET", "/z"}},
		},
		{
			name: "header key",
			cfg:  Config{Format: CSV, Key: Key{Kind: KeyHeader, Name: "Authorization"}},
			log:  "time,http_authorization,method,path\n2024-03-01T12:00:00Z,Bearer t,GET,/\n",
			want: []rec{{2, t0, "Bearer t", "GET", "/"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cfg.Format == "" {
				tt.cfg.Format = CSV
			}
			got, rd := readAll(t, tt.log, tt.cfg)
			if err := rd.Err(); err != nil {
				t.Fatalf("Err: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v (bad %+v)", got, tt.want, rd.Bad())
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("record %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestCSVBadLines(t *testing.T) {
	log := strings.Join([]string{
		"time,remote_addr,method,path",
		`2024-03-01T12:00:00Z,c,GET,"/a`,      // 2 unbalanced
		`2024-03-01T12:00:00Z,c,GET,"/a"x`,    // 3 text after the quote
		`2024-03-01T12:00:00Z,c"d,GET,/a`,     // 4 bare quote
		`2024-03-01T12:00:00Z,c,GET`,          // 5 few columns
		`2024-13-01T12:00:00Z,c,GET,/`,        // 6 bad time
		`2024-03-01T12:00:00Z,c,GET,`,         // 7 missing path, no request column
		`2024-03-01T12:00:00Z,c,GET,/ok,more`, // 8 good: extra columns are fine
	}, "\n")
	got, rd := readAll(t, log, Config{Format: CSV})
	if len(got) != 1 || got[0].Line != 8 {
		t.Errorf("records %+v, want line 8", got)
	}
	want := []Reason{ReasonUnquoted, ReasonUnquoted, ReasonUnquoted, ReasonFewColumns, ReasonBadTime, ReasonMissing}
	ex := rd.Bad().Examples
	if len(ex) != len(want) {
		t.Fatalf("examples %+v, want reasons %v", ex, want)
	}
	for i, e := range ex {
		if e.Line != int64(i+2) || e.Reason != want[i] {
			t.Errorf("example %d: got line %d %q, want line %d %q", i, e.Line, e.Reason, i+2, want[i])
		}
	}
}

func TestCSVHeaderErrors(t *testing.T) {
	tests := []struct {
		name, header string
		cfg          Config
		want         string
	}{
		{"no time", "when,remote_addr,method,path", Config{}, `no column "time" (time)`},
		{"no key", "time,ip,method,path", Config{}, `no column "remote_addr" (key ip)`},
		{"no field key", "time,remote_addr,method,path", Config{Key: Key{Kind: KeyField, Name: "user"}}, `no column "user" (key field:user)`},
		{"no path", "time,remote_addr,method", Config{}, `"method" and "path", or "request"`},
		{"bad quote", `"time,remote_addr`, Config{}, "csv header: unbalanced quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Format = CSV
			got, rd := readAll(t, tt.header+"\n2024-03-01T12:00:00Z,c,GET,/\n", tt.cfg)
			if len(got) != 0 || rd.Err() == nil || !strings.Contains(rd.Err().Error(), tt.want) {
				t.Errorf("got %d records, Err %v; want an error containing %q", len(got), rd.Err(), tt.want)
			}
		})
	}
}

func TestPattern(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/v1/orders/123", "/v1/orders/{id}"},
		{"/v1/orders/123?expand=items", "/v1/orders/{id}"},
		{"/v1/orders/123/items/4#frag", "/v1/orders/{id}/items/{id}"},
		{"/v1/users/6ba7b810-9dad-11d1-80b4-00c04fd430c8/keys", "/v1/users/{id}/keys"},
		{"/v1/users/6BA7B810-9DAD-11D1-80B4-00C04FD430C8", "/v1/users/{id}"},
		{"/blobs/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "/blobs/{id}"},
		{"/commits/a1b2c3d4", "/commits/{id}"},
		{"/feed/deadbeef", "/feed/deadbeef"}, // hex letters only: a word
		{"/customers/cus_9s6XKzkNRiz8i3", "/customers/{id}"},
		{"/reports/2024-01-02", "/reports/{id}"},
		{"/v2/very-long-resource-name", "/v2/very-long-resource-name"},
		{"/v1/search", "/v1/search"},
		{"/v1", "/v1"},
		{"/", "/"},
		{"", "/"},
		{"?q=1", "/"},
		{"*", "*"},
		{"/a//b/", "/a//b/"},
		{"/files/..", "/files/.."},
		{"/v1.2/x", "/v1.2/x"},
		{"https://api.example.com/v1/orders/42?x", "/v1/orders/{id}"},
		{"HTTP://api.example.com", "/"},
		{"/static/app.3f9a2b1c.js", "/static/app.3f9a2b1c.js"},
		{"/t/Zm9vYmFyYmF6cXV4cXV1eDEyMw==", "/t/{id}"},
	}
	for _, tt := range tests {
		if got := string(Pattern(nil, []byte(tt.in))); got != tt.want {
			t.Errorf("Pattern(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Pattern appends and does not allocate into a large enough buffer.
	buf := make([]byte, 0, 64)
	in := []byte("/v1/orders/123?x=1")
	if n := testing.AllocsPerRun(100, func() { buf = Pattern(buf[:0], in) }); n != 0 {
		t.Errorf("Pattern allocates %v times per call, want 0", n)
	}
}

// TestTimeParsersAgainstTime compares the hand-written parsers with the
// time package on random times in random zones.
func TestTimeParsersAgainstTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var c clfCache
	lo := time.Date(1901, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(2199, 12, 31, 0, 0, 0, 0, time.UTC).Unix()
	for i := range 20000 {
		sec := lo + rng.Int64N(hi-lo)
		if i%2 == 0 { // mostly recent times, in runs that hit the cache
			sec = 1.7e9 + int64(i/3)
		}
		z := time.FixedZone("", (rng.IntN(28*4)-14*4)*15*60)
		tm := time.Unix(sec, int64(rng.IntN(1e9))).In(z)
		clf := tm.Format("02/Jan/2006:15:04:05 -0700")
		got, ok := c.parse([]byte(clf))
		if want := tm.Truncate(time.Second); !ok || got != want.UnixNano() {
			t.Fatalf("clf %q: got %v %v, want %v", clf, time.Unix(0, got).UTC(), ok, want.UTC())
		}
		rfc := tm.Format(time.RFC3339Nano)
		if got, ok := parseTimeText([]byte(rfc), &c); !ok || got != tm.UnixNano() {
			t.Fatalf("rfc3339 %q: got %v %v, want %v", rfc, time.Unix(0, got).UTC(), ok, tm.UTC())
		}
	}
}
