package haproxy

import (
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
