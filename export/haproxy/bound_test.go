package haproxy

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// TestCounterSpanBound measures, on the Counter model (which the live
// differential suite holds decision for decision against HAProxy), what
// a counter of L per P admits at most in any span of t seconds: L +
// (L/P)·t + 1 requests of cost 1. For a bucket of rate r and burst b
// (b per b/r) that is b + r·t + 1, one more than the bucket's b + r·t;
// for a window limit L per W, L + L·t/W + 1, which the window mappings'
// reasons state. Random bursty schedules, every span of admitted requests
// checked; the test fails if one span admits more, and also if no
// schedule ever goes past L + (L/P)·t, so the +1 stays needed.
func TestCounterSpanBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	reached := 0
	for round := range 400 {
		rate := []float64{1, 2.5, 5, 10, 40}[round%5]
		burst := int64(2 + rng.IntN(30))
		s := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: rate, Burst: burst}
		if round%2 == 1 {
			// A window limit: L = burst per W = burst/rate.
			s = algorithms.Spec{Algorithm: []algorithms.Name{algorithms.NameSlidingLog, algorithms.NameFixedWindow, algorithms.NameSlidingWindow}[round/2%3],
				Limit: burst, Window: time.Duration(float64(burst) / rate * float64(time.Second))}
		}
		c, ok := CounterFor(s)
		if !ok || c.Limit != burst {
			t.Fatalf("%s: counter %s", s, c.To())
		}
		rate = float64(c.Limit) / c.Period.Seconds()
		var m Meter
		var admitted []time.Duration
		at := time.Duration(0)
		for range 600 {
			// Bursts and gaps around the period.
			switch rng.IntN(4) {
			case 0:
				at += time.Duration(rng.Int64N(int64(c.Period)))
			case 1:
				at += time.Duration(rng.Int64N(int64(c.Period) / 8))
			default:
				at += time.Duration(rng.IntN(3)) * time.Millisecond
			}
			if !c.Over(m, at, 1) {
				c.Charge(&m, at, 1)
				admitted = append(admitted, at)
			}
		}
		for i := range admitted {
			for j := i; j < len(admitted); j++ {
				span := (admitted[j] - admitted[i]).Seconds()
				n := float64(j - i + 1)
				// HAProxy counts whole milliseconds: 1 ms of the rate's
				// worth of slack.
				bound := float64(burst) + rate*(span+0.001) + 1
				if n > bound+1e-9 {
					t.Fatalf("%s as %s: %d admitted in %.3f s (from %v), more than L + (L/P)·t + 1 = %.3f", s, c.To(), j-i+1, span, admitted[i], bound)
				}
				if n > float64(burst)+rate*(span+0.001)+1e-9 {
					reached++
				}
			}
		}
	}
	if reached == 0 {
		t.Error("no span ever admitted more than L + (L/P)·t: the +1 in the stated bound is not needed")
	}
}
