package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
)

// fakeClock is the rate limit's clock in tests: it moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// limitedServer is the real server with the API limited to rate r/s and
// burst b per client, on a fake clock.
func limitedServer(t *testing.T, alg algorithms.Name, rate float64, burst int64) (*echo.Echo, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	cfg := testConfig(t)
	cfg.apiLimit = algorithms.Spec{Algorithm: alg, Rate: rate, Burst: burst}
	cfg.clock = clock.now
	return newServer(cfg), clock
}

// from sends method target (with a JSON body if body is not empty) from the
// client address ip.
func from(t *testing.T, e http.Handler, ip, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	}
	req.RemoteAddr = ip + ":40000"
	if strings.Contains(ip, ":") {
		req.RemoteAddr = "[" + ip + "]:40000"
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

const calcBody = `{"capacity": 1000, "clients": 10}`

func TestAPIRateLimit(t *testing.T) {
	for _, alg := range []algorithms.Name{algorithms.NameTokenBucket, algorithms.NameGCRA} {
		t.Run(string(alg), func(t *testing.T) {
			const rate, burst = 20, 40
			e, clock := limitedServer(t, alg, rate, burst)
			const a, b = "203.0.113.1", "203.0.113.2"

			// A full bucket admits the burst at one instant.
			for i := range burst {
				rec := from(t, e, a, http.MethodPost, "/api/v1/calc", calcBody)
				if rec.Code != http.StatusOK {
					t.Fatalf("request %d: status %d, want 200: %s", i+1, rec.Code, rec.Body)
				}
				if got, want := rec.Header().Get("RateLimit-Policy"), `"api";q=40;w=2`; got != want {
					t.Fatalf("request %d: RateLimit-Policy %q, want %q", i+1, got, want)
				}
				// One more token comes 50 ms later: t rounds up to 1 s.
				if got, want := rec.Header().Get("RateLimit"), fmt.Sprintf(`"api";r=%d;t=1`, burst-1-i); got != want {
					t.Fatalf("request %d: RateLimit %q, want %q", i+1, got, want)
				}
			}

			// The burst+1-th is refused.
			rec := from(t, e, a, http.MethodPost, "/api/v1/calc", calcBody)
			checkRejected(t, rec, 1)

			// Another client is unaffected.
			if rec := from(t, e, b, http.MethodPost, "/api/v1/calc", calcBody); rec.Code != http.StatusOK {
				t.Errorf("other client: status %d, want 200", rec.Code)
			}

			// One emission interval later one more request passes, and
			// only one.
			clock.advance(time.Second / rate)
			if rec := from(t, e, a, http.MethodPost, "/api/v1/calc", calcBody); rec.Code != http.StatusOK {
				t.Errorf("after 1/rate: status %d, want 200: %s", rec.Code, rec.Body)
			}
			checkRejected(t, from(t, e, a, http.MethodPost, "/api/v1/calc", calcBody), 1)

			// Pages, assets, health and metrics are never limited: the
			// client's bucket is empty, so one limited request would show.
			for _, target := range []string{"/", "/healthz", "/static/css/app.css", "/metrics", "/no/such/page"} {
				for range 2 {
					rec := from(t, e, a, http.MethodGet, target, "")
					if rec.Code == http.StatusTooManyRequests || rec.Header().Get("RateLimit") != "" {
						t.Fatalf("GET %s was limited: %d %q", target, rec.Code, rec.Header().Get("RateLimit"))
					}
				}
			}

			// Every route under /api/ shares the client's bucket.
			checkRejected(t, from(t, e, a, http.MethodGet, "/api/openapi.json", ""), 1)

			// The rejections are counted by route, and both clients are
			// tracked.
			samples := scrape(t, e)
			if got := samples[`ratelab_ratelimit_rejected_total{route="/api/v1/calc"}`]; got != 2 {
				t.Errorf("rejections of /api/v1/calc: got %v, want 2", got)
			}
			if got := samples[`ratelab_ratelimit_rejected_total{route="/api/openapi.json"}`]; got != 1 {
				t.Errorf("rejections of /api/openapi.json: got %v, want 1", got)
			}
			if got := samples["ratelab_ratelimit_keys"]; got != 2 {
				t.Errorf("keys: got %v, want 2", got)
			}
			if got := samples[`http_requests_total{code="429",method="POST",route="/api/v1/calc"}`]; got != 2 {
				t.Errorf("429s of /api/v1/calc: got %v, want 2", got)
			}
		})
	}
}

// checkRejected checks a 429 with the API's error body and every header,
// and Retry-After wantRetry.
func checkRejected(t *testing.T, rec *httptest.ResponseRecorder, wantRetry int64) {
	t.Helper()
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status: got %d, want 429: %s", rec.Code, rec.Body)
	}
	h := rec.Header()
	if got, want := h.Get(echo.HeaderRetryAfter), strconv.FormatInt(wantRetry, 10); got != want {
		t.Errorf("Retry-After: got %q, want %q", got, want)
	}
	if got, want := h.Get("RateLimit"), fmt.Sprintf(`"api";r=0;t=%d`, wantRetry); got != want {
		t.Errorf("RateLimit: got %q, want %q", got, want)
	}
	if h.Get("RateLimit-Policy") == "" {
		t.Error("no RateLimit-Policy")
	}
	if got := h.Get(echo.HeaderContentType); got != mimeProblemJSON {
		t.Errorf("Content-Type: got %q, want %s", got, mimeProblemJSON)
	}
	checkSecurityHeaders(t, h)
	validate(t, openapiSchema(t, "Problem"), rec.Body.Bytes())
	var body Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Errors) != 1 {
		t.Fatalf("body: %v: %s", err, rec.Body)
	}
	if body.Status != http.StatusTooManyRequests || body.Title != "Too Many Requests" || body.Type != "about:blank" {
		t.Errorf("problem type %q, title %q, status %d; want about:blank, Too Many Requests, 429", body.Type, body.Title, body.Status)
	}
	if !strings.Contains(body.Detail, "too many requests") || !strings.Contains(body.Detail, fmt.Sprintf("retry after %d s", wantRetry)) {
		t.Errorf("detail %q: want the limit and the wait", body.Detail)
	}
	if p := body.Errors[0]; p.Field != "" || p.Message != body.Detail {
		t.Errorf("problem: got %+v, want the detail for the whole request", p)
	}
}

// TestRetryAfterIsNeverZero rejects requests at many offsets of a fast
// limit, whose exact waits are far below a second, and at a slow one, and
// checks that Retry-After is whole seconds, at least 1, at least the exact
// wait and equal to RateLimit's t.
func TestRetryAfterIsNeverZero(t *testing.T) {
	tests := []struct {
		rate  float64
		burst int64
	}{
		{1000, 1},
		{20, 40},
		{0.1, 2},
		{3, 5},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("rate=%g,burst=%d", tt.rate, tt.burst), func(t *testing.T) {
			e, clock := limitedServer(t, algorithms.NameTokenBucket, tt.rate, tt.burst)
			rejected := 0
			for i := range 200 {
				rec := from(t, e, "198.51.100.7", http.MethodGet, "/api/openapi.json", "")
				if rec.Code == http.StatusTooManyRequests {
					rejected++
					ra, err := strconv.ParseInt(rec.Header().Get(echo.HeaderRetryAfter), 10, 64)
					if err != nil || ra < 1 {
						t.Fatalf("step %d: Retry-After %q, want whole seconds ≥ 1", i, rec.Header().Get(echo.HeaderRetryAfter))
					}
					if exact := 1 / tt.rate; float64(ra) < exact-1e-9 && exact <= 1 {
						t.Fatalf("step %d: Retry-After %d is below the exact wait %gs", i, ra, exact)
					}
					if want := fmt.Sprintf(`"api";r=0;t=%d`, ra); rec.Header().Get("RateLimit") != want {
						t.Fatalf("step %d: RateLimit %q, want %q", i, rec.Header().Get("RateLimit"), want)
					}
				}
				clock.advance(time.Duration(float64(time.Second) / tt.rate / 7))
			}
			if rejected == 0 {
				t.Fatal("nothing was rejected; the test shows nothing")
			}
		})
	}
}

func TestRetryAfterWaitsForTheWholeGap(t *testing.T) {
	// One request per 10 s: a client refused right after its only token
	// went must wait the full 10 s, which Retry-After says, and not before.
	e, clock := limitedServer(t, algorithms.NameGCRA, 0.1, 1)
	const ip = "198.51.100.8"
	if rec := from(t, e, ip, http.MethodGet, "/api/openapi.json", ""); rec.Code != http.StatusOK {
		t.Fatalf("first: %d", rec.Code)
	}
	if got := from(t, e, ip, http.MethodGet, "/api/openapi.json", "").Header().Get("RateLimit-Policy"); got != `"api";q=1;w=10` {
		t.Errorf("RateLimit-Policy: got %q", got)
	}
	clock.advance(2500 * time.Millisecond)
	checkRejected(t, from(t, e, ip, http.MethodGet, "/api/openapi.json", ""), 8) // 7.5 s left, rounded up
	clock.advance(7499 * time.Millisecond)
	checkRejected(t, from(t, e, ip, http.MethodGet, "/api/openapi.json", ""), 1)
	clock.advance(time.Millisecond)
	if rec := from(t, e, ip, http.MethodGet, "/api/openapi.json", ""); rec.Code != http.StatusOK {
		t.Errorf("after Retry-After: %d", rec.Code)
	}
}

func TestAPIRateLimitIPv6SharesA64(t *testing.T) {
	e, _ := limitedServer(t, algorithms.NameTokenBucket, 1, 2)
	for i, ip := range []string{"2001:db8:1:2::1", "2001:db8:1:2::ffff"} {
		if rec := from(t, e, ip, http.MethodGet, "/api/openapi.json", ""); rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d", i, rec.Code)
		}
	}
	checkRejected(t, from(t, e, "2001:db8:1:2:aaaa::3", http.MethodGet, "/api/openapi.json", ""), 1)
	if rec := from(t, e, "2001:db8:1:3::1", http.MethodGet, "/api/openapi.json", ""); rec.Code != http.StatusOK {
		t.Errorf("another /64: %d", rec.Code)
	}
}

func TestAPIRateLimitOff(t *testing.T) {
	e := newServer(testConfig(t)) // the zero config has no limit
	for i := range 200 {
		rec := from(t, e, "203.0.113.1", http.MethodGet, "/api/openapi.json", "")
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d", i, rec.Code)
		}
		if rec.Header().Get("RateLimit") != "" || rec.Header().Get("RateLimit-Policy") != "" {
			t.Fatalf("RateLimit headers with the limit off")
		}
	}
}

func TestAPIRateLimitReclaimsIdleKeys(t *testing.T) {
	const rate, burst = 20, 40
	clock := newFakeClock()
	m := newMetrics()
	lim, err := newAPILimiter(algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: rate, Burst: burst}, clock.now, m)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		lim.allow(fmt.Sprintf("198.51.100.%d", i))
	}
	if got := lim.keys(); got != 100 {
		t.Fatalf("keys: got %d, want 100", got)
	}
	// Refilled after 50 ms, but nothing is reclaimed before the interval.
	clock.advance(reclaimInterval - time.Second)
	lim.allow("203.0.113.1")
	if got := lim.keys(); got != 101 {
		t.Fatalf("keys before the interval: got %d, want 101", got)
	}
	clock.advance(time.Second)
	lim.allow("203.0.113.2")
	if got := lim.keys(); got != 1 {
		t.Errorf("keys after the interval: got %d, want 1 (the client that just sent; the others refilled)", got)
	}

	// A flood of new addresses within one interval is reclaimed whenever
	// the table reaches reclaimMinKeys: keys idle for burst/rate = 2 s are
	// rested and go.
	const flood = 3 * reclaimMinKeys
	for i := range flood {
		lim.allow(fmt.Sprintf("k%d", i))
		clock.advance((reclaimInterval - time.Second) / flood)
	}
	if got := lim.keys(); got >= reclaimMinKeys {
		t.Errorf("keys after a flood of %d clients in %s: got %d, want under %d", flood, reclaimInterval-time.Second, got, reclaimMinKeys)
	}
}

func TestNewAPILimiterRejectsOtherAlgorithms(t *testing.T) {
	_, err := newAPILimiter(algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 10, Window: time.Second}, nil, newMetrics())
	if err == nil {
		t.Error("fixed_window: got no error")
	}
	_, err = newAPILimiter(algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 0}, nil, newMetrics())
	if err == nil {
		t.Error("burst 0: got no error")
	}
}

func TestClientKey(t *testing.T) {
	tests := []struct{ ip, want string }{
		{"192.0.2.1", "192.0.2.1"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"not an address", "not an address"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := clientKey(tt.ip); got != tt.want {
			t.Errorf("clientKey(%q): got %q, want %q", tt.ip, got, tt.want)
		}
	}
}

// TestRateLimitHeaderT walks one client of a token bucket (0.5/s, burst
// 3: a token every 2 s) on the fake clock and checks the RateLimit item
// after each request: t is the whole seconds until one more token,
// rounded up, 0 once the bucket is full, and a rejection's Retry-After.
func TestRateLimitHeaderT(t *testing.T) {
	clock := newFakeClock()
	lim, err := newAPILimiter(algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 0.5, Burst: 3}, clock.now, newMetrics())
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		wait time.Duration // before the request
		cost int64
		want string
	}{
		{0, 1, `"api";r=2;t=2`},                       // 2 tokens left, the third in 2 s
		{0, 2, `"api";r=0;t=2`},                       // empty: the first back in 2 s
		{500 * time.Millisecond, 1, `"api";r=0;t=2`},  // rejected: 1.5 s, Retry-After 2
		{1 * time.Second, 0, `"api";r=0;t=1`},         // half a second to the first token
		{1500 * time.Millisecond, 0, `"api";r=1;t=1`}, // 1 token; the next 1 s away (1.0 s)
		{10 * time.Second, 0, `"api";r=3;t=0`},        // full: more is already here
	}
	for i, st := range steps {
		clock.advance(st.wait)
		d, more := lim.allowN("c", st.cost)
		if got := lim.rateLimit(d, more); got != st.want {
			t.Errorf("step %d: RateLimit %s, want %s (decision %+v, more %v)", i, got, st.want, d, more)
		}
	}
}

func TestAPIRateLimitIsSafeForConcurrentUse(t *testing.T) {
	const burst = 40
	e, _ := limitedServer(t, algorithms.NameTokenBucket, 1, burst)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		admitted int
	)
	for range 8 {
		wg.Go(func() {
			for range 25 {
				req := httptest.NewRequest(http.MethodGet, "/api/openapi.json", nil)
				req.RemoteAddr = "203.0.113.9:1234"
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				if rec.Code == http.StatusOK {
					mu.Lock()
					admitted++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	// The clock stands still, so exactly the burst passes.
	if admitted != burst {
		t.Errorf("admitted %d of 200 concurrent requests, want %d", admitted, burst)
	}
	if got := scrape(t, e)[`ratelab_ratelimit_rejected_total{route="/api/openapi.json"}`]; got != 200-burst {
		t.Errorf("rejections counted: got %v, want %d", got, 200-burst)
	}
}

// TestAPIRateLimitManyClientsConcurrently sends from many clients at once
// (their keys spread over the limiter's shards) on a clock that stands
// still: each client gets exactly its burst, and every key is tracked.
func TestAPIRateLimitManyClientsConcurrently(t *testing.T) {
	const burst, clients, goroutines, per = 3, 50, 8, 40
	e, _ := limitedServer(t, algorithms.NameGCRA, 1, burst)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		admitted = map[string]int{}
	)
	for g := range goroutines {
		wg.Go(func() {
			for i := range per {
				ip := fmt.Sprintf("192.0.2.%d", (g*per+i)%clients)
				req := httptest.NewRequest(http.MethodGet, "/api/openapi.json", nil)
				req.RemoteAddr = ip + ":1234"
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				if rec.Code == http.StatusOK {
					mu.Lock()
					admitted[ip]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for i := range clients {
		if ip := fmt.Sprintf("192.0.2.%d", i); admitted[ip] != burst {
			t.Errorf("%s: admitted %d, want the burst %d", ip, admitted[ip], burst)
		}
	}
	if got := scrape(t, e)["ratelab_ratelimit_keys"]; got != clients {
		t.Errorf("keys: got %v, want %d", got, clients)
	}
}
