package envoy

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// TestFillFor checks the fill interval search against intervals worked out
// by hand: the shortest multiple of 50 ms at which rate × interval is a
// whole number of tokens.
func TestFillFor(t *testing.T) {
	tests := []struct {
		rate      float64
		tokens    int64
		interval  time.Duration
		wantExact bool
	}{
		{800, 40, 50 * time.Millisecond, true}, // 800 × 0.05 = 40
		{7.5, 3, 400 * time.Millisecond, true}, // 7.5 × 0.05k whole first at k = 8
		{2.5, 1, 400 * time.Millisecond, true}, // 2.5 × 0.4 = 1
		{10, 1, 100 * time.Millisecond, true},  // 10 × 0.05 = 0.5, × 0.1 = 1
		{0.5, 1, 2 * time.Second, true},        // one token every 2 s
		{1.0 / 3, 1, 3 * time.Second, true},    // one token every 3 s
		{1e9, 50_000_000, 50 * time.Millisecond, true},
		{1.0 / 86400, 1, 24 * time.Hour, true},     // one a day: the last step searched
		{1e-6, 1, 1_000_000 * time.Second, true},   // found from the token side
		{5.0 / 3, 1, 600 * time.Millisecond, true}, // 5 r/s over 3 replicas
	}
	for _, tt := range tests {
		f, exact := fillFor(tt.rate)
		if exact != tt.wantExact || f.tokens != tt.tokens || f.interval() != tt.interval {
			t.Errorf("fillFor(%v) = %d per %v exact=%t, want %d per %v exact=%t",
				tt.rate, f.tokens, f.interval(), exact, tt.tokens, tt.interval, tt.wantExact)
		}
		if math.Abs(f.rate()-tt.rate) > 1e-9*tt.rate {
			t.Errorf("fillFor(%v) refills %v/s", tt.rate, f.rate())
		}
	}
	// 1.234567 r/s refills whole tokens only every 1234567 × 50 ms steps
	// (1234567 and 20e6 are coprime), more than a day: the nearest
	// interval is close and flagged.
	const odd = 1.234567
	f, exact := fillFor(odd)
	if exact {
		t.Errorf("fillFor(%v) = %d per %v claims to be exact", odd, f.tokens, f.interval())
	}
	if e := math.Abs(f.rate()-odd) / odd; e > 1e-6 {
		t.Errorf("fillFor(%v) = %d per %v errs by %g", odd, f.tokens, f.interval(), e)
	}
	if f.interval() < minFill {
		t.Errorf("fillFor(%v) interval %v below 50 ms", odd, f.interval())
	}
}

// TestPerUnit is the fidelity table of the window targets (the ratelimit
// service and Envoy Gateway) for each algorithm, with the requests per
// unit worked out by hand.
func TestPerUnit(t *testing.T) {
	tests := []struct {
		name  string
		spec  algorithms.Spec
		want  string
		exact bool
	}{
		{"fixed window of an hour", algorithms.Spec{Algorithm: "fixed_window", Limit: 1000, Window: time.Hour}, "1000/hour", true},
		{"fixed window of a minute", algorithms.Spec{Algorithm: "fixed_window", Limit: 12000, Window: time.Minute}, "12000/minute", true},
		{"fixed window of 30 days", algorithms.Spec{Algorithm: "fixed_window", Limit: 30, Window: 30 * 24 * time.Hour}, "30/month", true},
		{"fixed window of 365 days", algorithms.Spec{Algorithm: "fixed_window", Limit: 9, Window: 365 * 24 * time.Hour}, "9/year", true},
		// 5 per 10 s = 0.5/s: 1/second errs by 100%, 30/minute is exact in rate.
		{"fixed window of 10s", algorithms.Spec{Algorithm: "fixed_window", Limit: 5, Window: 10 * time.Second}, "30/minute", false},
		{"sliding window of a minute", algorithms.Spec{Algorithm: "sliding_window", Limit: 600, Window: time.Minute}, "600/minute", false},
		// 30 per 10 s = 3/s, and a second is the largest unit within 10 s.
		{"sliding log of 10s", algorithms.Spec{Algorithm: "sliding_log", Limit: 30, Window: 10 * time.Second}, "3/second", false},
		// 50 per 10 s as a window: 5/s in seconds.
		{"token bucket", algorithms.Spec{Algorithm: "token_bucket", Rate: 5, Burst: 50}, "5/second", false},
		// 0.5/s: 30 per minute.
		{"gcra", algorithms.Spec{Algorithm: "gcra", Rate: 0.5, Burst: 3}, "30/minute", false},
		// 2.5/s with a queue of 5: 150 per minute (3/second would err by 20%).
		{"leaky bucket", algorithms.Spec{Algorithm: "leaky_bucket", Rate: 2.5, Queue: 5}, "150/minute", false},
		// One per minute with burst 1 is a window of one minute, still a bucket.
		{"token bucket of a unit", algorithms.Spec{Algorithm: "token_bucket", Rate: 1.0 / 60, Burst: 1}, "1/minute", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, exact, why := perUnit(policy.Limit{Spec: tt.spec})
			if w.String() != tt.want || exact != tt.exact {
				t.Errorf("perUnit(%s) = %s exact=%t, want %s exact=%t", tt.spec, w, exact, tt.want, tt.exact)
			}
			if !exact && why == "" {
				t.Errorf("perUnit(%s) is approximate without a reason", tt.spec)
			}
		})
	}
}

// TestFidelityByAlgorithm renders a one-limit policy per algorithm with
// each target and checks the limit's fidelity: the local token bucket is
// exact for the buckets; the window targets are exact only for a fixed
// window of one unit.
func TestFidelityByAlgorithm(t *testing.T) {
	tests := []struct {
		spec                   algorithms.Spec
		local, service, egRule export.Fidelity
	}{
		{algorithms.Spec{Algorithm: "token_bucket", Rate: 10, Burst: 100}, export.Exact, export.Approximate, export.Approximate},
		{algorithms.Spec{Algorithm: "gcra", Rate: 10, Burst: 100}, export.Exact, export.Approximate, export.Approximate},
		{algorithms.Spec{Algorithm: "leaky_bucket", Rate: 10, Queue: 20}, export.Approximate, export.Approximate, export.Approximate},
		{algorithms.Spec{Algorithm: "fixed_window", Limit: 600, Window: time.Minute}, export.Approximate, export.Exact, export.Exact},
		{algorithms.Spec{Algorithm: "fixed_window", Limit: 600, Window: 90 * time.Second}, export.Approximate, export.Approximate, export.Approximate},
		{algorithms.Spec{Algorithm: "sliding_log", Limit: 600, Window: time.Minute}, export.Approximate, export.Approximate, export.Approximate},
		{algorithms.Spec{Algorithm: "sliding_window", Limit: 600, Window: time.Minute}, export.Approximate, export.Approximate, export.Approximate},
		// 1/7 r/s has no whole number of tokens in a whole number of 50 ms steps up to a day?
		// It does: one token every 7 s (140 steps).
		{algorithms.Spec{Algorithm: "token_bucket", Rate: 1.0 / 7, Burst: 3}, export.Exact, export.Approximate, export.Approximate},
	}
	for _, tt := range tests {
		t.Run(tt.spec.String(), func(t *testing.T) {
			p := exporttest.Named(t, "minimal")
			p.Defaults.Limit = tt.spec
			for _, c := range []struct {
				target export.Target
				want   export.Fidelity
			}{{Local, tt.local}, {RateLimitService, tt.service}, {Gateway, tt.egRule}} {
				ex, err := c.target.Render(p, export.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if got := mappingOf(t, ex, "defaults.limit").Fidelity; got != c.want {
					t.Errorf("%s: %s, want %s", c.target.Name, got, c.want)
				}
			}
		})
	}
}

// mappingOf is the export's mapping of field.
func mappingOf(t *testing.T, ex export.Export, field string) export.Mapping {
	t.Helper()
	for _, m := range ex.Mappings {
		if m.Field == field {
			return m
		}
	}
	t.Fatalf("%s: no mapping of %s", ex.Target, field)
	return export.Mapping{}
}

// TestMappingsStateTheirWindows: for every limit of every test policy,
// the envoy-ratelimit mapping states the descriptor plans builds and the
// window perUnit computes, and the envoy-gateway mapping the same window
// in Envoy Gateway's spelling. conformance/envoy reads the mappings back
// to ask the service and check the gateway's rules, so this ties what it
// checks to the code that computes it.
func TestMappingsStateTheirWindows(t *testing.T) {
	for _, tp := range exporttest.Policies(t) {
		rls, err := RateLimitService.Render(tp.Policy, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		gw, err := Gateway.Render(tp.Policy, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		pls := plans(tp.Policy, export.Options{})
		if len(pls) != len(tp.Policy.Limits()) {
			t.Fatalf("%s: %d plans for %d limits", tp.Name, len(pls), len(tp.Policy.Limits()))
		}
		for _, pl := range pls {
			w, _, _ := perUnit(pl.Limit)
			want := fmt.Sprintf("descriptor {%s}: rate_limit {unit: %s, requests_per_unit: %d}", entriesText(pl.entries), w.unit.name, w.requests)
			if got := mappingOf(t, rls, pl.Field).To; got != want {
				t.Errorf("%s %s: envoy-ratelimit maps to %q, want %q", tp.Name, pl.Field, got, want)
			}
			want = fmt.Sprintf("limit {requests: %d, unit: %s}", w.requests, egUnit(w.unit))
			if got := mappingOf(t, gw, pl.Field).To; !strings.Contains(got, want) {
				t.Errorf("%s %s: envoy-gateway maps to %q, want %q in it", tp.Name, pl.Field, got, want)
			}
		}
	}
}
