package headers

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

func TestQuota(t *testing.T) {
	tb := func(rate float64, burst int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: rate, Burst: burst}
	}
	cases := []struct {
		spec algorithms.Spec
		q, w int64
	}{
		// 20 tokens at 2/s refill in 10 s.
		{tb(2, 20), 20, 10},
		// 401 at 100/s: 4.01 s, published as 5 (4 would promise more).
		{tb(100, 401), 401, 5},
		// 20 at 0.1/s is 200 s, whatever the float noise of 20/0.1.
		{tb(0.1, 20), 20, 200},
		// A burst of 1 at 10/s refills in 0.1 s: at least 1 s.
		{algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 1}, 1, 1},
		// A queue of 9 plus the one served, drained at 5/s: 2 s.
		{algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 5, Queue: 9}, 10, 2},
		{algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 100, Window: time.Minute}, 100, 60},
		{algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 7, Window: 1500 * time.Millisecond}, 7, 2},
		{algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 3, Window: 24 * time.Hour}, 3, 86400},
		// 3/0.5 = 6 s; 1600/800 = 2 s exactly (no rounding up past float
		// noise); queue + 1 = 6 at 2.5/s: 2.4 s, rounded up to 3.
		{algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 0.5, Burst: 3}, 3, 6},
		{tb(800, 1600), 1600, 2},
		{algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2.5, Queue: 5}, 6, 3},
		// A window under a second still publishes w=1.
		{algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 5, Window: 250 * time.Millisecond}, 5, 1},
	}
	for _, c := range cases {
		if q, w := Quota(c.spec); q != c.q || w != c.w {
			t.Errorf("Quota(%s) = q=%d w=%d, want q=%d w=%d", c.spec, q, w, c.q, c.w)
		}
	}
	if got, want := Policy("paid", tb(100, 401)), `"paid";q=401;w=5`; got != want {
		t.Errorf("Policy = %s, want %s", got, want)
	}
	if got, want := Item(`a"b`, 8, 1), `"a\"b";r=8;t=1`; got != want {
		t.Errorf("Item = %s, want %s", got, want)
	}
}

func TestSecondsAndRetryAfter(t *testing.T) {
	for _, c := range []struct {
		d          time.Duration
		secs, wait int64
	}{
		{0, 0, 1},
		{1, 1, 1},
		{time.Second, 1, 1},
		{time.Second + 1, 2, 2},
		{5999 * time.Millisecond, 6, 6},
	} {
		if got := Seconds(c.d); got != c.secs {
			t.Errorf("Seconds(%v) = %d, want %d", c.d, got, c.secs)
		}
		if got, ok := RetryAfter(c.d); !ok || got != c.wait {
			t.Errorf("RetryAfter(%v) = %d, %v, want %d", c.d, got, ok, c.wait)
		}
	}
	if _, ok := RetryAfter(algorithms.Never); ok {
		t.Error("RetryAfter(Never) sends a wait")
	}
}

// TestTheDraftExample is the case that once went wrong: 12 of a burst of
// 20 at 2/s used at once leave r=8, and the ninth token is half a second
// away (t=1), not the six seconds until the bucket is full.
func TestTheDraftExample(t *testing.T) {
	s := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 2, Burst: 20}
	lim, _ := algorithms.New(s)
	d := lim.Allow("c", time.Second, 12)
	more := UntilMore(lim, "c", time.Second, d.Remaining)
	if more != 500*time.Millisecond {
		t.Fatalf("until more = %v, want 500ms", more)
	}
	tt, _ := T(d, more)
	if got := Item("default", d.Remaining, tt); got != `"default";r=8;t=1` {
		t.Errorf("RateLimit = %s", got)
	}
	// Asking charged nothing.
	if again := lim.Allow("c", time.Second, 0); again.Remaining != 8 {
		t.Errorf("remaining after asking = %d, want 8", again.Remaining)
	}
}

// bisectMore finds, independently of UntilMore, the shortest wait after
// which a fresh limiter for s, sent the same requests, reports more than
// remaining: it replays them for each probe and bisects to the ns.
func bisectMore(s algorithms.Spec, sent []time.Duration, costs []int64, remaining int64) time.Duration {
	if remaining >= s.Capacity() {
		return 0
	}
	last := sent[len(sent)-1]
	after := func(d time.Duration) int64 {
		lim, _ := algorithms.New(s)
		for i := range sent {
			lim.Allow("c", sent[i], costs[i])
		}
		return lim.Allow("c", last+d, 0).Remaining
	}
	lo, hi := time.Duration(0), time.Second
	for after(hi) <= remaining {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if after(mid) > remaining {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// TestUntilMoreIsTheWaitForMore checks UntilMore against the bisection on
// random traffic for every algorithm, to the ns.
func TestUntilMoreIsTheWaitForMore(t *testing.T) {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.NameTokenBucket, Rate: 2, Burst: 20},
		{Algorithm: algorithms.NameTokenBucket, Rate: 7.5, Burst: 3},
		{Algorithm: algorithms.NameGCRA, Rate: 3, Burst: 10},
		{Algorithm: algorithms.NameLeakyBucket, Rate: 4, Queue: 6},
		{Algorithm: algorithms.NameFixedWindow, Limit: 10, Window: 2 * time.Second},
		{Algorithm: algorithms.NameSlidingLog, Limit: 5, Window: 1500 * time.Millisecond},
		{Algorithm: algorithms.NameSlidingWindow, Limit: 12, Window: time.Second},
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for _, s := range specs {
		t.Run(s.String(), func(t *testing.T) {
			lim, err := algorithms.New(s)
			if err != nil {
				t.Fatal(err)
			}
			var sent []time.Duration
			var costs []int64
			at := time.Duration(0)
			checked := 0
			for range 80 {
				at += time.Duration(rng.IntN(400)) * time.Millisecond
				cost := int64(1 + rng.IntN(3))
				d := lim.Allow("c", at, cost)
				sent, costs = append(sent, at), append(costs, cost)
				got := UntilMore(lim, "c", at, d.Remaining)
				want := bisectMore(s, sent, costs, d.Remaining)
				// The waits are float arithmetic rounded up to the ns:
				// they may differ by that rounding.
				if got < want-1 || got > want+1 {
					t.Fatalf("after %d requests (last at %v, remaining %d): UntilMore = %v, the bisection %v", len(sent), at, d.Remaining, got, want)
				}
				if got > 0 {
					checked++
				}
			}
			if checked < 10 {
				t.Errorf("only %d decisions left the client short of quota", checked)
			}
		})
	}
}

func ExamplePolicy() {
	s := algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 50, Burst: 500}
	fmt.Println(Policy("paid", s))
	// Output: "paid";q=500;w=10
}
