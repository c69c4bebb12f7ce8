package server

import (
	"errors"
	"io"
	"net/http"
	runtimemetrics "runtime/metrics"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/ratelab/ratelab/internal/buildinfo"
)

// durationBuckets are the upper bounds, in seconds, of the request
// duration histogram: Prometheus's defaults plus 30 s, the write timeout,
// for the largest simulations.
var durationBuckets = [...]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// unmatchedRoute labels requests no route matched (404s), so a scan of
// random URLs adds one series, not one per URL.
const unmatchedRoute = "unmatched"

// metrics counts what the server does, in a registry of its own (not
// client_golang's global one, so every server a test builds starts from
// zero), and serves it at /metrics through promhttp. The families:
//
//   - http_requests_total (counter; route, method, code): requests answered.
//   - http_request_duration_seconds (histogram; route; durationBuckets):
//     seconds from receiving a request to the end of its response.
//   - ratelab_ratelimit_rejected_total (counter; route): the API rate
//     limit's 429s.
//   - ratelab_ratelimit_keys (gauge, read at scrape time): client keys the
//     API rate limit tracks, 0 when it is off.
//   - ratelab_build_info (gauge, always 1; version, revision, goversion).
//   - go_gc_cycles_total (counter, read at scrape time): completed GC cycles.
//   - go_* from the Go collector (go_goroutines, go_memstats_*, go_info, …)
//     and process_* from the process collector (CPU seconds, resident
//     memory, open file descriptors, …).
//
// Labels are bounded: the route is the pattern that matched (c.Path(),
// "/static/*"), never the raw URL, and unknown methods share one label.
// Safe for concurrent use.
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	durations *prometheus.HistogramVec
	rejects   *prometheus.CounterVec
	serve     http.Handler

	mu sync.Mutex
	// keys reports how many client keys the API rate limit tracks; nil
	// when the limit is off. Guarded by mu.
	keys func() int
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_request_duration_seconds",
			Help:    "Time from receiving a request to the end of its response, by route pattern.",
			Buckets: durationBuckets[:],
		}, []string{"route"}),
		rejects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ratelab_ratelimit_rejected_total",
			Help: "Requests the API's own rate limit answered with 429, by route pattern.",
		}, []string{"route"}),
	}
	build := buildinfo.Read()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "ratelab_build_info",
		Help:        "Always 1; the labels name the running build: main module version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{"version": build.Version, "revision": build.Revision, "goversion": build.GoVersion},
	})
	buildInfo.Set(1)
	m.reg.MustRegister(
		m.requests,
		m.durations,
		m.rejects,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ratelab_ratelimit_keys",
			Help: "Client keys (addresses) the API's rate limit currently tracks.",
		}, m.limiterKeys),
		buildInfo,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "go_gc_cycles_total",
			Help: "Completed garbage collection cycles.",
		}, gcCycles),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// The server's compress middleware encodes /metrics like every other
	// dynamic response (brotli or gzip, as the client prefers); promhttp
	// compressing first would leave it nothing to do and ignore brotli.
	m.serve = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{DisableCompression: true})
	return m
}

// limiterKeys is the value of ratelab_ratelimit_keys at scrape time.
func (m *metrics) limiterKeys() float64 {
	m.mu.Lock()
	keys := m.keys
	m.mu.Unlock()
	if keys == nil {
		return 0
	}
	return float64(keys())
}

// gcCycles reads the completed GC cycles with runtime/metrics, which
// (unlike runtime.ReadMemStats) does not stop the world.
func gcCycles() float64 {
	s := []runtimemetrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	runtimemetrics.Read(s)
	if s[0].Value.Kind() != runtimemetrics.KindUint64 {
		return 0
	}
	return float64(s[0].Value.Uint64())
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

// observe counts one request answered with code after d.
func (m *metrics) observe(route, method string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.durations.WithLabelValues(route).Observe(d.Seconds())
}

// rejected counts one request the API rate limit refused on route (a route
// pattern, or "" when none matched).
func (m *metrics) rejected(route string) {
	if route == "" {
		route = unmatchedRoute
	}
	m.rejects.WithLabelValues(route).Inc()
}

// handler serves GET /metrics: promhttp, which answers in the format the
// scraper's Accept asks for (the text format by default), never cached.
func (m *metrics) handler(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	m.serve.ServeHTTP(c.Response(), c.Request())
	return nil
}

// write writes every metric of the registry to w in the text exposition
// format (version 0.0.4), families sorted by name.
func (m *metrics) write(w io.Writer) error {
	mfs, err := m.reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}
