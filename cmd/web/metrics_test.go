package main

import (
	"bufio"
	"bytes"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// sampleLine is one sample of the text exposition format: a metric name,
// optional labels (name="value" with \\, \" and \n escapes) and a value.
var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*)?\})? (\S+)$`)

var commentLine = regexp.MustCompile(`^# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .+|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped))$`)

// parseExposition checks that every line of body is a comment or a sample,
// that each sample's family was declared by a TYPE line before it, and
// returns the samples by their name and labels as written.
func parseExposition(t *testing.T, body string) map[string]float64 {
	t.Helper()
	samples := map[string]float64{}
	types := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			if !commentLine.MatchString(line) {
				t.Fatalf("line %d: malformed comment %q", n, line)
			}
			if f := strings.Fields(line); f[1] == "TYPE" {
				if _, dup := types[f[2]]; dup {
					t.Fatalf("line %d: second TYPE for %s", n, f[2])
				}
				types[f[2]] = f[3]
			}
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %d: not a sample: %q", n, line)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil && m[3] != "+Inf" && m[3] != "-Inf" {
			t.Fatalf("line %d: value %q: %v", n, m[3], err)
		}
		family := m[1]
		if types[family] == "" {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(family, suffix); ok && types[base] == "histogram" {
					family = base
				}
			}
		}
		if types[family] == "" {
			t.Fatalf("line %d: %s has no TYPE line before it", n, m[1])
		}
		key := m[1] + m[2]
		if _, dup := samples[key]; dup {
			t.Fatalf("line %d: duplicate sample %s", n, key)
		}
		samples[key] = v
	}
	return samples
}

// scrape GETs /metrics from e and parses it.
func scrape(t *testing.T, e http.Handler) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", rec.Code)
	}
	if got, want := rec.Header().Get(echo.HeaderContentType), "text/plain; version=0.0.4; charset=utf-8"; got != want {
		t.Errorf("Content-Type: got %q, want %q", got, want)
	}
	return parseExposition(t, rec.Body.String())
}

func TestMetrics(t *testing.T) {
	e := newServer(testConfig(t))
	serve(t, e, http.MethodGet, "/")
	serve(t, e, http.MethodGet, "/")
	serve(t, e, http.MethodGet, "/static/css/app.css")
	serve(t, e, http.MethodGet, "/static/css/missing.css")
	serve(t, e, http.MethodGet, "/no/such/page?x=1")
	serve(t, e, http.MethodGet, "/another/missing/page")
	serve(t, e, "BREW", "/")
	post(t, "/api/v1/calc", "application/json", `{}`) // a separate server: must not show here
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/calc", strings.NewReader(`{"capacity": -1, "clients": 1}`))
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	e.ServeHTTP(rec, req)

	samples := scrape(t, e)
	want := map[string]float64{
		`http_requests_total{route="/",method="GET",code="200"}`:                   2,
		`http_requests_total{route="/",method="OTHER",code="405"}`:                 1,
		`http_requests_total{route="/static/*",method="GET",code="200"}`:           1,
		`http_requests_total{route="/static/*",method="GET",code="404"}`:           1,
		`http_requests_total{route="unmatched",method="GET",code="404"}`:           2,
		`http_requests_total{route="/api/v1/calc",method="POST",code="422"}`:       1,
		`http_request_duration_seconds_count{route="/"}`:                           3,
		`http_request_duration_seconds_bucket{route="/",le="+Inf"}`:                3,
		`http_request_duration_seconds_count{route="unmatched"}`:                   2,
		`ratelab_ratelimit_keys`:                                                   0,
		`http_request_duration_seconds_bucket{route="/api/v1/calc",le="+Inf"}`:     1,
		`http_request_duration_seconds_count{route="/static/*"}`:                   2,
		`http_requests_total{route="/metrics",method="GET",code="200"}`:            math.NaN(), // counted after this scrape
		`http_requests_total{route="/api/v1/calc",method="POST",code="200"}`:       math.NaN(), // the other server's
		`ratelab_ratelimit_rejected_total{route="/api/v1/calc"}`:                   math.NaN(), // no limit, no rejections
		`http_requests_total{route="/no/such/page",method="GET",code="404"}`:       math.NaN(), // raw URLs are no labels
		`http_requests_total{route="/no/such/page?x=1",method="GET",code="404"}`:   math.NaN(),
		`http_requests_total{route="/static/css/app.css",method="GET",code="200"}`: math.NaN(),
	}
	for key, w := range want {
		got, ok := samples[key]
		if math.IsNaN(w) {
			if ok {
				t.Errorf("%s: present (%v), want absent", key, got)
			}
			continue
		}
		if !ok || got != w {
			t.Errorf("%s: got %v (present %v), want %v", key, got, ok, w)
		}
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_memstats_sys_bytes"} {
		if samples[name] <= 0 {
			t.Errorf("%s: got %v, want > 0", name, samples[name])
		}
	}

	// Buckets are cumulative: never decreasing, ending at the count.
	for _, route := range []string{"/", "/static/*", "unmatched", "/api/v1/calc"} {
		prev := 0.0
		for _, le := range durationBuckets {
			key := `http_request_duration_seconds_bucket{route="` + route + `",le="` + strconv.FormatFloat(le, 'g', -1, 64) + `"}`
			v, ok := samples[key]
			if !ok || v < prev {
				t.Errorf("%s: got %v (present %v), want ≥ %v", key, v, ok, prev)
			}
			prev = v
		}
		if inf := samples[`http_request_duration_seconds_bucket{route="`+route+`",le="+Inf"}`]; inf < prev {
			t.Errorf("%s: +Inf bucket %v below %v", route, inf, prev)
		}
	}

	// The scrape itself is counted by the next one.
	if got := scrape(t, e)[`http_requests_total{route="/metrics",method="GET",code="200"}`]; got != 1 {
		t.Errorf("scrapes counted: got %v, want 1", got)
	}
}

func TestHistogramBuckets(t *testing.T) {
	m := newMetrics()
	for _, d := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 7 * time.Millisecond, 2 * time.Second, time.Minute} {
		m.observe("/x", http.MethodGet, 200, d)
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	m.write(w)
	w.Flush()
	s := parseExposition(t, buf.String())
	want := map[string]float64{
		`http_request_duration_seconds_bucket{route="/x",le="0.005"}`: 2, // 1 ms and exactly 5 ms
		`http_request_duration_seconds_bucket{route="/x",le="0.01"}`:  3,
		`http_request_duration_seconds_bucket{route="/x",le="1"}`:     3,
		`http_request_duration_seconds_bucket{route="/x",le="2.5"}`:   4,
		`http_request_duration_seconds_bucket{route="/x",le="30"}`:    4,
		`http_request_duration_seconds_bucket{route="/x",le="+Inf"}`:  5,
		`http_request_duration_seconds_count{route="/x"}`:             5,
		`http_request_duration_seconds_sum{route="/x"}`:               62.013,
		`http_requests_total{route="/x",method="GET",code="200"}`:     5,
	}
	for key, w := range want {
		if got := s[key]; math.Abs(got-w) > 1e-9 {
			t.Errorf("%s: got %v, want %v", key, got, w)
		}
	}
}

func TestLabelValueEscapes(t *testing.T) {
	if got, want := labelValue("a\"b\\c\nd"), `"a\"b\\c\nd"`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	m := newMetrics()
	m.observe("/odd\"route\\\n", http.MethodGet, 200, time.Millisecond)
	m.rejected("")
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	m.write(w)
	w.Flush()
	s := parseExposition(t, buf.String())
	if s[`http_requests_total{route="/odd\"route\\\n",method="GET",code="200"}`] != 1 {
		t.Errorf("escaped sample missing:\n%s", buf.String())
	}
	if s[`ratelab_ratelimit_rejected_total{route="unmatched"}`] != 1 {
		t.Errorf("rejection without a route missing:\n%s", buf.String())
	}
}
