package golibs_test

// Differential tests against the reference libraries (see
// /work/shared/reference/algorithm-semantics.md §1, §2, §4, §12–§14):
//
//	token_bucket vs golang.org/x/time/rate AllowN(t, n)
//	gcra         vs golang.org/x/time/rate AllowN(t, n) and throttled's GCRA
//	leaky_bucket vs go.uber.org/ratelimit Take() (WithoutSlack) and
//	                x/time/rate ReserveN(t, 1).DelayFrom(t) with burst 1
//
// Every test replays thousands of short random arrival sequences, each from
// its own math/rand/v2 PCG(seed, seq), so a failure names the seed and the
// sequence that reproduce it. Ours runs in virtual time since 0; the
// references get refEpoch plus that time.
//
// Times are chosen where the libraries agree by construction (§13.5): a
// request passes in x/time/rate when its wait truncates to 0 ns, in ours
// when it is under 1 ns, and in throttled when it is ≤ 0 in integer ns. So
//
//   - against x/time/rate AllowN, arrivals are whole milliseconds plus
//     137µs ("grid"): with a whole-millisecond interval T every wait is a
//     whole number of ms, and with T = 1e9/3 ns (rates 1.5, 3, 6, 7.5, 30,
//     300) it is a third of a nanosecond away from any whole ns, never
//     within float noise of the 1 ns edge. Edge retries land 3 ns before
//     ours' RetryAfter, at it, or 1 ns after it;
//   - against throttled and uber, T is a whole number of nanoseconds
//     (both truncate T to whole ns) and ours is then exact in float64, so
//     arrivals may also be any nanosecond ("jitter"), and edge retries land
//     1 ns before throttled's RetryAfter, at it, or 1 ns after it;
//   - the leaky_bucket schedule is compared with x/time/rate ReserveN
//     within 1 ns (ours rounds a delay, x/time/rate truncates), so any
//     arrivals will do.
//
// The mismatch classes that are inherent to a reference (cost above the
// burst in throttled, throttled's peek, throttled's truncated T, uber's
// slack and its Unix-0 sentinel) are pinned by their own tests below.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/throttled/throttled/v2"
	"go.uber.org/ratelimit"
	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/algorithms"
)

// refSequences is how many random sequences each differential test replays.
const refSequences = 10_000

// refEpoch is virtual time 0 for the references. It must not be the zero
// time.Time (throttled needs UnixNano) nor Unix 0 (uber's "never called").
var refEpoch = time.Unix(1_700_000_000, 0)

// refGridOffset keeps grid arrivals off whole milliseconds.
const refGridOffset = 137 * time.Microsecond

// refWholeRate is n requests per per with per/n a whole number of
// nanoseconds, the form throttled (PerSec, PerDuration) and uber (New(n,
// Per(per))) take, so all three libraries use exactly the same interval.
type refWholeRate struct {
	n   int
	per time.Duration
}

func (w refWholeRate) perSecond() float64      { return float64(w.n) * 1e9 / float64(w.per) }
func (w refWholeRate) interval() time.Duration { return w.per / time.Duration(w.n) }

func (w refWholeRate) throttled() throttled.Rate {
	if w.per == time.Second {
		return throttled.PerSec(w.n)
	}
	return throttled.PerDuration(w.n, w.per)
}

var refWholeRates = []refWholeRate{
	{1, time.Second}, {2, time.Second}, {4, time.Second}, {5, time.Second},
	{8, time.Second}, {10, time.Second}, {20, time.Second}, {25, time.Second},
	{50, time.Second}, {100, time.Second}, {1000, time.Second},
	{7, 700 * time.Millisecond}, // 10/s through PerDuration
	{3, 150 * time.Millisecond}, // 20/s
	{9, 36 * time.Millisecond},  // 250/s, T = 4ms
	{1, 2 * time.Second},        // 0.5/s
	{1, 4 * time.Second},        // 0.25/s
}

// refThirdRates have T = k·1e9/3 ns, not a whole number of nanoseconds;
// x/time/rate and ours both keep them as float64.
var refThirdRates = []float64{1.5, 3, 6, 7.5, 30, 300}

// TestReferenceWholeRates checks that ours computes each whole interval
// exactly, which the exact comparisons with throttled and uber rely on.
func TestReferenceWholeRates(t *testing.T) {
	for _, w := range refWholeRates {
		if w.per%time.Duration(w.n) != 0 {
			t.Errorf("%d per %v: interval is not whole", w.n, w.per)
		}
		if got := 1e9 / w.perSecond(); got != float64(w.interval()) {
			t.Errorf("%d per %v: ours interval %v ns, want %v", w.n, w.per, got, w.interval())
		}
	}
}

// refParams are one sequence's parameters.
type refParams struct {
	seed   uint64
	rate   float64
	whole  refWholeRate // zero for a third rate
	burst  int64        // token_bucket, gcra; for leaky_bucket it only scales gaps
	queue  int64        // leaky_bucket
	jitter bool         // any nanosecond instead of the 137µs grid
	edges  bool         // retry half the rejected requests right at their RetryAfter
}

func (p refParams) interval() float64 { return 1e9 / p.rate }

func (p refParams) String() string {
	mode := "grid"
	if p.jitter {
		mode = "jitter"
	}
	if p.edges {
		mode += "+edges"
	}
	size := fmt.Sprintf("burst %d", p.burst)
	if p.queue > 0 {
		size = fmt.Sprintf("queue %d", p.queue)
	}
	return fmt.Sprintf("seed %d, rate %s/s, %s, %s arrivals", p.seed, strconv.FormatFloat(p.rate, 'g', -1, 64), size, mode)
}

// refRand is sequence seq's random source.
func refRand(seed uint64, seq int) *rand.Rand { return rand.New(rand.NewPCG(seed, uint64(seq))) }

// refBurst is mostly small, so that costs 1..3 often exceed a quarter of it.
func refBurst(rng *rand.Rand) int64 {
	if rng.IntN(4) == 0 {
		return 1 + rng.Int64N(50)
	}
	return 1 + rng.Int64N(8)
}

// refWholeParams picks a whole rate, the burst and the arrival mode.
func refWholeParams(rng *rand.Rand, seed uint64, jitter bool) refParams {
	w := refWholeRates[rng.IntN(len(refWholeRates))]
	return refParams{seed: seed, rate: w.perSecond(), whole: w, burst: refBurst(rng), jitter: jitter}
}

// refXRateParams picks a whole rate three times in four and a third rate
// otherwise, on the grid.
func refXRateParams(rng *rand.Rand, seed uint64) refParams {
	if rng.IntN(4) == 0 {
		return refParams{seed: seed, rate: refThirdRates[rng.IntN(len(refThirdRates))], burst: refBurst(rng)}
	}
	return refWholeParams(rng, seed, false)
}

// xrateEdges are the retry offsets against x/time/rate: at RetryAfter and
// 1 ns later both must admit, 3 ns earlier both must reject. (1 or 2 ns
// earlier is a float tie in x/time/rate, and token_bucket's float deficit
// may round RetryAfter up by 1 ns.)
var xrateEdges = []time.Duration{-3, 0, 1}

// throttledEdges are the retry offsets against throttled, exact integers:
// 1 ns before RetryAfter is rejected, at it and after it admitted.
var throttledEdges = []time.Duration{-1, 0, 1}

// refBucketCost is 1 mostly, 2 or 3 often, sometimes a cost that can never
// pass (above the burst), rarely a peek (0).
func refBucketCost(rng *rand.Rand, burst int64) int64 {
	switch x := rng.IntN(100); {
	case x < 2:
		return 0
	case x < 5:
		return burst + 1 + rng.Int64N(3)
	case x < 75:
		return 1
	case x < 88:
		return 2
	default:
		return 3
	}
}

type refArrival struct {
	at   time.Duration
	cost int64
}

// refArrivals draws 20–200 arrivals: simultaneous ones, gaps under T, around
// T, up to twice the time to refill the burst, and long idles that rest the
// key. On the grid every arrival is a whole millisecond plus 137µs.
func refArrivals(rng *rand.Rand, p refParams, cost func() int64) []refArrival {
	T, scale := p.interval(), float64(p.burst)
	at := time.Duration(rng.IntN(1000))*time.Millisecond + refGridOffset
	if p.jitter {
		at = time.Duration(rng.Int64N(int64(time.Second)))
	}
	out := make([]refArrival, 20+rng.IntN(181))
	for i := range out {
		if i > 0 {
			var gap float64 // ns
			switch x := rng.IntN(100); {
			case x < 25:
			case x < 55:
				gap = rng.Float64() * T
			case x < 80:
				gap = rng.Float64() * 3 * T
			case x < 95:
				gap = rng.Float64() * 2 * scale * T
			default:
				gap = (2 + 3*rng.Float64()) * scale * T
			}
			if p.jitter {
				at += time.Duration(gap)
			} else {
				at += time.Duration(gap/1e6) * time.Millisecond
			}
		}
		out[i] = refArrival{at: at, cost: cost()}
	}
	return out
}

// refReplay replays arrivals. In edges mode, after half of the rejections
// (reported with rejected) the next arrival is replaced by a retry of the
// same cost at the rejection's time + RetryAfter + δ, δ drawn from deltas,
// so that requests land right at the edges where libraries can disagree.
// Later arrivals keep their gaps.
type refReplay struct {
	rng    *rand.Rand
	arr    []refArrival
	edges  bool
	deltas []time.Duration
	at     time.Duration
	retry  *refArrival
	n      int // retries made
}

// arrival returns step's arrival.
func (r *refReplay) arrival(step int) refArrival {
	a := r.arr[step]
	if step == 0 {
		r.at = a.at
	} else {
		r.at += a.at - r.arr[step-1].at
	}
	a.at = r.at
	if r.retry != nil {
		a, r.at, r.retry = *r.retry, r.retry.at, nil
		r.n++
	}
	return a
}

// rejected reports that a was rejected with a finite retryAfter.
func (r *refReplay) rejected(a refArrival, retryAfter time.Duration) {
	if r.edges && r.rng.IntN(2) == 0 {
		at := max(a.at, a.at+retryAfter+r.deltas[r.rng.IntN(len(r.deltas))])
		r.retry = &refArrival{at: at, cost: a.cost}
	}
}

func refNew(t *testing.T, s algorithms.Spec) algorithms.Limiter {
	t.Helper()
	l, err := algorithms.New(s)
	if err != nil {
		t.Fatalf("New(%+v): %v", s, err)
	}
	return l
}

// refFailer reports mismatches and stops the test after a few, so that one
// bug does not print a million lines.
type refFailer struct {
	t *testing.T
	n int
}

func (f *refFailer) mismatch(seq, step int, a refArrival, p refParams, msg string) {
	f.t.Helper()
	f.t.Errorf("seq %d step %d: at=%v cost=%d: %s (%s)", seq, step, a.at, a.cost, msg, p)
	if f.n++; f.n >= 10 {
		f.t.FailNow()
	}
}

// --- x/time/rate -----------------------------------------------------------

// xrateAdmits reports whether x/time/rate's AllowN admits n when the limiter
// holds tokens at that instant. It is reserveN's rule with maxFutureReserve
// 0, applied to the limiter's own TokensAt, so probes do not change it:
// n ≤ burst and the wait for the missing tokens truncates to 0 ns.
func xrateAdmits(ref *rate.Limiter, tokens float64, n int64) bool {
	if n > int64(ref.Burst()) {
		return false
	}
	tokens -= float64(n)
	if tokens >= 0 {
		return true
	}
	return time.Duration((-tokens/float64(ref.Limit()))*float64(time.Second)) <= 0
}

// xrateRemaining is how many more cost-1 requests x/time/rate would admit
// right now: ⌊TokensAt⌋, or one more when the next token is less than 1 ns
// away (AllowN's slack), which is also what lifts a float such as
// 1.9999999999999998 back to 2.
func xrateRemaining(ref *rate.Limiter, tokens float64) int64 {
	k := int64(max(0, math.Floor(tokens)))
	for k > 0 && !xrateAdmits(ref, tokens, k) {
		k--
	}
	for k < int64(ref.Burst()) && xrateAdmits(ref, tokens, k+1) {
		k++
	}
	return k
}

// compareXRate compares our decision d for cost at at with x/time/rate's,
// ok = AllowN(at, cost), which the caller has just made. It checks the
// decision, Remaining against TokensAt, that x/time/rate admits the same
// request at at+RetryAfter and not 1µs earlier, that a cost above the burst
// is Never, and that the bucket is full at at+Reset and not 1µs earlier.
func compareXRate(ref *rate.Limiter, at time.Time, cost int64, d algorithms.Decision, ok bool) string {
	if d.Allowed != ok {
		return fmt.Sprintf("ours allowed=%v, x/time/rate %v", d.Allowed, ok)
	}
	tokens := ref.TokensAt(at)
	if want := xrateRemaining(ref, tokens); d.Remaining != want {
		return fmt.Sprintf("ours remaining=%d, x/time/rate %d (TokensAt %.17g)", d.Remaining, want, tokens)
	}
	switch {
	case ok && d.RetryAfter() != 0:
		return fmt.Sprintf("ours allowed with retryAfter=%v", d.RetryAfter())
	case ok:
	case cost > int64(ref.Burst()):
		// x/time/rate never admits n > burst: AllowN is false and
		// ReserveN(t, n).DelayFrom is InfDuration, which is our Never.
		if d.RetryAfter() != algorithms.Never {
			return fmt.Sprintf("ours retryAfter=%v, x/time/rate never admits cost > burst %d", d.RetryAfter(), ref.Burst())
		}
	case d.RetryAfter() <= 0 || d.RetryAfter() == algorithms.Never:
		return fmt.Sprintf("ours rejected with retryAfter=%v", d.RetryAfter())
	default:
		if !xrateAdmits(ref, ref.TokensAt(at.Add(d.RetryAfter())), cost) {
			return fmt.Sprintf("ours retryAfter=%v, x/time/rate still rejects then (TokensAt %.17g)",
				d.RetryAfter(), ref.TokensAt(at.Add(d.RetryAfter())))
		}
		if early := d.RetryAfter() - time.Microsecond; early > 0 && xrateAdmits(ref, ref.TokensAt(at.Add(early)), cost) {
			return fmt.Sprintf("ours retryAfter=%v, x/time/rate admits 1µs earlier", d.RetryAfter())
		}
	}
	// Full means within 1 ns of refill of the burst (float noise).
	full := float64(ref.Burst()) - float64(ref.Limit())*1e-9
	if got := ref.TokensAt(at.Add(d.Reset)); got < full {
		return fmt.Sprintf("ours reset=%v, x/time/rate holds %.17g of %d tokens then", d.Reset, got, ref.Burst())
	}
	if early := d.Reset - time.Microsecond; early > 0 && ref.TokensAt(at.Add(early)) >= full {
		return fmt.Sprintf("ours reset=%v, x/time/rate is full 1µs earlier", d.Reset)
	}
	return ""
}

// TestReferenceTokenBucketXRate: (a) token_bucket vs x/time/rate AllowN.
func TestReferenceTokenBucketXRate(t *testing.T) {
	testReferenceXRate(t, algorithms.NameTokenBucket, 1)
}

// TestReferenceGCRAXRate: (b) gcra vs x/time/rate AllowN.
func TestReferenceGCRAXRate(t *testing.T) {
	testReferenceXRate(t, algorithms.NameGCRA, 2)
}

// testReferenceXRate replays grid sequences, a third of them with edge
// retries at ours' RetryAfter −3 ns, +0, +1 ns.
func testReferenceXRate(t *testing.T, name algorithms.Name, seed uint64) {
	f := &refFailer{t: t}
	var steps, rejected, third, floorOff, edges int
	for seq := range refSequences {
		rng := refRand(seed, seq)
		p := refXRateParams(rng, seed)
		p.edges = rng.IntN(3) == 0
		if p.whole.n == 0 {
			third++
		}
		lim := refNew(t, algorithms.Spec{Algorithm: name, Rate: p.rate, Burst: p.burst})
		ref := rate.NewLimiter(rate.Limit(p.rate), int(p.burst))
		key := "seq-" + strconv.Itoa(seq)
		r := &refReplay{rng: rng, arr: refArrivals(rng, p, func() int64 { return refBucketCost(rng, p.burst) }), edges: p.edges, deltas: xrateEdges}
		for step := range r.arr {
			a := r.arrival(step)
			at := refEpoch.Add(a.at)
			d := lim.Allow(key, a.at, a.cost)
			ok := ref.AllowN(at, int(a.cost))
			if msg := compareXRate(ref, at, a.cost, d, ok); msg != "" {
				f.mismatch(seq, step, a, p, msg)
				break
			}
			steps++
			if !ok {
				rejected++
				if d.RetryAfter() != algorithms.Never {
					r.rejected(a, d.RetryAfter())
				}
			}
			if tokens := ref.TokensAt(at); int64(max(0, math.Floor(tokens))) != d.Remaining {
				floorOff++
			}
		}
		edges += r.n
	}
	t.Logf("%s vs x/time/rate: %d sequences (%d with a third rate), %d decisions, %d rejected, %d edge retries; ⌊TokensAt⌋ alone would differ from Remaining %d times (float noise at whole tokens)",
		name, refSequences, third, steps, rejected, edges, floorOff)
}

// --- throttled -------------------------------------------------------------

// refStore is a throttled GCRA store in virtual time: GetWithTime returns
// now, which the test sets before each call. (memstore's SetTimeNow would do
// as well, but memstore needs hashicorp/golang-lru, which is not in go.sum.)
type refStore struct {
	now  time.Time
	tats map[string]int64
}

func newRefStore() *refStore { return &refStore{tats: make(map[string]int64)} }

func (s *refStore) GetWithTime(_ context.Context, key string) (int64, time.Time, error) {
	if v, ok := s.tats[key]; ok {
		return v, s.now, nil
	}
	return -1, s.now, nil
}

func (s *refStore) SetIfNotExistsWithTTL(_ context.Context, key string, value int64, _ time.Duration) (bool, error) {
	if _, ok := s.tats[key]; ok {
		return false, nil
	}
	s.tats[key] = value
	return true, nil
}

func (s *refStore) CompareAndSwapWithTTL(_ context.Context, key string, old, new int64, _ time.Duration) (bool, error) {
	if v, ok := s.tats[key]; !ok || v != old {
		return false, nil
	}
	s.tats[key] = new
	return true, nil
}

var _ throttled.GCRAStoreCtx = (*refStore)(nil)

func newThrottled(t *testing.T, store *refStore, w refWholeRate, burst int64) *throttled.GCRARateLimiterCtx {
	t.Helper()
	l, err := throttled.NewGCRARateLimiterCtx(store, throttled.RateQuota{MaxRate: w.throttled(), MaxBurst: int(burst - 1)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// throttledAllow asks throttled at virtual time at.
func throttledAllow(t *testing.T, l *throttled.GCRARateLimiterCtx, store *refStore, key string, at time.Duration, cost int64) (bool, throttled.RateLimitResult) {
	t.Helper()
	store.now = refEpoch.Add(at)
	limited, res, err := l.RateLimitCtx(context.Background(), key, int(cost))
	if err != nil {
		t.Fatal(err)
	}
	return limited, res
}

// compareThrottled compares our gcra decision d with throttled's.
//
// Two classes differ by design and are pinned elsewhere:
//   - cost > burst (TestReferenceCostAboveBurst): throttled reports
//     RetryAfter −1, Remaining = Limit whatever the state, ResetAfter 0; ours
//     reports Never and the key's real Remaining and Reset. Here we check
//     that both libraries give exactly those shapes.
//   - cost 0, a peek (TestReferencePeek): throttled's RetryAfter is that of
//     a cost-1 request; ours is 0 (the peek itself is admitted).
func compareThrottled(d algorithms.Decision, cost, burst int64, limited bool, res throttled.RateLimitResult) string {
	if d.Allowed == limited {
		return fmt.Sprintf("ours allowed=%v, throttled %v", d.Allowed, !limited)
	}
	if cost > burst {
		if res.RetryAfter != -1 || res.Remaining != res.Limit || res.ResetAfter != 0 || d.RetryAfter() != algorithms.Never {
			return fmt.Sprintf("cost above burst: ours retryAfter=%v, throttled retryAfter=%v remaining=%d (limit %d) resetAfter=%v",
				d.RetryAfter(), res.RetryAfter, res.Remaining, res.Limit, res.ResetAfter)
		}
		return ""
	}
	if d.Remaining != int64(res.Remaining) {
		return fmt.Sprintf("ours remaining=%d, throttled %d", d.Remaining, res.Remaining)
	}
	// The issue allows 1 ns for RetryAfter; with a whole T both sides are
	// exact integers, so Reset and RetryAfter must be equal.
	if d.Reset != res.ResetAfter {
		return fmt.Sprintf("ours reset=%v, throttled %v", d.Reset, res.ResetAfter)
	}
	switch {
	case cost == 0:
	case d.Allowed:
		if d.RetryAfter() != 0 || res.RetryAfter != -1 {
			return fmt.Sprintf("allowed: ours retryAfter=%v, throttled %v", d.RetryAfter(), res.RetryAfter)
		}
	default:
		if d.RetryAfter() != res.RetryAfter {
			return fmt.Sprintf("ours retryAfter=%v, throttled %v", d.RetryAfter(), res.RetryAfter)
		}
	}
	return ""
}

// TestReferenceGCRAThrottled: (c) gcra vs throttled's GCRA, with
// RateQuota{MaxRate: PerSec(n) or PerDuration(n, d), MaxBurst: burst−1}.
// With a whole T both sides compute in exact integers, so exact ties must
// agree too: a third of the sequences use jitter arrivals, and a third
// retry half of their rejected requests (same cost) exactly at throttled's
// RetryAfter −1 ns, +0 or +1 ns, which must be rejected, admitted, admitted.
// That also tests that ours' RetryAfter is the shortest wait.
func TestReferenceGCRAThrottled(t *testing.T) {
	const seed = 3
	f := &refFailer{t: t}
	var steps, rejected, above, ties, edges int
	for seq := range refSequences {
		rng := refRand(seed, seq)
		mode := rng.IntN(3)
		p := refWholeParams(rng, seed, mode == 1)
		p.edges = mode == 2
		lim := refNew(t, algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: p.rate, Burst: p.burst})
		store := newRefStore()
		ref := newThrottled(t, store, p.whole, p.burst)
		key := "seq-" + strconv.Itoa(seq)
		r := &refReplay{rng: rng, arr: refArrivals(rng, p, func() int64 { return refBucketCost(rng, p.burst) }), edges: p.edges, deltas: throttledEdges}
		for step := range r.arr {
			a := r.arrival(step)
			d := lim.Allow(key, a.at, a.cost)
			limited, res := throttledAllow(t, ref, store, key, a.at, a.cost)
			if msg := compareThrottled(d, a.cost, p.burst, limited, res); msg != "" {
				f.mismatch(seq, step, a, p, msg)
				break
			}
			steps++
			switch {
			case a.cost > p.burst:
				above++
			case limited:
				rejected++
				r.rejected(a, res.RetryAfter)
			case a.cost > 0 && res.ResetAfter == time.Duration(p.burst)*p.whole.interval():
				ties++ // admitted with no time to spare
			}
		}
		edges += r.n
	}
	t.Logf("gcra vs throttled: %d sequences, %d decisions, %d rejected, %d cost > burst, %d admitted exactly at the edge, %d edge retries",
		refSequences, steps, rejected, above, ties, edges)
}

// --- leaky bucket: uber and x/time/rate ReserveN ---------------------------

// refClock is uber's clock in virtual time: Sleep moves it forward.
type refClock struct{ now time.Time }

func (c *refClock) Now() time.Time        { return c.now }
func (c *refClock) Sleep(d time.Duration) { c.now = c.now.Add(d) }

// uberTakes offers a request of cost units arriving at at to uber, as cost
// calls to Take that all arrive at at: uber is a pacer that makes its caller
// sleep, so to emulate concurrent arrivals the clock is set back to the
// arrival before each Take, even if an earlier Take's Sleep moved it on. It
// returns the first and last permission times as virtual durations.
func uberTakes(u ratelimit.Limiter, clk *refClock, at time.Duration, cost int64) (first, last time.Duration) {
	for i := range cost {
		clk.now = refEpoch.Add(at)
		last = u.Take().Sub(refEpoch)
		if i == 0 {
			first = last
		}
	}
	return first, last
}

// compareUber checks that our request is released at uber's first
// permission and that the drain is free one T after uber's last.
func compareUber(d algorithms.Decision, at, first, last, interval time.Duration) string {
	if !d.Allowed {
		return fmt.Sprintf("ours allowed=%v, uber always admits", d.Allowed)
	}
	if at+d.Delay() != first {
		return fmt.Sprintf("ours release=%v (delay %v), uber %v", at+d.Delay(), d.Delay(), first)
	}
	if at+d.Reset != last+interval {
		return fmt.Sprintf("ours free at=%v (reset %v), uber's next slot %v", at+d.Reset, d.Reset, last+interval)
	}
	return ""
}

// xrateReserve offers a request of cost units at at to x/time/rate with
// burst 1 as cost calls to ReserveN(at, 1), and returns the delays of the
// first and the last.
func xrateReserve(ref *rate.Limiter, at time.Time, cost int64) (first, last time.Duration, ok bool) {
	for i := range cost {
		r := ref.ReserveN(at, 1)
		if !r.OK() {
			return 0, 0, false
		}
		last = r.DelayFrom(at)
		if i == 0 {
			first = last
		}
	}
	return first, last, true
}

// leakyCost is a cost of 1..3: uber has no cost, so a request of cost n is
// n Takes at the same instant, released at the first.
func leakyCost(rng *rand.Rand) int64 {
	switch x := rng.IntN(100); {
	case x < 70:
		return 1
	case x < 85:
		return 2
	default:
		return 3
	}
}

// refLeakySequence draws a sequence and a queue long enough (the total
// cost) that leaky_bucket never rejects, as neither reference can.
func refLeakySequence(rng *rand.Rand, p refParams) (refParams, []refArrival) {
	arr := refArrivals(rng, p, func() int64 { return leakyCost(rng) })
	for _, a := range arr {
		p.queue += a.cost
	}
	return p, arr
}

// TestReferenceLeakyBucketUber: (d) leaky_bucket's schedule, arrival +
// Delay, vs uber's Take times with WithoutSlack. With slack 0 uber's
// permission time is max(now, last+T), exactly our drain, including the
// first call; the default slack is a different model (TestReferenceUberQuirks).
func TestReferenceLeakyBucketUber(t *testing.T) {
	const seed = 4
	f := &refFailer{t: t}
	var steps, delayed int
	for seq := range refSequences {
		rng := refRand(seed, seq)
		p, arr := refLeakySequence(rng, refWholeParams(rng, seed, rng.IntN(2) == 0))
		lim := refNew(t, algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: p.rate, Queue: p.queue})
		clk := &refClock{}
		ref := ratelimit.New(p.whole.n, ratelimit.Per(p.whole.per), ratelimit.WithoutSlack, ratelimit.WithClock(clk))
		key := "seq-" + strconv.Itoa(seq)
		for step, a := range arr {
			d := lim.Allow(key, a.at, a.cost)
			first, last := uberTakes(ref, clk, a.at, a.cost)
			if msg := compareUber(d, a.at, first, last, p.whole.interval()); msg != "" {
				f.mismatch(seq, step, a, p, msg)
				break
			}
			steps++
			if d.Delay() > 0 {
				delayed++
			}
		}
	}
	t.Logf("leaky_bucket vs uber: %d sequences, %d requests, %d delayed", refSequences, steps, delayed)
}

// TestReferenceLeakyBucketXRate: (d) leaky_bucket's schedule vs x/time/rate
// ReserveN(t, 1).DelayFrom(t) with burst 1, also with third rates. Ours
// rounds a delay to the nearest ns and x/time/rate truncates, so they agree
// within 1 ns.
func TestReferenceLeakyBucketXRate(t *testing.T) {
	const seed = 5
	f := &refFailer{t: t}
	var steps, delayed, third int
	for seq := range refSequences {
		rng := refRand(seed, seq)
		p := refXRateParams(rng, seed)
		if p.whole.n == 0 {
			third++
		}
		p.jitter = rng.IntN(2) == 0
		p, arr := refLeakySequence(rng, p)
		lim := refNew(t, algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: p.rate, Queue: p.queue})
		ref := rate.NewLimiter(rate.Limit(p.rate), 1)
		key := "seq-" + strconv.Itoa(seq)
		for step, a := range arr {
			d := lim.Allow(key, a.at, a.cost)
			first, last, ok := xrateReserve(ref, refEpoch.Add(a.at), a.cost)
			if msg := compareXRateSchedule(d, ok, first, last, p.interval()); msg != "" {
				f.mismatch(seq, step, a, p, msg)
				break
			}
			steps++
			if d.Delay() > 0 {
				delayed++
			}
		}
	}
	t.Logf("leaky_bucket vs x/time/rate ReserveN: %d sequences (%d with a third rate), %d requests, %d delayed", refSequences, third, steps, delayed)
}

func compareXRateSchedule(d algorithms.Decision, ok bool, first, last time.Duration, interval float64) string {
	if d.Allowed != ok {
		return fmt.Sprintf("ours allowed=%v, x/time/rate %v", d.Allowed, ok)
	}
	if diff := d.Delay() - first; diff < -1 || diff > 1 {
		return fmt.Sprintf("ours delay=%v, x/time/rate %v", d.Delay(), first)
	}
	if diff := float64(d.Reset) - (float64(last) + interval); math.Abs(diff) > 2 {
		return fmt.Sprintf("ours reset=%v, x/time/rate last delay %v + T %vns", d.Reset, last, interval)
	}
	return ""
}

// --- several keys ------------------------------------------------------------

// TestReferenceInterleavedKeys runs three keys through one limiter of each
// kind, against three x/time/rate limiters, one throttled limiter over one
// store holding the three keys, and three uber limiters on one clock.
// Reclaim runs now and then: it drops only rested keys, so it must not
// change any decision.
func TestReferenceInterleavedKeys(t *testing.T) {
	const seed = 6
	keys := [3]string{"alice", "bob", "carol"}
	f := &refFailer{t: t}
	var steps, reclaimed int
	for seq := range refSequences {
		rng := refRand(seed, seq)
		p := refWholeParams(rng, seed, false)
		arr := refArrivals(rng, p, func() int64 { return refBucketCost(rng, p.burst) })
		who := make([]int, len(arr))
		for i := range who {
			who[i] = rng.IntN(len(keys))
		}
		lp := p
		for _, a := range arr {
			lp.queue += min(max(a.cost, 1), 3)
		}
		tb := refNew(t, algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: p.rate, Burst: p.burst})
		gcra := refNew(t, algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: p.rate, Burst: p.burst})
		leaky := refNew(t, algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: p.rate, Queue: lp.queue})
		store := newRefStore()
		thr := newThrottled(t, store, p.whole, p.burst)
		clk := &refClock{}
		var xr [3]*rate.Limiter
		var ub [3]ratelimit.Limiter
		for k := range keys {
			xr[k] = rate.NewLimiter(rate.Limit(p.rate), int(p.burst))
			ub[k] = ratelimit.New(p.whole.n, ratelimit.Per(p.whole.per), ratelimit.WithoutSlack, ratelimit.WithClock(clk))
		}
		for step, a := range arr {
			k := who[step]
			key := keys[k]
			at := refEpoch.Add(a.at)
			dt := tb.Allow(key, a.at, a.cost)
			dg := gcra.Allow(key, a.at, a.cost)
			ok := xr[k].AllowN(at, int(a.cost))
			limited, res := throttledAllow(t, thr, store, key, a.at, a.cost)
			lc := min(max(a.cost, 1), 3)
			dl := leaky.Allow(key, a.at, lc)
			first, last := uberTakes(ub[k], clk, a.at, lc)
			for _, c := range []struct{ what, msg string }{
				{"token_bucket", compareXRate(xr[k], at, a.cost, dt, ok)},
				{"gcra", compareXRate(xr[k], at, a.cost, dg, ok)},
				{"gcra", compareThrottled(dg, a.cost, p.burst, limited, res)},
				{"leaky_bucket", compareUber(dl, a.at, first, last, p.whole.interval())},
			} {
				if c.msg != "" {
					f.mismatch(seq, step, a, p, fmt.Sprintf("key %s, %s: %s", key, c.what, c.msg))
				}
			}
			if step%37 == 36 {
				for _, l := range []algorithms.Limiter{tb, gcra, leaky} {
					reclaimed += l.Reclaim(a.at)
					if l.Keys() > len(keys) {
						t.Fatalf("seq %d step %d: %s holds %d keys", seq, step, l.Spec(), l.Keys())
					}
				}
			}
			steps++
		}
	}
	t.Logf("3 interleaved keys: %d sequences, %d steps, %d keys reclaimed", refSequences, steps, reclaimed)
}

// --- pinned classes ----------------------------------------------------------

// TestReferenceRemainingSlowRate pins Remaining at the 1 ns edge below 1 r/s.
// There one unit takes more than 1e9 ns to refill, so a float tolerance of
// 1e-9 units is more than 1 ns of refill; rounding Remaining up by it counted
// a request that Allow itself still rejects (throttled and x/time/rate say 0).
func TestReferenceRemainingSlowRate(t *testing.T) {
	// token_bucket and gcra vs x/time/rate, 2 ns before the bucket refills
	// (1 ns before is a float tie in x/time/rate, §13.5).
	for _, name := range []algorithms.Name{algorithms.NameTokenBucket, algorithms.NameGCRA} {
		lim := refNew(t, algorithms.Spec{Algorithm: name, Rate: 0.25, Burst: 1})
		xr := rate.NewLimiter(0.25, 1)
		lim.Allow("k", 0, 1)
		xr.AllowN(refEpoch, 1)
		at := 4*time.Second - 2
		tokens := xr.TokensAt(refEpoch.Add(at))
		if got, want := lim.Allow("k", at, 0).Remaining, xrateRemaining(xr, tokens); got != want || want != 0 {
			t.Errorf("%s: at=%v: ours remaining=%d, x/time/rate %d (TokensAt %.17g)", name, at, got, want, tokens)
		}
		// token_bucket's float deficit can round the 2 ns wait up to 3 ns.
		if d, ok := lim.Allow("k", at, 1), xr.AllowN(refEpoch.Add(at), 1); d.Allowed || ok || d.RetryAfter() < 2 || d.RetryAfter() > 3 {
			t.Errorf("%s: at=%v: ours %+v, x/time/rate allowed=%v; want both rejected, retry after 2ns", name, at, d, ok)
		}
		if d, ok := lim.Allow("k", 4*time.Second, 1), xr.AllowN(refEpoch.Add(4*time.Second), 1); !d.Allowed || !ok {
			t.Errorf("%s: at=4s: ours allowed=%v, x/time/rate %v", name, d.Allowed, ok)
		}
	}
	// gcra vs throttled 1 ns before the edge, where both are exact.
	w := refWholeRate{1, 2 * time.Second}
	lim := refNew(t, algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: w.perSecond(), Burst: 1})
	store := newRefStore()
	thr := newThrottled(t, store, w, 1)
	lim.Allow("k", 0, 1)
	throttledAllow(t, thr, store, "k", 0, 1)
	at := 2*time.Second - 1
	for _, cost := range []int64{0, 1} {
		d := lim.Allow("k", at, cost)
		limited, res := throttledAllow(t, thr, store, "k", at, cost)
		if msg := compareThrottled(d, cost, 1, limited, res); msg != "" {
			t.Errorf("at=%v cost=%d: %s", at, cost, msg)
		}
	}
}

// TestReferenceCostAboveBurst pins the one class where throttled and ours
// report a rejection differently: a cost above the burst, which can never
// pass. Both reject it and leave the state alone, but throttled reports
// RetryAfter −1 ("no retry") where ours reports Never, Remaining = Limit
// (MaxBurst+1) whatever the key has used where ours reports the key's real
// Remaining, and ResetAfter 0 where ours reports the real Reset.
// x/time/rate agrees with ours: AllowN is false and ReserveN's DelayFrom is
// InfDuration, which is Never.
func TestReferenceCostAboveBurst(t *testing.T) {
	w := refWholeRate{10, time.Second} // T = 100ms
	const burst = 3
	at := 50 * time.Millisecond

	gcra := refNew(t, algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: w.perSecond(), Burst: burst})
	tb := refNew(t, algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: w.perSecond(), Burst: burst})
	store := newRefStore()
	thr := newThrottled(t, store, w, burst)
	xr := rate.NewLimiter(rate.Limit(w.perSecond()), burst)
	gcra.Allow("k", 0, 1)
	tb.Allow("k", 0, 1)
	throttledAllow(t, thr, store, "k", 0, 1)
	xr.AllowN(refEpoch, 1)

	// One unit used at 0, half refilled at 50ms: 2.5 tokens of 3.
	want := algorithms.Decision{Remaining: 2, Wait: algorithms.Never, Reset: 50 * time.Millisecond}
	if got := gcra.Allow("k", at, burst+1); got != want {
		t.Errorf("gcra: cost %d at %v: got %+v, want %+v", burst+1, at, got, want)
	}
	if got := tb.Allow("k", at, burst+1); got.Allowed || got.Remaining != want.Remaining || got.RetryAfter() != algorithms.Never {
		t.Errorf("token_bucket: cost %d at %v: got %+v, want %+v", burst+1, at, got, want)
	}
	limited, res := throttledAllow(t, thr, store, "k", at, burst+1)
	wantRes := throttled.RateLimitResult{Limit: burst, Remaining: burst, ResetAfter: 0, RetryAfter: -1}
	if !limited || res != wantRes {
		t.Errorf("throttled: cost %d at %v: limited=%v %+v, want limited %+v", burst+1, at, limited, res, wantRes)
	}
	// The same key asked for cost 3 (= burst) gets its real state from both.
	d := gcra.Allow("k", at, burst)
	limited, res = throttledAllow(t, thr, store, "k", at, burst)
	if msg := compareThrottled(d, burst, burst, limited, res); msg != "" || d.Allowed || d.Remaining != 2 {
		t.Errorf("cost %d at %v: ours %+v, throttled %+v: %s", burst, at, d, res, msg)
	}
	if xr.AllowN(refEpoch.Add(at), burst+1) {
		t.Errorf("x/time/rate: AllowN(cost %d > burst) = true", burst+1)
	}
	if r := xr.ReserveN(refEpoch.Add(at), burst+1); r.OK() || r.DelayFrom(refEpoch.Add(at)) != algorithms.Never {
		t.Errorf("x/time/rate: ReserveN(cost %d > burst): ok=%v delay=%v, want !ok and InfDuration = Never", burst+1, r.OK(), r.DelayFrom(refEpoch.Add(at)))
	}

	// leaky_bucket: capacity queue+1; x/time/rate with burst 1 cannot
	// reserve 2 at once either (uber has no cost).
	leaky := refNew(t, algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: w.perSecond(), Queue: 1})
	if got := leaky.Allow("k", 0, 3); got.Allowed || got.RetryAfter() != algorithms.Never {
		t.Errorf("leaky_bucket: cost 3 > queue+1: got %+v, want rejected, Never", got)
	}
	if r := rate.NewLimiter(rate.Limit(w.perSecond()), 1).ReserveN(refEpoch, 2); r.OK() {
		t.Errorf("x/time/rate burst 1: ReserveN(2).OK() = true")
	}
}

// TestReferencePeek pins throttled's peek (quantity 0): it is not limited
// and reports Remaining and ResetAfter as ours does, but its RetryAfter is
// the wait of a cost-1 request (−1 if one would pass now), while a peek of
// ours is admitted and has RetryAfter 0; ours gives that wait when asked
// for cost 1, which, being rejected, changes nothing either.
func TestReferencePeek(t *testing.T) {
	w := refWholeRate{10, time.Second} // T = 100ms
	const burst = 2
	gcra := refNew(t, algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: w.perSecond(), Burst: burst})
	store := newRefStore()
	thr := newThrottled(t, store, w, burst)
	gcra.Allow("k", 0, 2) // TAT = 200ms
	throttledAllow(t, thr, store, "k", 0, 2)

	for _, tt := range []struct {
		at        time.Duration
		wantPeek  algorithms.Decision
		wantRetry time.Duration // throttled's peek RetryAfter
	}{
		{30 * time.Millisecond, algorithms.Decision{Allowed: true, Remaining: 0, Reset: 170 * time.Millisecond}, 70 * time.Millisecond},
		{150 * time.Millisecond, algorithms.Decision{Allowed: true, Remaining: 1, Reset: 50 * time.Millisecond}, -1},
	} {
		peek := gcra.Allow("k", tt.at, 0)
		limited, res := throttledAllow(t, thr, store, "k", tt.at, 0)
		if peek != tt.wantPeek {
			t.Errorf("at=%v: ours peek %+v, want %+v", tt.at, peek, tt.wantPeek)
		}
		if msg := compareThrottled(peek, 0, burst, limited, res); msg != "" {
			t.Errorf("at=%v cost=0: %s", tt.at, msg)
		}
		if res.RetryAfter != tt.wantRetry {
			t.Errorf("at=%v: throttled peek RetryAfter=%v, want %v", tt.at, res.RetryAfter, tt.wantRetry)
		}
		if one := gcra.Allow("k", tt.at, 1); tt.wantRetry > 0 && (one.Allowed || one.RetryAfter() != tt.wantRetry) {
			t.Errorf("at=%v: ours cost 1 %+v, want rejected, retry after %v", tt.at, one, tt.wantRetry)
		}
		if tt.wantRetry > 0 {
			continue
		}
		// The cost-1 request above passed in ours; keep throttled in step.
		if limited, _ := throttledAllow(t, thr, store, "k", tt.at, 1); limited {
			t.Errorf("at=%v: throttled limited a cost-1 request ours admitted", tt.at)
		}
	}
}

// TestReferenceThrottledTruncatesInterval pins why throttled is only
// compared at whole-nanosecond intervals: PerSec(3) truncates T to
// 333 333 333 ns, while ours and x/time/rate keep 1e9/3. While a key stays
// backlogged the schedules drift apart by 1/3 ns per request, until
// throttled admits a request that ours and x/time/rate reject.
func TestReferenceThrottledTruncatesInterval(t *testing.T) {
	const Tt = 333_333_333 * time.Nanosecond // throttled's T
	steps := []struct {
		at              time.Duration
		cost            int64
		ours, throttled bool
	}{
		{0, 2, true, true},
		{Tt, 1, true, true},     // ours waits 1/3 ns: under 1 ns, admitted
		{2 * Tt, 1, true, true}, // 2/3 ns
		{3*Tt + time.Microsecond, 1, true, true},
		{4 * Tt, 1, false, true}, // ours 4/3 ns too early; throttled exactly on time
		{4*Tt + 2, 1, true, false},
	}
	gcra := refNew(t, algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 3, Burst: 2})
	tb := refNew(t, algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 3, Burst: 2})
	xr := rate.NewLimiter(3, 2)
	store := newRefStore()
	thr, err := throttled.NewGCRARateLimiterCtx(store, throttled.RateQuota{MaxRate: throttled.PerSec(3), MaxBurst: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		dg, dt := gcra.Allow("k", s.at, s.cost), tb.Allow("k", s.at, s.cost)
		ok := xr.AllowN(refEpoch.Add(s.at), int(s.cost))
		limited, _ := throttledAllow(t, thr, store, "k", s.at, s.cost)
		if dg.Allowed != s.ours || dt.Allowed != s.ours || ok != s.ours || limited == s.throttled {
			t.Errorf("step %d: at=%v cost=%d: gcra %v, token_bucket %v, x/time/rate %v, throttled %v; want %v, %v, %v, %v",
				i, s.at, s.cost, dg.Allowed, dt.Allowed, ok, !limited, s.ours, s.ours, s.ours, s.throttled)
		}
	}
}

// TestReferenceUberQuirks pins the two ways uber differs from a plain
// shaper, and why the differential test uses WithoutSlack and refEpoch.
func TestReferenceUberQuirks(t *testing.T) {
	w := refWholeRate{10, time.Second}
	T := w.interval()
	t.Run("slack", func(t *testing.T) {
		// With the default slack of 10, uber banks unused permissions: after
		// a long idle 11 calls pass at once. The first call after New gets
		// no such credit. Ours is a strict shaper, as uber WithoutSlack.
		clk := &refClock{}
		slack := ratelimit.New(w.n, ratelimit.WithClock(clk))
		strict := ratelimit.New(w.n, ratelimit.WithoutSlack, ratelimit.WithClock(clk))
		leaky := refNew(t, algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: w.perSecond(), Queue: 20})
		check := func(at time.Duration, i int, wantSlack time.Duration) {
			t.Helper()
			got, _ := uberTakes(slack, clk, at, 1)
			strictAt, _ := uberTakes(strict, clk, at, 1)
			d := leaky.Allow("k", at, 1)
			if got != wantSlack || strictAt != at+time.Duration(i)*T || at+d.Delay() != strictAt {
				t.Errorf("at=%v call %d: uber slack %v (want %v), WithoutSlack %v, ours %v", at, i, got, wantSlack, strictAt, at+d.Delay())
			}
		}
		for i := range 2 { // right after New: paced from the first call
			check(0, i, time.Duration(i)*T)
		}
		at := 10 * time.Second
		for i := range 12 {
			want := at // 11 at once from the slack…
			if i == 11 {
				want = at + T // …then paced
			}
			check(at, i, want)
		}
	})
	t.Run("unix zero", func(t *testing.T) {
		// uber keeps the last permission as UnixNano, 0 meaning "never
		// called": a clock at Unix 0 makes every call a first call, so
		// nothing is ever paced. Hence refEpoch.
		clk := &refClock{now: time.Unix(0, 0)}
		u := ratelimit.New(w.n, ratelimit.WithoutSlack, ratelimit.WithClock(clk))
		for i := range 3 {
			clk.now = time.Unix(0, 0)
			if got := u.Take(); !got.Equal(time.Unix(0, 0)) {
				t.Errorf("call %d at Unix 0: uber permits at %v, want at once (not paced)", i, got.Sub(time.Unix(0, 0)))
			}
		}
	})
}
