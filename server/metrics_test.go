package server

import (
	"bufio"
	"bytes"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ratelab/ratelab/algorithms"
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
				if base, ok := strings.CutSuffix(family, suffix); ok && (types[base] == "histogram" || types[base] == "summary" && suffix != "_bucket") {
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
	if got, want := rec.Header().Get(echo.HeaderContentType), "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"; got != want {
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
		`http_requests_total{code="200",method="GET",route="/"}`:                   2,
		`http_requests_total{code="405",method="OTHER",route="/"}`:                 1,
		`http_requests_total{code="200",method="GET",route="/static/*"}`:           1,
		`http_requests_total{code="404",method="GET",route="/static/*"}`:           1,
		`http_requests_total{code="404",method="GET",route="unmatched"}`:           2,
		`http_requests_total{code="422",method="POST",route="/api/v1/calc"}`:       1,
		`http_request_duration_seconds_count{route="/"}`:                           3,
		`http_request_duration_seconds_bucket{route="/",le="+Inf"}`:                3,
		`http_request_duration_seconds_count{route="unmatched"}`:                   2,
		`ratelab_ratelimit_keys`:                                                   0,
		`http_request_duration_seconds_bucket{route="/api/v1/calc",le="+Inf"}`:     1,
		`http_request_duration_seconds_count{route="/static/*"}`:                   2,
		`http_requests_total{code="200",method="GET",route="/metrics"}`:            math.NaN(), // counted after this scrape
		`http_requests_total{code="200",method="POST",route="/api/v1/calc"}`:       math.NaN(), // the other server's
		`ratelab_ratelimit_rejected_total{route="/api/v1/calc"}`:                   math.NaN(), // no limit, no rejections
		`http_requests_total{code="404",method="GET",route="/no/such/page"}`:       math.NaN(), // raw URLs are no labels
		`http_requests_total{code="404",method="GET",route="/no/such/page?x=1"}`:   math.NaN(),
		`http_requests_total{code="200",method="GET",route="/static/css/app.css"}`: math.NaN(),
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
	if got := scrape(t, e)[`http_requests_total{code="200",method="GET",route="/metrics"}`]; got != 1 {
		t.Errorf("scrapes counted: got %v, want 1", got)
	}
}

func TestHistogramBuckets(t *testing.T) {
	m := newMetrics()
	for _, d := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 7 * time.Millisecond, 2 * time.Second, time.Minute} {
		m.observe("/x", http.MethodGet, 200, d)
	}
	var buf bytes.Buffer
	if err := m.write(&buf); err != nil {
		t.Fatal(err)
	}
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
		`http_requests_total{code="200",method="GET",route="/x"}`:     5,
	}
	for key, w := range want {
		if got := s[key]; math.Abs(got-w) > 1e-9 {
			t.Errorf("%s: got %v, want %v", key, got, w)
		}
	}
}

func TestLabelValueEscapes(t *testing.T) {
	m := newMetrics()
	m.observe("/odd\"route\\\n", http.MethodGet, 200, time.Millisecond)
	m.rejected("")
	var buf bytes.Buffer
	if err := m.write(&buf); err != nil {
		t.Fatal(err)
	}
	s := parseExposition(t, buf.String())
	if s[`http_requests_total{code="200",method="GET",route="/odd\"route\\\n"}`] != 1 {
		t.Errorf("escaped sample missing:\n%s", buf.String())
	}
	if s[`ratelab_ratelimit_rejected_total{route="unmatched"}`] != 1 {
		t.Errorf("rejection without a route missing:\n%s", buf.String())
	}
}

// labelsOf returns a sample's labels as a map.
func labelsOf(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// sampleValue returns the value of the sample of family name with exactly
// the labels want (a counter's or gauge's value, a histogram's count), and
// whether there is one.
func sampleValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		if !maps.Equal(labelsOf(m), want) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsScrapeOverHTTP scrapes the real server over HTTP, as
// Prometheus does, and parses the answer with prometheus/common's text
// parser: every family is there with its type, and the requests between
// two scrapes moved their counters.
func TestMetricsScrapeOverHTTP(t *testing.T) {
	cfg := testConfig(t)
	cfg.apiLimit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 1}
	cfg.clock = newFakeClock().now // one request, then 429s
	srv := httptest.NewServer(newServer(cfg))
	defer srv.Close()
	do := func(method, path, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			t.Fatal(err)
		}
		return res.StatusCode
	}
	scrapeHTTP := func() map[string]*dto.MetricFamily {
		t.Helper()
		res, err := srv.Client().Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get(echo.HeaderContentType), "text/plain; version=0.0.4") {
			t.Fatalf("GET /metrics: %d, Content-Type %q", res.StatusCode, res.Header.Get(echo.HeaderContentType))
		}
		if got := res.Header.Get(echo.HeaderCacheControl); got != "no-store" {
			t.Errorf("Cache-Control: got %q, want no-store", got)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(res.Body)
		if err != nil {
			t.Fatalf("parse /metrics: %v", err)
		}
		return fams
	}

	before := scrapeHTTP()
	for _, want := range []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, "/healthz", http.StatusOK},
		{http.MethodGet, "/healthz", http.StatusOK},
		{http.MethodPost, "/api/v1/calc", http.StatusUnprocessableEntity},
		{http.MethodPost, "/api/v1/calc", http.StatusTooManyRequests},
	} {
		if got := do(want.method, want.path, `{}`); got != want.code {
			t.Fatalf("%s %s: status %d, want %d", want.method, want.path, got, want.code)
		}
	}
	after := scrapeHTTP()

	for _, tt := range []struct {
		name string
		typ  dto.MetricType
	}{
		{"http_requests_total", dto.MetricType_COUNTER},
		{"http_request_duration_seconds", dto.MetricType_HISTOGRAM},
		{"ratelab_ratelimit_rejected_total", dto.MetricType_COUNTER},
		{"ratelab_ratelimit_keys", dto.MetricType_GAUGE},
		{"ratelab_build_info", dto.MetricType_GAUGE},
		{"go_gc_cycles_total", dto.MetricType_COUNTER},
		{"go_goroutines", dto.MetricType_GAUGE},
		{"go_memstats_heap_alloc_bytes", dto.MetricType_GAUGE},
		{"go_memstats_sys_bytes", dto.MetricType_GAUGE},
		{"go_info", dto.MetricType_GAUGE},
		{"go_gc_duration_seconds", dto.MetricType_SUMMARY},
		{"process_cpu_seconds_total", dto.MetricType_COUNTER},
		{"process_resident_memory_bytes", dto.MetricType_GAUGE},
		{"process_open_fds", dto.MetricType_GAUGE},
		{"process_start_time_seconds", dto.MetricType_GAUGE},
	} {
		f := after[tt.name]
		if f == nil {
			t.Errorf("%s: missing", tt.name)
			continue
		}
		if f.GetType() != tt.typ {
			t.Errorf("%s: type %v, want %v", tt.name, f.GetType(), tt.typ)
		}
		if len(f.GetMetric()) == 0 {
			t.Errorf("%s: no samples", tt.name)
		}
	}

	for _, tt := range []struct {
		name          string
		labels        map[string]string
		before, after float64 // -1: absent
	}{
		{"http_requests_total", map[string]string{"route": "/healthz", "method": "GET", "code": "200"}, -1, 2},
		{"http_requests_total", map[string]string{"route": "/api/v1/calc", "method": "POST", "code": "422"}, -1, 1},
		{"http_requests_total", map[string]string{"route": "/api/v1/calc", "method": "POST", "code": "429"}, -1, 1},
		{"http_requests_total", map[string]string{"route": "/metrics", "method": "GET", "code": "200"}, -1, 1},
		{"http_request_duration_seconds", map[string]string{"route": "/healthz"}, -1, 2},
		{"ratelab_ratelimit_rejected_total", map[string]string{"route": "/api/v1/calc"}, -1, 1},
		{"ratelab_ratelimit_keys", map[string]string{}, 0, 1}, // one client: 127.0.0.1
	} {
		for _, s := range []struct {
			fams map[string]*dto.MetricFamily
			want float64
			when string
		}{{before, tt.before, "before"}, {after, tt.after, "after"}} {
			got, ok := sampleValue(s.fams, tt.name, tt.labels)
			if s.want < 0 && ok || s.want >= 0 && (!ok || got != s.want) {
				t.Errorf("%s%v %s the requests: got %v (present %v), want %v", tt.name, tt.labels, s.when, got, ok, s.want)
			}
		}
	}

	bi := after["ratelab_build_info"].GetMetric()
	if len(bi) != 1 || bi[0].GetGauge().GetValue() != 1 {
		t.Fatalf("ratelab_build_info: %v, want one sample of 1", bi)
	}
	l := labelsOf(bi[0])
	if len(l) != 3 || l["version"] == "" || l["revision"] == "" || l["goversion"] != runtime.Version() {
		t.Errorf("ratelab_build_info labels: got %v, want version, revision and goversion %s", l, runtime.Version())
	}
}
