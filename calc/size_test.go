package calc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// TestSizeFormulas checks DESIGN.md §4 steps 1–7 on designs whose numbers
// are worked out by hand in the comments.
func TestSizeFormulas(t *testing.T) {
	type want struct {
		usable, fair, rate, burst, limit, window, queue float64
		interval, tolerance, maxDelay, pace             float64                     // pace: the slowest of the six
		retryAfter                                      map[algorithms.Name]float64 // published, whole seconds
	}
	tests := []struct {
		name string
		in   calc.Input
		want want
	}{{
		// usable = 12500 × (1 − 0.2) = 10000; fair = 10000/100 = 100.
		// r = 50 × 2 = 100. b = ⌈(300 − 100) × 2 + 100/300⌉ = ⌈400.33⌉ = 401.
		// L = ⌈100 × 60⌉ = 6000. q = b − 1 = 400, worst delay 400/100 = 4 s.
		// T = 1/100 = 0.01 s, τ = 400 × 0.01 = 4 s.
		// Retry-After: buckets ⌈0.01⌉ = 1; windows 60; sliding ⌈60 + 60/6000⌉ = 61.
		// Pace: the sliding window's (6000 − 1)/60 = 99.983/s, below r.
		name: "article: 100/s with a 300/s peak for 2 s",
		in:   calc.Input{Capacity: 12500, Clients: 100, P99: 50, Peak: 300, PeakSeconds: 2},
		want: want{10000, 100, 100, 401, 6000, 60, 400, 0.01, 4, 4, 5999.0 / 60,
			map[algorithms.Name]float64{"token_bucket": 1, "gcra": 1, "leaky_bucket": 1, "fixed_window": 60, "sliding_log": 60, "sliding_window": 61}},
	}, {
		// usable = 2000 × 0.75 = 1500; fair = 1500/300 = 5 = r (no p99).
		// b = ⌈5 × 10⌉ = 50. L = ⌈5 × 90⌉ = 450. q = ⌊0.5 × 5⌋ = 2, delay 2/5 = 0.4 s.
		// T = 0.2 s, τ = 49 × 0.2 = 9.8 s. Retry-After ⌈0.2⌉ = 1; 90; ⌈90 + 90/450⌉ = 91.
		// Pace (450 − 1)/90 = 4.989/s.
		name: "fair share without percentiles, max_delay",
		in:   calc.Input{Capacity: 2000, Headroom: new(0.25), Clients: 300, Window: 90, MaxDelay: new(0.5)},
		want: want{1500, 5, 5, 50, 450, 90, 2, 0.2, 9.8, 0.4, 449.0 / 90,
			map[algorithms.Name]float64{"token_bucket": 1, "gcra": 1, "leaky_bucket": 1, "fixed_window": 90, "sliding_log": 90, "sliding_window": 91}},
	}, {
		// The article's "p99 of 60/min": r = 60/60 × 2 = 2/s = 120/min.
		// usable = 100 × 0.8 = 80; fair = 80/10 = 8. b = ⌈2 × 10⌉ = 20.
		// L = ⌈2 × 60⌉ = 120. q = 19, delay 9.5 s. T = 0.5 s, τ = 19 × 0.5 = 9.5 s.
		// Retry-After ⌈0.5⌉ = 1; 60; ⌈60 + 60/120⌉ = 61. Pace 119/60 = 119/min.
		name: "p99 per minute",
		in:   calc.Input{Capacity: 100, Clients: 10, P99: 60, PercentileUnit: calc.PerMinute},
		want: want{80, 8, 2, 20, 120, 60, 19, 0.5, 9.5, 9.5, 119.0 / 60,
			map[algorithms.Name]float64{"token_bucket": 1, "gcra": 1, "leaky_bucket": 1, "fixed_window": 60, "sliding_log": 60, "sliding_window": 61}},
	}, {
		// r = 50/60 × 2 = 5/3 = 1.6667/s; L = ⌈5/3 × 60⌉ = 100 exactly, not
		// 101 from float noise. b = ⌈16.67⌉ = 17, q = 16, delay 16 × 0.6 = 9.6 s.
		// T = 0.6 s, τ = 16 × 0.6 = 9.6 s. Retry-After ⌈0.6⌉ = 1; ⌈60 + 0.6⌉ = 61.
		// Pace 99/60 = 99/min.
		name: "100/min survives float noise",
		in:   calc.Input{Capacity: 100, Clients: 10, P99: 50, PercentileUnit: calc.PerMinute},
		want: want{80, 8, 5.0 / 3, 17, 100, 60, 16, 0.6, 9.6, 9.6, 99.0 / 60,
			map[algorithms.Name]float64{"token_bucket": 1, "gcra": 1, "leaky_bucket": 1, "fixed_window": 60, "sliding_log": 60, "sliding_window": 61}},
	}, {
		// r = 0.05 × 1 = 0.05/s. b = ⌈0.5⌉ = 1. L = ⌈3⌉ = 3. q = 0, delay 0.
		// T = 20 s, τ = 0. Retry-After 20 for the buckets; 60; 60 + 60/3 = 80.
		// Pace (3 − 1)/60 = 2/min, one every 30 s.
		name: "slow client: burst of 1",
		in:   calc.Input{Capacity: 10, Clients: 10, P99: 0.05, Margin: 1},
		want: want{8, 0.8, 0.05, 1, 3, 60, 0, 20, 0, 0, 2.0 / 60,
			map[algorithms.Name]float64{"token_bucket": 20, "gcra": 20, "leaky_bucket": 20, "fixed_window": 60, "sliding_log": 60, "sliding_window": 80}},
	}, {
		// r = 0.1 × 2 = 0.2/s; b = ⌈2⌉ = 2 is raised to the report's cost 8;
		// q = 7, delay 7/0.2 = 35 s. L = ⌈12⌉ = 12. T = 5 s, τ = 7 × 5 = 35 s.
		// Retry-After 5; 60; 60 + 60/12 = 65. Pace 11/60.
		name: "burst raised to the largest endpoint cost",
		in: calc.Input{Capacity: 100, Clients: 10, P99: 0.1,
			Endpoints: []calc.Endpoint{{Method: "GET", Path: "/v1/items", Cost: 1}, {Method: "GET", Path: "/v1/reports", Cost: 8}}},
		want: want{80, 8, 0.2, 8, 12, 60, 7, 5, 35, 35, 11.0 / 60,
			map[algorithms.Name]float64{"token_bucket": 5, "gcra": 5, "leaky_bucket": 5, "fixed_window": 60, "sliding_log": 60, "sliding_window": 65}},
	}, {
		// r = 50 × 2 = 100 is above the peak of 80/s, so b = ⌈100 × 10⌉ = 1000.
		// L = 6000, q = 999, delay 9.99 s, τ = 999 × 0.01 = 9.99 s. Pace 5999/60.
		name: "peak below the rate",
		in:   calc.Input{Capacity: 100000, Clients: 10, P99: 50, Peak: 80, PeakSeconds: 5},
		want: want{80000, 8000, 100, 1000, 6000, 60, 999, 0.01, 9.99, 9.99, 5999.0 / 60,
			map[algorithms.Name]float64{"token_bucket": 1, "gcra": 1, "leaky_bucket": 1, "fixed_window": 60, "sliding_log": 60, "sliding_window": 61}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustSize(t, tt.in)
			w := tt.want
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"usable", res.Usable.Value, w.usable}, {"fair share", res.FairShare.Value, w.fair},
				{"rate", res.Rate.Value, w.rate}, {"burst", res.Burst.Value, w.burst}, {"limit", res.Limit.Value, w.limit},
				{"window", res.Window.Value, w.window}, {"queue", res.Queue.Value, w.queue},
				{"pace", res.Pace.Value, w.pace}, {"min interval", res.MinInterval.Value, 1 / w.pace},
			} {
				checkNear(t, c.what, c.got, c.want)
			}
			gcra, _ := res.Params(algorithms.NameGCRA)
			checkNear(t, "gcra interval", gcra.Interval.Value, w.interval)
			checkNear(t, "gcra tolerance", gcra.Tolerance.Value, w.tolerance)
			leaky, _ := res.Params(algorithms.NameLeakyBucket)
			checkNear(t, "leaky max delay", leaky.MaxDelay.Value, w.maxDelay)
			if len(res.Algorithms) != 6 {
				t.Fatalf("%d algorithms, want 6", len(res.Algorithms))
			}
			for i, p := range res.Algorithms {
				if p.Algorithm != algorithms.Names[i] {
					t.Errorf("algorithms[%d] = %s, want %s", i, p.Algorithm, algorithms.Names[i])
				}
				checkNear(t, string(p.Algorithm)+" retry_after", p.RetryAfter.Value, w.retryAfter[p.Algorithm])
				if err := p.Spec().Validate(); err != nil {
					t.Errorf("%s: %v", p.Algorithm, err)
				}
				if p.Spec() != res.Spec(p.Algorithm) {
					t.Errorf("%s: Params.Spec %v != Sizes.Spec %v", p.Algorithm, p.Spec(), res.Spec(p.Algorithm))
				}
			}
			fixed, _ := res.Params(algorithms.NameFixedWindow)
			checkNear(t, "fixed window largest burst", fixed.LargestBurst.Value, 2*w.limit)
		})
	}
}

// The reasons carry the formula with the numbers substituted.
func TestSizeReasons(t *testing.T) {
	res := mustSize(t, calc.Input{Capacity: 12500, Clients: 100, P99: 50, Peak: 300, PeakSeconds: 2})
	for _, tt := range []struct{ what, reason, want string }{
		{"usable", res.Usable.Reason, "usable = capacity × (1 − headroom) = 12500 × (1 − 0.2) = 10000/s"},
		{"rate", res.Rate.Reason, "rate = p99 × margin = 50/s × 2 = 100/s"},
		{"burst", res.Burst.Reason, "burst = ⌈(peak − rate) × peak_seconds + rate/peak⌉ = ⌈(300 − 100) × 2 + 100/300⌉ = 401"},
		{"burst", res.Burst.Reason, "(peak − rate) × peak_seconds = 400 alone misses the last one"},
		{"limit", res.Limit.Reason, "limit = ⌈rate × window⌉ = ⌈100 × 60⌉ = 6000 per 60 s"},
		{"queue", res.Queue.Reason, "queue = burst − 1 = 400"},
		{"pace", res.Pace.Reason, "set by sliding_window (pace = (limit − 1)/window = 5999/60 s = 99.98/s"},
	} {
		if !strings.Contains(tt.reason, tt.want) {
			t.Errorf("%s reason %q does not contain %q", tt.what, tt.reason, tt.want)
		}
	}
	for _, p := range res.Algorithms {
		for _, v := range []*calc.Value{p.Rate, p.Burst, p.Interval, p.Tolerance, p.Queue, p.MaxDelay, p.Limit, p.Window, &p.LargestBurst, &p.RetryAfter} {
			if v != nil && (v.Reason == "" || v.Unit == "") {
				t.Errorf("%s: a value without unit or reason: %+v", p.Algorithm, *v)
			}
		}
	}
	// With the default margin and a per-minute p99 the reason shows both units.
	res = mustSize(t, calc.Input{Capacity: 100, Clients: 10, P99: 60, PercentileUnit: calc.PerMinute})
	if want := "rate = p99 × margin = 60/min × 2 = 120/min = 2/s"; !strings.Contains(res.Rate.Reason, want) {
		t.Errorf("rate reason %q does not contain %q", res.Rate.Reason, want)
	}
}

// peakTraffic is a client sending at rate r for d, evenly spaced, after a
// second of silence: n = ⌊r × d⌋ requests.
func peakTraffic(r float64, d time.Duration) algorithms.Traffic {
	n := int(r*d.Seconds() + 1e-9)
	as := make([]algorithms.Arrival, n)
	for i := range as {
		as[i] = algorithms.Arrival{At: time.Second + time.Duration(float64(i)/r*1e9), Key: "c", Cost: 1}
	}
	return algorithms.Traffic{Arrivals: as}
}

func admitted(t *testing.T, spec algorithms.Spec, tr algorithms.Traffic) algorithms.Summary {
	t.Helper()
	res, err := algorithms.Simulate(algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: spec}}, Traffic: tr})
	if err != nil {
		t.Fatal(err)
	}
	return res.Lanes[0].Summary
}

// The burst from a peak admits every request of the peak, and one less
// does not when peak × peak_seconds is whole (then the bound
// b ≥ (peak − r)·d + r/peak is tight).
func TestSizeBurstCoversThePeak(t *testing.T) {
	tests := []struct {
		p99, peak, seconds float64
		wantBurst          float64 // by hand
		tight              bool
	}{
		{50, 300, 2, 401, true},      // ⌈200 × 2 + 1/3⌉
		{5, 25, 1.5, 23, false},      // ⌈15 × 1.5 + 0.4⌉ = ⌈22.9⌉; 37 requests need 1 + 36 × 0.6 = 22.6
		{10, 200, 1, 181, true},      // r = 20: ⌈180 + 0.1⌉
		{0.5, 3, 10, 21, true},       // r = 1: ⌈2 × 10 + 1/3⌉
		{1, 1000, 0.05, 50, true},    // r = 2: ⌈998 × 0.05 + 0.002⌉ = ⌈49.902⌉
		{100, 250, 4, 201 + 0, true}, // r = 200: ⌈50 × 4 + 0.8⌉ = 201
	}
	for _, tt := range tests {
		res := mustSize(t, calc.Input{Capacity: 1e6, Clients: 1, P99: tt.p99, Peak: tt.peak, PeakSeconds: tt.seconds})
		if res.Burst.Value != tt.wantBurst {
			t.Errorf("peak %v/s for %v s: burst %v, want %v", tt.peak, tt.seconds, res.Burst.Value, tt.wantBurst)
			continue
		}
		tr := peakTraffic(tt.peak, time.Duration(tt.seconds*1e9))
		n := int64(len(tr.Arrivals))
		for _, name := range []algorithms.Name{algorithms.NameTokenBucket, algorithms.NameGCRA} {
			spec := res.Spec(name)
			if got := admitted(t, spec, tr).Admitted; got != n {
				t.Errorf("%s admits %d of the peak's %d", spec, got, n)
			}
			if tt.tight {
				spec.Burst--
				if got := admitted(t, spec, tr).Admitted; got >= n {
					t.Errorf("%s (one less) admits all %d; the burst is not the smallest", spec, n)
				}
			}
		}
	}
}

// Each algorithm's largest burst and Retry-After are what the engine does
// to a rested client that sends everything at once at a window's start.
func TestSizeParamsMatchTheEngine(t *testing.T) {
	for _, in := range []calc.Input{
		{Capacity: 12500, Clients: 100, P99: 50, Peak: 300, PeakSeconds: 2},
		{Capacity: 100, Clients: 10, P99: 60, PercentileUnit: calc.PerMinute, Window: 10},
		{Capacity: 10, Clients: 10, P99: 0.05, Margin: 1},
		{Capacity: 2000, Clients: 300, MaxDelay: new(0.5), Window: 90},
	} {
		res := mustSize(t, in)
		for _, p := range res.Algorithms {
			spec := p.Spec()
			lim, err := algorithms.New(spec)
			if err != nil {
				t.Fatal(err)
			}
			if d := lim.Allow("c", 0, spec.Capacity()); !d.Allowed {
				t.Fatalf("%s rejects its own capacity", spec)
			}
			d := lim.Allow("c", 0, 1)
			if d.Allowed {
				t.Fatalf("%s admits more than its capacity at once", spec)
			}
			wait := d.RetryAfter().Seconds()
			// Published: whole seconds, rounded up, at least 1.
			pub := max(1, float64(int64(wait)))
			if wait > float64(int64(wait))+1e-9 {
				pub = float64(int64(wait)) + 1
			}
			if p.RetryAfter.Value != pub {
				t.Errorf("%s: retry_after %v, the engine waits %v s → %v", spec, p.RetryAfter.Value, wait, pub)
			}
		}
	}
}

// The largest bursts by simulation: idle clients, fixed-window edges, and
// the sliding counter's worst span of 2L − 1.
func TestSizeLargestBurstBySimulation(t *testing.T) {
	res := mustSize(t, calc.Input{Capacity: 100, Clients: 10, P99: 0.5, Window: 10}) // r = 1, b = 10, L = 10
	params := func(n algorithms.Name) calc.Params { p, _ := res.Params(n); return p }

	burst, err := algorithms.Pattern{Name: algorithms.PatternIdleThenBurst, Idle: time.Second, Count: 50}.Generate(1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []algorithms.Name{algorithms.NameTokenBucket, algorithms.NameGCRA, algorithms.NameLeakyBucket, algorithms.NameSlidingLog, algorithms.NameSlidingWindow} {
		p := params(n)
		if got := admitted(t, p.Spec(), burst).Admitted; float64(got) != p.LargestBurst.Value {
			t.Errorf("%s: an idle client's 50 at once → %d admitted, largest_burst says %v", n, got, p.LargestBurst.Value)
		}
	}
	edge, err := algorithms.Pattern{Name: algorithms.PatternWindowBoundary, Count: 10, Window: 10 * time.Second}.Generate(1000)
	if err != nil {
		t.Fatal(err)
	}
	if p := params(algorithms.NameFixedWindow); float64(admitted(t, p.Spec(), edge).Admitted) != p.LargestBurst.Value {
		t.Errorf("fixed window at an edge: want %v", p.LargestBurst.Value)
	}

	// Sliding counter: L = 10 at 9.999 s (the end of window 0), then one
	// request every 0.1 s through window 1. At e s into window 1 a request
	// passes when 10·(10 − e) + (curr + 1)·10 ≤ 100, i.e. curr + 1 ≤ e, so
	// 9 more pass by e = 9 (19.0 s): 19 = 2L − 1 within 10 s.
	var as []algorithms.Arrival
	for range 10 {
		as = append(as, algorithms.Arrival{At: 9999 * time.Millisecond, Key: "c", Cost: 1})
	}
	for at := 10050 * time.Millisecond; at < 19950*time.Millisecond; at += 100 * time.Millisecond {
		as = append(as, algorithms.Arrival{At: at, Key: "c", Cost: 1})
	}
	sim, err := algorithms.Simulate(algorithms.Simulation{
		Lanes:   []algorithms.Lane{{Spec: params(algorithms.NameSlidingWindow).Spec()}, {Spec: params(algorithms.NameSlidingLog).Spec()}},
		Traffic: algorithms.Traffic{Arrivals: as}, Window: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := sim.Lanes[0].Summary.MaxInWindow; got != 19 {
		t.Errorf("sliding window: %d in a span of 10 s, want 2 × 10 − 1 = 19", got)
	}
	if got := sim.Lanes[1].Summary.MaxInWindow; got != 10 {
		t.Errorf("sliding log: %d in a span of 10 s, want 10", got)
	}
}

// A client sending at the safe pace is never rejected by any algorithm, nor
// at each algorithm's own pace by that algorithm. The sliding window
// counter is the exception to pace = limit/window: after a full window it
// assumes those requests were spread evenly, and at exactly limit/window a
// request arriving φ after its slot sees (L)(1 − e/W) + j + 1 = L + 1 − pφ
// > L, so it needs (L − 1)/window.
func TestSizePaceIsNeverRejected(t *testing.T) {
	steady := func(rate float64) algorithms.Traffic {
		tr, err := algorithms.Pattern{Name: algorithms.PatternSteady, Rate: rate, Duration: 600 * time.Second, Clients: 1}.Generate(1e6)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	for _, in := range []calc.Input{
		{Capacity: 100, Clients: 10, P99: 0.5, Window: 10},
		{Capacity: 100, Clients: 10, P99: 50, PercentileUnit: calc.PerMinute},
		{Capacity: 10, Clients: 10, P99: 0.05, Margin: 1},
		{Capacity: 10, Clients: 10, P99: 0.01, Margin: 1}, // L = ⌈0.6⌉ = 1: the counter's pace is 1/(2W)
	} {
		res := mustSize(t, in)
		all := steady(res.Pace.Value)
		for _, p := range res.Algorithms {
			if s := admitted(t, p.Spec(), all); s.Rejected != 0 {
				t.Errorf("%s: %d of %d rejected at the safe pace of %v/s", p.Spec(), s.Rejected, s.Offered, res.Pace.Value)
			}
			if s := admitted(t, p.Spec(), steady(p.Pace.Value)); s.Rejected != 0 {
				t.Errorf("%s: %d of %d rejected at its own pace of %v/s", p.Spec(), s.Rejected, s.Offered, p.Pace.Value)
			}
		}
		sw := res.Spec(algorithms.NameSlidingWindow)
		if s := admitted(t, sw, steady(float64(sw.Limit)/sw.Window.Seconds())); s.Rejected == 0 {
			t.Errorf("%s: nothing rejected at exactly limit/window", sw)
		}
	}
}

func TestSizeTiers(t *testing.T) {
	// r = 1 × 2 = 2/s, b = 20, L = 120 for a multiplier of 1.
	// anonymous ×0.25: rate 0.5, burst ⌈5⌉ = 5, limit ⌈30⌉ = 30, aggregate 100 × 0.5 = 50
	// authenticated ×1: 2, 20, 120, aggregate 200 × 2 = 400
	// paid ×10: 20, 200, 1200, aggregate 10 × 20 = 200
	// clients = 310; fair share = 800 / (25 + 200 + 100) = 2.4615…
	res := mustSize(t, calc.Input{Capacity: 1000, P99: 1, Tiers: []calc.TierInput{
		{Name: "anonymous", Clients: 100, Multiplier: 0.25},
		{Name: "authenticated", Clients: 200},
		{Name: "paid", Clients: 10, Multiplier: 10},
	}})
	if res.Input.Clients != 310 {
		t.Errorf("clients = %d, want 310", res.Input.Clients)
	}
	checkNear(t, "fair share", res.FairShare.Value, 800.0/325)
	want := []struct{ rate, burst, limit, queue, aggregate float64 }{
		{0.5, 5, 30, 4, 50}, {2, 20, 120, 19, 400}, {20, 200, 1200, 199, 200},
	}
	if len(res.Tiers) != len(want) {
		t.Fatalf("%d tiers, want %d", len(res.Tiers), len(want))
	}
	for i, w := range want {
		tier := res.Tiers[i]
		checkNear(t, tier.Name+" rate", tier.Rate.Value, w.rate)
		checkNear(t, tier.Name+" burst", tier.Burst.Value, w.burst)
		checkNear(t, tier.Name+" limit", tier.Limit.Value, w.limit)
		checkNear(t, tier.Name+" queue", tier.Queue.Value, w.queue)
		checkNear(t, tier.Name+" aggregate", tier.Aggregate.Value, w.aggregate)
		if err := tier.Spec(algorithms.NameGCRA).Validate(); err != nil {
			t.Errorf("%s: %v", tier.Name, err)
		}
	}
	// 50 + 400 + 200 = 650 < usable 800: no overcommit; the anonymous
	// tier's 0.5/s is below p99 = 1/s.
	if _, ok := findCheck(res.Checks, calc.CheckOvercommit, ""); ok {
		t.Error("overcommit fired for 650/s against 800/s")
	}
	if _, ok := findCheck(res.Checks, calc.CheckLimitBelowP99, "tiers[0]"); !ok {
		t.Errorf("limit_below_p99 did not fire for the anonymous tier: %v", checkIDs(res.Checks))
	}
}

func TestSizePerReplica(t *testing.T) {
	tests := []struct {
		name                      string
		in                        calc.Input
		rate, burst, limit, queue float64 // per replica, by hand
	}{
		// r = 100, b = 401, L = 6000, q = 400 on 5 replicas:
		// 20/s, ⌈80.2⌉ = 81, 1200, ⌊80⌋ = 80.
		{"article peak on 5", calc.Input{Capacity: 12500, Clients: 100, P99: 50, Peak: 300, PeakSeconds: 2, Replicas: 5, Enforcement: calc.Local}, 20, 81, 1200, 80},
		// r = 2, b = 20, L = 120, q = 19 on 3: 0.6667/s, ⌈6.67⌉ = 7, 40, ⌊6.33⌋ = 6.
		{"120/min on 3", calc.Input{Capacity: 100, Clients: 10, P99: 60, PercentileUnit: calc.PerMinute, Replicas: 3, Enforcement: calc.Local}, 2.0 / 3, 7, 40, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustSize(t, tt.in)
			p := res.PerReplica
			if p == nil {
				t.Fatal("no per-replica split")
			}
			checkNear(t, "rate", p.Rate.Value, tt.rate)
			checkNear(t, "burst", p.Burst.Value, tt.burst)
			checkNear(t, "limit", p.Limit.Value, tt.limit)
			checkNear(t, "queue", p.Queue.Value, tt.queue)
			if !strings.Contains(p.Caveat, "evenly") {
				t.Errorf("caveat %q does not mention uneven balancing", p.Caveat)
			}
		})
	}
	for _, in := range []calc.Input{
		{Capacity: 100, Clients: 10, Replicas: 5, Enforcement: calc.Shared},
		{Capacity: 100, Clients: 10, Replicas: 1, Enforcement: calc.Local},
	} {
		if res := mustSize(t, in); res.PerReplica != nil {
			t.Errorf("%d replicas, %s: a per-replica split", in.Replicas, in.Enforcement)
		}
	}
}

func TestSizeEndpoints(t *testing.T) {
	// r = 100, b = 401, L = 6000.
	// cost 8: ⌊401/8⌋ = 50 at once, ⌊6000/8⌋ = 750 per window, 100/8 = 12.5/s, ⌈0.08⌉ = 1 s.
	// cost 300: ⌊1.34⌋ = 1, 20, 0.3333/s, ⌈3⌉ = 3 s.
	res := mustSize(t, calc.Input{Capacity: 12500, Clients: 100, P99: 50, Peak: 300, PeakSeconds: 2, Endpoints: []calc.Endpoint{
		{Method: "GET", Path: "/v1/reports", Cost: 8}, {Method: "POST", Path: "/v1/exports", Cost: 300}, {Method: "GET", Path: "/v1/ping"},
	}})
	want := []struct{ cost, inBurst, inWindow, rate, retryAfter float64 }{
		{8, 50, 750, 12.5, 1}, {300, 1, 20, 1.0 / 3, 3}, {1, 401, 6000, 100, 1},
	}
	for i, w := range want {
		e := res.Endpoints[i]
		checkNear(t, e.Path+" cost", float64(e.Cost), w.cost)
		checkNear(t, e.Path+" in_burst", e.InBurst.Value, w.inBurst)
		checkNear(t, e.Path+" in_window", e.InWindow.Value, w.inWindow)
		checkNear(t, e.Path+" rate", e.Rate.Value, w.rate)
		checkNear(t, e.Path+" retry_after", e.RetryAfter.Value, w.retryAfter)
	}
}

// Size does not write defaults through to the caller's slices.
func TestSizeLeavesInputAlone(t *testing.T) {
	tiers := []calc.TierInput{{Name: "a", Clients: 1}}
	eps := []calc.Endpoint{{Method: "GET", Path: "/"}}
	mustSize(t, calc.Input{Capacity: 10, Tiers: tiers, Endpoints: eps})
	if tiers[0].Multiplier != 0 || eps[0].Cost != 0 {
		t.Errorf("Size changed its input: %+v %+v", tiers, eps)
	}
}
