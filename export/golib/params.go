package golib

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
)

// XRateConfig is a limit as golang.org/x/time/rate parameters:
// rate.NewLimiter(Limit, Burst), a float token bucket that starts full.
// A request of cost n is AllowN(now, n). For leaky_bucket, Queue is set:
// the limiter has burst 1 and a request takes ReserveN(now, 1), waits its
// DelayFrom(now) when that is at most MaxWait (queue/rate, in ns), and
// is cancelled (CancelAt) otherwise — x/time/rate's FIFO schedule is the
// leaky bucket's queue.
type XRateConfig struct {
	Limit   float64 // tokens per second
	Burst   int
	Queue   bool
	MaxWait time.Duration
}

// XRateParams maps s (per §12 of the reference: NewLimiter(r, C)). Why is
// "" when x/time/rate admits exactly what s admits: token_bucket and gcra
// (the same float bucket and the same "wait under 1 ns" rule), and
// leaky_bucket for requests of cost 1; windows become the bucket of
// [export.Bucket].
func XRateParams(s algorithms.Spec) (p XRateConfig, why string) {
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		return XRateConfig{Limit: s.Rate, Burst: int(s.Burst)}, ""
	case algorithms.NameLeakyBucket:
		return XRateConfig{Limit: s.Rate, Burst: 1, Queue: true, MaxWait: time.Duration(math.Floor(float64(s.Queue) * 1e9 / s.Rate))}, ""
	}
	r, b, why := export.Bucket(s)
	return XRateConfig{Limit: r, Burst: int(b)}, why
}

// ThrottledConfig is a limit as throttled/v2 GCRA parameters:
// RateQuota{MaxRate: PerDuration(N, Per), MaxBurst}, whose capacity is
// MaxBurst + 1. A request of cost n is RateLimitCtx(ctx, key, n).
type ThrottledConfig struct {
	N        int
	Per      time.Duration
	MaxBurst int
}

// ThrottledParams maps s (§12: MaxBurst = C − 1, T = Per/N truncated to
// whole ns). Why is "" when throttled admits exactly what s admits: a
// bucket whose interval 1/rate is a whole number of ns (throttled's
// integer GCRA is then exactly ours, as algorithms' reference tests show).
// leaky_bucket becomes a meter and the windows a bucket, as in
// [export.Bucket].
func ThrottledParams(s algorithms.Spec) (p ThrottledConfig, why string) {
	r, b, why := export.Bucket(s)
	n, per := ratePeriod(s, r)
	p = ThrottledConfig{N: int(n), Per: per, MaxBurst: int(b - 1)}
	t := per / time.Duration(n)
	// A difference under 0.001 ns is the float noise of 1e9/r, not a
	// different interval.
	if exact := 1e9 / r; per%time.Duration(n) != 0 || math.Abs(float64(t)-exact) > 1e-3 {
		why = join(why, fmt.Sprintf("throttled keeps the interval in whole ns: %d ns instead of %s ns, so requests pass slightly sooner", t, strconv.FormatFloat(exact, 'f', -1, 64)))
	}
	return p, why
}

// RedisRateConfig is a limit as go-redis/redis_rate/v10 parameters:
// Limit{Rate, Burst, Period}, GCRA in Lua with interval Period/Rate in
// float seconds on Redis TIME (µs). A request of cost n is AllowN(ctx,
// key, limit, n).
type RedisRateConfig struct {
	Rate   int
	Burst  int
	Period time.Duration
}

// RedisRateParams maps s (§12: Burst = C). Why is "" when redis_rate
// admits what s admits up to its µs clock and its float seconds (a TAT is
// stored to 14 significant digits, 10 µs: only a request within that of a
// refill can be decided the other way): token_bucket and gcra whose rate
// is Rate/Period exactly. leaky_bucket becomes a meter and the windows a
// bucket, as in [export.Bucket].
func RedisRateParams(s algorithms.Spec) (p RedisRateConfig, why string) {
	r, b, why := export.Bucket(s)
	n, per := ratePeriod(s, r)
	p = RedisRateConfig{Rate: int(n), Burst: int(b), Period: per}
	if got := float64(n) / per.Seconds(); math.Abs(got-r) > 1e-12*r {
		why = join(why, fmt.Sprintf("the rate is Rate/Period = %d/%s = %s/s instead of %s/s", n, per, num(got), num(r)))
	}
	return p, why
}

// ratePeriod writes s's rate r as n requests per period: a window's limit
// per window; else with a period of whole seconds where one up to a day
// makes n whole; else one request per 1/r rounded to the ns.
func ratePeriod(s algorithms.Spec, r float64) (int64, time.Duration) {
	if s.Window > 0 {
		return s.Limit, s.Window
	}
	for _, secs := range []int64{1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30, 40, 60, 100, 120, 300, 600, 1000, 1800, 3600, 10000, 86400} {
		n := r * float64(secs)
		if k := math.Round(n); k >= 1 && k <= math.MaxInt32 && k/float64(secs) == r {
			return int64(k), time.Duration(secs) * time.Second
		}
	}
	return 1, time.Duration(math.Round(1e9 / r))
}

func num(f float64) string { return fmt.Sprint(f) }
