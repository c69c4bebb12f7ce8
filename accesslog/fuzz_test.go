package accesslog

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz tests check that no input panics, that every non-blank line is
// either a record or a counted bad line, and, for JSON and CSV, that the
// hand-written parsers agree with encoding/json and encoding/csv wherever
// those accept the input, and that reading in chunks (Chunks, for the
// parallel measurement) reads the same. Seeds are in testdata/fuzz.

// checkRecords reads log with cfg and checks the accounting and that a
// record's slices are made of the log's bytes.
func checkRecords(t *testing.T, log []byte, cfg Config) {
	rd, err := NewReader(bytes.NewReader(log), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for rd.Scan() {
		n++
		r := rd.Record()
		if len(r.Method) == 0 || len(r.Path) == 0 {
			t.Fatalf("record %+v has an empty method or path", r)
		}
		if cfg.Format == Combined {
			for _, b := range [][]byte{r.Key, r.Method, r.Path} {
				if !bytes.Contains(log, b) {
					t.Fatalf("record part %q is not in the line", b)
				}
			}
		}
		if y := r.Time().Year(); y < minYear-1 || y > maxYear+1 {
			t.Fatalf("record time %v out of range", r.Time())
		}
	}
	if rd.Err() != nil && rd.Records() > 0 {
		t.Fatalf("Err %v after %d records", rd.Err(), rd.Records())
	}
	if n != rd.Records() {
		t.Fatalf("Scan returned %d records, Records() = %d", n, rd.Records())
	}
	if rd.Bad().Count+n > rd.Lines() {
		t.Fatalf("%d bad + %d good lines > %d lines", rd.Bad().Count, n, rd.Lines())
	}
	checkChunks(t, log, cfg)
}

func FuzzCombined(f *testing.F) {
	f.Add([]byte(`203.0.113.7 - - [10/Oct/2000:13:55:36 -0700] "GET /v1/orders/123 HTTP/1.1" 200 2326 "-" "curl/8.0" "key"`))
	f.Add([]byte(`1.2.3.4 - - [29/Feb/2024:23:59:60 +1400] "GET /a\"b\\ HTTP/1.1" 200 1 "\"" "\\" "k"`))
	f.Add([]byte("a [\n b [01/Jan/2024:00:00:00 +0000] \"\"\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkRecords(t, line, Config{})
		checkRecords(t, line, Config{Key: Key{Kind: KeyHeader, Name: "X"}})
		checkRecords(t, line, Config{Key: Key{Kind: KeyHeader, Name: "X"}, Extra: 2, MaxLine: 64})
		checkRecords(t, line, Config{TierExtra: 1})
		checkRecords(t, line, Config{Key: Key{Kind: KeyHeader, Name: "X"}, Extra: 2, TierExtra: 1})
		Pattern(nil, line)
	})
}

func FuzzJSONLine(f *testing.F) {
	f.Add([]byte(`{"time":"2024-03-01T13:00:00.250+01:00","remote_addr":"10.1.1.1","method":"GET","path":"/v1/a?b=1"}`))
	f.Add([]byte(`{"time":1709294400.5,"remote_addr":42,"request":"GET / HTTP/1.1","x":{"y":[1,"]"]}}`))
	f.Add([]byte(`{"path":"\ud83d\ude00\ud800\u0041","method":"\"","time":"01/Mar/2024:12:00:00 +0000"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkRecords(t, line, Config{Format: JSON})
		if bytes.ContainsAny(line, "\n\r") {
			return
		}
		var s jsonState
		s.init(Config{Fields: Fields{Tier: "tier"}.withDefaults()})
		why := s.scan(line)
		var m map[string]any
		if !utf8.Valid(line) || json.Unmarshal(line, &m) != nil || m == nil {
			return
		}
		if why != "" {
			t.Fatalf("encoding/json reads %q, scan says %q", line, why)
		}
		for f, name := range s.names {
			if name == "" {
				continue // not wanted
			}
			v, ok := m[name]
			str, isStr := v.(string)
			switch {
			case !ok && s.kinds[f] != jvNone:
				t.Fatalf("field %q: absent for encoding/json, kind %d here", name, s.kinds[f])
			case isStr && (s.kinds[f] != jvString || string(s.vals[f]) != str):
				t.Fatalf("field %q: encoding/json %q, here %q (kind %d)", name, str, s.vals[f], s.kinds[f])
			case ok && v == nil && s.kinds[f] != jvNull:
				t.Fatalf("field %q: null, kind %d here", name, s.kinds[f])
			}
		}
	})
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte(`2024-03-01T12:00:00Z,10.0.0.1,GET,"/a,b","say ""hi"""`))
	f.Add([]byte(`1709294401,c,POST,/c,`))
	f.Add([]byte(`"",x"y,"a"b`))
	f.Fuzz(func(t *testing.T, line []byte) {
		header := []byte("time,remote_addr,method,path\n")
		checkRecords(t, append(header, line...), Config{Format: CSV})
		checkRecords(t, line, Config{Format: CSV, Key: Key{Kind: KeyField, Name: "b"}, Fields: Fields{Request: "a"}})
		if len(line) == 0 || bytes.ContainsAny(line, "\n\r") || !utf8.Valid(line) {
			return
		}
		fields, _, why := splitCSV(line, ',', nil, nil)
		want, err := csv.NewReader(strings.NewReader(string(line))).Read()
		if err != nil {
			if why == "" {
				t.Fatalf("encoding/csv: %v; splitCSV accepts %q", err, fields)
			}
			return
		}
		if why != "" {
			t.Fatalf("encoding/csv reads %q, splitCSV says %q", want, why)
		}
		if len(fields) != len(want) {
			t.Fatalf("encoding/csv %q, splitCSV %q", want, fields)
		}
		for i := range want {
			if string(fields[i]) != want[i] {
				t.Fatalf("encoding/csv %q, splitCSV %q", want, fields)
			}
		}
	})
}
