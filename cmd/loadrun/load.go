package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ratelab/ratelab/internal/liveserver"
)

// target is one request that the load run repeats.
type target struct {
	method, path string
	body         string // JSON, for POST
	// heavy targets run simulations and get -n-heavy requests.
	heavy bool
	// check looks at the decoded body of a 200 in the preflight, so that
	// the load measures real answers rather than, say, an empty page.
	check func(body []byte) error
}

func (t target) String() string { return t.method + " " + t.path }

// calcBody is the README's example: 200 clients whose p99 is 60 requests
// per minute, on a service that takes 1000 r/s.
const calcBody = `{"capacity": 1000, "clients": 200, "p95": 40, "p99": 60, "percentile_unit": "minute"}`

// simulateBody is a token bucket under 100 s of Poisson traffic at 10 r/s:
// 990 arrivals with seed 1, so one answer carries 990 decisions.
const simulateBody = `{"limiter": {"algorithm": "token_bucket", "rate": 7.5, "burst": 20}, ` +
	`"pattern": {"name": "poisson", "rate": 10, "duration": 100, "seed": 1}}`

// targets are measured in this order; /healthz first, as the baseline of
// what the server, the middleware and the loopback cost on their own.
var targets = []target{
	{method: http.MethodGet, path: "/healthz", check: func(b []byte) error {
		if string(b) != "ok" {
			return fmt.Errorf("body %q; want ok", liveserver.Truncate(string(b), 80))
		}
		return nil
	}},
	{method: http.MethodGet, path: "/", heavy: true, check: func(b []byte) error {
		// The default design renders its results and charts on the server.
		for _, id := range []string{"results", "algorithms", "charts"} {
			if !bytes.Contains(b, []byte(`data-testid="`+id+`"`)) {
				return fmt.Errorf("no data-testid=%q in the page", id)
			}
		}
		if bytes.Contains(b, []byte(`data-testid="charts-error"`)) {
			return errors.New("the page shows charts-error")
		}
		return nil
	}},
	{method: http.MethodPost, path: "/api/v1/calc", body: calcBody, check: func(b []byte) error {
		var resp struct {
			Rate *struct{ Value float64 } `json:"rate"`
		}
		if err := json.Unmarshal(b, &resp); err != nil {
			return err
		}
		if resp.Rate == nil || resp.Rate.Value <= 0 {
			return errors.New("no positive rate in the answer")
		}
		return nil
	}},
	{method: http.MethodPost, path: "/api/v1/simulate", body: simulateBody, heavy: true, check: func(b []byte) error {
		var resp struct {
			Decisions []json.RawMessage `json:"decisions"`
		}
		if err := json.Unmarshal(b, &resp); err != nil {
			return err
		}
		if len(resp.Decisions) < 900 {
			return fmt.Errorf("%d decisions; want about 1000", len(resp.Decisions))
		}
		return nil
	}},
}

// request builds t's request against base, a root URL. It asks for gzip,
// as browsers do, so the load includes the server's compression; the
// client then discards the body without decoding it.
func (t target) request(ctx context.Context, base string) (*http.Request, error) {
	var body io.Reader
	if t.body != "" {
		body = strings.NewReader(t.body)
	}
	req, err := http.NewRequestWithContext(ctx, t.method, base+t.path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept-Encoding", "gzip")
	if t.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// newClient returns the HTTP client of a run: one idle connection per
// worker, no proxy, no redirects (a 3xx is reported as a status), and a
// dialer that refuses any address but loopback, whatever a URL or a
// redirect says.
func newClient(concurrency int, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{
		Timeout: 5 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			if !liveserver.IsLoopbackAddr(address) {
				return fmt.Errorf("refusing to connect to %s: not a loopback address", address)
			}
			return nil
		},
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         dialer.DialContext,
			MaxIdleConns:        concurrency,
			MaxIdleConnsPerHost: concurrency,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true, // requests ask for gzip themselves
		},
		Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// preflight sends t once and checks that it answers 200 with the body
// t.check expects, before any load.
func preflight(ctx context.Context, client *http.Client, base string, t target) error {
	req, err := t.request(ctx, base)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
		r = zr
	}
	body, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		hint := ""
		if resp.StatusCode == http.StatusTooManyRequests {
			hint = " (the API's own rate limit is on: start the server with -api-rate 0)"
		}
		return fmt.Errorf("status %d%s: %s", resp.StatusCode, hint, liveserver.Truncate(string(body), 200))
	}
	return t.check(body)
}

// result is what one closed loop measured for one target.
type result struct {
	target    target
	requests  int             // responses plus errors
	elapsed   time.Duration   // from the first request sent to the last answer
	latencies []time.Duration // of every response, sorted
	statuses  map[int]int
	errors    int    // requests without a complete response
	firstErr  string // the first of them
	bytes     int64  // response bytes as sent (gzipped where the server chose to)
	capped    bool   // stopped by the time cap before the count
}

// rate is the completed requests per second.
func (r result) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

// count5xx is the number of responses with a 5xx status.
func (r result) count5xx() int {
	n := 0
	for code, c := range r.statuses {
		if code >= 500 {
			n += c
		}
	}
	return n
}

// unexpected is the number of responses other than 200.
func (r result) unexpected() int {
	n := 0
	for code, c := range r.statuses {
		if code != http.StatusOK {
			n += c
		}
	}
	return n
}

// closedLoop sends t with concurrency workers, each sending its next
// request as soon as its last one is answered, until n requests have been
// sent or limit has passed, whichever comes first; requests in flight at
// the limit complete (each is bounded by the client's timeout).
func closedLoop(ctx context.Context, client *http.Client, base string, t target, n, concurrency int, limit time.Duration) result {
	type worker struct {
		latencies []time.Duration
		statuses  map[int]int
		errors    int
		firstErr  string
		bytes     int64
	}
	workers := make([]worker, concurrency)
	var issued atomic.Int64
	start := time.Now()
	deadline := start.Add(limit)
	var wg sync.WaitGroup
	for i := range workers {
		w := &workers[i]
		w.statuses = map[int]int{}
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) && issued.Add(1) <= int64(n) {
				t0 := time.Now()
				status, nbytes, err := send(ctx, client, base, t)
				d := time.Since(t0)
				if err != nil {
					w.errors++
					if w.firstErr == "" {
						w.firstErr = err.Error()
					}
					continue
				}
				w.latencies = append(w.latencies, d)
				w.statuses[status]++
				w.bytes += nbytes
			}
		})
	}
	wg.Wait()
	r := result{target: t, elapsed: time.Since(start), statuses: map[int]int{}}
	for _, w := range workers {
		r.latencies = append(r.latencies, w.latencies...)
		for code, c := range w.statuses {
			r.statuses[code] += c
		}
		r.errors += w.errors
		if r.firstErr == "" {
			r.firstErr = w.firstErr
		}
		r.bytes += w.bytes
	}
	slices.Sort(r.latencies)
	r.requests = len(r.latencies) + r.errors
	r.capped = r.requests < n && ctx.Err() == nil
	return r
}

// send sends t once and reads the whole response, without decoding it.
func send(ctx context.Context, client *http.Client, base string, t target) (status int, n int64, err error) {
	req, err := t.request(ctx, base)
	if err != nil {
		return 0, 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err = io.Copy(io.Discard, resp.Body)
	if err != nil {
		return 0, n, fmt.Errorf("read body: %w", err)
	}
	return resp.StatusCode, n, nil
}

// percentile returns the p-th percentile (0 < p ≤ 100) of sorted by the
// nearest-rank method: the smallest value such that at least p% of the
// values are at most it, that is sorted[⌈p/100 × N⌉ − 1]. It returns 0
// for no values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// Multiply before dividing, and forgive rounding below an integer,
	// so that p99 of 1000 values is rank 990 and not 991.
	rank := int(math.Ceil(p*float64(len(sorted))/100 - 1e-9))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

// memSample is the server's memory at one moment. Unknown figures are -1.
type memSample struct {
	rss  int64 // VmRSS, when loadrun started the server
	heap int64 // go_memstats_heap_alloc_bytes from /metrics
	sys  int64 // go_memstats_sys_bytes from /metrics
}

// metricsMemory reads the Go heap and the memory obtained from the OS from
// the server's /metrics.
func metricsMemory(ctx context.Context, client *http.Client, base string) (heap, sys int64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return -1, -1, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return -1, -1, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return -1, -1, err
	}
	if resp.StatusCode != http.StatusOK {
		return -1, -1, fmt.Errorf("GET /metrics: status %d", resp.StatusCode)
	}
	heap, sys = -1, -1
	for line := range strings.Lines(string(body)) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		var dst *int64
		switch name {
		case "go_memstats_heap_alloc_bytes":
			dst = &heap
		case "go_memstats_sys_bytes":
			dst = &sys
		default:
			continue
		}
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return -1, -1, fmt.Errorf("GET /metrics: %s: %w", name, err)
		}
		*dst = int64(f)
	}
	if heap < 0 || sys < 0 {
		return heap, sys, errors.New("GET /metrics: no go_memstats_heap_alloc_bytes or go_memstats_sys_bytes")
	}
	return heap, sys, nil
}

// rssSampler records the highest RSS it reads every interval until its
// context ends.
type rssSampler struct {
	read func() (int64, bool)
	mu   sync.Mutex
	peak int64
}

func (s *rssSampler) run(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		s.sample()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *rssSampler) sample() {
	if v, ok := s.read(); ok {
		s.mu.Lock()
		s.peak = max(s.peak, v)
		s.mu.Unlock()
	}
}

// take returns the peak since the last take, and starts a new one.
func (s *rssSampler) take() int64 {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.peak
	s.peak = 0
	return p
}
