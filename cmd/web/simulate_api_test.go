package main

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
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
	Arrivals  []arrivalOut   `json:"arrivals"`
	Decisions []decisionJSON `json:"decisions"`
	Summary   summaryJSON    `json:"summary"`
	Series    []binJSON      `json:"series"`
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
			validate(t, openapiSchema(t, "Errors"), rec.Body.Bytes())
			var got struct{ Errors []fieldProblem }
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
	fuzzAPI(f, newServer(config{maxArrivals: 20_000}), "/api/v1/simulate")
}
