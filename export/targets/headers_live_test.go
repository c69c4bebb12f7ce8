package targets

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/redis/redistest"
	"github.com/ratelab/ratelab/policy"
)

// The generated Go middleware of every Go target (x/time/rate, throttled,
// redis_rate, the Redis scripts' go-redis file) sends the rate-limit
// fields the rest of ratelab shows for the same design: compiled
// unchanged, served through httptest, with a frozen clock where the
// library takes one (Redis reads its own TIME; the requests of one case
// come within milliseconds, far from any boundary of a whole second).
// Every expected value below is worked out by hand.

// headerPolicies are the designs of the header cases.
var headerPolicies = map[string]string{
	// A bucket of 20 at 2/s: w = 20/2 = 10 s.
	"burst": `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: burst}
service: {capacity: 100}
defaults:
  key: api_key
  response: {headers: [ietf, legacy]}
  limit: {algorithm: token_bucket, rate: 2, burst: 20}
`,
	// The default limit waits 1 s after one request, the endpoint's 4 s.
	"longest": `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: longest}
service: {capacity: 100}
defaults:
  key: api_key
  limit: {algorithm: token_bucket, rate: 1, burst: 1}
endpoints:
  - {match: {method: GET, path: /slow}, limit: {algorithm: gcra, rate: 0.25, burst: 1}}
`,
	// 5 per 10 s in a log: more quota when the oldest request leaves it.
	"log": `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: log}
service: {capacity: 100}
defaults:
  key: api_key
  limit: {algorithm: sliding_log, limit: 5, window: 10s}
`,
}

// headerStep is one request of a case and the headers it must get ("-"
// for a header that must be absent); n repeats it, the headers checked
// on the last.
type headerStep struct {
	n          int
	path, key  string
	status     int
	rateLimit  string
	policy     string
	retryAfter string
}

var headerCases = []struct {
	policy string
	steps  []headerStep
	// exactOnly: only for targets that run the policy's algorithm
	// itself (the Go libraries turn a window into a bucket).
	exactOnly bool
}{
	{policy: "burst", steps: []headerStep{
		// 12 of 20 used at once: 8 left, the ninth token half a second
		// away (t=1, not the 6 s until the bucket is full).
		{n: 12, path: "/", key: "a", status: 200, rateLimit: `"default";r=8;t=1`, policy: `"default";q=20;w=10`, retryAfter: "-"},
		{n: 8, path: "/", key: "a", status: 200, rateLimit: `"default";r=0;t=1`, policy: `"default";q=20;w=10`, retryAfter: "-"},
		{n: 1, path: "/", key: "a", status: 429, rateLimit: `"default";r=0;t=1`, retryAfter: "1"},
		// Without its key a request passes only the global limit, and
		// this policy has none.
		{n: 25, path: "/", key: "", status: 200, rateLimit: "-", retryAfter: "-"},
	}},
	{policy: "longest", steps: []headerStep{
		{n: 1, path: "/slow", key: "b", status: 200},
		// Both limits reject; the request passes only once the endpoint's
		// 4 s are over, and that is the limit the fields describe.
		{n: 1, path: "/slow", key: "b", status: 429, rateLimit: `"endpoint_0";r=0;t=4`, retryAfter: "4"},
	}},
	{policy: "log", exactOnly: true, steps: []headerStep{
		{n: 3, path: "/", key: "c", status: 200, rateLimit: `"default";r=2;t=10`, policy: `"default";q=5;w=10`},
	}},
}

// headerDriver is the test file put beside each generated file: it runs
// the steps in HEADER_STEPS through the middleware and prints each step's
// last response as one JSON line.
func headerDriver(setup string, imports string) string {
	return `package ratelimit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
` + imports + `
)

func TestHeaders(t *testing.T) {
	var steps []struct {
		N         int
		Path, Key string
	}
	if err := json.Unmarshal([]byte(os.Getenv("HEADER_STEPS")), &steps); err != nil {
		t.Fatal(err)
	}
	` + setup + `
	h := lim.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, s := range steps {
		var w *httptest.ResponseRecorder
		for range s.N {
			r := httptest.NewRequest("GET", s.Path, nil)
			if s.Key != "" {
				r.Header.Set("X-API-Key", s.Key)
			}
			w = httptest.NewRecorder()
			h.ServeHTTP(w, r)
		}
		get := func(k string) string {
			if v, ok := w.Header()[k]; ok {
				return v[0]
			}
			return "-"
		}
		out, _ := json.Marshal(map[string]any{"status": w.Code, "ratelimit": get("Ratelimit"), "policy": get("Ratelimit-Policy"), "retry": get("Retry-After")})
		fmt.Printf("HEADERS %s\n", out)
	}
}
`
}

func TestGoExportsSendTheHeaders(t *testing.T) {
	addr := redistest.Start(t)
	frozen := `lim.Now = func() time.Time { return time.Unix(1700000000, 0) }`
	redisSetup := `rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")})
	defer rdb.Close()
	lim := NewLimiter(rdb)`
	targets := []struct {
		name, setup, imports string
		exact                bool
	}{
		{"xtime-rate", "lim := NewLimiter()\n\t" + frozen, "\t\"time\"", false},
		{"throttled", "lim, err := NewLimiter()\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\t" + frozen, "\t\"time\"", false},
		{"redis-rate", redisSetup, "\n\t\"github.com/redis/go-redis/v9\"", false},
		{"redis-lua", redisSetup, "\n\t\"github.com/redis/go-redis/v9\"", true},
	}
	files := map[string]string{}
	type run struct {
		pkg   string
		steps []headerStep
	}
	var runs []run
	for _, tg := range targets {
		for i, c := range headerCases {
			if c.exactOnly && !tg.exact {
				continue
			}
			p, err := policy.Decode(strings.NewReader(headerPolicies[c.policy]))
			if err != nil {
				t.Fatal(err)
			}
			ex, err := Render(tg.name, p, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			pkg := fmt.Sprintf("h%s%d", strings.ReplaceAll(tg.name, "-", ""), i)
			files[pkg+"/"+ex.Filename] = string(ex.Body)
			files[pkg+"/headers_test.go"] = headerDriver(tg.setup, tg.imports)
			runs = append(runs, run{pkg, c.steps})
		}
	}
	dir := redistest.Compile(t, files)
	for _, r := range runs {
		t.Run(r.pkg, func(t *testing.T) {
			var in []map[string]any
			for _, s := range r.steps {
				in = append(in, map[string]any{"N": s.n, "Path": s.path, "Key": s.key})
			}
			steps, _ := json.Marshal(in)
			out := redistest.Go(t, dir, []string{"REDIS_ADDR=" + addr, "HEADER_STEPS=" + string(steps)}, "test", "-count=1", "-v", "-run", "^TestHeaders$", "./"+r.pkg)
			var got []map[string]any
			for _, line := range strings.Split(out, "\n") {
				if rest, ok := strings.CutPrefix(line, "HEADERS "); ok {
					var m map[string]any
					if err := json.Unmarshal([]byte(rest), &m); err != nil {
						t.Fatalf("%q: %v", line, err)
					}
					got = append(got, m)
				}
			}
			if len(got) != len(r.steps) {
				t.Fatalf("%d responses for %d steps:\n%s", len(got), len(r.steps), out)
			}
			for i, s := range r.steps {
				g := got[i]
				if int(g["status"].(float64)) != s.status {
					t.Errorf("step %d: status %v, want %d", i, g["status"], s.status)
				}
				for _, f := range []struct{ name, want string }{{"ratelimit", s.rateLimit}, {"policy", s.policy}, {"retry", s.retryAfter}} {
					if f.want != "" && g[f.name] != f.want {
						t.Errorf("step %d: %s %q, want %q", i, f.name, g[f.name], f.want)
					}
				}
			}
		})
	}
}
