package nginx

import (
	"math"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
)

func TestRateFor(t *testing.T) {
	// Expected values by hand: nginx stores N r/s as N·1000 and N r/m as
	// ⌊N·1000/60⌋ milli-requests/s; the candidates are ⌊r⌋, ⌈r⌉ per second
	// and ⌊60r⌋, ⌈60r⌉ per minute (never 0), the closest one wins.
	tests := []struct {
		name    string
		rate    float64
		want    string
		milli   int64
		wantErr float64 // relative error (enforced − wanted)/wanted
	}{
		{"integer per second", 5, "5r/s", 5000, 0},
		{"large integer", 3200, "3200r/s", 3_200_000, 0},
		// 0.5/s: 1r/s is +100 %, 30r/m = 30000/60 = 500 milli exactly.
		{"half per second is 30 per minute", 0.5, "30r/m", 500, 0},
		// 2.5/s: 2r/s −20 %, 3r/s +20 %, 150r/m = 150000/60 = 2500 exactly.
		{"2.5 per second", 2.5, "150r/m", 2500, 0},
		// 7.5/s: 450r/m = 450000/60 = 7500.
		{"7.5 per second", 7.5, "450r/m", 7500, 0},
		// 0.1/s: 6r/m = 6000/60 = 100.
		{"0.1 per second", 0.1, "6r/m", 100, 0},
		// 1.2/s: 72r/m = 72000/60 = 1200.
		{"1.2 per second", 1.2, "72r/m", 1200, 0},
		// 1000.5/s: 1000r/s and 1001r/s are ±0.05 %; 60030r/m =
		// 60030000/60 = 1000500 exactly.
		{"fraction of a large rate", 1000.5, "60030r/m", 1_000_500, 0},
		// 1/60 /s: 1r/m = ⌊1000/60⌋ = 16 milli, wanted 16.667:
		// (16 − 16.667)/16.667 = −0.04.
		{"1 per minute truncates", 1.0 / 60, "1r/m", 16, -0.04},
		// 5/3 /s: 1r/s −40 %, 2r/s +20 %, 100r/m = ⌊100000/60⌋ = 1666
		// vs 1666.67: −0.0004.
		{"5/3 per second", 5.0 / 3, "100r/m", 1666, -0.0004},
		// 1/3 /s: 20r/m = 333 vs 333.33: −0.001.
		{"1/3 per second", 1.0 / 3, "20r/m", 333, -0.001},
		// 1 per hour = 0.2778 milli/s: nothing smaller than 1r/m (16
		// milli) exists: 16/0.27778 − 1 = 56.6.
		{"slower than nginx can write", 1.0 / 3600, "1r/m", 16, 56.6},
		// 1.005/s: 1r/s −0.5 %, 60r/m = 1000 (−0.5 %), 61r/m = 1016
		// (+1.1 %), 2r/s +99 %: the tie goes to r/s.
		{"tie prefers per second", 1.005, "1r/s", 1000, -0.004975},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, e := RateFor(tt.rate)
			if r.String() != tt.want || r.Milli() != tt.milli {
				t.Errorf("RateFor(%g) = %s (%d milli), want %s (%d milli)", tt.rate, r, r.Milli(), tt.want, tt.milli)
			}
			if !near(e, tt.wantErr, 0.01*math.Abs(tt.wantErr)+1e-12) {
				t.Errorf("RateFor(%g) relative error = %g, want %g", tt.rate, e, tt.wantErr)
			}
		})
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestParamFor(t *testing.T) {
	tests := []struct {
		name  string
		spec  algorithms.Spec
		to    string
		fid   export.Fidelity
		retry int64
	}{
		// (r, b) = (5, 10): burst = 10 − 1 = 9; Retry-After ⌈1/5⌉ = 1.
		{"token bucket", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 5, Burst: 10}, "rate=5r/s burst=9 nodelay", export.Exact, 1},
		// (0.5, 3): 30r/m, burst 2; Retry-After 1/0.5 = 2. 500 milli/s is
		// not whole per second: the leak drifts, approximate.
		{"gcra per minute", algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 0.5, Burst: 3}, "rate=30r/m burst=2 nodelay", export.Approximate, 2},
		// 7.5/s = 450r/m = 7500 milli/s exactly, but the leak drifts.
		{"7.5 per second", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 7.5, Burst: 2}, "rate=450r/m burst=1 nodelay", export.Approximate, 1},
		// 60r/m is 1r/s, written per second: exact.
		{"whole per second", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 100}, "rate=1r/s burst=99 nodelay", export.Exact, 1},
		// b = 1: burst = 0 is nginx's default and may not be written.
		{"burst of one", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 1}, "rate=1r/s nodelay", export.Exact, 1},
		// (5/3, 17): 100r/m (−0.04 %) makes it approximate.
		{"rounded rate", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 5.0 / 3, Burst: 17}, "rate=100r/m burst=16 nodelay", export.Approximate, 1},
		// Leaky queue (2.5, 5): burst = queue = 5, no nodelay (nginx
		// delays); 150r/m drifts, approximate.
		{"leaky queue", algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2.5, Queue: 5}, "rate=150r/m burst=5", export.Approximate, 1},
		{"leaky queue per second", algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2, Queue: 5}, "rate=2r/s burst=5", export.Exact, 1},
		{"leaky without queue", algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 3, Queue: 0}, "rate=3r/s", export.Exact, 1},
		// Window 100/60s as a bucket: r = 100/60 → 100r/m, b = 100 → burst 99.
		{"sliding window", algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 100, Window: time.Minute}, "rate=100r/m burst=99 nodelay", export.Approximate, 1},
		// 10/2s: r = 5 → 5r/s, burst 9, approximate only for the window.
		{"fixed window", algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 10, Window: 2 * time.Second}, "rate=5r/s burst=9 nodelay", export.Approximate, 1},
		// 1/hour: 1r/m = 16 milli/s; Retry-After ⌈1000/16⌉ = ⌈62.5⌉ = 63.
		{"sliding log per hour", algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 1, Window: time.Hour}, "rate=1r/m nodelay", export.Approximate, 63},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ParamFor(tt.spec)
			if p.To() != tt.to || p.Fidelity != tt.fid || p.RetryAfter() != tt.retry {
				t.Errorf("ParamFor(%s) = %q %s retry %d, want %q %s retry %d", tt.spec, p.To(), p.Fidelity, p.RetryAfter(), tt.to, tt.fid, tt.retry)
			}
			if p.Why == "" {
				t.Errorf("ParamFor(%s) has no Why; every bucket states burst = b − 1 or the queue", tt.spec)
			}
		})
	}
}

// TestLeakLoss: nginx leaks ⌊R·Δms/1000⌋ milli-requests; the worst
// remainder is found here by trying every Δms over one full cycle (1000
// ms repeats the remainders), not by the gcd formula under test.
func TestLeakLoss(t *testing.T) {
	tests := []struct {
		name string
		rate Rate
	}{
		{"5r/s", Rate{N: 5}},
		{"450r/m (7.5/s)", Rate{N: 450, PerMinute: true}},
		{"30r/m (0.5/s)", Rate{N: 30, PerMinute: true}},
		{"150r/m (2.5/s)", Rate{N: 150, PerMinute: true}},
		{"100r/m (1666 milli)", Rate{N: 100, PerMinute: true}},
		{"1r/m (16 milli)", Rate{N: 1, PerMinute: true}},
		{"120r/m (2/s)", Rate{N: 120, PerMinute: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.rate.Milli()
			var worst int64 // thousandths of a milli-request
			for ms := int64(1); ms <= 1000; ms++ {
				worst = max(worst, m*ms%1000)
			}
			loss, lossMs := tt.rate.LeakLoss()
			if want := float64(worst) / 1000; !near(loss, want, 1e-12) {
				t.Errorf("loss = %g milli-requests, want %g", loss, want)
			}
			if want := float64(worst) / float64(m); !near(lossMs, want, 1e-12) {
				t.Errorf("loss = %g ms, want %g", lossMs, want)
			}
		})
	}
}
