package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

func postTo(t *testing.T, cfg config, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	newServer(cfg).ServeHTTP(rec, req)
	return rec
}

type simulated struct {
	Arrivals  []ArrivalOutput `json:"arrivals"`
	Decisions []Decision      `json:"decisions"`
	Summary   Summary         `json:"summary"`
	Series    []Bin           `json:"series"`
}

func simulateOK(t *testing.T, cfg config, body string) simulated {
	t.Helper()
	rec := postTo(t, cfg, "/api/v1/simulate", body)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	validate(t, openapiSchema(t, "SimulateResponse"), rec.Body.Bytes())
	var out simulated
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSimulateAPIBurstThenRefill(t *testing.T) {
	// Token bucket 7.5 r/s, burst 20: 21 requests at 12.5 ms. The first 20
	// empty the bucket (remaining 19, 18, … 0); the 21st is rejected and
	// needs one token, 1/7.5 s = 133.33 ms. At 12.5 + 133.4 ms = 145.9 ms it
	// passes. Keys and costs are omitted: one key, cost 1.
	var b strings.Builder
	b.WriteString(`{"limiter": {"algorithm": "token_bucket", "rate": 7.5, "burst": 20}, "arrivals": [`)
	for i := 0; i < 21; i++ {
		b.WriteString(`{"at": 0.0125},`)
	}
	b.WriteString(`{"at": 0.1459}]}`)
	out := simulateOK(t, config{}, b.String())
	if len(out.Decisions) != 22 {
		t.Fatalf("%d decisions, want 22", len(out.Decisions))
	}
	for i := 0; i < 20; i++ {
		if d := out.Decisions[i]; !d.Allowed || d.Remaining != int64(19-i) {
			t.Fatalf("decision %d = %+v; want allowed with %d remaining", i, d, 19-i)
		}
	}
	if d := out.Decisions[20]; d.Allowed || math.Abs(d.RetryAfter-1/7.5) > 1e-6 {
		t.Errorf("decision 20 = %+v; want rejected with retry_after 0.1333", d)
	}
	if d := out.Decisions[21]; !d.Allowed {
		t.Errorf("decision 21 = %+v; want allowed after the refill", d)
	}
	s := out.Summary
	if s.Offered != 22 || s.Admitted != 21 || s.Rejected != 1 || s.FirstRejection == nil || *s.FirstRejection != 0.0125 {
		t.Errorf("summary %+v", s)
	}
}

func TestSimulateAPIProcessesInTimeOrderAnswersInInputOrder(t *testing.T) {
	// A fixed window of 1 per second per key. Sent out of order: b at 0.5 s,
	// a at 0.7 s, a at 0.2 s. In time order a@0.2 passes, b@0.5 passes and
	// a@0.7 is rejected; answers come back in the order sent.
	out := simulateOK(t, config{}, `{"limiter": {"algorithm": "fixed_window", "limit": 1, "window": 1},
		"arrivals": [{"at": 0.5, "key": "b"}, {"at": 0.7, "key": "a"}, {"at": 0.2, "key": "a"}]}`)
	got := []bool{out.Decisions[0].Allowed, out.Decisions[1].Allowed, out.Decisions[2].Allowed}
	if want := []bool{true, false, true}; !equalBools(got, want) {
		t.Errorf("allowed %v, want %v", got, want)
	}
	// Rejected at 0.7 s in the window [0, 1 s): retry after 0.3 s.
	if r := out.Decisions[1].RetryAfter; math.Abs(r-0.3) > 1e-9 {
		t.Errorf("retry_after %v, want 0.3", r)
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSimulateAPIPattern(t *testing.T) {
	// 50 requests at once after 2 s against GCRA burst 20: 20 pass.
	out := simulateOK(t, config{}, `{"limiter": {"algorithm": "gcra", "rate": 5, "burst": 20},
		"pattern": {"name": "idle_then_burst", "idle": 2, "count": 50}}`)
	if len(out.Arrivals) != 50 || len(out.Decisions) != 50 || out.Summary.Admitted != 20 {
		t.Fatalf("%d arrivals, %d decisions, %d admitted; want 50, 50, 20", len(out.Arrivals), len(out.Decisions), out.Summary.Admitted)
	}
	if out.Arrivals[0].At != 2 || out.Arrivals[0].Key != "client-1" {
		t.Errorf("first arrival %+v, want client-1 at 2 s", out.Arrivals[0])
	}
	// The same pattern through the engine directly gives the same decisions.
	tr, err := algorithms.Pattern{Name: algorithms.PatternIdleThenBurst, Idle: 2 * time.Second, Count: 50}.Generate(100)
	if err != nil {
		t.Fatal(err)
	}
	lim, _ := algorithms.New(algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 5, Burst: 20})
	for i, a := range tr.Arrivals {
		if d := lim.Allow(a.Key, a.At, a.Cost); d.Allowed != out.Decisions[i].Allowed || d.Remaining != out.Decisions[i].Remaining {
			t.Fatalf("arrival %d: API %+v, engine %+v", i, out.Decisions[i], d)
		}
	}
	// A retry storm carries its own retry policy: retries are offered too.
	storm := simulateOK(t, config{}, `{"limiter": {"algorithm": "token_bucket", "rate": 10, "burst": 10},
		"pattern": {"name": "retry_storm", "clients": 100, "jitter": 0}}`)
	if storm.Summary.Retries == 0 || storm.Summary.Offered != 100+storm.Summary.Retries {
		t.Errorf("retry storm summary %+v; want retries counted as offered", storm.Summary)
	}
}

func TestSimulateAPIReplicasAndNever(t *testing.T) {
	// Five local replicas, round robin, each with burst 2: ten of twenty
	// simultaneous requests pass (one shared state would pass two).
	var b strings.Builder
	b.WriteString(`{"limiter": {"algorithm": "token_bucket", "rate": 1, "burst": 2}, "replicas": {"count": 5, "balance": "round_robin"}, "arrivals": [`)
	for i := 0; i < 20; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"at": 1}`)
	}
	b.WriteString(`]}`)
	if out := simulateOK(t, config{}, b.String()); out.Summary.Admitted != 10 {
		t.Errorf("admitted %d, want 5 × 2 = 10", out.Summary.Admitted)
	}
	// A cost above the burst can never pass: retry_after is -1.
	out := simulateOK(t, config{}, `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 2}, "arrivals": [{"at": 0, "cost": 3}]}`)
	if d := out.Decisions[0]; d.Allowed || d.RetryAfter != -1 {
		t.Errorf("decision %+v; want rejected with retry_after -1", d)
	}
}

func TestSimulateAPIRejectsBadInputByField(t *testing.T) {
	tests := []struct {
		name  string
		cfg   config
		body  string
		field string
		text  string
	}{
		{"missing limiter", config{}, `{"arrivals": [{"at": 1}]}`, "limiter", "missing"},
		{"bad rate", config{}, `{"limiter": {"algorithm": "token_bucket", "rate": -2, "burst": 5}, "arrivals": []}`, "limiter.rate", "-2"},
		{"unknown algorithm", config{}, `{"limiter": {"algorithm": "bucket"}, "arrivals": []}`, "limiter.algorithm", "token_bucket"},
		{"both", config{}, `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "arrivals": [], "pattern": {"name": "steady"}}`, "pattern", "not both"},
		{"negative time", config{}, `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "arrivals": [{"at": -1}]}`, "arrivals[0].at", "-1"},
		{"missing time", config{}, `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "arrivals": [{"key": "a"}]}`, "arrivals[0].at", "missing"},
		{"zero cost", config{}, `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "arrivals": [{"at": 1}, {"at": 2, "cost": 0}]}`, "arrivals[1].cost", "0"},
		{"bad pattern", config{}, `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "pattern": {"name": "steady", "rate": 0, "duration": 10}}`, "pattern.rate", "0"},
		{"unknown pattern", config{}, `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "pattern": {"name": "tsunami"}}`, "pattern.name", "tsunami"},
		{"bad balance", config{}, `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "replicas": {"count": 3, "balance": "sticky"}, "arrivals": []}`, "replicas.balance", "sticky"},
		{"arrivals over the cap", config{maxArrivals: 3}, `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "arrivals": [{"at": 1}, {"at": 1}, {"at": 1}, {"at": 1}]}`, "arrivals", "cap of 3"},
		{"pattern over the cap", config{maxArrivals: 100}, `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "pattern": {"name": "steady", "rate": 1000, "duration": 60}}`, "pattern", "cap of 100"},
		{"huge duration", config{}, `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "pattern": {"name": "steady", "rate": 1, "duration": 1e300}}`, "pattern.duration", "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := postTo(t, tt.cfg, "/api/v1/simulate", tt.body)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", rec.Code, rec.Body)
			}
			validate(t, openapiSchema(t, "Problem"), rec.Body.Bytes())
			var got struct{ Errors []FieldProblem }
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.Errors) == 0 {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if p := got.Errors[0]; p.Field != tt.field || !strings.Contains(p.Message, tt.text) {
				t.Errorf("first problem %+v; want field %q with %q", p, tt.field, tt.text)
			}
		})
	}
}

// FuzzSimulateAPI sends arbitrary bodies to the simulator: the answer is a
// documented status with JSON, never a 500, and the work stays bounded by
// the cap.
func FuzzSimulateAPI(f *testing.F) {
	f.Add(`{"limiter": {"algorithm": "token_bucket", "rate": 7.5, "burst": 20}, "arrivals": [{"at": 0.0125, "key": "client-1", "cost": 1}]}`)
	f.Add(`{"limiter": {"algorithm": "leaky_bucket", "rate": 2, "queue": 3}, "pattern": {"name": "poisson", "rate": 5, "duration": 10, "clients": 3, "seed": 7}}`)
	f.Add(`{"limiter": {"algorithm": "sliding_window", "limit": 10, "window": 1}, "pattern": {"name": "window_boundary", "count": 10, "window": 1}, "replicas": {"count": 2, "balance": "random", "skew": [0, 0.5]}}`)
	f.Add(`{"limiter": {"algorithm": "sliding_log", "limit": 3, "window": 60}, "arrivals": [{"at": 31622400, "cost": 3}, {"at": 0}], "bin": 0.001}`)
	f.Add(`{"limiter": {"algorithm": "fixed_window", "limit": 1, "window": 1e-300}, "pattern": {"name": "retry_storm", "clients": 100000, "jitter": 1}}`)
	pol := tieredPolicy("enforce")
	f.Add(`{"policy": ` + pol + `, "arrivals": [{"at": 0, "key": "alice", "tier": "PAID", "method": "GET", "path": "/v1/reports/7"}, {"at": 0.5, "key": "bob"}]}`)
	f.Add(`{"policy": ` + tieredPolicy("shadow") + `, "pattern": {"name": "poisson", "rate": 5, "duration": 10, "clients": 30},
		"mix": {"tiers": [{"name": "paid", "share": 0.2}, {"name": "free", "share": 0.8}], "requests": [{"method": "GET", "path": "/v1/reports/1", "share": 1}]}, "seed": 3, "bin": 0.5}`)
	f.Add(`{"policy": {"apiVersion": "ratelab/v1", "kind": "RateLimitPolicy", "metadata": {"name": "q"}, "service": {"capacity": 1},
		"defaults": {"limit": {"algorithm": "leaky_bucket", "rate": 1e-6, "queue": 1000000000}}}, "arrivals": [{"at": 31622400, "key": "k"}, {"at": 0, "key": "k"}]}`)
	f.Add(`{"policy": {"kind": "a", "kind": "b", "tiers": [[[[{}]]]]}, "limiter": {"algorithm": "gcra"}, "mix": {"tiers": [{"name": "x", "share": -1}]}}`)
	f.Add(`{"policy": "apiVersion: ratelab/v1", "arrivals": [{"at": 0, "tier": "\u0000", "path": "/?"}]}`)
	fuzzAPI(f, newServer(config{maxArrivals: 20_000}), "/api/v1/simulate")
}

// tieredPolicy is a policy for the policy form's tests, as JSON: clients
// of no tier get a token bucket of burst 2; "free" inherits it; "paid"
// has burst 6; GET /v1/reports/{id} costs 3 and allows 3 per minute per
// client (one report); the whole service takes a burst of 10 at 100 r/s.
func tieredPolicy(mode string) string {
	return `{"apiVersion": "ratelab/v1", "kind": "RateLimitPolicy", "metadata": {"name": "tiered"},
		"service": {"capacity": 1000},
		"defaults": {"mode": "` + mode + `", "limit": {"algorithm": "token_bucket", "rate": 1, "burst": 2}},
		"tiers": [{"name": "free"}, {"name": "paid", "limit": {"algorithm": "token_bucket", "rate": 1, "burst": 6}}],
		"endpoints": [{"match": {"method": "GET", "path": "/v1/reports/{id}"}, "cost": 3,
			"limit": {"algorithm": "fixed_window", "limit": 3, "window": "60s"}}],
		"global": {"limit": {"algorithm": "token_bucket", "rate": 100, "burst": 10}}}`
}

func simulatePolicyOK(t *testing.T, body string) SimulatePolicyResponse {
	t.Helper()
	rec := postTo(t, config{}, "/api/v1/simulate", body)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	validate(t, openapiSchema(t, "SimulateResponse"), rec.Body.Bytes())
	var out SimulatePolicyResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// repeat is n copies of one arrival, as JSON array elements.
func repeat(n int, arrival string) string {
	return strings.TrimSuffix(strings.Repeat(arrival+",", n), ",")
}

func TestSimulateAPIPolicyDecides(t *testing.T) {
	type want struct {
		allowed   bool
		limit     string // "" when admitted
		cost      int64
		remaining int64
	}
	fields := map[string]string{"": "", "default": "defaults.limit", "tier_paid": "tiers[1].limit", "endpoint_0": "endpoints[0].limit", "global": "global.limit"}
	ok := func(cost, remaining int64) want { return want{true, "", cost, remaining} }
	no := func(limit string, cost, remaining int64) want { return want{false, limit, cost, remaining} }
	tests := []struct {
		name     string
		arrivals string
		want     []want
	}{
		{
			// "PAID" is the paid tier: six pass at once (burst 6, not the
			// default's 2), the seventh is the tier limit's. Global has
			// 10 − 7 = 3 left, more than the tier, so remaining is the tier's.
			name:     "tier in other case gets the tier's limit",
			arrivals: repeat(7, `{"at": 0, "key": "alice", "tier": "PAID", "method": "GET", "path": "/v1/items"}`),
			want:     []want{ok(1, 5), ok(1, 4), ok(1, 3), ok(1, 2), ok(1, 1), ok(1, 0), no("tier_paid", 1, 0)},
		},
		{
			// A report costs 3 of every limit: tier 6 → 3, endpoint 3 → 0,
			// global 10 → 7. The second report is the endpoint's (0 < 3) and
			// charges nothing, so three items still pass (tier 3 → 0; had
			// the rejected report been charged, the tier would be empty) and
			// the fourth is the tier's.
			name: "endpoint rejection charges no tier",
			arrivals: `{"at": 0, "key": "alice", "tier": "paid", "method": "GET", "path": "/v1/reports/1"},
				{"at": 0, "key": "alice", "tier": "paid", "method": "get", "path": "/v1/reports/2"},` +
				repeat(4, `{"at": 0, "key": "alice", "tier": "paid", "method": "GET", "path": "/v1/items"}`),
			want: []want{ok(3, 0), no("endpoint_0", 3, 0), ok(1, 2), ok(1, 1), ok(1, 0), no("tier_paid", 1, 0)},
		},
		{
			// {id} is one non-empty segment: neither path is a report, so
			// each costs 1 and the endpoint limit does not apply (the
			// default's burst 2 is what remains: 1, then 0).
			name: "template matches one segment",
			arrivals: `{"at": 0, "key": "bob", "method": "GET", "path": "/v1/reports/7/pages"},
				{"at": 0, "key": "bob", "method": "GET", "path": "/v1/reports/"}`,
			want: []want{ok(1, 1), ok(1, 0)},
		},
		{
			// Eleven clients, one request each at once: each client's limit
			// admits, the global burst of 10 does not admit the eleventh.
			name: "global rejection names global",
			arrivals: func() string {
				var b []string
				for i := range 11 {
					b = append(b, fmt.Sprintf(`{"at": 0, "key": "c%d", "method": "GET", "path": "/v1/items"}`, i))
				}
				return strings.Join(b, ",")
			}(),
			want: []want{ok(1, 1), ok(1, 1), ok(1, 1), ok(1, 1), ok(1, 1), ok(1, 1), ok(1, 1), ok(1, 1), ok(1, 1), ok(1, 0), no("global", 1, 0)},
		},
		{
			// Sent out of order, decided in time order: carol's request at
			// 0.5 s comes after her two at 0 s and finds her bucket empty
			// but half a token refilled (burst 2 at 1 r/s); answers come
			// back in the order sent.
			name:     "time order, answers in the order sent",
			arrivals: `{"at": 0.5, "key": "carol"}, {"at": 0, "key": "carol"}, {"at": 0, "key": "carol"}`,
			want:     []want{no("default", 1, 0), ok(1, 1), ok(1, 0)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := simulatePolicyOK(t, `{"policy": `+tieredPolicy("enforce")+`, "arrivals": [`+tt.arrivals+`]}`)
			if out.Shadow {
				t.Error("shadow is set for an enforcing policy")
			}
			if len(out.Decisions) != len(tt.want) {
				t.Fatalf("%d decisions, want %d", len(out.Decisions), len(tt.want))
			}
			for i, w := range tt.want {
				d := out.Decisions[i]
				if d.Allowed != w.allowed || d.Limit != w.limit || d.Field != fields[w.limit] || d.Cost != w.cost || d.Remaining != w.remaining {
					t.Errorf("step %d: got %+v, want allowed %v by %q (%s), cost %d, remaining %d", i, d, w.allowed, w.limit, fields[w.limit], w.cost, w.remaining)
				}
			}
		})
	}
}

func TestSimulateAPIPolicyRetryAndSummary(t *testing.T) {
	// The endpoint case again: the rejected report waits for the next
	// fixed window, 60 s; the tier's rejection needs one token at 1 r/s;
	// the global's one at 100 r/s.
	out := simulatePolicyOK(t, `{"policy": `+tieredPolicy("enforce")+`, "arrivals": [
		{"at": 0, "key": "alice", "tier": "paid", "method": "GET", "path": "/v1/reports/1"},
		{"at": 0, "key": "alice", "tier": "paid", "method": "GET", "path": "/v1/reports/2"},
		{"at": 0, "key": "alice", "tier": "paid"}, {"at": 0, "key": "alice", "tier": "paid"},
		{"at": 0, "key": "alice", "tier": "paid"}, {"at": 0, "key": "alice", "tier": "paid"},
		{"at": 0, "key": "b1"}, {"at": 0, "key": "b2"}, {"at": 0, "key": "b3"}, {"at": 0, "key": "b4", "tier": "Free"}]}`)
	// Global: 10 − 3 (report) − 3 (items) = 4 left for b1 … b4; the
	// fourth, b4, finds 1 and passes; nothing is the global's.
	retry := []float64{0, 60, 0, 0, 0, 1, 0, 0, 0, 0}
	for i, r := range retry {
		if d := out.Decisions[i]; math.Abs(d.RetryAfter-r) > 1e-9 {
			t.Errorf("step %d: retry_after %v, want %v", i, d.RetryAfter, r)
		}
	}
	s := out.Summary
	if s.Offered != 10 || s.Admitted != 8 || s.Rejected != 2 || s.OfferedCost != 3+3+8 || s.AdmittedCost != 3+7 {
		t.Errorf("summary totals %+v; want 10 offered, 8 admitted, 2 rejected, cost 14 offered and 10 admitted", s)
	}
	// default: b1 b2 b3; tier_free: b4 (inherits the default limit);
	// tier_paid: alice's six; endpoint_0: her two reports; global: all ten.
	wantLimits := []LimitSummary{
		{Name: "default", Field: "defaults.limit", Spec: "token_bucket(rate=1/s, burst=2)", Checked: 3},
		{Name: "tier_free", Field: "tiers[0].limit", Spec: "token_bucket(rate=1/s, burst=2)", Checked: 1},
		{Name: "tier_paid", Field: "tiers[1].limit", Spec: "token_bucket(rate=1/s, burst=6)", Checked: 6, Rejected: 1},
		{Name: "endpoint_0", Field: "endpoints[0].limit", Spec: "fixed_window(limit=3, window=1m0s)", Checked: 2, Rejected: 1},
		{Name: "global", Field: "global.limit", Spec: "token_bucket(rate=100/s, burst=10)", Checked: 10},
	}
	if len(s.Limits) != len(wantLimits) {
		t.Fatalf("limits %+v, want %+v", s.Limits, wantLimits)
	}
	for i, w := range wantLimits {
		if s.Limits[i] != w {
			t.Errorf("limit %d: got %+v, want %+v", i, s.Limits[i], w)
		}
	}
	wantTiers := []TierSummary{
		{Name: "", Field: "defaults", Offered: 3, Admitted: 3},
		{Name: "free", Field: "tiers[0]", Offered: 1, Admitted: 1},
		{Name: "paid", Field: "tiers[1]", Offered: 6, Admitted: 4, Rejected: 2},
	}
	for i, w := range wantTiers {
		if i >= len(s.Tiers) || s.Tiers[i] != w {
			t.Errorf("tiers %+v, want %+v", s.Tiers, wantTiers)
			break
		}
	}
}

func TestSimulateAPIPolicyShadow(t *testing.T) {
	// In shadow mode the decisions are what the limits would do (the
	// third of three at once is the default's), and the answer says so.
	arrivals := `"arrivals": [{"at": 0, "key": "dan"}, {"at": 0, "key": "dan"}, {"at": 0, "key": "dan"}]`
	out := simulatePolicyOK(t, `{"policy": `+tieredPolicy("shadow")+`, `+arrivals+`}`)
	if !out.Shadow {
		t.Error("shadow is not set for a policy in shadow mode")
	}
	if d := out.Decisions[2]; d.Allowed || d.Limit != "default" {
		t.Errorf("third decision %+v; want what the default limit would do: reject", d)
	}
	rec := postTo(t, config{}, "/api/v1/simulate", `{"policy": `+tieredPolicy("enforce")+`, `+arrivals+`}`)
	if strings.Contains(rec.Body.String(), `"shadow"`) {
		t.Errorf("an enforcing policy's answer mentions shadow: %s", rec.Body)
	}
}

func TestSimulateAPIPolicyRejectsBadInputByField(t *testing.T) {
	pol := tieredPolicy("enforce")
	// withPolicy replaces old by repl in the test policy.
	withPolicy := func(old, repl string) string {
		if !strings.Contains(pol, old) {
			t.Fatalf("the test policy has no %q", old)
		}
		return strings.Replace(pol, old, repl, 1)
	}
	steady := `"pattern": {"name": "steady", "clients": 2, "rate": 1, "duration": 1}`
	tests := []struct {
		name  string
		body  string
		field string
		text  string
	}{
		{"both limiter and policy", `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "policy": ` + pol + `, "arrivals": []}`, "policy", "not both"},
		{"neither limiter nor policy", `{"arrivals": [{"at": 1}]}`, "limiter", "or a policy"},
		{"tier burst out of range", `{"policy": ` + withPolicy(`"burst": 6`, `"burst": 0`) + `, "arrivals": []}`, "policy.tiers[1].limit.burst", "out of range"},
		{"unknown policy field", `{"policy": ` + withPolicy(`"burst": 6`, `"brust": 6`) + `, "arrivals": []}`, "policy.tiers[1].limit.brust", "burst"},
		{"window as a number", `{"policy": ` + withPolicy(`"window": "60s"`, `"window": 60`) + `, "arrivals": []}`, "policy.endpoints[0].limit.window", "60s"},
		{"tier names equal ignoring case", `{"policy": ` + withPolicy(`{"name": "free"}`, `{"name": "Paid"}`) + `, "arrivals": []}`, "policy.tiers[1].name", "ignoring ASCII case"},
		{"missing kind", `{"policy": ` + withPolicy(`"kind": "RateLimitPolicy",`, ``) + `, "arrivals": []}`, "policy.kind", "missing"},
		{"policy not an object", `{"policy": [1, 2], "arrivals": []}`, "policy", "want a mapping"},
		{"duplicate key in the policy", `{"policy": {"kind": "a", "kind": "b"}, "arrivals": []}`, "policy", "already defined"},
		{"unknown tier", `{"policy": ` + pol + `, "arrivals": [{"at": 0}, {"at": 0, "tier": "gold"}]}`, "arrivals[1].tier", `"free", "paid"`},
		{"cost with a policy", `{"policy": ` + pol + `, "arrivals": [{"at": 0, "cost": 2}]}`, "arrivals[0].cost", "endpoint's cost"},
		{"path without slash", `{"policy": ` + pol + `, "arrivals": [{"at": 0, "path": "v1/items"}]}`, "arrivals[0].path", "starting with '/'"},
		{"path with query", `{"policy": ` + pol + `, "arrivals": [{"at": 0, "path": "/v1/items?a=1"}]}`, "arrivals[0].path", "query"},
		{"missing time", `{"policy": ` + pol + `, "arrivals": [{"key": "a"}]}`, "arrivals[0].at", "missing"},
		{"tier with a limiter", `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "arrivals": [{"at": 0, "tier": "paid"}]}`, "arrivals[0].tier", "only with a policy"},
		{"mix with a limiter", `{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, ` + steady + `, "mix": {}}`, "mix", "only with a policy"},
		{"mix with arrivals", `{"policy": ` + pol + `, "arrivals": [], "mix": {}}`, "mix", "only with a pattern"},
		{"replicas with a policy", `{"policy": ` + pol + `, "arrivals": [], "replicas": {"count": 2}}`, "replicas", "only with a limiter"},
		{"mix unknown tier", `{"policy": ` + pol + `, ` + steady + `, "mix": {"tiers": [{"name": "gold", "share": 0.5}]}}`, "mix.tiers[0].name", "not a tier"},
		{"mix tier twice", `{"policy": ` + pol + `, ` + steady + `, "mix": {"tiers": [{"name": "paid", "share": 0.1}, {"name": "Paid", "share": 0.1}]}}`, "mix.tiers[1].name", "mix.tiers[0]"},
		{"mix share out of range", `{"policy": ` + pol + `, ` + steady + `, "mix": {"tiers": [{"name": "paid", "share": 1.5}]}}`, "mix.tiers[0].share", "1.5"},
		{"mix shares over 1", `{"policy": ` + pol + `, ` + steady + `, "mix": {"requests": [{"method": "GET", "path": "/a", "share": 0.6}, {"method": "GET", "path": "/b", "share": 0.6}]}}`, "mix.requests", "1.2"},
		{"mix share missing", `{"policy": ` + pol + `, ` + steady + `, "mix": {"requests": [{"method": "GET", "path": "/a"}]}}`, "mix.requests[0].share", "missing"},
		{"pattern cost with a policy", `{"policy": ` + pol + `, "pattern": {"name": "steady", "cost": 5}}`, "pattern.cost", "leave it out"},
		{"retry storm with a policy", `{"policy": ` + pol + `, "pattern": {"name": "retry_storm", "clients": 10}}`, "pattern.name", "with a limiter"},
		{"bin too fine", `{"policy": ` + pol + `, "arrivals": [{"at": 3000}], "bin": 0.001}`, "bin", "wider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := postTo(t, config{}, "/api/v1/simulate", tt.body)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", rec.Code, rec.Body)
			}
			validate(t, openapiSchema(t, "Problem"), rec.Body.Bytes())
			var got struct{ Errors []FieldProblem }
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.Errors) == 0 {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			// The problem with the field (a policy's problems come in the
			// order of the document, not always first).
			for _, p := range got.Errors {
				if p.Field == tt.field {
					if !strings.Contains(p.Message, tt.text) || !strings.HasPrefix(p.Message, tt.field+":") {
						t.Errorf("problem %+v; want its message to start with %q and contain %q", p, tt.field, tt.text)
					}
					return
				}
			}
			t.Errorf("problems %+v; want one for %q", got.Errors, tt.field)
		})
	}
	// Over the arrival cap, as in the limiter form.
	rec := postTo(t, config{maxArrivals: 2}, "/api/v1/simulate", `{"policy": `+pol+`, "arrivals": [{"at": 0}, {"at": 0}, {"at": 0}]}`)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "cap of 2") {
		t.Errorf("over the cap: status %d %s; want 422 naming the cap", rec.Code, rec.Body)
	}
}

func TestSimulateAPIPolicyPatternMix(t *testing.T) {
	// Ten steady clients at 1 r/s for 2 s: client-1 arrives first, then
	// client-2, … (phases (c+½)/10 s). Key j of 10 takes the first tier
	// whose running share exceeds (j+½)/10: 0.05 and 0.15 are under 0.2
	// (paid), 0.25, 0.35, 0.45 under 0.2 + 0.3 (free), the rest default.
	const seed = 11
	body := `{"policy": ` + tieredPolicy("enforce") + `,
		"pattern": {"name": "steady", "clients": 10, "rate": 1, "duration": 2}, "seed": 11,
		"mix": {"tiers": [{"name": "PAID", "share": 0.2}, {"name": "free", "share": 0.3}],
		        "requests": [{"method": "GET", "path": "/v1/reports/9", "share": 0.25}, {"method": "GET", "path": "/v1/items", "share": 0.5}]}}`
	first := postTo(t, config{}, "/api/v1/simulate", body)
	second := postTo(t, config{}, "/api/v1/simulate", body)
	if first.Code != http.StatusOK || !bytes.Equal(first.Body.Bytes(), second.Body.Bytes()) {
		t.Fatalf("two calls differ (status %d):\n%s\n%s", first.Code, first.Body, second.Body)
	}
	out := simulatePolicyOK(t, body)
	wantTier := map[string]string{"client-1": "paid", "client-2": "paid", "client-3": "free", "client-4": "free", "client-5": "free"}
	if len(out.Arrivals) != 20 {
		t.Fatalf("%d arrivals, want 10 clients × 2", len(out.Arrivals))
	}
	// Each arrival's request: u from PCG(seed, "mix") in time order; under
	// 0.25 a report, under 0.75 an item, else a request of no endpoint.
	rng := rand.New(rand.NewPCG(seed, 0x6d6978))
	for i, a := range out.Arrivals {
		if a.Tier != wantTier[a.Key] {
			t.Errorf("arrival %d: %s in tier %q, want %q", i, a.Key, a.Tier, wantTier[a.Key])
		}
		want := ""
		switch u := rng.Float64(); {
		case u < 0.25:
			want = "/v1/reports/9"
		case u < 0.75:
			want = "/v1/items"
		}
		if a.Path != want || (want != "") != (a.Method == "GET") {
			t.Errorf("arrival %d: %s %q, want GET %q", i, a.Method, a.Path, want)
		}
		if wantCost := map[bool]int64{true: 3, false: 1}[want == "/v1/reports/9"]; out.Decisions[i].Cost != wantCost {
			t.Errorf("arrival %d: cost %d, want %d", i, out.Decisions[i].Cost, wantCost)
		}
	}
	if n := []int64{out.Summary.Tiers[0].Offered, out.Summary.Tiers[1].Offered, out.Summary.Tiers[2].Offered}; n[0] != 10 || n[1] != 6 || n[2] != 4 {
		t.Errorf("offered by tier (default, free, paid) %v, want [10 6 4]", n)
	}
	// Another seed draws other requests but keeps the tiers.
	other := simulatePolicyOK(t, strings.Replace(body, `"seed": 11`, `"seed": 12`, 1))
	same := true
	for i, a := range other.Arrivals {
		same = same && a.Path == out.Arrivals[i].Path
		if a.Tier != out.Arrivals[i].Tier {
			t.Errorf("arrival %d: seed 12 puts %s in %q, seed 11 in %q", i, a.Key, a.Tier, out.Arrivals[i].Tier)
		}
	}
	if same {
		t.Error("seeds 11 and 12 draw the same requests")
	}
}

// TestSimulateAPIPolicyREADMEExample sends the README's policy example and
// checks that the answer is the one the README shows (bin and series,
// which it leaves out, aside).
func TestSimulateAPIPolicyREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "Send `\"policy\"` instead of `\"limiter\"`")
	if !ok {
		t.Fatal("the README has no policy example")
	}
	block := func(lang string) string {
		_, after, ok := strings.Cut(rest, "```"+lang+"\n")
		body, tail, closed := strings.Cut(after, "```")
		if !ok || !closed {
			t.Fatalf("no ```%s block after the policy example", lang)
		}
		rest = tail
		return body
	}
	_, body, ok := strings.Cut(block("http"), "\n\n")
	if !ok {
		t.Fatal("the README's request has no body")
	}
	want := block("json")
	out := postTo(t, config{}, "/api/v1/simulate", body)
	if out.Code != http.StatusOK {
		t.Fatalf("status %d: %s", out.Code, out.Body)
	}
	validate(t, openapiSchema(t, "SimulateResponse"), out.Body.Bytes())
	var got, wantV map[string]any
	if err := json.Unmarshal(out.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &wantV); err != nil {
		t.Fatalf("the README's response is not JSON: %v", err)
	}
	delete(got, "bin")
	delete(got, "series")
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(wantV)
	if !bytes.Equal(g, w) {
		t.Errorf("the README's example answers\n%s\nnot what it shows:\n%s", g, w)
	}
}

// TestSimulatePolicyPatternFollowsItsWindow: a policy's window_boundary
// traffic straddles the edge of the policy's own window (30 s here), as
// the designer's does, not the pattern's 10 s: every arrival is within a
// twentieth of the window of 30 s.
func TestSimulatePolicyPatternFollowsItsWindow(t *testing.T) {
	body := `{"policy": {"apiVersion": "ratelab/v1", "kind": "RateLimitPolicy", "metadata": {"name": "w"},
		"service": {"capacity": 100}, "sizing": {"window": "30s"},
		"defaults": {"limit": {"algorithm": "fixed_window", "limit": 50, "window": "30s"}}},
		"pattern": {"name": "window_boundary"}}`
	rec := postTo(t, config{}, "/api/v1/simulate", body)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var got struct {
		Arrivals []struct {
			At float64 `json:"at"`
		} `json:"arrivals"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Arrivals) == 0 {
		t.Fatalf("no arrivals in %s", rec.Body)
	}
	for _, a := range got.Arrivals {
		if a.At < 30-1.5 || a.At > 30+1.5 {
			t.Fatalf("an arrival at %g s, not at the 30 s window's edge", a.At)
		}
	}
}

// A request that meets no limit (no key, no global limit) has no bound on
// what remains; the answer says 2^53 − 1, which a reader that holds
// numbers as float64, JavaScript's among them, reads back exactly, where
// the engine's MaxInt64 would read back as 2^63.
func TestSimulateAPIPolicyUnlimitedRemainingIsExactInFloat64(t *testing.T) {
	policy := `{"apiVersion": "ratelab/v1", "kind": "RateLimitPolicy", "metadata": {"name": "keyed"},
		"service": {"capacity": 1000},
		"defaults": {"limit": {"algorithm": "token_bucket", "rate": 1, "burst": 2}}}`
	rec := postTo(t, config{}, "/api/v1/simulate", `{"policy": `+policy+`, "arrivals": [{"at": 0, "path": "/"}, {"at": 0, "key": "k", "path": "/"}]}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var out struct {
		Decisions []struct {
			Allowed   bool    `json:"allowed"`
			Remaining float64 `json:"remaining"`
		} `json:"decisions"`
		Series []struct {
			Remaining float64 `json:"remaining"`
		} `json:"series"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	const exact = 9007199254740991 // 2^53 − 1
	if len(out.Decisions) != 2 || !out.Decisions[0].Allowed || out.Decisions[0].Remaining != exact || out.Decisions[1].Remaining != 1 {
		t.Fatalf("decisions %+v, want the keyless one allowed with remaining %d, the keyed one 1", out.Decisions, int64(exact))
	}
	if !strings.Contains(rec.Body.String(), `"remaining":9007199254740991`) {
		t.Errorf("the answer does not spell remaining as 9007199254740991: %.300s", rec.Body)
	}
	// The series follows the first arrival's key: the keyless request.
	if len(out.Series) == 0 || out.Series[0].Remaining != exact {
		t.Errorf("series %+v, want its first bin's remaining %d", out.Series, int64(exact))
	}
}

// TestPolicySimulationStopsAtItsDeadline: a policy's run that passes the
// heavy requests' deadline stops and is answered 503 with Retry-After
// before its answer starts (it ran to the end and answered 200 with a
// cut answer: the engine took no context).
func TestPolicySimulationStopsAtItsDeadline(t *testing.T) {
	body := `{"policy": ` + tieredPolicy("enforce") + `, "pattern": {"name": "poisson", "rate": 5, "duration": 10, "clients": 30}, "decisions": false}`
	for _, timeout := range []time.Duration{time.Nanosecond, time.Minute} {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/simulate", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		newServer(config{heavyTimeout: timeout}).ServeHTTP(rec, req)
		want := http.StatusOK
		if timeout == time.Nanosecond {
			want = http.StatusServiceUnavailable
		}
		if rec.Code != want {
			t.Fatalf("deadline %v: status %d, want %d\n%.300s", timeout, rec.Code, want, rec.Body)
		}
		if want == http.StatusServiceUnavailable && (rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "deadline")) {
			t.Errorf("past its deadline: Retry-After %q, body %s; want a wait and the reason", rec.Header().Get("Retry-After"), rec.Body)
		}
	}
}

// TestPolicySummaryWithoutDecisions: a policy's run without decisions
// (which keeps none) answers the same summary, tiers included, and
// series as the run with every decision, whose tiers add up its
// decisions.
func TestPolicySummaryWithoutDecisions(t *testing.T) {
	run := func(decisions bool) map[string]json.RawMessage {
		body := fmt.Sprintf(`{"policy": %s, "pattern": {"name": "poisson", "rate": 5, "duration": 10, "clients": 30},
			"mix": {"tiers": [{"name": "paid", "share": 0.3}, {"name": "free", "share": 0.5}], "requests": [{"method": "GET", "path": "/v1/reports/1", "share": 0.5}]},
			"seed": 9, "decisions": %t}`, tieredPolicy("enforce"), decisions)
		rec := post(t, "/api/v1/simulate", "application/json", body)
		if rec.Code != http.StatusOK {
			t.Fatalf("decisions %t: status %d: %s", decisions, rec.Code, rec.Body)
		}
		var out map[string]json.RawMessage
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	all, summary := run(true), run(false)
	if _, ok := summary["decisions"]; ok {
		t.Error("decisions in an answer without decisions")
	}
	for _, m := range []string{"summary", "series", "bin"} {
		if !bytes.Equal(all[m], summary[m]) {
			t.Errorf("%s without decisions:\n%s\nwith:\n%s", m, summary[m], all[m])
		}
	}
	var decs []PolicyDecision
	var sum PolicySummary
	if err := json.Unmarshal(all["decisions"], &decs); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(all["summary"], &sum); err != nil {
		t.Fatal(err)
	}
	var offered, admitted int64
	for _, tier := range sum.Tiers {
		if tier.Offered == 0 {
			t.Errorf("tier %q offered nothing: the comparison shows little", tier.Field)
		}
		offered, admitted = offered+tier.Offered, admitted+tier.Admitted
	}
	n := int64(0)
	for _, d := range decs {
		if d.Allowed {
			n++
		}
	}
	if offered != int64(len(decs)) || admitted != n {
		t.Errorf("tiers offered %d, admitted %d; the decisions are %d, %d admitted", offered, admitted, len(decs), n)
	}
}
