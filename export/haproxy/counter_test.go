package haproxy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
)

func TestCounterFor(t *testing.T) {
	// Expected values by hand: windows keep (L, W); buckets become
	// b per b/r (export.Window), the leaky bucket (queue+1) per
	// (queue+1)/r; the period is rounded to whole ms; Retry-After is
	// ⌈W/L⌉ s, at least 1.
	tests := []struct {
		name   string
		spec   algorithms.Spec
		to     string
		retry  int64
		ok     bool
		reason string // a word the Why must contain
	}{
		{"sliding window", algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 10, Window: 2 * time.Second},
			"10 per gpc0_rate(2s)", 1, true, "truncates"},
		// 1000 per hour: ⌈3600/1000⌉ = ⌈3.6⌉ = 4.
		{"fixed window", algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 1000, Window: time.Hour},
			"1000 per gpc0_rate(3600s)", 4, true, "edge"},
		{"sliding log", algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 30, Window: 10 * time.Second},
			"30 per gpc0_rate(10s)", 1, true, "log"},
		// (5, 10): 10 per 10/5 = 2 s.
		{"token bucket", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 5, Burst: 10},
			"10 per gpc0_rate(2s)", 1, true, "slides"},
		// (0.5, 3): 3 per 6 s; Retry-After 6/3 = 2.
		{"gcra", algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 0.5, Burst: 3},
			"3 per gpc0_rate(6s)", 2, true, "window"},
		// (2.5, queue 5): 6 per 6/2.5 = 2.4 s = 2400 ms.
		{"leaky bucket", algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2.5, Queue: 5},
			"6 per gpc0_rate(2400ms)", 1, true, "rejected"},
		// (3, 10): 10/3 = 3.333… s → 3333 ms.
		{"period rounded to ms", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 3, Burst: 10},
			"10 per gpc0_rate(3333ms)", 1, true, "rounded"},
		// Limits of 1: a counter of 1 admits one request per two periods,
		// so one per I is 1 per ⌈I/2⌉ ms; Retry-After is two periods.
		// (4, 1): I = 250 ms → 125 ms; 2·125 + 1 − 250 = 1 ms late at most.
		{"token bucket burst 1", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 4, Burst: 1},
			"1 per gpc0_rate(125ms)", 1, true, "at most 1 ms after"},
		// (3, 1): I = 333.3 ms → 167 ms; 335 − 333.3 → 2 ms.
		{"gcra burst 1", algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 3, Burst: 1},
			"1 per gpc0_rate(167ms)", 1, true, "at most 2 ms after"},
		// (2, queue 0): one per 500 ms → 250 ms.
		{"leaky bucket no queue", algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2},
			"1 per gpc0_rate(250ms)", 1, true, "rejected"},
		// 1 per 10 s → 5 s; Retry-After 2·5 = 10.
		{"fixed window of 1", algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 1, Window: 10 * time.Second},
			"1 per gpc0_rate(5s)", 10, true, "two periods"},
		{"sliding log of 1", algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 1, Window: 3 * time.Second},
			"1 per gpc0_rate(1500ms)", 3, true, "never before 3s"},
		// The sliding window keeps W (ratelab's also holds a limit of 1
		// for two windows); Retry-After two periods, 4 s.
		{"sliding window of 1", algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 1, Window: 2 * time.Second},
			"1 per gpc0_rate(2s)", 4, true, "one window later"},
		// 30 days is over MaxPeriod (12 days).
		{"too long", algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 100, Window: 30 * 24 * time.Hour},
			"", 0, false, "longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := CounterFor(tt.spec)
			if ok != tt.ok {
				t.Fatalf("CounterFor(%s) ok = %v, want %v (%s)", tt.spec, ok, tt.ok, c.Why)
			}
			if !strings.Contains(c.Why, tt.reason) {
				t.Errorf("CounterFor(%s).Why = %q, want it to mention %q", tt.spec, c.Why, tt.reason)
			}
			if !ok {
				if c.Fidelity != export.NotExpressible {
					t.Errorf("fidelity %s, want not_expressible", c.Fidelity)
				}
				return
			}
			if c.To() != tt.to || c.RetryAfter() != tt.retry {
				t.Errorf("CounterFor(%s) = %q retry %d, want %q retry %d", tt.spec, c.To(), c.RetryAfter(), tt.to, tt.retry)
			}
			// Never exact: the counter truncates, slides, or is a window
			// standing in for a bucket.
			if c.Fidelity != export.Approximate {
				t.Errorf("fidelity %s, want approximate", c.Fidelity)
			}
		})
	}
}

// TestCounterMeter is a time ladder through HAProxy's frequency counter
// arithmetic, 4 per 1000 ms, values worked by hand from the formula in
// the Counter comment: estimate = curr + ⌊prev·(P − elapsed)/P⌋, or prev
// when curr = 0 and prev ≤ 1.
func TestCounterMeter(t *testing.T) {
	c := Counter{Limit: 4, Period: time.Second}
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	steps := []struct {
		at       int64 // ms
		charge   int64 // counted after reading
		estimate int64 // read before charging
	}{
		{101, 3, 0},  // the first count starts a period at 100 (even)
		{600, 1, 3},  // curr 3
		{1099, 0, 4}, // still the first period: curr 4
		{1100, 0, 4}, // the next period: prev 4, full weight (remain 1000)
		{1350, 0, 3}, // ⌊4·750/1000⌋ = 3
		{1351, 1, 2}, // ⌊4·749/1000⌋ = 2; the count rotates: tick 1100
		{1850, 0, 2}, // 1 + ⌊4·250/1000⌋ = 2
		{2100, 0, 1}, // remain 0: still the period from 1100, 1 + 0
		{2101, 0, 1}, // over: prev 1, curr 0 → flapping reads 1 (not ⌊1·999/1000⌋ = 0)
		{3099, 0, 1}, // within two periods of 1100: prev 1, fully
		{3101, 0, 0}, // more than two periods: nothing counts
		{3101, 1, 0}, // counting restarts from 3101: tick 3100
		{3600, 1, 1}, // curr 1
		{4100, 0, 2}, // remain 0: curr 2
		{4101, 0, 1}, // prev 2, curr 0: ⌊2·999/1000⌋ = 1 (no flapping: prev > 1)
		{4600, 0, 1}, // ⌊2·500/1000⌋ = 1
		{4601, 0, 0}, // ⌊2·499/1000⌋ = 0
	}
	var m Meter
	for i, st := range steps {
		if got := c.Estimate(m, ms(st.at)); got != st.estimate {
			t.Fatalf("step %d (at %d ms): estimate %d, want %d (meter %+v)", i, st.at, got, st.estimate, m)
		}
		if st.charge > 0 {
			c.Charge(&m, ms(st.at), st.charge)
		}
	}
}

// TestCounterOfOneRate checks the Why of a limit of 1 against ratelab's
// own limiters, on random sends (seeded): a counter of 1 per ⌈I/2⌉ ms
// never admits a request the policy's limiter would reject after the same
// admitted requests, and rejects only requests that the policy's limiter
// would also reject the stated number of milliseconds earlier.
func TestCounterOfOneRate(t *testing.T) {
	tests := []struct {
		spec algorithms.Spec
		late time.Duration // the Why's "at most N ms after"
	}{
		{algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 4, Burst: 1}, 1 * time.Millisecond},
		{algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 3, Burst: 1}, 2 * time.Millisecond},
		{algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 10}, 1 * time.Millisecond},
		{algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 1, Window: 300 * time.Millisecond}, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.spec.String(), func(t *testing.T) {
			c, ok := CounterFor(tt.spec)
			if !ok || !strings.Contains(c.Why, fmt.Sprintf("at most %d ms after", tt.late.Milliseconds())) {
				t.Fatalf("CounterFor(%s) = %+v, want a Why stating at most %s late", tt.spec, c, tt.late)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			var m Meter
			var admitted []time.Duration
			policyAdmits := func(at time.Duration) bool {
				lim, err := algorithms.New(tt.spec)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range admitted {
					lim.Allow("k", a, 1)
				}
				return lim.Allow("k", at, 1).Allowed
			}
			at := time.Duration(0)
			n := 0
			for range 3000 {
				at += time.Duration(rng.IntN(200)+1) * time.Millisecond
				if c.Over(m, at, 1) {
					if policyAdmits(at - tt.late) {
						t.Fatalf("at %s: rejected, but the policy admits it %s earlier (admitted so far %v)", at, tt.late, admitted[max(0, len(admitted)-3):])
					}
					continue
				}
				if !policyAdmits(at) {
					t.Fatalf("at %s: admitted, but the policy rejects it (admitted so far %v)", at, admitted[max(0, len(admitted)-3):])
				}
				c.Charge(&m, at, 1)
				admitted = append(admitted, at)
				n++
			}
			if n < 100 {
				t.Fatalf("only %d admitted: the schedule does not exercise the limit", n)
			}
		})
	}
}
