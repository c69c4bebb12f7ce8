package calc_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

func TestReverse(t *testing.T) {
	type eq struct {
		name     algorithms.Name
		spec     algorithms.Spec
		fidelity calc.Fidelity
	}
	tests := []struct {
		name                              string
		limit                             calc.Limit
		minInterval, pace, largest, retry float64
		equivalents                       []eq
		checks                            []string
	}{{
		// 1000 per hour, fixed: pace 1000/3600 = 0.2778/s, one every 3.6 s;
		// 2000 across an edge; Retry-After up to the window, 3600 s.
		// Buckets: r = 1000/3600, b = 1000; leaky queue 999.
		name:        "article: 1000/h fixed window",
		limit:       calc.Limit{Algorithm: "fixed_window", Limit: 1000, Window: 3600},
		minInterval: 3.6, pace: 1000.0 / 3600, largest: 2000, retry: 3600,
		equivalents: []eq{
			{"token_bucket", algorithms.Spec{Algorithm: "token_bucket", Rate: 1000.0 / 3600, Burst: 1000}, calc.Approximate},
			{"gcra", algorithms.Spec{Algorithm: "gcra", Rate: 1000.0 / 3600, Burst: 1000}, calc.Approximate},
			{"leaky_bucket", algorithms.Spec{Algorithm: "leaky_bucket", Rate: 1000.0 / 3600, Queue: 999}, calc.Approximate},
			{"sliding_log", algorithms.Spec{Algorithm: "sliding_log", Limit: 1000, Window: time.Hour}, calc.Approximate},
			{"sliding_window", algorithms.Spec{Algorithm: "sliding_window", Limit: 1000, Window: time.Hour}, calc.Approximate},
		},
		checks: []string{"fixed_window_boundary@fixed_window"},
	}, {
		// Token bucket 10/s, 100: one every 0.1 s; 100 at once; Retry-After ⌈0.1⌉ = 1.
		// GCRA (10, 100) exact; leaky (10, 99); windows 100 per 100/10 = 10 s.
		name:        "token bucket",
		limit:       calc.Limit{Algorithm: "token_bucket", Rate: 10, Burst: 100},
		minInterval: 0.1, pace: 10, largest: 100, retry: 1,
		equivalents: []eq{
			{"gcra", algorithms.Spec{Algorithm: "gcra", Rate: 10, Burst: 100}, calc.Exact},
			{"leaky_bucket", algorithms.Spec{Algorithm: "leaky_bucket", Rate: 10, Queue: 99}, calc.Approximate},
			{"fixed_window", algorithms.Spec{Algorithm: "fixed_window", Limit: 100, Window: 10 * time.Second}, calc.Approximate},
			{"sliding_log", algorithms.Spec{Algorithm: "sliding_log", Limit: 100, Window: 10 * time.Second}, calc.Approximate},
			{"sliding_window", algorithms.Spec{Algorithm: "sliding_window", Limit: 100, Window: 10 * time.Second}, calc.Approximate},
		},
		checks: []string{},
	}, {
		// Leaky bucket draining 2/s with 3 waiting: capacity 4 accepted at once;
		// Retry-After ⌈0.5⌉ = 1; buckets (2, 4); windows 4 per 2 s.
		name:        "leaky bucket",
		limit:       calc.Limit{Algorithm: "leaky_bucket", Rate: 2, Queue: 3},
		minInterval: 0.5, pace: 2, largest: 4, retry: 1,
		equivalents: []eq{
			{"token_bucket", algorithms.Spec{Algorithm: "token_bucket", Rate: 2, Burst: 4}, calc.Approximate},
			{"gcra", algorithms.Spec{Algorithm: "gcra", Rate: 2, Burst: 4}, calc.Approximate},
			{"fixed_window", algorithms.Spec{Algorithm: "fixed_window", Limit: 4, Window: 2 * time.Second}, calc.Approximate},
			{"sliding_log", algorithms.Spec{Algorithm: "sliding_log", Limit: 4, Window: 2 * time.Second}, calc.Approximate},
			{"sliding_window", algorithms.Spec{Algorithm: "sliding_window", Limit: 4, Window: 2 * time.Second}, calc.Approximate},
		},
		checks: []string{},
	}, {
		// Sliding window 100/min: pace (100 − 1)/60 = 1.65/s, min interval
		// 60/99; 100 at once; Retry-After ⌈60 + 0.6⌉ = 61.
		name:        "sliding window 100/min",
		limit:       calc.Limit{Algorithm: "sliding_window", Limit: 100, Window: 60},
		minInterval: 60.0 / 99, pace: 99.0 / 60, largest: 100, retry: 61,
		equivalents: []eq{
			{"token_bucket", algorithms.Spec{Algorithm: "token_bucket", Rate: 100.0 / 60, Burst: 100}, calc.Approximate},
			{"gcra", algorithms.Spec{Algorithm: "gcra", Rate: 100.0 / 60, Burst: 100}, calc.Approximate},
			{"leaky_bucket", algorithms.Spec{Algorithm: "leaky_bucket", Rate: 100.0 / 60, Queue: 99}, calc.Approximate},
			{"fixed_window", algorithms.Spec{Algorithm: "fixed_window", Limit: 100, Window: time.Minute}, calc.Approximate},
			{"sliding_log", algorithms.Spec{Algorithm: "sliding_log", Limit: 100, Window: time.Minute}, calc.Approximate},
		},
		checks: []string{},
	}, {
		// One per 366 days is 3.2e-8/s, below the engine's 1e-6/s: no bucket.
		name:        "a yearly quota",
		limit:       calc.Limit{Algorithm: "sliding_log", Limit: 1, Window: 31622400},
		minInterval: 31622400, pace: 1.0 / 31622400, largest: 1, retry: 31622400,
		equivalents: []eq{
			{"token_bucket", algorithms.Spec{}, calc.NotExpressible},
			{"gcra", algorithms.Spec{}, calc.NotExpressible},
			{"leaky_bucket", algorithms.Spec{}, calc.NotExpressible},
			{"fixed_window", algorithms.Spec{Algorithm: "fixed_window", Limit: 1, Window: 366 * 24 * time.Hour}, calc.Approximate},
			{"sliding_window", algorithms.Spec{Algorithm: "sliding_window", Limit: 1, Window: 366 * 24 * time.Hour}, calc.Approximate},
		},
		checks: []string{"window_not_gateway_unit@window", "window_over_a_day@window"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := calc.Reverse(tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			checkNear(t, "min interval", res.MinInterval.Value, tt.minInterval)
			checkNear(t, "pace", res.Pace.Value, tt.pace)
			checkNear(t, "largest burst", res.Params.LargestBurst.Value, tt.largest)
			checkNear(t, "retry after", res.Params.RetryAfter.Value, tt.retry)
			if len(res.Equivalents) != len(tt.equivalents) {
				t.Fatalf("%d equivalents, want %d", len(res.Equivalents), len(tt.equivalents))
			}
			for i, w := range tt.equivalents {
				p := res.Equivalents[i]
				if p.Algorithm != w.name || p.Fidelity != w.fidelity || p.Note == "" {
					t.Errorf("equivalent %d: %s %s %q, want %s %s", i, p.Algorithm, p.Fidelity, p.Note, w.name, w.fidelity)
				}
				if w.fidelity == calc.NotExpressible {
					continue
				}
				got := p.Spec()
				if got.Algorithm != w.spec.Algorithm || !near(got.Rate, w.spec.Rate, 1e-9) || got.Burst != w.spec.Burst ||
					got.Queue != w.spec.Queue || got.Limit != w.spec.Limit || got.Window != w.spec.Window {
					t.Errorf("equivalent %s = %v, want %v", p.Algorithm, got, w.spec)
				}
			}
			if got := checkIDs(res.Checks); !slices.Equal(got, tt.checks) && !(len(got) == 0 && len(tt.checks) == 0) {
				t.Errorf("checks %v, want %v", got, tt.checks)
			}
		})
	}
}

// "exact" is exact and the leaky equivalent of a bucket admits the same
// requests: on the same random traffic, the same number pass.
func TestReverseEquivalentsAdmitTheSame(t *testing.T) {
	tr, err := algorithms.Pattern{Name: algorithms.PatternPoisson, Rate: 15, Duration: 120 * time.Second, Clients: 3, Seed: 7}.Generate(1e5)
	if err != nil {
		t.Fatal(err)
	}
	res, err := calc.Reverse(calc.Limit{Algorithm: "token_bucket", Rate: 10, Burst: 30})
	if err != nil {
		t.Fatal(err)
	}
	given := admitted(t, algorithms.Spec{Algorithm: "token_bucket", Rate: 10, Burst: 30}, tr)
	if given.Rejected == 0 {
		t.Fatal("traffic too light to tell limits apart")
	}
	for _, p := range res.Equivalents {
		if p.Algorithm != algorithms.NameGCRA && p.Algorithm != algorithms.NameLeakyBucket {
			continue
		}
		if got := admitted(t, p.Spec(), tr); got.Admitted != given.Admitted {
			t.Errorf("%s (%s) admits %d, the token bucket %d", p.Spec(), p.Fidelity, got.Admitted, given.Admitted)
		}
	}
}

func TestReverseErrors(t *testing.T) {
	tests := []struct {
		limit calc.Limit
		field string
	}{
		{calc.Limit{Algorithm: "leaky"}, "algorithm"},
		{calc.Limit{Algorithm: "token_bucket", Rate: math.NaN(), Burst: 10}, "rate"},
		{calc.Limit{Algorithm: "token_bucket", Rate: 10}, "burst"},
		{calc.Limit{Algorithm: "token_bucket", Rate: 10, Burst: 10, Window: 60}, "window"},
		{calc.Limit{Algorithm: "fixed_window", Limit: 10, Window: math.Inf(1)}, "window"},
		{calc.Limit{Algorithm: "fixed_window", Limit: 10, Window: -1}, "window"},
		{calc.Limit{Algorithm: "sliding_log", Limit: 0, Window: 60}, "limit"},
		{calc.Limit{Algorithm: "leaky_bucket", Rate: 1, Queue: -1}, "queue"},
	}
	for _, tt := range tests {
		_, err := calc.Reverse(tt.limit)
		if got := fields(err); !slices.Equal(got, []string{tt.field}) {
			t.Errorf("%+v: error fields %v, want [%s] (%v)", tt.limit, got, tt.field, err)
		}
	}
}

func TestLimitRoundTrip(t *testing.T) {
	for _, s := range []algorithms.Spec{
		{Algorithm: "gcra", Rate: 7.5, Burst: 20},
		{Algorithm: "leaky_bucket", Rate: 2, Queue: 3},
		{Algorithm: "sliding_window", Limit: 100, Window: 1500 * time.Millisecond},
	} {
		got, err := calc.LimitOf(s).Spec()
		if err != nil || got != s {
			t.Errorf("LimitOf(%v).Spec() = %v, %v", s, got, err)
		}
	}
}
