package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelab/ratelab/internal/liveserver"
)

// ladder returns n durations 1×unit, 2×unit, …, n×unit.
func ladder(n int, unit time.Duration) []time.Duration {
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = time.Duration(i+1) * unit
	}
	return d
}

func TestPercentile(t *testing.T) {
	ms, us := time.Millisecond, time.Microsecond
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"no values", nil, 99, 0},
		{"one value p50", []time.Duration{7 * ms}, 50, 7 * ms},
		{"one value p99", []time.Duration{7 * ms}, 99, 7 * ms},
		// Four values: rank ⌈p/100 × 4⌉.
		{"4 values p25", ladder(4, ms), 25, 1 * ms}, // rank 1
		{"4 values p50", ladder(4, ms), 50, 2 * ms}, // rank 2
		{"4 values p75", ladder(4, ms), 75, 3 * ms}, // rank 3
		{"4 values p76", ladder(4, ms), 76, 4 * ms}, // ⌈3.04⌉ = rank 4
		// 1…10 ms.
		{"10 values p1", ladder(10, ms), 1, 1 * ms},    // ⌈0.1⌉ = rank 1
		{"10 values p50", ladder(10, ms), 50, 5 * ms},  // rank 5, not the mean of 5 and 6
		{"10 values p90", ladder(10, ms), 90, 9 * ms},  // rank 9 exactly, not 10
		{"10 values p95", ladder(10, ms), 95, 10 * ms}, // ⌈9.5⌉ = rank 10
		{"10 values p100", ladder(10, ms), 100, 10 * ms},
		// 1…200 ms: p99 is rank 198, two values from the top.
		{"200 values p99", ladder(200, ms), 99, 198 * ms},
		// 1…1000 µs.
		{"1000 values p50", ladder(1000, us), 50, 500 * us},
		{"1000 values p99", ladder(1000, us), 99, 990 * us},
		{"1000 values p99.9", ladder(1000, us), 99.9, 999 * us},
		{"1000 values max", ladder(1000, us), 100, 1000 * us},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("percentile(%d values, %g): got %v, want %v", len(tt.sorted), tt.p, got, tt.want)
			}
		})
	}
}

func TestMemLimit(t *testing.T) {
	const MiB = 1 << 20
	tests := []struct {
		warm, want int64
	}{
		{0, 20 * MiB},
		{20 * MiB, 50 * MiB},   // 1.5 × 20 + 20
		{23 * MiB, 54.5 * MiB}, // 1.5 × 23 + 20
		{100 * MiB, 170 * MiB},
	}
	for _, tt := range tests {
		if got := memLimit(tt.warm); got != tt.want {
			t.Errorf("memLimit(%d MiB): got %d, want %d", tt.warm/MiB, got, tt.want)
		}
	}
	rep := &report{memSource: "VmRSS", memWarm: 20 * MiB, memAfter: 51 * MiB, memLimit: memLimit(20 * MiB)}
	if f := rep.failures(); len(f) != 1 || !strings.Contains(f[0], "51.0 MiB after the run, over 50.0 MiB") {
		t.Errorf("failures with 51 MiB after a 20 MiB warm-up: %q; want one about memory", f)
	}
}

func TestParseVmRSS(t *testing.T) {
	tests := []struct {
		name   string
		status string
		want   int64
		wantOK bool
	}{
		{"linux", "Name:\tratelab-web\nVmPeak:\t 1269132 kB\nVmRSS:\t   17444 kB\nRssAnon:\t    6208 kB\n", 17444 << 10, true},
		{"no VmRSS (a kernel thread)", "Name:\tkthreadd\nState:\tS (sleeping)\n", 0, false},
		{"another unit", "VmRSS:\t17 MB\n", 0, false},
		{"not a number", "VmRSS:\tlots kB\n", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := liveserver.ParseVmRSS([]byte(tt.status))
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %d, %t; want %d, %t", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestLoopbackURL(t *testing.T) {
	tests := []struct {
		raw     string
		want    string // the root URL, or "" for refused
		wantErr string
	}{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"http://127.0.0.2:8080/some/path?q=1", "http://127.0.0.2:8080", ""},
		{"http://[::1]:8080/", "http://[::1]:8080", ""},
		{"http://localhost:8080", "http://localhost:8080", ""},
		{"http://example.com", "", "not a loopback address"},
		{"http://10.0.0.1:8080", "", "not a loopback address"},
		{"http://0.0.0.0:8080", "", "not a loopback address"},
		{"http://127.0.0.1.example.com", "", "not a loopback address"},
		{"https://127.0.0.1:8443", "", "want http"},
		{"127.0.0.1:8080", "", ""}, // no scheme: url.Parse fails or the scheme is wrong
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			u, err := loopbackURL(tt.raw)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %v, want an error", u)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q; want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got := u.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRunRefusesOtherHosts(t *testing.T) {
	var out bytes.Buffer
	err := run(t.Context(), []string{"-url", "http://192.0.2.1:8080"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("run -url http://192.0.2.1:8080: got %v, want an error naming the loopback rule", err)
	}
}

func TestClientRefusesOtherHosts(t *testing.T) {
	// Even a URL that slipped past the flag check is refused at the dial.
	// 192.0.2.1 is TEST-NET-1; the dialer refuses before any packet.
	client := newClient(1, time.Second)
	_, _, err := send(t.Context(), client, "http://192.0.2.1:9", targets[0])
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("got %v, want a refusal to connect", err)
	}
}

// fakeServer answers every target the way the preflight expects, and
// /metrics with memory figures; from the failAfter-th simulate request on
// it answers 503.
func fakeServer(t *testing.T, failAfter int64) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var simulated atomic.Int64
	decisions := strings.Repeat(`{"allowed":true},`, 999) + `{"allowed":true}`
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<div data-testid="results"><div data-testid="algorithms"></div><div data-testid="charts"></div></div>`)
	})
	mux.HandleFunc("POST /api/v1/calc", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"rate": {"value": 2}}`)
	})
	mux.HandleFunc("POST /api/v1/simulate", func(w http.ResponseWriter, r *http.Request) {
		if simulated.Add(1) >= failAfter {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"decisions": [`+decisions+`]}`)
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "# TYPE go_memstats_heap_alloc_bytes gauge\ngo_memstats_heap_alloc_bytes 3.052e+06\ngo_memstats_sys_bytes 17930504\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &simulated
}

func TestLoadRunCounts(t *testing.T) {
	srv, simulated := fakeServer(t, 1<<62)
	o := options{baseURL: srv.URL, concurrency: 4, requests: 37, heavyRequests: 11, warmup: 3, duration: 10 * time.Second, timeout: 10 * time.Second}
	var out bytes.Buffer
	rep, err := loadRun(t.Context(), o, &out, io.Discard)
	if err != nil {
		t.Fatalf("loadRun: %v", err)
	}
	t.Log(out.String())
	if f := rep.failures(); len(f) > 0 {
		t.Errorf("failures: %q; want none", f)
	}
	if len(rep.results) != len(targets) {
		t.Fatalf("%d results; want one per target, %d", len(rep.results), len(targets))
	}
	for i, res := range rep.results {
		want := o.requests
		if targets[i].heavy {
			want = o.heavyRequests
		}
		if res.requests != want || res.statuses[http.StatusOK] != want || len(res.latencies) != want {
			t.Errorf("%s: %d requests, %d × 200, %d latencies; want %d of each", res.target, res.requests, res.statuses[http.StatusOK], len(res.latencies), want)
		}
	}
	// One preflight, 3 warm-up and 11 measured requests: exactly, although
	// 4 workers race for them.
	if got := simulated.Load(); got != 1+3+11 {
		t.Errorf("simulate requests the server saw: %d; want 15", got)
	}
	if rep.memSource != "go_memstats_sys_bytes" || rep.memAfter != 17930504 {
		t.Errorf("memory: %s %d; want go_memstats_sys_bytes 17930504 from /metrics", rep.memSource, rep.memAfter)
	}
	for _, want := range []string{"| `GET /healthz` (baseline) | 37 |", "| `POST /api/v1/simulate` | 11 |", "Checks passed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestLoadRunReports5xx(t *testing.T) {
	// The preflight and the warm-up pass; the 10th simulate request and
	// every one after it answers 503.
	srv, _ := fakeServer(t, 10)
	o := options{baseURL: srv.URL, concurrency: 2, requests: 5, heavyRequests: 20, warmup: 3, duration: 10 * time.Second, timeout: 10 * time.Second}
	var out bytes.Buffer
	rep, err := loadRun(t.Context(), o, &out, io.Discard)
	if err != nil {
		t.Fatalf("loadRun: %v", err)
	}
	sim := rep.results[len(rep.results)-1]
	// 1 preflight + 3 warm-up = 4, so measured requests 5…20 of the server's
	// count 5…24 are 200 up to the 9th: 5 × 200 and 15 × 503.
	if sim.statuses[http.StatusOK] != 5 || sim.statuses[http.StatusServiceUnavailable] != 15 {
		t.Errorf("simulate statuses %v; want 5 × 200 and 15 × 503", sim.statuses)
	}
	f := rep.failures()
	if len(f) != 1 || !strings.Contains(f[0], "POST /api/v1/simulate: 15 responses 5xx") {
		t.Errorf("failures %q; want one naming 15 × 5xx on simulate", f)
	}
	if !strings.Contains(out.String(), "Checks FAILED") {
		t.Errorf("report does not say the checks failed:\n%s", out.String())
	}
}

func TestLoadRunPreflight(t *testing.T) {
	// A server whose API limits its callers fails before any load, and
	// says how to fix it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			io.WriteString(w, "ok")
			return
		}
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	o := options{baseURL: srv.URL, concurrency: 1, requests: 1, heavyRequests: 1, duration: time.Second, timeout: time.Second}
	_, err := loadRun(t.Context(), o, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-api-rate 0") {
		t.Errorf("got %v, want a preflight error pointing at -api-rate 0", err)
	}
}

// TestLoadRunRealServer builds the real server and runs a tiny bounded
// load against it: every target answers, all 200, with no errors. It
// asserts nothing about speed.
func TestLoadRunRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server binary; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("RATELAB_INTEGRATION") == "required" {
			t.Fatalf("building the server needs the go command (RATELAB_INTEGRATION=required): %v", err)
		}
		t.Skipf("building the server needs the go command: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	bin, err := liveserver.Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o := options{bin: bin, concurrency: 4, requests: 50, heavyRequests: 50, warmup: 10, duration: 30 * time.Second, timeout: 30 * time.Second}
	var out, progress bytes.Buffer
	rep, err := loadRun(ctx, o, &out, &progress)
	if err != nil {
		t.Fatalf("loadRun: %v\n%s", err, progress.String())
	}
	t.Log(out.String())
	if len(rep.results) != len(targets) {
		t.Fatalf("%d results; want %d", len(rep.results), len(targets))
	}
	for _, res := range append(rep.warmup, rep.results...) {
		if res.requests == 0 || res.count5xx() > 0 || res.unexpected() > 0 || res.errors > 0 {
			t.Errorf("%s: %d requests, statuses %s, %d errors (%s); want some requests, all 200, no errors",
				res.target, res.requests, statusList(res.statuses), res.errors, res.firstErr)
		}
	}
	if rep.logErrors+rep.logWarns > 0 {
		t.Errorf("server log: %d at ERROR, %d at WARN: %q", rep.logErrors, rep.logWarns, rep.logKept)
	}
	// A preflight, 10 warm-up and 50 measured requests per target.
	if want := len(targets) * (1 + 10 + 50); rep.logLines < want {
		t.Errorf("server log: %d lines; want at least %d, one per request", rep.logLines, want)
	}
	if rep.exitErr != nil {
		t.Errorf("server shutdown: %v", rep.exitErr)
	}
	if rep.memSource == "VmRSS" && rep.memWarm <= 0 {
		t.Errorf("VmRSS after the warm-up: %d; want a size", rep.memWarm)
	}
}
