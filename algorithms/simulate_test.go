package algorithms_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

func simulate(t *testing.T, s algorithms.Simulation) algorithms.Result {
	t.Helper()
	r, err := algorithms.Simulate(s)
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	return r
}

func lanes(specs ...algorithms.Spec) []algorithms.Lane {
	ls := make([]algorithms.Lane, len(specs))
	for i, s := range specs {
		ls[i] = algorithms.Lane{Spec: s}
	}
	return ls
}

// sixSpecs are the six algorithms sized alike: 10 r/s with room for 20 at once.
func sixSpecs() []algorithms.Spec {
	return []algorithms.Spec{
		{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 20},
		{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 20},
		{Algorithm: algorithms.NameLeakyBucket, Rate: 10, Queue: 19},
		{Algorithm: algorithms.NameFixedWindow, Limit: 20, Window: 2 * time.Second},
		{Algorithm: algorithms.NameSlidingLog, Limit: 20, Window: 2 * time.Second},
		{Algorithm: algorithms.NameSlidingWindow, Limit: 20, Window: 2 * time.Second},
	}
}

func TestSimulateIdleThenBurstSideBySide(t *testing.T) {
	// 100 requests at once after 5 s of silence. Every algorithm has room
	// for 20 at once (burst 20; 1 served + 19 queued; 20 per window) and
	// nothing refills within the same instant, so each admits exactly 20.
	tr := generate(t, algorithms.Pattern{Name: algorithms.PatternIdleThenBurst, Idle: 5 * time.Second, Count: 100})
	res := simulate(t, algorithms.Simulation{Lanes: lanes(sixSpecs()...), Traffic: tr, Decisions: true})
	for _, l := range res.Lanes {
		s := l.Summary
		if s.Offered != 100 || s.Admitted != 20 || s.Rejected != 80 {
			t.Errorf("%s: offered %d admitted %d rejected %d; want 100, 20, 80", l.Lane.Spec, s.Offered, s.Admitted, s.Rejected)
		}
		if s.FirstRejection != 5*time.Second {
			t.Errorf("%s: first rejection at %v, want 5s", l.Lane.Spec, s.FirstRejection)
		}
		if math.Abs(s.AdmittedShare-0.2) > 1e-12 {
			t.Errorf("%s: admitted share %v, want 0.2", l.Lane.Spec, s.AdmittedShare)
		}
		if len(l.Decisions) != 100 || !l.Decisions[19].Allowed || l.Decisions[20].Allowed {
			t.Errorf("%s: want the first 20 decisions admitted and the 21st rejected", l.Lane.Spec)
		}
	}
	// The queue delays the 20 it admits by 0, 100 ms, …, 1.9 s (T = 100 ms):
	// p50 is the 10th (900 ms), p99 the 20th (1.9 s), within 1 %.
	leaky := res.Lanes[2].Summary
	if leaky.DelayMax != 1900*time.Millisecond {
		t.Errorf("leaky max delay %v, want 1.9s", leaky.DelayMax)
	}
	withinRel(t, "leaky p50", leaky.DelayP50, 900*time.Millisecond, 0.01)
	withinRel(t, "leaky p99", leaky.DelayP99, 1900*time.Millisecond, 0.01)
	// Released 100 ms apart, the queue's backend sees at most 10 in any
	// second (5.0 … 5.9 s), the token bucket's 20 at once.
	if leaky.MaxIn1s != 10 || res.Lanes[0].Summary.MaxIn1s != 20 {
		t.Errorf("max in 1s: leaky %d, token bucket %d; want 10 and 20", leaky.MaxIn1s, res.Lanes[0].Summary.MaxIn1s)
	}
}

func withinRel(t *testing.T, what string, got, want time.Duration, rel float64) {
	t.Helper()
	if math.Abs(float64(got-want)) > rel*float64(want) {
		t.Errorf("%s = %v, want %v within %.0f%%", what, got, want, rel*100)
	}
}

// randomArrivals returns n arrivals over keys with random times in [0, span) and costs 1–3.
func randomArrivals(rng *rand.Rand, n, keys int, span time.Duration) []algorithms.Arrival {
	as := make([]algorithms.Arrival, n)
	for i := range as {
		as[i] = algorithms.Arrival{
			At:   time.Duration(rng.Int64N(int64(span))),
			Key:  "k" + string(rune('a'+rng.IntN(keys))),
			Cost: 1 + rng.Int64N(3),
		}
	}
	return as
}

func TestSimulateSummaryMatchesDecisions(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for run := 0; run < 50; run++ {
		as := randomArrivals(rng, 400, 3, 20*time.Second)
		res := simulate(t, algorithms.Simulation{Lanes: lanes(sixSpecs()...), Traffic: algorithms.Traffic{Arrivals: as},
			Decisions: true, Window: 2 * time.Second, Bin: 500 * time.Millisecond})
		for _, l := range res.Lanes {
			// Recount everything from the per-arrival decisions.
			var admitted, rejected, admittedCost, offeredCost int64
			var released []time.Duration
			var delays []time.Duration
			first := time.Duration(-1)
			idx := make([]int, len(as))
			for i := range idx {
				idx[i] = i
			}
			slices.SortStableFunc(idx, func(a, b int) int { return int(as[a].At - as[b].At) })
			for _, i := range idx {
				d := l.Decisions[i]
				offeredCost += as[i].Cost
				if d.Allowed {
					admitted++
					admittedCost += as[i].Cost
					released = append(released, as[i].At+d.Delay())
					delays = append(delays, d.Delay())
				} else {
					rejected++
					if first < 0 {
						first = as[i].At
					}
				}
			}
			s := l.Summary
			if s.Offered != int64(len(as)) || s.Admitted != admitted || s.Rejected != rejected ||
				s.AdmittedCost != admittedCost || s.OfferedCost != offeredCost || s.FirstRejection != first {
				t.Fatalf("run %d %s: summary %+v; recount admitted %d rejected %d cost %d/%d first %v",
					run, l.Lane.Spec, s, admitted, rejected, admittedCost, offeredCost, first)
			}
			slices.Sort(released)
			if got, want := s.MaxIn1s, maxInSpan(released, time.Second); got != want {
				t.Fatalf("run %d %s: MaxIn1s %d, brute force %d", run, l.Lane.Spec, got, want)
			}
			if got, want := s.MaxInWindow, maxInSpan(released, 2*time.Second); got != want {
				t.Fatalf("run %d %s: MaxInWindow %d, brute force %d", run, l.Lane.Spec, got, want)
			}
			// The series adds up to the totals, bin by bin from the arrival times.
			var so, sa, sr int64
			for b, bin := range l.Series {
				if bin.Start != time.Duration(b)*res.Bin {
					t.Fatalf("bin %d starts at %v", b, bin.Start)
				}
				so, sa, sr = so+bin.Offered, sa+bin.Admitted, sr+bin.Rejected
			}
			if so != s.Offered || sa != s.Admitted || sr != s.Rejected {
				t.Fatalf("run %d %s: series sums %d/%d/%d, summary %d/%d/%d", run, l.Lane.Spec, so, sa, sr, s.Offered, s.Admitted, s.Rejected)
			}
			if l.Lane.Spec.Algorithm == algorithms.NameLeakyBucket && len(delays) > 0 {
				slices.Sort(delays)
				if s.DelayMax != delays[len(delays)-1] {
					t.Fatalf("DelayMax %v, want %v", s.DelayMax, delays[len(delays)-1])
				}
				withinRel(t, "p50", s.DelayP50, delays[(len(delays)+1)/2-1], 0.01)
				withinRel(t, "p99", s.DelayP99, delays[int(math.Ceil(0.99*float64(len(delays))))-1], 0.01)
			}
		}
	}
}

// maxInSpan is the most sorted times in any (t−span, t], by brute force.
func maxInSpan(ts []time.Duration, span time.Duration) int64 {
	best := 0
	for i := range ts {
		n := 0
		for j := i; j >= 0 && ts[j] > ts[i]-span; j-- {
			n++
		}
		best = max(best, n)
	}
	return int64(best)
}

func TestSimulateUnsortedInputKeepsInputOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sorted := randomArrivals(rng, 300, 2, 10*time.Second)
	slices.SortStableFunc(sorted, func(a, b algorithms.Arrival) int { return int(a.At - b.At) })
	// Arrival i of sorted is arrival perm[i] of shuffled.
	perm := rng.Perm(len(sorted))
	shuffled := make([]algorithms.Arrival, len(sorted))
	for i, p := range perm {
		shuffled[p] = sorted[i]
	}
	a := simulate(t, algorithms.Simulation{Lanes: lanes(sixSpecs()...), Traffic: algorithms.Traffic{Arrivals: sorted}, Decisions: true})
	b := simulate(t, algorithms.Simulation{Lanes: lanes(sixSpecs()...), Traffic: algorithms.Traffic{Arrivals: shuffled}, Decisions: true})
	for li := range a.Lanes {
		for i, p := range perm {
			if a.Lanes[li].Decisions[i] != b.Lanes[li].Decisions[p] {
				// Arrivals at the same instant may swap places; compare only unique times.
				dup := (i > 0 && sorted[i-1].At == sorted[i].At) || (i+1 < len(sorted) && sorted[i+1].At == sorted[i].At)
				if !dup {
					t.Fatalf("lane %d arrival %d: sorted %+v, shuffled %+v", li, i, a.Lanes[li].Decisions[i], b.Lanes[li].Decisions[p])
				}
			}
		}
		if x, y := a.Lanes[li].Summary, b.Lanes[li].Summary; x.Offered != y.Offered || x.Admitted != y.Admitted {
			t.Errorf("lane %d: summaries differ: %+v vs %+v", li, x, y)
		}
	}
}

func TestSimulateIsDeterministic(t *testing.T) {
	for _, info := range algorithms.Patterns {
		tr := generate(t, algorithms.DefaultPattern(info.Name))
		s := algorithms.Simulation{Lanes: lanes(sixSpecs()...), Traffic: tr, Decisions: true}
		if a, b := simulate(t, s), simulate(t, s); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs differ", info.Name)
		}
	}
}

func TestSimulateSeriesTracksFocusKey(t *testing.T) {
	// Token bucket 10 r/s, burst 20; 20 requests at 0.5 s empty it. Bins of
	// 1 s: at the end of bin 0 (1 s) it has refilled 0.5 s × 10 = 5 tokens,
	// at 2 s 15, and from 2.5 s on it is full again (20).
	as := make([]algorithms.Arrival, 20)
	for i := range as {
		as[i] = algorithms.Arrival{At: 500 * time.Millisecond, Key: "a", Cost: 1}
	}
	as = append(as, algorithms.Arrival{At: 3500 * time.Millisecond, Key: "b", Cost: 1})
	res := simulate(t, algorithms.Simulation{
		Lanes:   lanes(algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 20}),
		Traffic: algorithms.Traffic{Arrivals: as}, Bin: time.Second, Until: 5 * time.Second,
	})
	var got []int64
	for _, b := range res.Lanes[0].Series {
		got = append(got, b.Remaining)
	}
	want := []int64{5, 15, 20, 20, 20, 20}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("focus key remaining per bin %v, want %v", got, want)
	}
}

func TestSimulateLeakyQueueDepthSeries(t *testing.T) {
	// Leaky bucket 2 r/s (T = 500 ms), queue 10: 8 requests at 0.1 s. The
	// first is served at once, 7 wait; one leaves every 500 ms from 0.6 s.
	// At 1 s: released at 0.1 and 0.6 → 6 wait; at 2 s: +1.1, 1.6 → 4;
	// at 3 s: +2.1, 2.6 → 2; at 4 s: +3.1, 3.6 → 0.
	as := make([]algorithms.Arrival, 8)
	for i := range as {
		as[i] = algorithms.Arrival{At: 100 * time.Millisecond, Key: "a", Cost: 1}
	}
	res := simulate(t, algorithms.Simulation{
		Lanes:   lanes(algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2, Queue: 10}),
		Traffic: algorithms.Traffic{Arrivals: as}, Bin: time.Second, Until: 4 * time.Second,
	})
	var got []int64
	for _, b := range res.Lanes[0].Series {
		got = append(got, b.Queued)
	}
	if want := []int64{6, 4, 2, 0, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("queued per bin %v, want %v", got, want)
	}
}

func TestSimulateRetryStormJitterSpreadsRetries(t *testing.T) {
	// 100 clients hit a shared limit of 10 r/s (burst 10) at once and retry
	// after 1, 2, 4, 8, 16 s. In lockstep every retry wave lands in one
	// instant, so each wave admits only what refilled since the last (10);
	// with full jitter the waves spread over [d, 2d) and more get through.
	spec := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 10}
	run := func(jitter float64) algorithms.Summary {
		tr := generate(t, algorithms.Pattern{Name: algorithms.PatternRetryStorm, Clients: 100, Jitter: jitter, Seed: 5})
		res := simulate(t, algorithms.Simulation{Lanes: lanes(spec), Traffic: tr, Bin: 100 * time.Millisecond})
		s := res.Lanes[0].Summary
		if s.Offered != 100+s.Retries || s.Admitted+s.GaveUp != 100 {
			t.Errorf("jitter %v: offered %d retries %d admitted %d gave up %d; want offered = 100 + retries and every client admitted or gave up",
				jitter, s.Offered, s.Retries, s.Admitted, s.GaveUp)
		}
		return s
	}
	lockstep, jittered := run(0), run(1)
	// Lockstep by hand: 10 at 0.1 s; waves at 1.1 s (+10 tokens), 3.1 s
	// (+10, the bucket holds at most 10), 7.1, 15.1, 31.1 s: 60 admitted,
	// 40 give up after the fifth retry.
	if lockstep.Admitted != 60 || lockstep.GaveUp != 40 {
		t.Errorf("lockstep: admitted %d, gave up %d; want 60 and 40", lockstep.Admitted, lockstep.GaveUp)
	}
	if jittered.Admitted <= lockstep.Admitted {
		t.Errorf("jitter admitted %d, lockstep %d; want jitter to let more clients through", jittered.Admitted, lockstep.Admitted)
	}
}

func TestSimulateValidation(t *testing.T) {
	good := lanes(algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 1, Burst: 1})
	arr := func(a algorithms.Arrival) algorithms.Traffic {
		return algorithms.Traffic{Arrivals: []algorithms.Arrival{a}}
	}
	tests := []struct {
		name string
		s    algorithms.Simulation
		want string
	}{
		{"no lanes", algorithms.Simulation{}, "lanes"},
		{"bad spec", algorithms.Simulation{Lanes: lanes(algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: -1, Burst: 1})}, "lanes[0]: rate"},
		{"negative time", algorithms.Simulation{Lanes: good, Traffic: arr(algorithms.Arrival{At: -1, Cost: 1})}, "arrivals[0].at"},
		{"zero cost", algorithms.Simulation{Lanes: good, Traffic: arr(algorithms.Arrival{At: 1, Cost: 0})}, "arrivals[0].cost"},
		{"huge cost", algorithms.Simulation{Lanes: good, Traffic: arr(algorithms.Arrival{At: 1, Cost: math.MaxInt64})}, "arrivals[0].cost"},
		{"long key", algorithms.Simulation{Lanes: good, Traffic: arr(algorithms.Arrival{At: 1, Cost: 1, Key: strings.Repeat("k", 300)})}, "arrivals[0].key"},
		{"too many bins", algorithms.Simulation{Lanes: good, Traffic: arr(algorithms.Arrival{At: time.Hour, Cost: 1}), Bin: time.Millisecond}, "bin"},
		{"bad replicas", algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: good[0].Spec, Replicas: algorithms.Replicas{Count: 2, Balance: "sticky"}}}}, "balance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := algorithms.Simulate(tt.s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v; want an error naming %q", err, tt.want)
			}
		})
	}
	// An invalid arrival after an unsorted one is still reported, with its index.
	as := []algorithms.Arrival{{At: 5, Cost: 1}, {At: 1, Cost: 1}, {At: 7, Cost: -1}, {At: 9, Cost: 1}}
	_, err := algorithms.Simulate(algorithms.Simulation{Lanes: good, Traffic: algorithms.Traffic{Arrivals: as}})
	var pe *algorithms.ParamError
	if !errors.As(err, &pe) || pe.Field != "arrivals[2].cost" {
		t.Errorf("got %v; want arrivals[2].cost", err)
	}
}

func TestSimulateReclaimKeepsDecisions(t *testing.T) {
	// 200 000 arrivals from 50 000 clients, so the lanes reclaim rested
	// keys as they go; every decision must equal a plain loop's that never
	// reclaims.
	tr := generate(t, algorithms.Pattern{Name: algorithms.PatternPoisson, Rate: 0.2, Duration: 20 * time.Second, Clients: 50_000, Seed: 11})
	if len(tr.Arrivals) < 150_000 {
		t.Fatalf("only %d arrivals", len(tr.Arrivals))
	}
	specs := sixSpecs()
	for i := range specs {
		if specs[i].Rate != 0 {
			specs[i].Rate = 0.1
		}
	}
	res := simulate(t, algorithms.Simulation{Lanes: lanes(specs...), Traffic: tr, Decisions: true})
	for li, spec := range specs {
		lim, err := algorithms.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range tr.Arrivals {
			if d := lim.Allow(a.Key, a.At, a.Cost); d != res.Lanes[li].Decisions[i] {
				t.Fatalf("%s arrival %d: simulate %+v, plain loop %+v", spec, i, res.Lanes[li].Decisions[i], d)
			}
		}
		if lim.Keys() < 40_000 {
			t.Fatalf("%s: the plain loop holds %d keys; want the test to need reclaiming", spec, lim.Keys())
		}
	}
}

func TestSimulateUnsortedWithLateFirstArrivalChecksBins(t *testing.T) {
	// The last arrival is at 0, so a plan from it alone would allow 1 ms
	// bins; the first is a year in. The run must notice the order before
	// making bins and answer that 1 ms bins are too many for a year.
	as := []algorithms.Arrival{{At: algorithms.MaxWindow, Cost: 1}, {At: 0, Cost: 1}}
	_, err := algorithms.Simulate(algorithms.Simulation{
		Lanes:   lanes(algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 3, Window: time.Minute}),
		Traffic: algorithms.Traffic{Arrivals: as}, Bin: time.Millisecond,
	})
	var pe *algorithms.ParamError
	if !errors.As(err, &pe) || pe.Field != "bin" {
		t.Fatalf("got %v; want a bin error", err)
	}
}

func TestSimulateTracksTheEmptyKey(t *testing.T) {
	// Arrivals without a key share the key "": the series follows it like
	// any other. Token bucket 10 r/s, burst 5: 5 requests at 0.1 s empty
	// it; by the end of the first 1 s bin 0.9 s × 10 = 9 tokens refilled,
	// capped at 5.
	as := make([]algorithms.Arrival, 5)
	for i := range as {
		as[i] = algorithms.Arrival{At: 100 * time.Millisecond, Cost: 1}
	}
	res := simulate(t, algorithms.Simulation{
		Lanes:   lanes(algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 5}),
		Traffic: algorithms.Traffic{Arrivals: as}, Bin: 50 * time.Millisecond, Until: time.Second,
	})
	series := res.Lanes[0].Series
	// Bin 2 ends at 150 ms: 0.05 s × 10 = 0.5 token back, so 0 whole.
	// The last bin ends at 1.05 s: full again.
	if got := series[2].Remaining; got != 0 {
		t.Errorf("remaining at 150 ms = %d, want 0", got)
	}
	if got := series[len(series)-1].Remaining; got != 5 {
		t.Errorf("remaining at the end = %d, want 5", got)
	}
	if got := series[0].Remaining; got != 5 {
		t.Errorf("remaining at 50 ms = %d, want 5 (nothing sent yet)", got)
	}
}

func TestSimulateShaperMaximaExactWithLateSecondKeyAndReplicas(t *testing.T) {
	// A leaky bucket counts its backend load at release time. With one
	// key its releases come in order; a second key arriving late, or local
	// replicas, can release out of order. Each case is checked against a
	// brute-force count over the release times the decisions imply.
	spec := algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 4, Queue: 30}
	rng := rand.New(rand.NewPCG(3, 4))
	var as []algorithms.Arrival
	for i := 0; i < 400; i++ {
		as = append(as, algorithms.Arrival{At: time.Duration(rng.Int64N(int64(20 * time.Second))), Key: "a", Cost: 1})
	}
	// Key b only near the end, with a short queue so its releases land
	// before a's queued ones.
	for i := 0; i < 20; i++ {
		as = append(as, algorithms.Arrival{At: 19*time.Second + time.Duration(i)*time.Millisecond, Key: "b", Cost: 1})
	}
	slices.SortStableFunc(as, func(x, y algorithms.Arrival) int { return int(x.At - y.At) })
	for _, tt := range []struct {
		name string
		lane algorithms.Lane
		as   []algorithms.Arrival
	}{
		{"one key", algorithms.Lane{Spec: spec}, as[:380]},
		{"second key late", algorithms.Lane{Spec: spec}, as},
		{"three replicas", algorithms.Lane{Spec: spec, Replicas: algorithms.Replicas{Count: 3, Balance: algorithms.Random, Seed: 1}}, as[:380]},
	} {
		res := simulate(t, algorithms.Simulation{Lanes: []algorithms.Lane{tt.lane}, Traffic: algorithms.Traffic{Arrivals: tt.as}, Decisions: true, Window: 5 * time.Second})
		var released []time.Duration
		for i, d := range res.Lanes[0].Decisions {
			if d.Allowed {
				released = append(released, tt.as[i].At+d.Delay())
			}
		}
		slices.Sort(released)
		s := res.Lanes[0].Summary
		if want := maxInSpan(released, time.Second); s.MaxIn1s != want {
			t.Errorf("%s: MaxIn1s %d, brute force %d", tt.name, s.MaxIn1s, want)
		}
		if want := maxInSpan(released, 5*time.Second); s.MaxInWindow != want {
			t.Errorf("%s: MaxInWindow %d, brute force %d", tt.name, s.MaxInWindow, want)
		}
	}
}
