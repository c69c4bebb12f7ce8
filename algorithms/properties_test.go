package algorithms_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// Property tests: random arrival sequences (seeded, so every run checks the
// same sequences) against what each algorithm promises. A failure prints the
// sequence number, the spec and the request so it can be replayed.

// propRequest is one request of a sequence; propResult is it with its decision.
type propRequest struct {
	at   time.Duration
	key  string
	cost int64
}

type propResult struct {
	propRequest
	step int // index in the sequence
	d    algorithms.Decision
}

func (r propRequest) String() string { return fmt.Sprintf("Allow(%q, %v, %d)", r.key, r.at, r.cost) }

// propRand is the random source of sequence seq of a test: the same every run.
func propRand(test uint64, seq int) *rand.Rand { return rand.New(rand.NewPCG(test, uint64(seq))) }

// propWholeRates have an emission interval T = 1/rate of whole nanoseconds,
// so every time the rate algorithms compute is exact.
var propWholeRates = []float64{1, 2, 4, 5, 8, 10, 16, 20, 25, 40, 50, 100, 125, 200, 250, 500}

// propRate returns a whole rate half of the time and otherwise any rate in
// [0.2, 500) per second, whose T is not whole (3/s: T = 333,333,333.3ns).
func propRate(rng *rand.Rand) float64 {
	if rng.IntN(2) == 0 {
		return propWholeRates[rng.IntN(len(propWholeRates))]
	}
	return 0.2 + rng.Float64()*499.8
}

// propSpec returns random parameters for an algorithm, small enough that a
// sequence of a few dozen requests exhausts and refills them.
func propSpec(rng *rand.Rand, name algorithms.Name) algorithms.Spec {
	s := algorithms.Spec{Algorithm: name}
	switch name {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		s.Rate, s.Burst = propRate(rng), 1+rng.Int64N(10)
	case algorithms.NameLeakyBucket:
		s.Rate, s.Queue = propRate(rng), rng.Int64N(8)
	default:
		s.Limit = 1 + rng.Int64N(10)
		if rng.IntN(2) == 0 {
			s.Window = time.Duration(1+rng.IntN(2000)) * time.Millisecond
		} else {
			s.Window = algorithms.MinWindow + time.Duration(rng.Int64N(int64(2*time.Second)))
		}
	}
	return s
}

// propScale is the time one unit of capacity takes to come back: T for the
// rate algorithms, W/limit for the window ones.
func propScale(s algorithms.Spec) time.Duration {
	if s.Rate > 0 {
		return time.Duration(1e9 / s.Rate)
	}
	return s.Window / time.Duration(s.Limit)
}

// propOptions shapes a random sequence.
type propOptions struct {
	n         int  // requests
	keys      int  // distinct keys, "a", "b", …
	unitCost  bool // every cost is 1
	backwards bool // the clock sometimes steps back
}

// propArrivals returns a random sequence for spec: bursts at one instant,
// gaps around the refill time of one unit, long idle spells, costs from 0
// to above the capacity, and, if asked, a clock that sometimes steps back.
// Times are whole nanoseconds, rarely on a round number.
func propArrivals(rng *rand.Rand, spec algorithms.Spec, o propOptions) []propRequest {
	scale := int64(propScale(spec))
	capacity := spec.Capacity()
	reqs := make([]propRequest, o.n)
	at := rng.Int64N(3 * scale)
	for i := range reqs {
		switch r := rng.IntN(20); {
		case r < 5: // same instant
		case r < 13:
			at += rng.Int64N(scale + 1)
		case r < 18:
			at += rng.Int64N(3*scale + 1)
		default: // idle long enough to rest, or nearly
			at += rng.Int64N(2*capacity*scale + 1)
		}
		t := at
		if o.backwards && rng.IntN(12) == 0 {
			t = max(0, at-rng.Int64N(2*capacity*scale+1))
		}
		cost := int64(1)
		if !o.unitCost {
			switch r := rng.IntN(20); {
			case r < 13:
			case r < 18:
				cost = 1 + rng.Int64N(capacity)
			case r < 19:
				cost = 0
			default:
				cost = capacity + 1 + rng.Int64N(3)
			}
		}
		reqs[i] = propRequest{at: time.Duration(t), key: string(rune('a' + rng.IntN(o.keys))), cost: cost}
	}
	return reqs
}

// propRun decides reqs in order on a new limiter for spec.
func propRun(t *testing.T, spec algorithms.Spec, reqs []propRequest) []propResult {
	lim := mustNew(t, spec)
	out := make([]propResult, len(reqs))
	for i, r := range reqs {
		out[i] = propResult{r, i, lim.Allow(r.key, r.at, r.cost)}
	}
	return out
}

// propReplay returns a new limiter for spec that has decided reqs: a copy of
// the state after them.
func propReplay(t *testing.T, spec algorithms.Spec, reqs []propRequest) algorithms.Limiter {
	lim := mustNew(t, spec)
	for _, r := range reqs {
		lim.Allow(r.key, r.at, r.cost)
	}
	return lim
}

// propFailer reports a failing sequence and stops the test after a few.
type propFailer struct {
	t *testing.T
	n int
}

func (f *propFailer) fail(seq int, spec algorithms.Spec, res []propResult, step int, format string, args ...any) {
	f.t.Helper()
	var b strings.Builder
	lo := max(0, step-8)
	for i := lo; i <= step && i < len(res); i++ {
		fmt.Fprintf(&b, "\n\t%3d %v = %s", i, res[i].propRequest, fmtDecision(res[i].d))
	}
	f.t.Errorf("sequence %d, %v, step %d: %s\n\trequests %d..%d:%s", seq, spec, step, fmt.Sprintf(format, args...), lo, step, b.String())
	if f.n++; f.n >= 5 {
		f.t.FailNow()
	}
}

// admittedByKey groups the admitted requests of cost > 0 by key, in order.
func admittedByKey(res []propResult) map[string][]propResult {
	m := make(map[string][]propResult)
	for _, r := range res {
		if r.d.Allowed && r.cost > 0 {
			m[r.key] = append(m[r.key], r)
		}
	}
	return m
}

// within reports |a − b| ≤ tol.
func within(a, b, tol time.Duration) bool { return a-b <= tol && b-a <= tol }

// TestTokenBucketGCRABound checks the token-bucket promise on random
// sequences: over any interval [t1, t2], the admitted cost is at most
// burst + rate·(t2 − t1). The worst intervals start and end at admitted
// requests, so checking every pair of them checks every interval. Token
// bucket and GCRA must also admit exactly the same requests and report the
// same Remaining; their RetryAfter and Reset, computed in float tokens and
// float nanoseconds, agree within 1ns.
func TestTokenBucketGCRABound(t *testing.T) {
	f := &propFailer{t: t}
	for seq := range 1500 {
		rng := propRand(1, seq)
		spec := propSpec(rng, algorithms.NameTokenBucket)
		reqs := propArrivals(rng, spec, propOptions{n: 60, keys: 1 + rng.IntN(3)})
		gspec := spec
		gspec.Algorithm = algorithms.NameGCRA
		tb, gcra := propRun(t, spec, reqs), propRun(t, gspec, reqs)
		for i := range reqs {
			a, b := tb[i].d, gcra[i].d
			if a.Allowed != b.Allowed || a.Remaining != b.Remaining ||
				!within(a.RetryAfter(), b.RetryAfter(), time.Nanosecond) || !within(a.Reset, b.Reset, time.Nanosecond) {
				f.fail(seq, spec, tb, i, "token_bucket and gcra disagree: gcra %s", fmtDecision(b))
			}
		}
		for name, res := range map[algorithms.Name][]propResult{algorithms.NameTokenBucket: tb, algorithms.NameGCRA: gcra} {
			for _, adm := range admittedByKey(res) {
				for i := range adm {
					sum := int64(0)
					for j := i; j < len(adm); j++ {
						sum += adm[j].cost
						bound := float64(spec.Burst) + spec.Rate*(adm[j].at-adm[i].at).Seconds()
						if float64(sum) > bound+1e-6 {
							f.fail(seq, spec, res, adm[j].step, "%s admitted %d in [%v, %v], more than burst + rate·Δt = %.9f",
								name, sum, adm[i].at, adm[j].at, bound)
						}
					}
				}
			}
		}
	}
}

func TestFixedWindowAlignedBound(t *testing.T) {
	// In every aligned window [kW, (k+1)W) a key's admitted cost is at most
	// L, and the count is exact: a request is rejected only when it would
	// take its window over L.
	f := &propFailer{t: t}
	for seq := range 1000 {
		rng := propRand(2, seq)
		spec := propSpec(rng, algorithms.NameFixedWindow)
		reqs := propArrivals(rng, spec, propOptions{n: 60, keys: 1 + rng.IntN(3)})
		res := propRun(t, spec, reqs)
		type window struct {
			key string
			k   int64
		}
		count := make(map[window]int64)
		for i, r := range res {
			w := window{r.key, int64(r.at / spec.Window)}
			switch {
			case r.d.Allowed:
				count[w] += r.cost
				if count[w] > spec.Limit {
					f.fail(seq, spec, res, i, "window %d holds %d > limit", w.k, count[w])
				}
			case r.cost <= spec.Limit && count[w]+r.cost <= spec.Limit:
				f.fail(seq, spec, res, i, "rejected, but window %d holds only %d", w.k, count[w])
			}
		}
	}
}

func TestFixedWindowBoundaryBurst(t *testing.T) {
	// The window_boundary situation: L requests just before kW and L just
	// after all pass, 2L within 2ms, where a sliding log admits only L.
	const limit = 5
	for _, name := range []algorithms.Name{algorithms.NameFixedWindow, algorithms.NameSlidingLog} {
		lim := mustNew(t, algorithms.Spec{Algorithm: name, Limit: limit, Window: time.Minute})
		admitted := 0
		for _, at := range []time.Duration{time.Minute - time.Millisecond, time.Minute + time.Millisecond} {
			for range limit {
				if lim.Allow("k", at, 1).Allowed {
					admitted++
				}
			}
		}
		want := 2 * limit
		if name == algorithms.NameSlidingLog {
			want = limit
		}
		if admitted != want {
			t.Errorf("%s: admitted %d of %d requests around the 1m boundary, want %d", name, admitted, 2*limit, want)
		}
	}
}

func TestSlidingLogExact(t *testing.T) {
	// Every span (t − W, t] holds at most L of a key's admitted cost, and a
	// request is rejected only if admitting it would break that.
	f := &propFailer{t: t}
	for seq := range 1000 {
		rng := propRand(3, seq)
		spec := propSpec(rng, algorithms.NameSlidingLog)
		reqs := propArrivals(rng, spec, propOptions{n: 60, keys: 1 + rng.IntN(3)})
		res := propRun(t, spec, reqs)
		for i, r := range res {
			if r.cost <= 0 || r.cost > spec.Limit {
				continue
			}
			// Admitted cost of the key in (at − W, at], before request i.
			used := int64(0)
			for _, p := range res[:i] {
				if p.key == r.key && p.d.Allowed && p.at > r.at-spec.Window {
					used += p.cost
				}
			}
			if r.d.Allowed && used+r.cost > spec.Limit {
				f.fail(seq, spec, res, i, "admitted, so (%v, %v] holds %d > limit", r.at-spec.Window, r.at, used+r.cost)
			}
			if !r.d.Allowed && used+r.cost <= spec.Limit {
				f.fail(seq, spec, res, i, "rejected, but (%v, %v] would hold only %d", r.at-spec.Window, r.at, used+r.cost)
			}
		}
	}
}

func TestSlidingWindowBounds(t *testing.T) {
	// The sliding counter may let more than L through in a span of W, so
	// that is not asserted. It never lets more than L into an aligned
	// window (curr ≤ L), and so never more than 2L into any span [t, t+W),
	// which meets at most two aligned windows.
	f := &propFailer{t: t}
	for seq := range 1000 {
		rng := propRand(4, seq)
		spec := propSpec(rng, algorithms.NameSlidingWindow)
		opts := propOptions{n: 60, keys: 1 + rng.IntN(3)}
		var reqs []propRequest
		if seq%2 == 0 {
			reqs = propArrivals(rng, spec, opts)
		} else {
			// Evenly spaced requests of cost 1, from L per W to 4L per W.
			gap := propScale(spec) / time.Duration(1+rng.IntN(4))
			at := time.Duration(rng.Int64N(int64(spec.Window)))
			for range opts.n {
				reqs = append(reqs, propRequest{at: at, key: "a", cost: 1})
				at += gap
			}
		}
		res := propRun(t, spec, reqs)
		aligned := make(map[string]map[int64]int64)
		for key, adm := range admittedByKey(res) {
			aligned[key] = make(map[int64]int64)
			for i, a := range adm {
				k := int64(a.at / spec.Window)
				if aligned[key][k] += a.cost; aligned[key][k] > spec.Limit {
					f.fail(seq, spec, res, a.step, "key %s: aligned window %d holds %d > limit", key, k, aligned[key][k])
				}
				span := int64(0)
				for _, b := range adm[i:] {
					if b.at < a.at+spec.Window {
						span += b.cost
					}
				}
				if span > 2*spec.Limit {
					f.fail(seq, spec, res, a.step, "key %s: [%v, %v) holds %d > 2·limit", key, a.at, a.at+spec.Window, span)
				}
			}
		}
	}
}

func TestLeakyBucketReleases(t *testing.T) {
	// Requests of cost 1 on one key: released (at + Delay) in FIFO order,
	// at least T apart, exactly T apart when the drain was busy at arrival
	// (Delay > 0), never later than queue·T after arrival; and a request is
	// rejected exactly when queue admitted requests are still waiting
	// (released after its arrival). With a whole T every time is exact;
	// otherwise releases are rounded to the nearest nanosecond, so spacing
	// is checked within 1ns.
	f := &propFailer{t: t}
	for seq := range 1000 {
		rng := propRand(5, seq)
		spec := propSpec(rng, algorithms.NameLeakyBucket)
		reqs := propArrivals(rng, spec, propOptions{n: 60, keys: 1, unitCost: true})
		res := propRun(t, spec, reqs)
		interval := 1e9 / spec.Rate
		slack := 0.0
		if interval != float64(int64(interval)) {
			slack = 1
		}
		maxDelay := float64(spec.Queue) * interval
		var released []time.Duration // release times of admitted requests, in order
		for i, r := range res {
			waiting := int64(0)
			for _, rel := range released {
				if rel > r.at {
					waiting++
				}
			}
			if !r.d.Allowed {
				if waiting < spec.Queue {
					f.fail(seq, spec, res, i, "rejected with only %d waiting", waiting)
				}
				continue
			}
			if slack == 0 && waiting >= spec.Queue && spec.Queue > 0 {
				f.fail(seq, spec, res, i, "admitted with %d already waiting", waiting)
			}
			if r.d.Delay() < 0 || float64(r.d.Delay()) > maxDelay+slack {
				f.fail(seq, spec, res, i, "Delay %v outside [0, queue·T = %v]", r.d.Delay(), time.Duration(maxDelay))
			}
			rel := r.at + r.d.Delay()
			if n := len(released); n > 0 {
				gap := float64(rel - released[n-1])
				if gap < interval-slack {
					f.fail(seq, spec, res, i, "released %v after the previous one, less than T = %.1fns", time.Duration(gap), interval)
				}
				if r.d.Delay() > 0 && gap > interval+slack {
					f.fail(seq, spec, res, i, "queued (Delay %v) but released %v after the previous one, not T = %.1fns", r.d.Delay(), time.Duration(gap), interval)
				}
			}
			released = append(released, rel)
		}
	}
}

// propAllNames is every algorithm, for the properties all of them share.
var propAllNames = algorithms.Names

// propExactTimes reports whether every time spec's limiter computes is a
// whole number of nanoseconds: the window algorithms count in integers, and
// GCRA and the leaky bucket keep float64 nanoseconds that are whole when T
// is. The token bucket counts float tokens, rate/1e9 per nanosecond.
func propExactTimes(spec algorithms.Spec) bool {
	switch spec.Algorithm {
	case algorithms.NameTokenBucket:
		return false
	case algorithms.NameGCRA, algorithms.NameLeakyBucket:
		t := 1e9 / spec.Rate
		return t == float64(int64(t))
	}
	return true
}

func TestRetryAfterExact(t *testing.T) {
	// RetryAfter is the shortest wait: after replaying the same prefix into
	// a new limiter, the same request passes at at+RetryAfter and is still
	// rejected at at+RetryAfter−1ms. The clock sometimes steps back.
	//
	// Closer in, where every time is exact (see propExactTimes), it is
	// still rejected 1ns earlier. Otherwise a request passes when its wait
	// is under 1ns (x/time/rate's rule) and RetryAfter rounds a float wait
	// up, so it may be 1ns (2ns with float noise at a whole-nanosecond
	// wait) past the first instant that passes, never before it: 3ns
	// earlier it is still rejected.
	for _, name := range propAllNames {
		t.Run(string(name), func(t *testing.T) {
			f := &propFailer{t: t}
			for seq := range 300 {
				rng := propRand(6, seq)
				spec := propSpec(rng, name)
				reqs := propArrivals(rng, spec, propOptions{n: 30, keys: 1 + rng.IntN(2), backwards: true})
				res := propRun(t, spec, reqs)
				slack := 3 * time.Nanosecond
				if propExactTimes(spec) {
					slack = time.Nanosecond
				}
				for i, r := range res {
					if r.d.Allowed {
						if r.d.RetryAfter() != 0 {
							f.fail(seq, spec, res, i, "admitted with RetryAfter %v, want 0", r.d.RetryAfter())
						}
						continue
					}
					if r.d.RetryAfter() == algorithms.Never {
						if r.cost <= spec.Capacity() {
							f.fail(seq, spec, res, i, "RetryAfter Never for cost %d ≤ capacity %d", r.cost, spec.Capacity())
						}
						continue
					}
					if r.cost > spec.Capacity() || r.d.RetryAfter() <= 0 {
						f.fail(seq, spec, res, i, "RetryAfter %v for cost %d (capacity %d)", r.d.RetryAfter(), r.cost, spec.Capacity())
						continue
					}
					if d := propReplay(t, spec, reqs[:i+1]).Allow(r.key, r.at+r.d.RetryAfter(), r.cost); !d.Allowed {
						f.fail(seq, spec, res, i, "retried after Wait: %s, want admitted", fmtDecision(d))
					}
					for _, early := range []time.Duration{time.Millisecond, slack} {
						if early >= r.d.RetryAfter() {
							continue
						}
						if d := propReplay(t, spec, reqs[:i+1]).Allow(r.key, r.at+r.d.RetryAfter()-early, r.cost); d.Allowed {
							f.fail(seq, spec, res, i, "retried %v before Wait: admitted, want rejected", early)
						}
					}
				}
			}
		})
	}
}

func TestRemainingExact(t *testing.T) {
	// Remaining, after any decision, is how many requests of cost 1 the key
	// can still send at the same instant: replaying the prefix into a new
	// limiter, exactly Remaining more of them pass, and the next does not.
	for _, name := range propAllNames {
		t.Run(string(name), func(t *testing.T) {
			f := &propFailer{t: t}
			for seq := range 300 {
				rng := propRand(7, seq)
				spec := propSpec(rng, name)
				reqs := propArrivals(rng, spec, propOptions{n: 30, keys: 1 + rng.IntN(2), backwards: true})
				res := propRun(t, spec, reqs)
				for i, r := range res {
					lim := propReplay(t, spec, reqs[:i+1])
					passed := int64(0)
					for passed <= r.d.Remaining && lim.Allow(r.key, r.at, 1).Allowed {
						passed++
					}
					if passed != r.d.Remaining {
						f.fail(seq, spec, res, i, "Remaining %d, but %d more of cost 1 pass at %v", r.d.Remaining, passed, r.at)
					}
				}
			}
		})
	}
}

func TestBackwardsNoRecredit(t *testing.T) {
	// When the clock steps back, before the key's latest admitted request at
	// L, nothing is given back: the request at at < L gets no better answer
	// than the same request at L (not admitted where L would reject, no more
	// Remaining, no earlier retry or rest instant), and once it is admitted
	// the key goes on exactly as if it had come at L. Later times are at or
	// after every time seen so far.
	for _, name := range propAllNames {
		t.Run(string(name), func(t *testing.T) {
			f := &propFailer{t: t}
			checked := 0
			for seq := range 300 {
				rng := propRand(8, seq)
				spec := propSpec(rng, name)
				reqs := propArrivals(rng, spec, propOptions{n: 30, keys: 1 + rng.IntN(2), backwards: true})
				res := propRun(t, spec, reqs)
				latest := make(map[string]time.Duration) // latest admitted time per key
				seen := time.Duration(0)                 // latest time of any request
				for i, r := range res {
					seen = max(seen, r.at)
					l, ok := latest[r.key]
					if r.d.Allowed && r.cost > 0 {
						latest[r.key] = max(l, r.at)
					}
					if !ok || r.at >= l {
						continue
					}
					checked++
					atL := reqs[i]
					atL.at = l
					d, dl := r.d, propReplay(t, spec, reqs[:i]).Allow(atL.key, atL.at, atL.cost)
					switch {
					case d.Allowed && !dl.Allowed:
						f.fail(seq, spec, res, i, "admitted, but at %v it gets %s", l, fmtDecision(dl))
					case !d.Allowed && !dl.Allowed && d.RetryAfter() != algorithms.Never &&
						(dl.RetryAfter() == algorithms.Never || r.at+d.RetryAfter() < l+dl.RetryAfter()):
						f.fail(seq, spec, res, i, "may retry at %v, but from %v at %v", r.at+d.RetryAfter(), l, l+dl.RetryAfter())
					}
					// The key's state as seen from at and from L, by a peek.
					p, pl := propReplay(t, spec, reqs[:i]).Allow(r.key, r.at, 0), propReplay(t, spec, reqs[:i]).Allow(r.key, l, 0)
					if p.Remaining > pl.Remaining || r.at+p.Reset < l+pl.Reset {
						f.fail(seq, spec, res, i, "before it, a peek gets %s, but at %v %s", fmtDecision(p), l, fmtDecision(pl))
					}
					if !d.Allowed || !dl.Allowed {
						continue
					}
					// The state after: probe a later instant on both.
					back := propReplay(t, spec, reqs[:i+1])
					asL := propReplay(t, spec, append(reqs[:i:i], atL))
					later := seen + time.Duration(rng.Int64N(int64(2*spec.Capacity())*int64(propScale(spec))+1))
					if got, want := back.Allow(r.key, later, 0), asL.Allow(r.key, later, 0); got != want {
						f.fail(seq, spec, res, i, "at %v after it: %s, but %s had it come at %v", later, fmtDecision(got), fmtDecision(want), l)
					}
				}
			}
			if checked < 100 {
				t.Errorf("only %d requests stepped back; want at least 100", checked)
			}
		})
	}
}

func TestReclaimInvisible(t *testing.T) {
	// Reclaim drops exactly the keys that are rested (a peek sees a full,
	// nothing-to-reset state, as for a new key) and changes no decision: a
	// limiter reclaimed at random times decides every later request as a
	// twin that is never reclaimed. Keys() counts the keys held.
	for _, name := range propAllNames {
		t.Run(string(name), func(t *testing.T) {
			f := &propFailer{t: t}
			for seq := range 300 {
				rng := propRand(9, seq)
				spec := propSpec(rng, name)
				reqs := propArrivals(rng, spec, propOptions{n: 40, keys: 1 + rng.IntN(4)})
				lim, twin := mustNew(t, spec), mustNew(t, spec)
				held := make(map[string]bool)
				res := make([]propResult, 0, len(reqs))
				for i, r := range reqs {
					d, want := lim.Allow(r.key, r.at, r.cost), twin.Allow(r.key, r.at, r.cost)
					res = append(res, propResult{r, i, d})
					if d != want {
						f.fail(seq, spec, res, i, "after Reclaim: %s, never reclaimed: %s", fmtDecision(d), fmtDecision(want))
					}
					held[r.key] = true
					if rng.IntN(4) != 0 {
						continue
					}
					now := r.at
					if i+1 < len(reqs) {
						now += time.Duration(rng.Int64N(int64(reqs[i+1].at-r.at) + 1))
					}
					dropped := 0
					for key := range held {
						p := twin.Allow(key, now, 0)
						if p.Reset == 0 {
							if p.Remaining != spec.Capacity() {
								f.fail(seq, spec, res, i, "key %s at %v: nothing to reset, but Remaining %d of %d", key, now, p.Remaining, spec.Capacity())
							}
							delete(held, key)
							dropped++
						}
					}
					if got := lim.Reclaim(now); got != dropped {
						f.fail(seq, spec, res, i, "Reclaim(%v) = %d, want %d rested keys", now, got, dropped)
					}
					if got := lim.Keys(); got != len(held) {
						f.fail(seq, spec, res, i, "Keys() = %d after Reclaim(%v), want %d", got, now, len(held))
					}
				}
			}
		})
	}
}

func TestRemainingAtUnitBoundaries(t *testing.T) {
	// Random times rarely land within a nanosecond of the instant a unit of
	// capacity comes back, where float rounding and the "wait under 1 ns
	// passes" rule of the rate algorithms meet. Probe there: empty a key at
	// 0, then peek at each nanosecond around m·T (m·W/L for the windows),
	// and check Remaining against replayed requests of cost 1. The rates
	// are whole-T ones and ones whose m·T is never a whole number for the
	// m probed (7/s, 0.7/s, 123.456/s), so no instant is an exact tie that
	// float noise may decide either way.
	rates := []float64{0.5, 1, 2, 10, 250, 1e6, 7, 0.7, 123.456}
	var specs []algorithms.Spec
	for _, c := range []int64{1, 2, 3, 4} {
		for _, r := range rates {
			specs = append(specs,
				algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: r, Burst: c},
				algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: r, Burst: c},
				algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: r, Queue: c - 1})
		}
		for _, w := range []time.Duration{time.Second, 7 * time.Millisecond, 999_999_999} {
			specs = append(specs,
				algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: c, Window: w},
				algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: c, Window: w},
				algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: c, Window: w})
		}
	}
	for _, spec := range specs {
		c := spec.Capacity()
		unit := 1e9 / spec.Rate
		if spec.Rate == 0 {
			unit = float64(spec.Window) / float64(c)
		}
		emptied := func() algorithms.Limiter {
			lim := mustNew(t, spec)
			lim.Allow("k", 0, c)
			return lim
		}
		for m := int64(1); m <= 2*c; m++ {
			base := int64(float64(m)*unit + 0.999)
			for off := int64(-3); off <= 2; off++ {
				at := time.Duration(base + off)
				d := emptied().Allow("k", at, 0)
				lim := emptied()
				passed := int64(0)
				for passed <= d.Remaining && lim.Allow("k", at, 1).Allowed {
					passed++
				}
				if passed != d.Remaining {
					t.Errorf("%v, emptied at 0: at %v Remaining %d, but %d requests of cost 1 pass", spec, at, d.Remaining, passed)
				}
			}
		}
	}
}
