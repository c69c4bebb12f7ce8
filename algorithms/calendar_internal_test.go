package algorithms

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestShaperReleasesInOrder drives a runner's release bookkeeping directly
// with interleaved keys' releases, some far beyond the planned longest
// delay (so the calendar must widen), and checks the span maxima against a
// brute-force count over the sorted release times.
func TestShaperReleasesInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for run := range 40 {
		maxDelay := time.Duration(1+rng.IntN(500)) * time.Millisecond
		r := runner{spans: spanCounter{short: time.Second, long: 3 * time.Second}, delays: newDelayHistogram(), maxDelay: maxDelay}
		var released []time.Duration
		at := time.Duration(0)
		for range 2000 {
			at += time.Duration(rng.IntN(int(2 * time.Millisecond)))
			wait := time.Duration(0)
			switch rng.IntN(10) {
			case 0:
				// nothing to wait for
			case 1:
				wait = time.Duration(rng.Int64N(int64(20 * maxDelay))) // past the plan
			default:
				wait = time.Duration(rng.Int64N(int64(maxDelay)))
			}
			r.shape(at, wait)
			released = append(released, at+wait)
		}
		r.release(Never)
		slices.Sort(released)
		if got, want := r.spans.bestShort, bruteMax(released, time.Second); got != want {
			t.Fatalf("run %d: most in 1 s %d, brute force %d", run, got, want)
		}
		if got, want := r.spans.bestLong, bruteMax(released, 3*time.Second); got != want {
			t.Fatalf("run %d: most in 3 s %d, brute force %d", run, got, want)
		}
		if r.spans.n != len(released) || !r.pending.empty() {
			t.Fatalf("run %d: %d releases counted of %d, pending empty %v", run, r.spans.n, len(released), r.pending.empty())
		}
	}
}

// bruteMax is the most sorted times in any span (x − span, x].
func bruteMax(ts []time.Duration, span time.Duration) int {
	best := 0
	for i, x := range ts {
		n := 0
		for j := i; j >= 0 && ts[j] > x-span; j-- {
			n++
		}
		best = max(best, n)
	}
	return best
}
