// Worked examples from the articles ratelab grew from, end to end: each
// states the article's numbers, derives the expected outcome by hand, and
// checks that the calculator's arithmetic and the engine's behaviour
// (algorithms.Simulate) agree with it.
package ratelab_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
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

func size(t *testing.T, in calc.Input) calc.Result {
	t.Helper()
	res, err := calc.Size(in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func simulate(t *testing.T, s algorithms.Simulation) algorithms.Result {
	t.Helper()
	res, err := algorithms.Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The calculator sizes the 300 r/s peak with the burst that the test above
// proves is the smallest that works: r = p99 × margin = 50 × 2 = 100 and
// b = ⌈(300 − 100) × 2 + 100/300⌉ = 401, and its specs admit all 600.
func TestWorkedExampleCalculatorSizesThePeak(t *testing.T) {
	res := size(t, calc.Input{Capacity: 12500, Clients: 100, P99: 50, Peak: 300, PeakSeconds: 2})
	if res.Rate.Value != 100 || res.Burst.Value != 401 {
		t.Fatalf("rate %v, burst %v; want 100 and 401", res.Rate.Value, res.Burst.Value)
	}
	for _, name := range []algorithms.Name{algorithms.NameTokenBucket, algorithms.NameGCRA} {
		if got := admitted(t, res.Spec(name), peak(300, 2*time.Second), algorithms.Replicas{}); got != 600 {
			t.Errorf("%s: %d of 600 admitted", res.Spec(name), got)
		}
	}
}

// "A bucket of 100 tokens refilled at 10 per second": an idle client sends
// 100 at once, then 10 per second. Here it sends 150 at 5 s (100 pass, the
// 101st is the first rejected), then 20/s for 10 s at (j + ½)/20 s after
// the burst. The k-th refilled token is there k/10 s after the burst, and
// the last arrival is 9.975 s after it: 99 more pass, 10 per second.
func TestWorkedExampleIdleClientBurstsThenRate(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 100}
	var as []algorithms.Arrival
	for range 150 {
		as = append(as, algorithms.Arrival{At: 5 * time.Second, Key: "client", Cost: 1})
	}
	for j := range 200 {
		as = append(as, algorithms.Arrival{At: 5*time.Second + time.Duration((float64(j)+0.5)/20*1e9), Key: "client", Cost: 1})
	}
	res := simulate(t, algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: spec}}, Traffic: algorithms.Traffic{Arrivals: as}, Decisions: true})
	ds := res.Lanes[0].Decisions
	burst, later := 0, 0
	for i, d := range ds {
		switch {
		case d.Allowed && i < 150:
			burst++
		case d.Allowed:
			later++
		}
	}
	if burst != 100 || ds[100].Allowed {
		t.Errorf("%d of the 150 at once admitted, want the first 100", burst)
	}
	if later != 99 {
		t.Errorf("%d admitted in the 10 s after the burst, want 99 (10 per second)", later)
	}
	// The reverse calculator says the same.
	rev, err := calc.Reverse(calc.LimitOf(spec))
	if err != nil {
		t.Fatal(err)
	}
	if rev.Params.LargestBurst.Value != 100 || rev.Pace.Value != 10 {
		t.Errorf("reverse: largest burst %v, pace %v; want 100 and 10/s", rev.Params.LargestBurst.Value, rev.Pace.Value)
	}
}

// "100 per minute, 5 replicas, enforced locally: almost 500 get through."
// p99 = 50/min × margin 2 gives 100/min (L = ⌈100/60 × 60⌉ = 100). The
// calculator flags 5 × 100 = 500 and splits it into ⌈100/5⌉ = 20 per
// replica; a client sending 20/s for 59 s (1180 requests, all in one
// minute) gets 500 through the unsplit limit and 5 × 20 = 100 through the
// split.
func TestWorkedExampleLocalReplicasAlmost500(t *testing.T) {
	res := size(t, calc.Input{Capacity: 1000, Clients: 10, P99: 50, PercentileUnit: calc.PerMinute, Replicas: 5, Enforcement: calc.Local})
	if res.Limit.Value != 100 {
		t.Fatalf("limit %v, want 100", res.Limit.Value)
	}
	var found bool
	for _, c := range res.Checks {
		if c.ID == calc.CheckLocalReplicas {
			found = true
			if c.Numbers["total_limit"] != 500 {
				t.Errorf("check says %v per minute get through, want 5 × 100 = 500", c.Numbers["total_limit"])
			}
		}
	}
	if !found || res.PerReplica == nil || res.PerReplica.Limit.Value != 20 {
		t.Fatalf("no local-replicas check or per-replica limit of 20: %+v", res.PerReplica)
	}
	five := algorithms.Replicas{Count: 5, Balance: algorithms.RoundRobin}
	tr := peak(20, 59*time.Second)
	if got := admitted(t, res.Spec(algorithms.NameSlidingLog), tr, five); got != 500 {
		t.Errorf("100/min on each of 5 replicas: %d admitted in a minute, want 500", got)
	}
	if got := admitted(t, res.PerReplica.Spec(algorithms.NameSlidingLog), tr, five); got != 100 {
		t.Errorf("the per-replica split: %d admitted, want 5 × 20 = 100", got)
	}
}

// "If 99 % of clients make at most 60 requests a minute, start at 100–120."
// The calculator's margin of 2 gives 60 × 2 = 120/min. A p99 client, a
// Poisson stream of 1/s for 10 minutes, never hits a 120/min sliding log,
// but a limit at p99 itself (60/min) rejects its natural jitter.
func TestWorkedExampleP99LeadsTo120PerMinute(t *testing.T) {
	res := size(t, calc.Input{Capacity: 100, Clients: 10, P99: 60, PercentileUnit: calc.PerMinute})
	if res.Rate.Value*60 != 120 || res.Limit.Value != 120 {
		t.Fatalf("rate %v/min, limit %v; want 120 and 120", res.Rate.Value*60, res.Limit.Value)
	}
	if got := res.Rate.Value * 60; got < 100 || got > 120 {
		t.Errorf("%v/min is outside the article's 100–120", got)
	}
	tr, err := algorithms.Pattern{Name: algorithms.PatternPoisson, Rate: 1, Duration: 10 * time.Minute, Clients: 1, Seed: 3}.Generate(10000)
	if err != nil {
		t.Fatal(err)
	}
	out := simulate(t, algorithms.Simulation{Traffic: tr, Lanes: []algorithms.Lane{
		{Spec: res.Spec(algorithms.NameSlidingLog)},
		{Spec: algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 60, Window: time.Minute}},
	}})
	if r := out.Lanes[0].Summary.Rejected; r != 0 {
		t.Errorf("120/min rejects %d of a p99 client's requests, want 0", r)
	}
	if r := out.Lanes[1].Summary.Rejected; r == 0 {
		t.Error("a limit at p99 (60/min) rejects nothing of a 1/s Poisson client; it should")
	}
}

// "1000 per hour, reset at the top of the hour: 1000 at 10:59:59 and 1000
// at 11:00:01 are 2000 within two seconds." The reverse calculator says 2 ×
// 1000 = 2000; the simulator lets all 2000 through in a 2 s span, while a
// sliding log lets 1000.
func TestWorkedExampleFixedWindowHourBoundary(t *testing.T) {
	rev, err := calc.Reverse(calc.Limit{Algorithm: algorithms.NameFixedWindow, Limit: 1000, Window: 3600})
	if err != nil {
		t.Fatal(err)
	}
	if rev.Params.LargestBurst.Value != 2000 {
		t.Errorf("largest burst %v, want 2000", rev.Params.LargestBurst.Value)
	}
	// 1000 spread over the last second of the hour, 1000 over the first of the next.
	var as []algorithms.Arrival
	for i := range 2000 {
		as = append(as, algorithms.Arrival{At: 3599*time.Second + time.Duration(i)*time.Millisecond + 500*time.Microsecond, Key: "client", Cost: 1})
	}
	fixed, _ := rev.Limit.Spec()
	log := algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 1000, Window: time.Hour}
	out := simulate(t, algorithms.Simulation{Traffic: algorithms.Traffic{Arrivals: as}, Window: 2 * time.Second,
		Lanes: []algorithms.Lane{{Spec: fixed}, {Spec: log}}})
	if got := out.Lanes[0].Summary.MaxInWindow; got != 2000 {
		t.Errorf("fixed window: %d admitted within 2 s, want 2000", got)
	}
	if got := out.Lanes[1].Summary.Admitted; got != 1000 {
		t.Errorf("sliding log: %d admitted, want 1000", got)
	}
}

// "A leaky bucket queue of q drained at r adds up to q/r of delay." With a
// p99 of 5/s the rate is 10/s; max_delay 2 s gives q = ⌊2 × 10⌋ = 20 and a
// worst delay of 20/10 = 2 s. An idle client sending 30 at once: the first
// is served at once, 20 wait (the last 20 × 0.1 = 2 s), 9 are rejected.
// Without max_delay the queue holds the burst: q = b − 1 = ⌈10 × 10⌉ − 1 = 99,
// worst delay 9.9 s.
func TestWorkedExampleQueueDelay(t *testing.T) {
	for _, tt := range []struct {
		maxDelay              *float64
		queue, delay          float64 // by hand
		sent, admit, rejected int64
	}{
		{new(2.0), 20, 2, 30, 21, 9},
		{nil, 99, 9.9, 120, 100, 20},
	} {
		res := size(t, calc.Input{Capacity: 1000, Clients: 10, P99: 5, MaxDelay: tt.maxDelay})
		leaky, _ := res.Params(algorithms.NameLeakyBucket)
		if leaky.Queue.Value != tt.queue || leaky.MaxDelay.Value != tt.delay {
			t.Errorf("queue %v, worst delay %v s; want %v and %v", leaky.Queue.Value, leaky.MaxDelay.Value, tt.queue, tt.delay)
		}
		tr, err := algorithms.Pattern{Name: algorithms.PatternIdleThenBurst, Idle: time.Second, Count: int(tt.sent)}.Generate(1000)
		if err != nil {
			t.Fatal(err)
		}
		out := simulate(t, algorithms.Simulation{Traffic: tr, Lanes: []algorithms.Lane{{Spec: leaky.Spec()}}})
		s := out.Lanes[0].Summary
		if s.Admitted != tt.admit || s.Rejected != tt.rejected {
			t.Errorf("q = %v: %d admitted, %d rejected; want %d and %d", tt.queue, s.Admitted, s.Rejected, tt.admit, tt.rejected)
		}
		if got := s.DelayMax.Seconds(); got != tt.delay {
			t.Errorf("q = %v: worst delay %v s, want q/r = %v s", tt.queue, got, tt.delay)
		}
	}
}
