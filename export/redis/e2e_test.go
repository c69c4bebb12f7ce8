package redis_test

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/export/redis"
	"github.com/ratelab/ratelab/export/redis/redistest"
	"github.com/ratelab/ratelab/policy"
)

// e2ePolicy has slow rates, so that nothing refills noticeably while the
// test runs on real Redis TIME.
const e2ePolicy = `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: e2e}
service: {capacity: 100, on_store_failure: fail_closed}
defaults:
  key: api_key
  mode: %MODE%
  response: {status: 429, headers: [ietf, legacy, x], retry_after: true}
  limit: {algorithm: token_bucket, rate: 0.01, burst: 3}
tiers:
  - {name: gold, limit: {algorithm: sliding_log, limit: 5, window: 1h}}
endpoints:
  - {match: {method: GET, path: /heavy}, cost: 2}
  - {match: {method: POST, path: /orders}, limit: {algorithm: gcra, rate: 0.01, burst: 1}}
global: {limit: {algorithm: token_bucket, rate: 0.001, burst: 1000}}
`

// e2eEnforce runs inside the generated package against the real Redis
// at REDIS_ADDR. The expected answers, by hand:
//   - a sends 3 requests (burst 3 at 0.01/s): remaining 2, 1, 0; the 4th is
//     rejected, Retry-After ⌈(1 token)/(0.01/s) − ε⌉ = 100 s.
//   - b's GET /heavy costs 2 (remaining 1); a second one needs 2, has 1:
//     rejected (100 s) and charges nothing, so b's GET /x then passes.
//   - c in tier gold (sliding_log 5 per 1h): 5 pass, the 6th waits for the
//     oldest to leave, ⌈3600 s − ε⌉ = 3600.
//   - d's POST /orders passes the endpoint's gcra (burst 1), the second is
//     rejected by it and charges neither d's default limit nor the global
//     one: d's GET /x then leaves 1 of d's 3 tokens.
//   - the global bucket holds what was admitted: 3 + 3 + 5 + 2 = 13 tokens.
//   - with Redis unreachable, fail_closed answers 503 with Retry-After 1.
//
// Every 429 and the 503 are RFC 9457 problem details; a 429's detail
// names the limit that rejected it.
const e2eEnforce = `package ratelimit

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// checkProblem checks that w is RFC 9457 problem details of status whose
// detail contains detail, and nothing else.
func checkProblem(t *testing.T, what string, w *httptest.ResponseRecorder, status int, detail string) {
	t.Helper()
	if got := w.Header().Get("Content-Type"); got != "application/problem+json" {
		t.Errorf("%s: Content-Type %q, want application/problem+json", what, got)
	}
	var p map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("%s: body %q: %v", what, w.Body, err)
	}
	d, _ := p["detail"].(string)
	if p["type"] != "about:blank" || p["title"] != http.StatusText(status) || p["status"] != float64(status) || !strings.Contains(d, detail) || len(p) != 4 {
		t.Errorf("%s: problem %v; want type about:blank, title %q, status %d and a detail containing %q", what, p, http.StatusText(status), status, detail)
	}
}

func serve(h http.Handler, method, path, key, tier string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	r.Header.Set("X-API-Key", key)
	if tier != "" {
		r.Header.Set("X-Tier", tier)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestEndToEnd(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")})
	defer rdb.Close()
	h := NewLimiter(rdb).Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	steps := []struct {
		method, path, key, tier string
		status                  int
		remaining, retryAfter   string
		detail                  string // of a 429
	}{
		{"GET", "/x", "a", "", 200, "2", "", ""},
		{"GET", "/x", "a", "", 200, "1", "", ""},
		{"GET", "/x", "a", "", 200, "0", "", ""},
		{"GET", "/x", "a", "", 429, "0", "100", "Rate limit exceeded: limit \"default\" allows up to 3 requests at once"},
		{"GET", "/heavy", "b", "", 200, "1", "", ""},
		{"GET", "/heavy", "b", "", 429, "1", "100", "Rate limit exceeded: limit \"default\" allows up to 3 requests at once"},
		{"GET", "/x", "b", "", 200, "0", "", ""},
		{"GET", "/x", "c", "gold", 200, "4", "", ""},
		{"GET", "/x", "c", "gold", 200, "3", "", ""},
		{"GET", "/x", "c", "gold", 200, "2", "", ""},
		{"GET", "/x", "c", "gold", 200, "1", "", ""},
		{"GET", "/x", "c", "gold", 200, "0", "", ""},
		{"GET", "/x", "c", "gold", 429, "0", "3600", "Rate limit exceeded: limit \"tier_gold\" allows no more than 5 in any hour."},
		{"POST", "/orders", "d", "", 200, "0", "", ""},
		{"POST", "/orders", "d", "", 429, "0", "100", "Rate limit exceeded: limit \"endpoint_1\" allows up to 1 request at once"},
		{"GET", "/x", "d", "", 200, "1", "", ""},
	}
	for i, s := range steps {
		w := serve(h, s.method, s.path, s.key, s.tier)
		if w.Code != s.status || w.Header().Get("RateLimit-Remaining") != s.remaining || w.Header().Get("X-RateLimit-Remaining") != s.remaining || w.Header().Get("Retry-After") != s.retryAfter {
			t.Errorf("step %d (%s %s as %s): status %d, remaining %q, Retry-After %q; want %d, %q, %q (headers %v)",
				i, s.method, s.path, s.key, w.Code, w.Header().Get("RateLimit-Remaining"), w.Header().Get("Retry-After"), s.status, s.remaining, s.retryAfter, w.Header())
		}
		if s.status == 429 {
			checkProblem(t, "step "+strconv.Itoa(i), w, 429, s.detail)
		}
	}
	w := serve(h, "GET", "/x", "e", "")
	if got, want := w.Header().Get("RateLimit-Policy"), "\"default\";q=3;w=300, \"global\";q=1000;w=1000000"; got != want {
		t.Errorf("RateLimit-Policy %q, want %q", got, want)
	}
	if got, want := w.Header().Get("RateLimit"), "\"default\";r=2;t=100"; got != want {
		t.Errorf("RateLimit %q, want %q", got, want)
	}
	// 13 admitted before e's request, 14 with it.
	d, err := rdb.HGet(context.Background(), "ratelab:{global:global}", "d").Result()
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := strconv.ParseFloat(d, 64); math.Round(f) != 14 {
		t.Errorf("global bucket: %s tokens taken, want 14 (rejected requests charge nothing)", d)
	}

	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer down.Close()
	w = serve(NewLimiter(down).Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})), "GET", "/x", "a", "")
	if w.Code != 503 || w.Header().Get("Retry-After") != "1" {
		t.Errorf("Redis down, fail_closed: status %d, Retry-After %q; want 503, \"1\"", w.Code, w.Header().Get("Retry-After"))
	}
	checkProblem(t, "Redis down", w, 503, "The rate limiter is unavailable")
}
`

// e2eShadow: in shadow mode the same 5 requests from one client all pass
// (the 4th and 5th would be rejected), with the headers still set. It
// runs in its own Redis database, so that what it counts never reaches
// e2eenforce's, whichever of the two packages go test runs first.
const e2eShadow = `package ratelimit

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestShadow(t *testing.T) {
	// Database 1: go test runs this package beside e2eenforce, and both
	// policies keep their global limit under the same key, which
	// e2eenforce counts.
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR"), DB: 1})
	defer rdb.Close()
	h := NewLimiter(rdb).Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for i, want := range []string{"2", "1", "0", "0", "0"} {
		r := httptest.NewRequest("GET", "/x", nil)
		r.Header.Set("X-API-Key", "shadow")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 || w.Header().Get("RateLimit-Remaining") != want {
			t.Errorf("request %d: status %d, remaining %q; want 200, %q", i, w.Code, w.Header().Get("RateLimit-Remaining"), want)
		}
	}
}
`

// TestRenderCompiles builds and vets every test policy's file with the
// repository's go.mod (go-redis v9), offline, and runs the generated
// middleware on a real redis-server: limit selection, costs, headers, a
// rejection that charges nothing, fail_closed, and shadow mode.
func TestRenderCompiles(t *testing.T) {
	addr := redistest.Start(t)
	files := map[string]string{}
	for _, tp := range exporttest.Policies(t) {
		ex, err := redis.Render(tp.Policy, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		files[strings.ReplaceAll(tp.Name, "-", "")+"/"+ex.Filename] = string(ex.Body)
	}
	for _, mode := range []string{"enforce", "shadow"} {
		p, err := policy.Decode(strings.NewReader(strings.Replace(e2ePolicy, "%MODE%", mode, 1)))
		if err != nil {
			t.Fatal(err)
		}
		ex, err := redis.Render(p, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		files["e2e"+mode+"/"+ex.Filename] = string(ex.Body)
	}
	files["e2eenforce/e2e_test.go"] = e2eEnforce
	files["e2eshadow/e2e_test.go"] = e2eShadow
	dir := redistest.Compile(t, files)
	out := redistest.Go(t, dir, []string{"REDIS_ADDR=" + addr}, "test", "-count=1", "./...")
	for _, pkg := range []string{"e2eenforce", "e2eshadow"} {
		if !strings.Contains(out, "ok  \tratelabexport/"+pkg) {
			t.Errorf("go test did not pass ratelabexport/%s: %s", pkg, out)
		}
	}
}
