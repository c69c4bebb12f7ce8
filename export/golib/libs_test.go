package golib_test

// The exported numbers, driven through the real libraries: each library
// limiter is built from XRateParams, ThrottledParams or RedisRateParams and
// must admit exactly what package algorithms predicts — the limit itself
// for the buckets, the bucket of export.Bucket for the windows (their
// mapping says they are enforced as that bucket), the leaky bucket's
// schedule for an x/time/rate queue.
//
// Arrivals follow conformance/golibs/reference_test.go: against
// x/time/rate whole milliseconds plus 137µs with intervals that are whole
// ms or thirds of a second's multiples, so no wait is within float noise
// of the 1 ns edge; against throttled any µs, with intervals of whole ns
// (throttled's own integer arithmetic is then exact in ours); against
// redis_rate, on a real redis-server that uses its own clock, a burst at
// one instant.
//
// This file stays in the main module: its imports are what keep throttled
// and redis_rate in go.mod and go.sum, which redistest.Compile copies to
// build the generated files (TestRenderCompiles, the differential and
// header tests) offline.

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/golib"
	"github.com/ratelab/ratelab/export/redis/redistest"
)

// epoch is virtual time 0 for the libraries (not Unix 0, not the zero Time).
var epoch = time.Unix(1_700_000_000, 0)

const (
	libSequences = 400
	libArrivals  = 30
)

var (
	// bucketRates have T a whole number of ms, or k·1e9/3 ns.
	bucketRates = []float64{0.25, 0.5, 1, 2, 4, 5, 8, 10, 20, 25, 50, 100, 1000, 1.5, 3, 6, 7.5, 30}
	// windowSpecs: limit/window gives T a whole number of ms.
	windowLimits = []int64{1, 2, 4, 5, 8, 10, 20, 25, 50}
	windowSizes  = []time.Duration{time.Second, 2 * time.Second, 10 * time.Second, time.Minute}
)

// randomSpec draws a token_bucket, gcra or window spec.
func randomSpec(rng *rand.Rand) algorithms.Spec {
	names := []algorithms.Name{algorithms.NameTokenBucket, algorithms.NameGCRA, algorithms.NameFixedWindow, algorithms.NameSlidingLog, algorithms.NameSlidingWindow}
	s := algorithms.Spec{Algorithm: names[rng.IntN(len(names))]}
	if s.Algorithm == algorithms.NameTokenBucket || s.Algorithm == algorithms.NameGCRA {
		s.Rate, s.Burst = bucketRates[rng.IntN(len(bucketRates))], 1+rng.Int64N(12)
	} else {
		s.Limit, s.Window = windowLimits[rng.IntN(len(windowLimits))], windowSizes[rng.IntN(len(windowSizes))]
	}
	return s
}

// oracle is algorithms' prediction for what the library enforces for s:
// the bucket of export.Bucket (s itself for token_bucket and gcra).
func oracle(t *testing.T, s algorithms.Spec) algorithms.Limiter {
	r, b, _ := export.Bucket(s)
	lim, err := algorithms.New(algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: r, Burst: b})
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

// arrivals draws gaps in units of the interval T (ns) and costs, some
// above the capacity; grid rounds times to whole ms + 137µs.
func arrivals(rng *rand.Rand, T float64, capacity int64, grid bool) (at []time.Duration, cost []int64) {
	now := time.Duration(0)
	for i := 0; i < libArrivals; i++ {
		switch x := rng.IntN(10); {
		case x < 3:
		case x < 7:
			now += time.Duration(rng.Float64() * T)
		case x < 9:
			now += time.Duration(rng.Float64() * 3 * T)
		default:
			now += time.Duration(rng.Float64() * T * float64(capacity+1))
		}
		if grid {
			now = now.Truncate(time.Millisecond) + 137*time.Microsecond
		} else {
			now = now.Truncate(time.Microsecond)
		}
		c := int64(1 + rng.IntN(3))
		if rng.IntN(20) == 0 {
			c = capacity + 1
		}
		at, cost = append(at, now), append(cost, c)
	}
	return at, cost
}

func TestXRateAdmitsWhatAlgorithmsPredicts(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261130, 1))
	decisions, admitted := 0, 0
	for seq := 0; seq < libSequences; seq++ {
		s := randomSpec(rng)
		x, why := golib.XRateParams(s)
		if _, _, bwhy := export.Bucket(s); why != bwhy {
			t.Fatalf("%s: XRateParams why %q, want only the bucket conversion %q", s, why, bwhy)
		}
		want := oracle(t, s)
		allow := rate.NewLimiter(rate.Limit(x.Limit), x.Burst)
		// The generated file reserves and cancels instead of AllowN (so a
		// request rejected by a later limit gives its tokens back): it
		// must decide the same.
		reserve := rate.NewLimiter(rate.Limit(x.Limit), x.Burst)
		at, cost := arrivals(rng, 1e9/x.Limit, int64(x.Burst), true)
		for i := range at {
			now := epoch.Add(at[i])
			d := want.Allow("k", at[i], cost[i])
			got := allow.AllowN(now, int(cost[i]))
			r := reserve.ReserveN(now, int(cost[i]))
			viaReserve := r.OK() && r.DelayFrom(now) == 0
			if !viaReserve {
				r.CancelAt(now)
			}
			if got != d.Allowed || viaReserve != d.Allowed {
				t.Fatalf("%s as rate.NewLimiter(%v, %d), step %d (t=%v, cost %d): AllowN %t, ReserveN %t; algorithms %t",
					s, x.Limit, x.Burst, i, at[i], cost[i], got, viaReserve, d.Allowed)
			}
			decisions++
			if d.Allowed {
				admitted++
			}
		}
	}
	if admitted == 0 || admitted == decisions {
		t.Fatalf("%d of %d admitted: not both answers", admitted, decisions)
	}
	t.Logf("%d decisions, %d admitted, all equal", decisions, admitted)
}

// TestXRateQueue: a leaky_bucket as x/time/rate's queue (burst 1,
// ReserveN(now, 1), wait up to MaxWait, else CancelAt) admits and delays
// what algorithms' leaky bucket does, within 1 ns (x/time/rate truncates a
// delay, algorithms rounds it).
func TestXRateQueue(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261130, 2))
	decisions, delayed := 0, 0
	for seq := 0; seq < libSequences; seq++ {
		s := algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: bucketRates[rng.IntN(len(bucketRates))], Queue: rng.Int64N(8)}
		x, why := golib.XRateParams(s)
		if why != "" || !x.Queue || x.Burst != 1 {
			t.Fatalf("%s: XRateParams = %+v, %q; want an exact queue of burst 1", s, x, why)
		}
		want, _ := algorithms.New(s)
		lib := rate.NewLimiter(rate.Limit(x.Limit), x.Burst)
		at, _ := arrivals(rng, 1e9/s.Rate, s.Queue+1, true)
		for i := range at {
			now := epoch.Add(at[i])
			d := want.Allow("k", at[i], 1)
			r := lib.ReserveN(now, 1)
			wait := r.DelayFrom(now)
			ok := r.OK() && wait <= x.MaxWait
			if !ok {
				r.CancelAt(now)
			}
			if ok != d.Allowed || (ok && (wait-d.Delay() > 1 || d.Delay()-wait > 1)) {
				t.Fatalf("%s, step %d (t=%v): x/time/rate %t delay %v; algorithms %t delay %v", s, i, at[i], ok, wait, d.Allowed, d.Delay())
			}
			decisions++
			if d.Delay() > 0 {
				delayed++
			}
		}
	}
	if delayed == 0 {
		t.Fatal("no request was delayed: the sequences do not test the queue")
	}
	t.Logf("%d decisions, %d delayed, all equal", decisions, delayed)
}

func TestThrottledAdmitsWhatAlgorithmsPredicts(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261130, 3))
	ctx := context.Background()
	decisions, admitted, skipped := 0, 0, 0
	for seq := 0; seq < libSequences; seq++ {
		s := randomSpec(rng)
		p, why := golib.ThrottledParams(s)
		if _, _, bwhy := export.Bucket(s); why != bwhy {
			// T is not a whole number of ns (the rate is a third): the
			// mapping says approximate; TestThrottledTruncation covers it.
			skipped++
			continue
		}
		var now time.Time
		st, err := memstore.New(0)
		if err != nil {
			t.Fatal(err)
		}
		st.SetTimeNow(func() time.Time { return now })
		lib, err := throttled.NewGCRARateLimiterCtx(throttled.WrapStoreWithContext(st),
			throttled.RateQuota{MaxRate: throttled.PerDuration(p.N, p.Per), MaxBurst: p.MaxBurst})
		if err != nil {
			t.Fatal(err)
		}
		want := oracle(t, s)
		T := float64(p.Per) / float64(p.N)
		at, cost := arrivals(rng, T, int64(p.MaxBurst+1), false)
		for i := range at {
			now = epoch.Add(at[i])
			d := want.Allow("k", at[i], cost[i])
			// The generated file peeks first: cost ≤ Remaining ⇔ admitted.
			_, peek, err := lib.RateLimitCtx(ctx, "k", 0)
			if err != nil {
				t.Fatal(err)
			}
			limited, res, err := lib.RateLimitCtx(ctx, "k", int(cost[i]))
			if err != nil {
				t.Fatal(err)
			}
			if limited == d.Allowed || (int64(peek.Remaining) >= cost[i]) != d.Allowed {
				t.Fatalf("%s as PerDuration(%d, %v) MaxBurst %d, step %d (t=%v, cost %d): limited %t, peek remaining %d; algorithms allowed %t",
					s, p.N, p.Per, p.MaxBurst, i, at[i], cost[i], limited, peek.Remaining, d.Allowed)
			}
			if !d.Allowed && d.RetryAfter() == algorithms.Never && res.RetryAfter != -1 {
				t.Fatalf("%s step %d: cost %d above the capacity: RetryAfter %v, want -1", s, i, cost[i], res.RetryAfter)
			}
			decisions++
			if d.Allowed {
				admitted++
			}
		}
	}
	if admitted == 0 || admitted == decisions || skipped == libSequences {
		t.Fatalf("%d of %d admitted, %d sequences skipped", admitted, decisions, skipped)
	}
	t.Logf("%d decisions, %d admitted, all equal (%d sequences with a third rate skipped)", decisions, admitted, skipped)
}

// TestThrottledTruncation pins why a third rate is approximate in
// throttled: at 3/s its interval is 333 333 333 ns, 1/3 ns short of 1e9/3.
// Requests spaced exactly 333 333 333 ns apart (burst 1) all pass
// throttled, each finding its TAT exactly at now; algorithms refills
// 0.999999999 of a token per gap, and the shortfall grows by 1/3 ns of
// wait per request until it reaches 1 ns, at the fourth request, which it
// rejects.
func TestThrottledTruncation(t *testing.T) {
	s := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 3, Burst: 1}
	p, why := golib.ThrottledParams(s)
	if p.N != 3 || p.Per != time.Second || p.MaxBurst != 0 || why == "" {
		t.Fatalf("ThrottledParams(%s) = %+v, %q; want 3 per 1s, MaxBurst 0, approximate", s, p, why)
	}
	var now time.Time
	st, _ := memstore.New(0)
	st.SetTimeNow(func() time.Time { return now })
	lib, _ := throttled.NewGCRARateLimiterCtx(throttled.WrapStoreWithContext(st), throttled.RateQuota{MaxRate: throttled.PerDuration(p.N, p.Per), MaxBurst: p.MaxBurst})
	want, _ := algorithms.New(s)
	// Requests at 0, then each as early as throttled allows: k·333 333 333 ns.
	firstRejected := -1
	for k := 0; k <= 30; k++ {
		at := time.Duration(k) * 333_333_333
		now = epoch.Add(at)
		limited, _, _ := lib.RateLimitCtx(context.Background(), "k", 1)
		d := want.Allow("k", at, 1)
		if limited {
			t.Fatalf("throttled rejected the request at k·T (k=%d)", k)
		}
		if !d.Allowed {
			firstRejected = k
			break
		}
	}
	if firstRejected != 3 {
		t.Fatalf("algorithms first rejected request %d at k·333 333 333 ns, want request 3", firstRejected)
	}
}

// TestRedisRateBurst: redis_rate on a real redis-server (which uses its
// own clock) with the exported Limit, a burst of random costs at one
// instant: it admits exactly what algorithms admits at one instant, and a
// peek (n = 0) says so beforehand as the generated file reads it
// (ResetAfter ≤ (Burst − n)·T). The milliseconds the burst takes refill
// under 0.02 of a token, which cannot turn a whole-token decision. Rates
// whose interval is a binary fraction of a second keep redis_rate's float
// seconds exact; with the others (5/s: T = 0.2 s) the peek's truncated
// Remaining can be one short on a rested key, which is why the generated
// file does not decide by it.
func TestRedisRateBurst(t *testing.T) {
	rdb := redistest.Client(t, redistest.Start(t))
	lib := redis_rate.NewLimiter(rdb)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(20261130, 4))
	rates := []float64{0.25, 0.5, 1, 2, 4, 5, 2.5, 3}
	decisions, admitted, shortRemaining := 0, 0, 0
	for seq := 0; seq < 60; seq++ {
		s := algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: rates[rng.IntN(len(rates))], Burst: 1 + rng.Int64N(12)}
		if seq%2 == 0 {
			s.Algorithm = algorithms.NameTokenBucket
		}
		p, why := golib.RedisRateParams(s)
		if why != "" || int64(p.Burst) != s.Burst {
			t.Fatalf("RedisRateParams(%s) = %+v, %q; want exact with Burst %d", s, p, why, s.Burst)
		}
		limit := redis_rate.Limit{Rate: p.Rate, Burst: p.Burst, Period: p.Period}
		want, _ := algorithms.New(s)
		key := "burst:" + strconv.Itoa(seq)
		for i := 0; i < int(s.Burst)+4; i++ {
			cost := int64(1 + rng.IntN(3))
			d := want.Allow("k", 0, cost)
			peek, err := lib.AllowN(ctx, key, limit, 0)
			if err != nil {
				t.Fatal(err)
			}
			res, err := lib.AllowN(ctx, key, limit, int(cost))
			if err != nil {
				t.Fatal(err)
			}
			T := limit.Period / time.Duration(limit.Rate)
			byPeek := peek.ResetAfter+time.Duration(cost-int64(limit.Burst))*T <= 0
			if (res.Allowed > 0) != d.Allowed || byPeek != d.Allowed {
				t.Fatalf("%s as %v, request %d (cost %d): redis_rate allowed %d, peek ResetAfter %v; algorithms %t",
					s, limit, i, cost, res.Allowed, peek.ResetAfter, d.Allowed)
			}
			if (int64(peek.Remaining) >= cost) != d.Allowed {
				shortRemaining++
			}
			decisions++
			if d.Allowed {
				admitted++
			}
		}
	}
	if admitted == 0 || admitted == decisions {
		t.Fatalf("%d of %d admitted: not both answers", admitted, decisions)
	}
	t.Logf("%d decisions, %d admitted, all equal (deciding by the peek's Remaining would have differed %d times)", decisions, admitted, shortRemaining)
}
