package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

// oldAppendElement is how the answer's elements were written before
// appendElement: encoding/json's Encoder without HTML escaping.
func oldAppendElement(b []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// simulateAnswer posts body and returns the answer's status and JSON,
// decoded from gzip or brotli when it came so.
func simulateAnswer(t *testing.T, body, acceptEncoding string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/simulate", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	rec := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(rec, req)
	out := rec.Body.Bytes()
	switch ce := rec.Header().Get("Content-Encoding"); ce {
	case "gzip":
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		if out, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	case "br":
		var err error
		if out, err = io.ReadAll(brotli.NewReader(rec.Body)); err != nil {
			t.Fatal(err)
		}
	case "":
	default:
		t.Fatalf("Content-Encoding %q", ce)
	}
	return rec.Code, out
}

// The streamed answer (fastDecode's reading, segmentio's elements, gzip
// of big answers) decodes with encoding/json to exactly what the reader
// and writer of encoding/json answer, for the limiter form and the policy
// form, with and without decisions, big and small, and for bad requests.
func TestSimulateAPIAnswersAsEncodingJSON(t *testing.T) {
	arrivals := func(n int, item func(i int) string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(item(i))
		}
		return b.String()
	}
	keyed := func(i int) string {
		return fmt.Sprintf(`{"at": %g, "key": "k%d", "cost": %d}`, float64(i)*0.0137, i%7, 1+i%3)
	}
	tiered := func(i int) string {
		return fmt.Sprintf(`{"at": %g, "key": "c%d", "tier": "%s", "method": "GET", "path": "/v1/reports/%d"}`,
			float64(i)*0.021, i%5, []string{"", "free", "paid"}[i%3], i%4)
	}
	limiter := `"limiter": {"algorithm": "token_bucket", "rate": 7.5, "burst": 20}`
	for _, tc := range []struct{ name, body string }{
		{"limiter", `{` + limiter + `, "arrivals": [` + arrivals(200, keyed) + `]}`},
		{"limiter big", `{` + limiter + `, "arrivals": [` + arrivals(3*bigAnswer/2, keyed) + `]}`},
		{"limiter without decisions", `{` + limiter + `, "decisions": false, "arrivals": [` + arrivals(200, keyed) + `]}`},
		{"limiter pattern", `{` + limiter + `, "pattern": {"name": "steady", "rate": 50, "duration": 20}, "seed": 3}`},
		{"leaky bucket, odd keys", `{"limiter": {"algorithm": "leaky_bucket", "rate": 5, "burst": 3}, "arrivals": [` +
			arrivals(50, func(i int) string { return fmt.Sprintf(`{"at":%d.5e-1,"key":"<é&%d>\u2028"}`, i, i%3) }) + `]}`},
		{"policy", `{"policy": ` + tieredPolicy("enforce") + `, "arrivals": [` + arrivals(300, tiered) + `]}`},
		{"policy big", `{"policy": ` + tieredPolicy("enforce") + `, "arrivals": [` + arrivals(bigAnswer, tiered) + `]}`},
		{"policy shadow without decisions", `{"policy": ` + tieredPolicy("shadow") + `, "decisions": false, "arrivals": [` + arrivals(300, tiered) + `]}`},
		{"policy pattern", `{"policy": ` + tieredPolicy("enforce") + `, "pattern": {"name": "steady", "rate": 20, "duration": 10},
			"mix": {"tiers": [{"name": "paid", "share": 0.5}], "requests": [{"method": "GET", "path": "/v1/reports/1", "share": 0.3}]}}`},
		{"escaped key", `{` + limiter + `, "arrivals": [{"at": 1, "key": "a\"b"}, {"at": 2, "key": "a\u0062"}]}`},
		{"unknown member", `{` + limiter + `, "arrivals": [{"at": 1, "kee": "a"}]}`},
		{"bad time", `{` + limiter + `, "arrivals": [{"at": 1}, {"at": -1}, {"at": "2"}]}`},
		{"member twice", `{` + limiter + `, ` + limiter + `, "arrivals": []}`},
		{"syntax", `{` + limiter + `, "arrivals": [{"at": 1},]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, ae := range []string{"", "gzip, br", "gzip, deflate, br, zstd", "br"} {
				code, got := simulateAnswer(t, tc.body, ae)
				fastDecoding, appendElement = false, oldAppendElement
				oldCode, want := simulateAnswer(t, tc.body, ae)
				fastDecoding, appendElement = true, sjsonAppend
				if code != oldCode {
					t.Fatalf("Accept-Encoding %q: status %d, encoding/json's %d: %s", ae, code, oldCode, want)
				}
				var g, w any
				if err := json.Unmarshal(got, &g); err != nil {
					t.Fatalf("Accept-Encoding %q: %v: %.200s", ae, err, got)
				}
				if err := json.Unmarshal(want, &w); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("Accept-Encoding %q: the answer's bytes differ from encoding/json's:\n%.300s\nwant\n%.300s", ae, got, want)
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("Accept-Encoding %q: the answer differs from encoding/json's:\n%.300s\nwant\n%.300s", ae, got, want)
				}
			}
		})
	}
}

var sjsonAppend = appendElement

// fastDecode reads plain requests itself and leaves the others to
// encoding/json.
func TestFastDecodeTakesPlainRequests(t *testing.T) {
	for _, tc := range []struct {
		body  string
		plain bool
	}{
		{`{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "arrivals": [{"at": 1, "key": "a"}, {"at": 2.5e-1, "cost": 2}]}`, true},
		{`{"policy": {"kind": "RateLimitPolicy"}, "decisions": false, "arrivals": [{"at": 0, "tier": "free", "method": "GET", "path": "/é"}]} `, true},
		{`{"pattern": {"name": "steady"}, "seed": 3, "window": 60, "bin": 1, "arrivals": null}`, true},
		{`{"arrivals": [{"at": 1, "key": "a\"b"}]}`, false},
		{`{"arrivals": [{"at": 1, "Key": "a"}]}`, false},
		{`{"arrivals": [{"at": 1, "at": 2}]}`, false},
		{`{"arrivals": [{"at": 1, "cost": 1.0}]}`, false},
		{`{"arrivals": [{"at": null}]}`, false},
		{`{"arrivals": [{"at": 01}]}`, false},
		{`{"arrivals": [{"at": -1}]}`, false},
		{`{"arrivals": []} {}`, false},
		{`{"bin": 1, "bin": 2}`, false},
	} {
		req, f, ok := fastDecode(strings.NewReader(tc.body), 100, int64(len(tc.body)), func(int) error { return nil })
		f.release()
		if ok != tc.plain || ok != (req != nil) {
			t.Errorf("%s: fastDecode ok %v, request %v; want plain %v", tc.body, ok, req != nil, tc.plain)
		}
	}
}

// FuzzFastDecodeAnswersAsEncodingJSON holds fastDecode to its promise on
// any body: the answer (status and JSON) is the one encoding/json's
// reader and writer give.
func FuzzFastDecodeAnswersAsEncodingJSON(f *testing.F) {
	limiter := `"limiter": {"algorithm": "token_bucket", "rate": 7.5, "burst": 20}`
	for _, body := range []string{
		`{` + limiter + `, "arrivals": [{"at": 1, "key": "a"}, {"at": 2.5e-1, "cost": 2}, {"at": 3, "key": "a"}]}`,
		`{` + limiter + `, "decisions": false, "arrivals": [{"at": 0}, {"at": 0}, {"at": 1e-9, "cost": 20}]}`,
		`{"policy": ` + tieredPolicy("enforce") + `, "arrivals": [{"at": 0, "key": "c", "tier": "paid", "method": "GET", "path": "/v1/reports/1"}]}`,
		`{` + limiter + `, "arrivals": [{"at": 1, "key": "a\"b"}]}`,
		`{` + limiter + `, "arrivals": [{"at": 1, "cost": 1.0}, {"at": 01}]}`,
		`{` + limiter + `, "arrivals": [{"at": -0}, {"at": 1E2, "cost": 0}]}`,
		`{` + limiter + `, "arrivals": [{"at": 1}]} {}`,
		`{"arrivals": [{"at": 1, "key": "é\t"}], ` + limiter + `}`,
		` {` + limiter + ` , "arrivals" : [ { "at" : 1 , "key" : "" } ] , "bin" : 0.5 } `,
	} {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if len(body) > 64<<10 {
			t.Skip()
		}
		code, got := simulateAnswer(t, body, "")
		fastDecoding, appendElement = false, oldAppendElement
		oldCode, want := simulateAnswer(t, body, "")
		fastDecoding, appendElement = true, sjsonAppend
		if code != oldCode {
			t.Fatalf("status %d, encoding/json's %d (%s)", code, oldCode, want)
		}
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
			if !bytes.Equal(got, want) {
				t.Fatalf("answers differ:\n%.300s\nwant\n%.300s", got, want)
			}
			return
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("the answer differs from encoding/json's:\n%.300s\nwant\n%.300s", got, want)
		}
	})
}
