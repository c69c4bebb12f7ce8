// Worked examples from the articles ratelab grew from, end to end: each
// states the article's numbers, derives the expected outcome by hand, and
// checks that the engine (and, as it grows, the calculator) agrees.
package ratelab_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// peak is a client sending at rate r/s for d, evenly spaced, after a
// second of silence so its bucket is full.
func peak(r float64, d time.Duration) algorithms.Traffic {
	n := int(r * d.Seconds())
	as := make([]algorithms.Arrival, n)
	for i := range as {
		as[i] = algorithms.Arrival{At: time.Second + time.Duration(float64(i)/r*1e9), Key: "client", Cost: 1}
	}
	return algorithms.Traffic{Arrivals: as}
}

func admitted(t *testing.T, spec algorithms.Spec, tr algorithms.Traffic, r algorithms.Replicas) int64 {
	t.Helper()
	res, err := algorithms.Simulate(algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: spec, Replicas: r}}, Traffic: tr})
	if err != nil {
		t.Fatal(err)
	}
	return res.Lanes[0].Summary.Admitted
}

// A service sustains 100 r/s and must absorb a peak of 300 r/s for 2 s.
// DESIGN.md §4: b = (peak − r) × peak seconds = (300 − 100) × 2 = 400, the
// fluid picture: 400 tokens + 2 s × 100 refilled = 600 = 300 × 2. With real
// requests, the k-th of the peak (k = 1…600) arrives (k−1)/300 s in and
// needs b ≥ k − 100·(k−1)/300; the last needs b ≥ 600 − 599/3 = 400⅓, so
// burst 400 admits 599 and burst 401 all 600. (The article's "about 200"
// only covers the first second: 200 + 100 × 599/300 ≈ 399 of 600 pass.)
func TestWorkedExampleBurstCoversThePeak(t *testing.T) {
	tr := peak(300, 2*time.Second)
	for _, name := range []algorithms.Name{algorithms.NameTokenBucket, algorithms.NameGCRA} {
		tests := []struct {
			burst, want int64
			assumption  string
		}{
			{401, 600, "⌈(peak − r)·d + r/peak⌉ covers every request"},
			{400, 599, "(peak − r)·d misses the last request by ⅓ token"},
			// 200 + ⌊100 × 1.99667⌋ = 399 (the refill before the last request).
			{200, 399, "the article's 200 covers one second"},
		}
		for _, tt := range tests {
			spec := algorithms.Spec{Algorithm: name, Rate: 100, Burst: tt.burst}
			if got := admitted(t, spec, tr, algorithms.Replicas{}); got != tt.want {
				t.Errorf("%s: %d of the 600-request peak admitted, want %d (%s)", spec, got, tt.want, tt.assumption)
			}
		}
	}
}

// "100 requests per minute" as a fixed window lets 200 through in a few
// seconds: 100 at the end of one minute and 100 at the start of the next.
// A sliding log with the same numbers never lets more than 100 through in
// any 60 s.
func TestWorkedExampleFixedWindowBoundary(t *testing.T) {
	tr, err := algorithms.Pattern{Name: algorithms.PatternWindowBoundary, Count: 100, Window: time.Minute}.Generate(1000)
	if err != nil {
		t.Fatal(err)
	}
	fixed := algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 100, Window: time.Minute}
	log := algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 100, Window: time.Minute}
	if got := admitted(t, fixed, tr, algorithms.Replicas{}); got != 200 {
		t.Errorf("fixed window admits %d across the boundary, want 2 × 100 = 200", got)
	}
	if got := admitted(t, log, tr, algorithms.Replicas{}); got != 100 {
		t.Errorf("sliding log admits %d, want 100", got)
	}
}

// Five replicas each enforcing "99 per minute" locally admit about
// 5 × 99 ≈ 500 per minute from a client that sends far more; one shared
// store admits 99.
func TestWorkedExampleLocalReplicasMultiply(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 99, Window: time.Minute}
	// 20 r/s for 59 s: 1180 requests, all inside one minute.
	tr := peak(20, 59*time.Second)
	if got := admitted(t, spec, tr, algorithms.Replicas{}); got != 99 {
		t.Errorf("shared: %d admitted, want 99", got)
	}
	if got := admitted(t, spec, tr, algorithms.Replicas{Count: 5, Balance: algorithms.RoundRobin}); got != 5*99 {
		t.Errorf("5 local replicas: %d admitted, want 5 × 99 = 495", got)
	}
}
