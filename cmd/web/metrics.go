package main

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"runtime"
	runtimemetrics "runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// durationBuckets are the upper bounds, in seconds, of the request
// duration histogram: Prometheus's defaults plus 30 s, the write timeout,
// for the largest simulations.
var durationBuckets = [...]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// unmatchedRoute labels requests no route matched (404s), so a scan of
// random URLs adds one series, not one per URL.
const unmatchedRoute = "unmatched"

// metrics counts what the server does and writes it in the Prometheus text
// exposition format (version 0.0.4), by hand: a few counters and one
// histogram need no client library. Labels are bounded: the route is the
// pattern that matched (c.Path(), "/static/*"), never the raw URL, and
// unknown methods share one label. Safe for concurrent use.
type metrics struct {
	mu        sync.Mutex
	requests  map[requestLabels]uint64
	durations map[string]*histogram // by route
	rejects   map[string]uint64     // the API rate limit's 429s, by route

	// keys reports how many client keys the API rate limit tracks; nil
	// when the limit is off.
	keys func() int
}

type requestLabels struct {
	route, method string
	code          int
}

// histogram counts observations per bucket (not cumulative; the writer
// sums them) plus one overflow bucket for +Inf.
type histogram struct {
	counts [len(durationBuckets) + 1]uint64
	sum    float64
}

func newMetrics() *metrics {
	return &metrics{
		requests:  map[requestLabels]uint64{},
		durations: map[string]*histogram{},
		rejects:   map[string]uint64{},
	}
}

// routeLabel is the route label of a request: its route pattern.
func routeLabel(c echo.Context) string {
	if p := c.Path(); p != "" {
		return p
	}
	return unmatchedRoute
}

// methodLabel keeps the method label bounded: a client can send any token
// as a method.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// middleware observes every request: its count by route, method and final
// status, and its duration by route. It must run outside the request
// logger, which hands errors to the error handler, so the status it reads
// is the one the client got.
func (m *metrics) middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			code := c.Response().Status
			if !c.Response().Committed && err != nil {
				// Nothing was written yet; Echo's error handler will
				// answer with this status.
				code = http.StatusInternalServerError
				if he := (*echo.HTTPError)(nil); errors.As(err, &he) {
					code = he.Code
				}
			}
			m.observe(routeLabel(c), methodLabel(c.Request().Method), code, time.Since(start))
			return err
		}
	}
}

func (m *metrics) observe(route, method string, code int, d time.Duration) {
	s := d.Seconds()
	i, _ := slices.BinarySearch(durationBuckets[:], s)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[requestLabels{route, method, code}]++
	h := m.durations[route]
	if h == nil {
		h = &histogram{}
		m.durations[route] = h
	}
	h.counts[i]++
	h.sum += s
}

// rejected counts one request the API rate limit refused on route (a route
// pattern, or "" when none matched).
func (m *metrics) rejected(route string) {
	if route == "" {
		route = unmatchedRoute
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rejects[route]++
}

// handler serves GET /metrics.
func (m *metrics) handler(c echo.Context) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/plain; version=0.0.4; charset=utf-8")
	h.Set(echo.HeaderCacheControl, "no-store")
	c.Response().WriteHeader(http.StatusOK)
	w := bufio.NewWriter(c.Response())
	m.write(w)
	return w.Flush()
}

// runtimeSamples are the Go runtime figures /metrics reports, read with
// runtime/metrics, which (unlike runtime.ReadMemStats) does not stop the
// world.
var runtimeSamples = []struct {
	name, help, typ, key string
}{
	{"go_goroutines", "Goroutines that currently exist.", "gauge", "/sched/goroutines:goroutines"},
	{"go_memstats_heap_alloc_bytes", "Bytes of allocated heap objects.", "gauge", "/memory/classes/heap/objects:bytes"},
	{"go_memstats_sys_bytes", "Bytes of memory obtained from the operating system.", "gauge", "/memory/classes/total:bytes"},
	{"go_gc_cycles_total", "Completed garbage collection cycles.", "counter", "/gc/cycles/total:gc-cycles"},
}

// write writes every metric in the text exposition format, sorted so the
// output is stable.
func (m *metrics) write(w *bufio.Writer) {
	m.mu.Lock()
	reqs := make([]requestLabels, 0, len(m.requests))
	for k := range m.requests {
		reqs = append(reqs, k)
	}
	slices.SortFunc(reqs, func(a, b requestLabels) int {
		if c := strings.Compare(a.route, b.route); c != 0 {
			return c
		}
		if c := strings.Compare(a.method, b.method); c != 0 {
			return c
		}
		return a.code - b.code
	})
	counts := make([]uint64, len(reqs))
	for i, k := range reqs {
		counts[i] = m.requests[k]
	}
	routes := slices.Sorted(maps.Keys(m.durations))
	hists := make([]histogram, len(routes))
	for i, r := range routes {
		hists[i] = *m.durations[r]
	}
	rejRoutes := slices.Sorted(maps.Keys(m.rejects))
	rejCounts := make([]uint64, len(rejRoutes))
	for i, r := range rejRoutes {
		rejCounts[i] = m.rejects[r]
	}
	keysFn := m.keys
	m.mu.Unlock()

	metricHeader(w, "http_requests_total", "HTTP requests answered, by route pattern, method and status code.", "counter")
	for i, k := range reqs {
		fmt.Fprintf(w, "http_requests_total{route=%s,method=%s,code=\"%d\"} %d\n", labelValue(k.route), labelValue(k.method), k.code, counts[i])
	}

	metricHeader(w, "http_request_duration_seconds", "Time from receiving a request to the end of its response, by route pattern.", "histogram")
	for i, r := range routes {
		h := hists[i]
		var cum, total uint64
		for _, n := range h.counts {
			total += n
		}
		for j, le := range durationBuckets {
			cum += h.counts[j]
			fmt.Fprintf(w, "http_request_duration_seconds_bucket{route=%s,le=%q} %d\n", labelValue(r), promFloat(le), cum)
		}
		fmt.Fprintf(w, "http_request_duration_seconds_bucket{route=%s,le=\"+Inf\"} %d\n", labelValue(r), total)
		fmt.Fprintf(w, "http_request_duration_seconds_sum{route=%s} %s\n", labelValue(r), promFloat(h.sum))
		fmt.Fprintf(w, "http_request_duration_seconds_count{route=%s} %d\n", labelValue(r), total)
	}

	metricHeader(w, "ratelab_ratelimit_rejected_total", "Requests the API's own rate limit answered with 429, by route pattern.", "counter")
	for i, r := range rejRoutes {
		fmt.Fprintf(w, "ratelab_ratelimit_rejected_total{route=%s} %d\n", labelValue(r), rejCounts[i])
	}

	keys := 0
	if keysFn != nil {
		keys = keysFn()
	}
	metricHeader(w, "ratelab_ratelimit_keys", "Client keys (addresses) the API's rate limit currently tracks.", "gauge")
	fmt.Fprintf(w, "ratelab_ratelimit_keys %d\n", keys)

	samples := make([]runtimemetrics.Sample, len(runtimeSamples))
	for i, s := range runtimeSamples {
		samples[i].Name = s.key
	}
	runtimemetrics.Read(samples)
	for i, s := range runtimeSamples {
		metricHeader(w, s.name, s.help, s.typ)
		var v uint64
		if samples[i].Value.Kind() == runtimemetrics.KindUint64 {
			v = samples[i].Value.Uint64()
		}
		fmt.Fprintf(w, "%s %d\n", s.name, v)
	}
	metricHeader(w, "go_info", "Information about the Go environment.", "gauge")
	fmt.Fprintf(w, "go_info{version=%s} 1\n", labelValue(runtime.Version()))
}

func metricHeader(w *bufio.Writer, name, help, typ string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

// labelValue quotes a label value as the exposition format wants: in
// double quotes, with backslash, double quote and newline escaped.
func labelValue(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// promFloat formats a sample value or bucket bound.
func promFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
