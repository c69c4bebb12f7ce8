package server

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/internal/cputime"
)

// benchArrivals is the size of BenchmarkSimulateAPI's run: the API's cap.
const benchArrivals = defaultMaxArrivals

// benchSimulateBody is a simulate request of n arrivals of 1 000 keys,
// about n/100 s long in all (10 r/s per key, Poisson, times to the
// microsecond), through a token bucket of 8 r/s and burst 20 per key, so
// about a tenth is rejected, that asks for every decision or (decisions
// false) only the summary and the series; it returns the body and the
// same simulation for algorithms.Simulate.
func benchSimulateBody(n int, decisions bool) ([]byte, algorithms.Simulation) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"limiter": {"algorithm": "token_bucket", "rate": 8, "burst": 20}, "decisions": %t, "arrivals": [`, decisions)
	as := make([]algorithms.Arrival, n)
	at := 0.0
	for i := range as {
		at += rng.ExpFloat64() / 10_000
		key := fmt.Sprintf("client-%d", rng.IntN(1000))
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"at": %.6f, "key": %q}`, at, key)
		var s float64
		fmt.Sscanf(fmt.Sprintf("%.6f", at), "%g", &s)
		as[i] = algorithms.Arrival{At: fromSeconds(s), Key: key, Cost: 1}
	}
	b.WriteString(`]}`)
	spec := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 8, Burst: 20}
	sim := algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: spec}}, Traffic: algorithms.Traffic{Arrivals: as}, Window: time.Minute, Decisions: decisions}
	return b.Bytes(), sim
}

// BenchmarkSimulateAPI compares, in one run, algorithms.Simulate on a
// million arrivals (engine) with POST /api/v1/simulate of the same
// arrivals through the whole server (api: every middleware, the decoder,
// the run, the streamed answer of every decision, compressed as for a
// browser that accepts gzip, br and zstd, written to a sink that counts the
// bytes), and the same two for "decisions": false (engine-summary,
// api-summary: the answer is the summary and the series). ns/arrival and
// allocs/1000arrivals are per arrival of the request (cpu-ns/arrival the
// process's CPU time, the collector's included, which a loaded machine
// inflates far less than the wall time); out-bytes is the answer as sent.
func BenchmarkSimulateAPI(b *testing.B) {
	perArrival := func(b *testing.B, run func()) {
		b.ReportAllocs()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start, cpu := time.Now(), cputime.Self()
		n := 0
		for b.Loop() {
			run()
			n++
		}
		elapsed, cpu := time.Since(start), cputime.Self()-cpu
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(elapsed.Nanoseconds())/float64(n)/benchArrivals, "ns/arrival")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n)/benchArrivals, "cpu-ns/arrival")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n)/(benchArrivals/1000), "allocs/1000arrivals")
	}
	srv := newServer(config{})
	for _, tc := range []struct {
		suffix    string
		decisions bool
		coding    string // the answer's Content-Encoding
	}{{"", true, "gzip"}, {"-summary", false, "br"}} {
		body, sim := benchSimulateBody(benchArrivals, tc.decisions)
		b.Run("engine"+tc.suffix, func(b *testing.B) {
			perArrival(b, func() {
				if _, err := algorithms.Simulate(sim); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run("api"+tc.suffix, func(b *testing.B) {
			w := &statusSink{header: http.Header{}}
			perArrival(b, func() {
				clear(w.header)
				w.n, w.code = 0, 0
				req := httptest.NewRequest(http.MethodPost, "/api/v1/simulate", bytes.NewReader(body))
				req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
				req.Header.Set(echo.HeaderAcceptEncoding, "gzip, deflate, br, zstd")
				srv.ServeHTTP(w, req)
				if w.code != http.StatusOK {
					b.Fatalf("status %d", w.code)
				}
				if ce := w.header.Get(echo.HeaderContentEncoding); ce != tc.coding {
					b.Fatalf("Content-Encoding %q, want %q", ce, tc.coding)
				}
			})
			b.ReportMetric(float64(w.n), "out-bytes")
		})
	}
}

// statusSink is a ResponseWriter that keeps the status and counts the
// body's bytes without holding them.
type statusSink struct {
	header http.Header
	code   int
	n      int
}

func (w *statusSink) Header() http.Header { return w.header }
func (w *statusSink) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *statusSink) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.n += len(p)
	return len(p), nil
}
