package algorithms_test

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// The jitter modes' tests read retry times off a lane's series with 1 ms
// bins: a request offered in the bin starting at s arrived in [s, s+1ms).
// Every bound below is a whole number of milliseconds, so "t ≥ lo" is
// exactly "s ≥ lo", and "t < hi" exactly "s < hi".

// offeredTimes is the start of the bin of every request the lane was offered,
// retries included, in time order.
func offeredTimes(l algorithms.LaneResult) []time.Duration {
	var ts []time.Duration
	for _, b := range l.Series {
		for range b.Offered {
			ts = append(ts, b.Start)
		}
	}
	return ts
}

// jitterStorm is n requests at t = 0 from one key, each costing cost.
func jitterStorm(n int, cost int64) []algorithms.Arrival {
	as := make([]algorithms.Arrival, n)
	for i := range as {
		as[i] = algorithms.Arrival{Key: algorithms.RetryStormKey, Cost: cost}
	}
	return as
}

// firstRetries runs 1000 clients rejected together at t = 0 against a token
// bucket of rate 10/s and burst 10 (10 admitted, 990 rejected), each retrying
// once under p, and returns the times of the 990 retries to within 1 ms
// (their bins' starts), in order.
func firstRetries(t *testing.T, p algorithms.RetryPolicy, spec algorithms.Spec) []time.Duration {
	t.Helper()
	p.Attempts = 1
	res := simulate(t, algorithms.Simulation{Lanes: lanes(spec),
		Traffic: algorithms.Traffic{Arrivals: jitterStorm(1000, 1), Retry: &p}, Bin: time.Millisecond})
	ts := offeredTimes(res.Lanes[0])
	// The 1000 first attempts are all at 0 and come first (no wait is
	// negative); the rest are the retries.
	if len(ts) != 1990 || ts[999] != 0 {
		t.Fatalf("offered %d requests (the 1000th at %v); want 1000 at 0 and 990 retries", len(ts), ts[min(999, len(ts)-1)])
	}
	return ts[1000:]
}

var stormBucket = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 10}

func TestRetryJitterModeFirstRetryDistribution(t *testing.T) {
	// Base 2 s, so the first retry's exponential wait is d = 2 s. Jitter
	// 0.5 is the proportional share; the other modes must ignore it.
	const n = 990
	s := time.Second
	tests := []struct {
		name     string
		mode     algorithms.JitterMode
		cap      time.Duration
		lo, hi   time.Duration // every first retry in [lo, hi), or [lo, hi] when atCap > 0
		mean, sd float64       // of the first retry's wait, in seconds
		atCap    float64       // the share of waits exactly at cap (= hi)
	}{
		// Uniform on [lo, hi): mean (lo+hi)/2, sd (hi−lo)/√12.
		{"zero value: [d, 1.5d)", "", 30 * s, 2 * s, 3 * s, 2.5, 1 / math.Sqrt(12), 0},
		{"proportional: [d, 1.5d)", algorithms.JitterProportional, 30 * s, 2 * s, 3 * s, 2.5, 1 / math.Sqrt(12), 0},
		{"full: [0, d)", algorithms.JitterFull, 30 * s, 0, 2 * s, 1, 2 / math.Sqrt(12), 0},
		{"equal: [d/2, d)", algorithms.JitterEqual, 30 * s, 1 * s, 2 * s, 1.5, 1 / math.Sqrt(12), 0},
		{"decorrelated: [base, 3·base)", algorithms.JitterDecorrelated, 30 * s, 2 * s, 6 * s, 4, 4 / math.Sqrt(12), 0},
		// min(3 s, U) with U uniform on [2 s, 6 s): U < 3 s with
		// probability ¼ (then uniform on [2, 3)), else exactly 3 s. Mean
		// ¼·2.5 + ¾·3 = 2.875; E[X²] = ¼·(3³−2³)/3 + ¾·9 = 8.3333, so the
		// variance is 8.3333 − 2.875² = 0.0677 and the sd 0.2602.
		{"decorrelated capped: min(cap, [base, 3·base))", algorithms.JitterDecorrelated, 3 * s, 2 * s, 3 * s, 2.875, 0.2602, 0.75},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := algorithms.RetryPolicy{Base: 2 * s, Factor: 2, Cap: tt.cap, Jitter: 0.5, JitterMode: tt.mode, Seed: 3}
			ts := firstRetries(t, p, stormBucket)
			var sum float64
			atCap := 0
			for _, at := range ts {
				if at < tt.lo || at > tt.hi || (at == tt.hi && tt.atCap == 0) {
					t.Fatalf("a retry at %v (to 1 ms); want all in [%v, %v%s", at, tt.lo, tt.hi, map[bool]string{true: "]", false: ")"}[tt.atCap > 0])
				}
				if at == tt.hi {
					atCap++
				}
				sum += (at + time.Millisecond/2).Seconds() // the bin's middle: within 0.5 ms
			}
			// The mean of n draws is within 4 standard errors, sd/√n, of
			// the expected mean, plus 0.5 ms for reading times off bins.
			mean, tol := sum/n, 4*tt.sd/math.Sqrt(n)+0.0005
			if math.Abs(mean-tt.mean) > tol {
				t.Errorf("mean first retry %.4fs; want %.4fs ± %.4fs", mean, tt.mean, tol)
			}
			if tt.atCap > 0 {
				// Binomial: n·p ± 4·√(n·p·(1−p)).
				want, tol := n*tt.atCap, 4*math.Sqrt(n*tt.atCap*(1-tt.atCap))
				if math.Abs(float64(atCap)-want) > tol {
					t.Errorf("%d retries at the cap; want %.0f ± %.0f", atCap, want, tol)
				}
				return
			}
			// n uniform draws all miss the lowest (or highest) 1 % of the
			// interval with probability 0.99^990 < 1e-4: the draws cover it.
			edge := (tt.hi - tt.lo) / 100
			if ts[0] >= tt.lo+edge || ts[n-1] < tt.hi-edge-time.Millisecond {
				t.Errorf("retries span [%v, %v]; want them to reach within %v of both ends of [%v, %v)", ts[0], ts[n-1], edge, tt.lo, tt.hi)
			}
		})
	}
}

func TestRetryJitterModeWaitsPerAttempt(t *testing.T) {
	// One request costing 2 against a bucket of 1 is rejected on every
	// attempt, so its 8 retries follow the policy alone. Base 100 ms,
	// factor 2, cap 1 s: the exponential waits d are 100, 200, 400, 800,
	// then 1000 ms. Each wait read off the bins is within 1 ms of the true
	// one (the difference of two times each known to 1 ms).
	ms := time.Millisecond
	d := []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1000 * ms, 1000 * ms, 1000 * ms, 1000 * ms}
	const base, capWait = 100 * time.Millisecond, time.Second
	tests := []struct {
		name string
		mode algorithms.JitterMode
		// bounds is the interval [lo, hi] of the wait before retry a
		// (1-based) given the previous measured wait (0 before the first).
		bounds func(a int, prev time.Duration) (lo, hi time.Duration)
	}{
		{"proportional: [d, 1.5d)", algorithms.JitterProportional, func(a int, _ time.Duration) (time.Duration, time.Duration) {
			return d[a-1], d[a-1] * 3 / 2
		}},
		{"full: [0, d)", algorithms.JitterFull, func(a int, _ time.Duration) (time.Duration, time.Duration) { return 0, d[a-1] }},
		{"equal: [d/2, d)", algorithms.JitterEqual, func(a int, _ time.Duration) (time.Duration, time.Duration) {
			return d[a-1] / 2, d[a-1]
		}},
		{"decorrelated: [base, min(cap, 3·prev)]", algorithms.JitterDecorrelated, func(a int, prev time.Duration) (time.Duration, time.Duration) {
			if a == 1 {
				return base, 3 * base
			}
			// The true previous wait is below prev + 1 ms.
			return base, min(capWait, 3*(prev+ms))
		}},
	}
	bucket := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 1}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			longest := time.Duration(0) // the longest wait after the second retry
			for seed := uint64(1); seed <= 50; seed++ {
				p := algorithms.RetryPolicy{Attempts: 8, Base: base, Factor: 2, Cap: capWait, Jitter: 0.5, JitterMode: tt.mode, Seed: seed}
				res := simulate(t, algorithms.Simulation{Lanes: lanes(bucket),
					Traffic: algorithms.Traffic{Arrivals: jitterStorm(1, 2), Retry: &p}, Bin: time.Millisecond})
				ts := offeredTimes(res.Lanes[0])
				if len(ts) != 9 || res.Lanes[0].Summary.GaveUp != 1 {
					t.Fatalf("seed %d: offered %d, gave up %d; want 9 (1 + 8 retries) and 1", seed, len(ts), res.Lanes[0].Summary.GaveUp)
				}
				prev := time.Duration(0)
				for a := 1; a <= 8; a++ {
					w := ts[a] - ts[a-1]
					lo, hi := tt.bounds(a, prev)
					if w <= lo-ms || w >= hi+ms {
						t.Fatalf("seed %d: wait before retry %d is %v (to 1 ms); want in [%v, %v)", seed, a, w, lo, hi)
					}
					if a > 2 {
						longest = max(longest, w)
					}
					prev = w
				}
			}
			// The decorrelated waits grow from the request's own previous
			// wait: from the third retry on some pass 3·base, which a mode
			// that always drew from [base, 3·base) would never reach.
			if tt.mode == algorithms.JitterDecorrelated && longest <= 3*base+ms {
				t.Errorf("longest wait from the third retry on %v; want some above 3·base = %v", longest, 3*base)
			}
		})
	}
}

func TestRetryJitterModeHonorsRetryAfter(t *testing.T) {
	// A token bucket of rate 1/s and burst 10: the 10 first requests at 0
	// empty it, and the next token comes 1 s later, so each of the 990
	// rejected clients is told Retry-After 1 s.
	const n = 990
	s, ms := time.Second, time.Millisecond
	bucket := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 10}
	res := simulate(t, algorithms.Simulation{Lanes: lanes(bucket), Traffic: algorithms.Traffic{Arrivals: jitterStorm(1000, 1)}, Decisions: true})
	if ra := res.Lanes[0].Decisions[10].RetryAfter(); ra != s {
		t.Fatalf("Retry-After %v; the test assumes 1s", ra)
	}
	tests := []struct {
		name   string
		mode   algorithms.JitterMode
		base   time.Duration
		lo, hi time.Duration // every retry in [lo, hi)
		floor  float64       // the share of waits raised to exactly 1 s
	}{
		// Base 100 ms: every mode's wait is below 1 s, so all are raised
		// to it, except proportional, which adds its jitter on top of the
		// floor: [1 s, 1.5 s).
		{"zero value", "", 100 * ms, s, 1500 * ms, 0},
		{"proportional", algorithms.JitterProportional, 100 * ms, s, 1500 * ms, 0},
		{"full", algorithms.JitterFull, 100 * ms, s, s + ms, 1},
		{"equal", algorithms.JitterEqual, 100 * ms, s, s + ms, 1},
		{"decorrelated", algorithms.JitterDecorrelated, 100 * ms, s, s + ms, 1},
		// Base 2 s: full draws from [0, 2 s), so half its waits are raised
		// to 1 s and the rest stay uniform on [1 s, 2 s); equal's [1 s, 2 s)
		// and decorrelated's [2 s, 6 s) are above the floor already.
		{"full, floor inside the range", algorithms.JitterFull, 2 * s, s, 2 * s, 0.5},
		{"equal, floor below the range", algorithms.JitterEqual, 2 * s, s, 2 * s, 0},
		{"decorrelated, floor below the range", algorithms.JitterDecorrelated, 2 * s, 2 * s, 6 * s, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := algorithms.RetryPolicy{Base: tt.base, Factor: 2, Cap: 30 * s, Jitter: 0.5, JitterMode: tt.mode, Seed: 4}
			if tt.base < s && tt.mode != "" && tt.mode != algorithms.JitterProportional {
				// Without Retry-After every wait is below 1 s: the floor is
				// what lifts them.
				if ts := firstRetries(t, p, bucket); ts[n-1] >= s {
					t.Fatalf("without honouring Retry-After a retry at %v; want all before 1s", ts[n-1])
				}
			}
			p.HonorRetryAfter = true
			ts := firstRetries(t, p, bucket)
			atFloor := 0
			for _, at := range ts {
				if at < tt.lo || at >= tt.hi {
					t.Fatalf("a retry at %v (to 1 ms); want all in [%v, %v)", at, tt.lo, tt.hi)
				}
				if at == s {
					atFloor++
				}
			}
			// The 1 s bin holds the raised waits and, of the rest, those
			// in [1 s, 1.001 s): binomial, n·q ± 4·√(n·q·(1−q)) + 1.
			q := tt.floor
			if tt.lo == s && tt.hi > s+ms {
				q += (1 - tt.floor) * float64(ms) / float64(tt.hi-tt.lo)
			}
			if want, tol := n*q, 4*math.Sqrt(n*q*(1-q))+1; math.Abs(float64(atFloor)-want) > tol {
				t.Errorf("%d retries at exactly 1s; want %.1f ± %.1f", atFloor, want, tol)
			}
		})
	}
}

func TestRetryJitterModeHorizonCoversRetries(t *testing.T) {
	// 1000 requests costing 2 against a bucket of 1 are rejected on all 5
	// retries. With an automatic bin the run plans about 100 bins over the
	// longest retry horizon; a horizon that is an upper bound keeps every
	// retry in those bins (at most 101). Factor 1, base 1 s, jitter 1: the
	// exponential wait is 1 s on every attempt, but decorrelated waits can
	// grow ×3 per attempt, to 3 + 9 + 27 + 81 + 243 = 363 s in all.
	for _, mode := range []algorithms.JitterMode{"", algorithms.JitterProportional, algorithms.JitterFull, algorithms.JitterEqual, algorithms.JitterDecorrelated} {
		t.Run(strconv.Quote(string(mode)), func(t *testing.T) {
			p := algorithms.RetryPolicy{Attempts: 5, Base: time.Second, Factor: 1, Cap: time.Hour, Jitter: 1, JitterMode: mode, Seed: 6}
			res := simulate(t, algorithms.Simulation{Lanes: lanes(algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 1}),
				Traffic: algorithms.Traffic{Arrivals: jitterStorm(1000, 2), Retry: &p}})
			l := res.Lanes[0]
			if l.Summary.Retries != 5000 || l.Summary.GaveUp != 1000 {
				t.Fatalf("retries %d, gave up %d; want 5000 and 1000", l.Summary.Retries, l.Summary.GaveUp)
			}
			if len(l.Series) > 101 {
				last := l.Series[len(l.Series)-1].Start
				t.Errorf("%d bins of %v (the last retry at about %v); want the planned horizon to hold every retry in at most 101", len(l.Series), res.Bin, last)
			}
		})
	}
}

func TestRetryJitterModeSeed(t *testing.T) {
	// 300 clients rejected together, retrying up to 5 times against 10/s.
	run := func(mode algorithms.JitterMode, seed uint64) algorithms.Result {
		p := algorithms.RetryPolicy{Attempts: 5, Base: 200 * time.Millisecond, Factor: 2, Cap: 5 * time.Second, Jitter: 0.5, JitterMode: mode, Seed: seed}
		return simulate(t, algorithms.Simulation{Lanes: lanes(sixSpecs()...),
			Traffic: algorithms.Traffic{Arrivals: jitterStorm(300, 1), Retry: &p}, Bin: 10 * time.Millisecond, Decisions: true})
	}
	modes := []algorithms.JitterMode{"", algorithms.JitterProportional, algorithms.JitterFull, algorithms.JitterEqual, algorithms.JitterDecorrelated}
	results := map[algorithms.JitterMode]algorithms.Result{}
	for _, mode := range modes {
		a, b, other := run(mode, 1), run(mode, 1), run(mode, 2)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("mode %q: two runs with the same seed differ", mode)
		}
		if reflect.DeepEqual(a, other) {
			t.Errorf("mode %q: seeds 1 and 2 gave the same result", mode)
		}
		results[mode] = a
	}
	if !reflect.DeepEqual(results[""], results[algorithms.JitterProportional]) {
		t.Error(`mode "" and "proportional" differ`)
	}
	for i, x := range modes[1:] {
		for _, y := range modes[i+2:] {
			if reflect.DeepEqual(results[x], results[y]) {
				t.Errorf("modes %q and %q gave the same result", x, y)
			}
		}
	}
}

func TestRetryPolicyValidateJitterMode(t *testing.T) {
	tests := []struct {
		mode algorithms.JitterMode
		ok   bool
	}{
		{"", true},
		{"proportional", true},
		{"full", true},
		{"equal", true},
		{"decorrelated", true},
		{"Full", false},
		{" full", false},
		{"exponential", false},
		{"none", false},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(string(tt.mode)), func(t *testing.T) {
			p := algorithms.RetryPolicy{Attempts: 3, Base: time.Second, Factor: 2, Cap: 10 * time.Second, JitterMode: tt.mode}
			err := p.Validate()
			_, serr := algorithms.Simulate(algorithms.Simulation{Lanes: lanes(stormBucket), Traffic: algorithms.Traffic{Arrivals: jitterStorm(1, 1), Retry: &p}})
			if tt.ok {
				if err != nil || serr != nil {
					t.Fatalf("Validate: %v; Simulate: %v; want both to accept it", err, serr)
				}
				return
			}
			for _, e := range []error{err, serr} {
				var pe *algorithms.ParamError
				if !errors.As(e, &pe) || pe.Field != "jitter_mode" || pe.Value != strconv.Quote(string(tt.mode)) {
					t.Fatalf("got %v; want a ParamError for jitter_mode with value %q", e, strconv.Quote(string(tt.mode)))
				}
				for _, m := range []string{`"proportional"`, `"full"`, `"equal"`, `"decorrelated"`} {
					if !strings.Contains(pe.Want, m) {
						t.Errorf("allowed values %q do not name %s", pe.Want, m)
					}
				}
			}
			if !strings.HasPrefix(serr.Error(), "retry: jitter_mode") {
				t.Errorf("Simulate error %q; want it to start with retry: jitter_mode", serr)
			}
		})
	}
}

// TestRetryPolicyReach: the reach is the sum of each attempt's longest
// draw, by hand for base 1 s, factor 2, cap 30 s, 5 attempts
// (exponential waits 1, 2, 4, 8, 16 s).
func TestRetryPolicyReach(t *testing.T) {
	for _, tt := range []struct {
		mode   algorithms.JitterMode
		jitter float64
		want   time.Duration
	}{
		{"", 0, 31 * time.Second},                                      // 1+2+4+8+16
		{algorithms.JitterProportional, 0.5, 46500 * time.Millisecond}, // 1.5 × 31
		{algorithms.JitterFull, 0.5, 31 * time.Second},                 // below d
		{algorithms.JitterEqual, 0, 31 * time.Second},                  // below d
		{algorithms.JitterDecorrelated, 0, 99 * time.Second},           // 3+9+27+30+30
	} {
		p := algorithms.RetryPolicy{Attempts: 5, Base: time.Second, Factor: 2, Cap: 30 * time.Second, Jitter: tt.jitter, JitterMode: tt.mode}
		if got := p.Reach(); got != tt.want {
			t.Errorf("%q, jitter %v: reach %v, want %v", tt.mode, tt.jitter, got, tt.want)
		}
	}
}
