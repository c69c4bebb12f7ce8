package chartset

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/views"
)

func sized(t *testing.T) calc.Result {
	t.Helper()
	res, err := calc.Size(calc.Input{Capacity: 500, Clients: 20, P99: 3})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestBuildOrder: the charts come in the order embed URLs name them, and
// the info counts the pattern's requests: idle_then_burst's default is
// one burst of Count requests from one client.
func TestBuildOrder(t *testing.T) {
	p := algorithms.DefaultPattern(algorithms.PatternIdleThenBurst)
	charts, info, err := Build(sized(t), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != len(views.AlgorithmChartSlugs) {
		t.Fatalf("%d charts, want %d", len(charts), len(views.AlgorithmChartSlugs))
	}
	for i, c := range charts {
		if views.ChartSlug(c.ID) != views.AlgorithmChartSlugs[i] {
			t.Errorf("chart %d is %s, want %s", i, c.ID, views.AlgorithmChartSlugs[i])
		}
	}
	traffic, err := p.Generate(MaxArrivals)
	if err != nil {
		t.Fatal(err)
	}
	if info.Arrivals != len(traffic.Arrivals) || info.Focus != traffic.Arrivals[0].Key {
		t.Errorf("info %+v, want %d arrivals focused on %q", info, len(traffic.Arrivals), traffic.Arrivals[0].Key)
	}
}

func TestBuildPatternErrors(t *testing.T) {
	res := sized(t)
	tooMany := algorithms.DefaultPattern(algorithms.PatternSteady)
	tooMany.Rate, tooMany.Duration = 1e6, 10e9 // 10 million requests
	bad := algorithms.DefaultPattern(algorithms.PatternSteady)
	bad.Rate = -1
	storm := algorithms.DefaultPattern(algorithms.PatternRetryStorm)
	storm.Clients = 100_000 // the most a pattern allows; × (1 + attempts) is over the cap
	tests := []struct {
		name  string
		p     algorithms.Pattern
		param string
	}{
		{"too many requests", tooMany, "pattern"},
		{"bad parameter", bad, ""},
		{"retries over the cap", storm, "pattern.clients"},
	}
	for _, tt := range tests {
		_, _, err := Build(res, tt.p)
		var pe *PatternError
		if !errors.As(err, &pe) || pe.Param != tt.param || pe.Message == "" {
			t.Errorf("%s: err %v, want a PatternError on %q", tt.name, err, tt.param)
		}
	}
}

// TestPolicyChartsEveryLimit: the policy's charts follow the default
// limit, every tier (one inheriting the default), and every endpoint with
// its own limit, on a burst of 300 at once: the default and inheriting
// tier admit their burst of 100, the paid tier its 250, the endpoint its
// fixed window of 20 (the default limit, which it also meets, holds 100).
func TestPolicyChartsEveryLimit(t *testing.T) {
	p := policy.Policy{APIVersion: policy.APIVersion, Kind: policy.Kind, Metadata: policy.Metadata{Name: "all"},
		Service:  policy.Service{Capacity: 1000},
		Defaults: policy.Defaults{Limit: algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 100}},
		Tiers: []policy.Tier{{Name: "free"},
			{Name: "paid", Limit: algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 1, Burst: 250}}},
		Endpoints: []policy.Endpoint{{Match: policy.Match{Method: "POST", Path: "/v1/orders/{id}"},
			Limit: algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 20, Window: time.Hour}}},
	}
	cum := burstCumulative(t, p)
	want := map[string]string{
		"default: token_bucket(rate=1/s, burst=100)":                           "100",
		"tier free: token_bucket(rate=1/s, burst=100) (the default)":           "100",
		"tier paid: gcra(rate=1/s, burst=250)":                                 "250",
		"endpoint POST /v1/orders/{id}: fixed_window(limit=20, window=60 min)": "20",
	}
	last := cum.Table.Rows[len(cum.Table.Rows)-1]
	for i, col := range cum.Table.Columns[1:] {
		if col == views.SeriesOffered {
			continue
		}
		w, ok := want[col]
		if !ok {
			t.Errorf("unexpected series %q", col)
			continue
		}
		// Within a second of the burst nothing refills at 1/s.
		if got := last[i+1]; got != w && got != w+".0" {
			t.Errorf("%s admitted %s in all, want %s", col, got, w)
		}
		delete(want, col)
	}
	for name := range want {
		t.Errorf("no series %q", name)
	}
}

// burstCumulative is the "admitted so far" chart of p's classes under a
// burst of 300 requests after an idle spell.
func burstCumulative(t *testing.T, p policy.Policy) views.Chart {
	t.Helper()
	pattern := algorithms.DefaultPattern(algorithms.PatternIdleThenBurst)
	pattern.Count = 300
	charts, _, err := Policy(p, pattern)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		if c.ID == views.ChartPolicyCumulative {
			return c
		}
	}
	t.Fatal("no chart of the admitted so far")
	return views.Chart{}
}

// TestPolicyChartsShowTheMostRejectedClasses: past MaxChartClasses
// classes the charts show the first and the others rejected most, in
// policy order, and the caption says so. Each endpoint class here meets
// the default limit (burst 100) and its endpoint's fixed window of 10,
// 20, … 120 per hour, so in a burst of 300 it admits min(limit, 100):
// the lowest windows reject most.
func TestPolicyChartsShowTheMostRejectedClasses(t *testing.T) {
	p := policy.Policy{APIVersion: policy.APIVersion, Kind: policy.Kind, Metadata: policy.Metadata{Name: "many"},
		Service:  policy.Service{Capacity: 1000},
		Defaults: policy.Defaults{Limit: algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 100}},
	}
	// The widest windows first, so the most rejected are not the first
	// in policy order.
	for i := 12; i >= 1; i-- {
		p.Endpoints = append(p.Endpoints, policy.Endpoint{Match: policy.Match{Method: "GET", Path: fmt.Sprintf("/v1/e%d/{id}", i)},
			Limit: algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: int64(10 * i), Window: time.Hour}})
	}
	cum := burstCumulative(t, p)
	// The default, then the windows of 70 down to 10, in policy order.
	want := []string{views.SeriesOffered, "default: token_bucket(rate=1/s, burst=100)"}
	admitted := []string{"300", "100"}
	for i := 7; i >= 1; i-- {
		want = append(want, fmt.Sprintf("endpoint GET /v1/e%d/{id}: fixed_window(limit=%d, window=60 min)", i, 10*i))
		admitted = append(admitted, strconv.Itoa(10*i))
	}
	if got := cum.Table.Columns[1:]; !slices.Equal(got, want) {
		t.Fatalf("series %q, want %q", got, want)
	}
	last := cum.Table.Rows[len(cum.Table.Rows)-1][1:]
	for i := range last {
		last[i] = strings.TrimSuffix(last[i], ".0")
	}
	if !slices.Equal(last, admitted) {
		t.Errorf("admitted in all %v, want %v", last, admitted)
	}
	if !strings.Contains(cum.Caption, "8 of the policy's 13 classes of clients: the first and the 7 others with the most rejections") {
		t.Errorf("caption %q does not say which classes it shows", cum.Caption)
	}
}

// TestRetryStormFollowsTheDesign: the storm's clients retry as the
// design's retry policy says: no client retries more than the design's
// attempts, with 2 attempts some give up, more attempts offer more
// retries, and the caption states the policy.
func TestRetryStormFollowsTheDesign(t *testing.T) {
	size := func(attempts int, jitter float64) calc.Result {
		t.Helper()
		res, err := calc.Size(calc.Input{Capacity: 500, Clients: 20, P99: 3,
			Retry: calc.Retry{Attempts: attempts, Base: 0.5, Factor: 3, Cap: 4, Jitter: &jitter}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	chosen := algorithms.DefaultPattern(algorithms.PatternRamp)
	retries := map[int]int64{}
	for _, attempts := range []int{2, 7} {
		res := size(attempts, 0.2)
		tb := res.Spec(algorithms.NameTokenBucket)
		lanes, caption, err := stormRuns(res, tb, chosen)
		if err != nil {
			t.Fatal(err)
		}
		s := lanes[0].run.Lanes[0].Summary
		clients := stormPattern(tb, chosen, stormRetry(res, 1)).Clients
		if s.Retries == 0 || s.Retries > int64(attempts*clients) || (attempts == 2 && s.GaveUp == 0) {
			t.Errorf("attempts %d: %d retries and %d gave up from %d clients, want at most %d retries (and with 2 attempts, some giving up)",
				attempts, s.Retries, s.GaveUp, clients, attempts*clients)
		}
		retries[attempts] = s.Retries
		for _, l := range lanes[1:] {
			if got := l.run.Lanes[0].Summary.Retries; got == 0 || got > int64(attempts*clients) {
				t.Errorf("attempts %d: the %s storm retried %d times, want 1 to %d", attempts, l.name, got, attempts*clients)
			}
		}
		for _, want := range []string{"after 500 ms", "×3", "at most 4 s", "up to " + strconv.Itoa(attempts) + " attempts", "with 20 % proportional jitter"} {
			if !strings.Contains(caption, want) {
				t.Errorf("attempts %d: caption %q does not say %q", attempts, caption, want)
			}
		}
	}
	if retries[7] <= retries[2] {
		t.Errorf("7 attempts offered %d retries, 2 attempts %d", retries[7], retries[2])
	}
}

// TestRetryStormJitterZero: a design whose clients add no jitter is the
// lane without jitter, compared with the calculator's default, and the
// caption and the lanes say so; a pattern's own jitter is the comparison
// when given.
func TestRetryStormJitterZero(t *testing.T) {
	zero := 0.0
	res, err := calc.Size(calc.Input{Capacity: 500, Clients: 20, P99: 3, Retry: calc.Retry{Jitter: &zero}})
	if err != nil {
		t.Fatal(err)
	}
	tb := res.Spec(algorithms.NameTokenBucket)
	if r := stormRetry(res, 1); r.Jitter != 0 {
		t.Fatalf("the design's clients retry with jitter %v, want 0", r.Jitter)
	}
	lanes, caption, err := stormRuns(res, tb, algorithms.DefaultPattern(algorithms.PatternRamp))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(caption, "with no jitter") || !strings.Contains(caption, "add no jitter (retry.jitter 0)") ||
		!strings.Contains(caption, "default of 50 %") {
		t.Errorf("caption %q", caption)
	}
	if lanes[0].name != "no jitter: the design's" || lanes[1].name != "calculator default: proportional 50 %" ||
		lanes[1].retry.Jitter != 0.5 || lanes[1].retry.JitterMode != algorithms.JitterProportional {
		t.Errorf("lanes %q (%+v), %q (%+v)", lanes[0].name, lanes[0].retry, lanes[1].name, lanes[1].retry)
	}
	storm := algorithms.DefaultPattern(algorithms.PatternRetryStorm)
	storm.Jitter = 0.3
	if j, compared := stormJitter(storm, stormRetry(res, 1)); j != 0.3 || compared {
		t.Errorf("pattern jitter 0.3: jitter %v, compared %v", j, compared)
	}
}

// column is the chart's table column called name, as numbers.
func column(t *testing.T, c views.Chart, name string) []float64 {
	t.Helper()
	for j, col := range c.Table.Columns {
		if col != name {
			continue
		}
		out := make([]float64, len(c.Table.Rows))
		for i, row := range c.Table.Rows {
			v, err := strconv.ParseFloat(row[j], 64)
			if err != nil {
				t.Fatalf("%s row %d: %v", name, i, err)
			}
			out[i] = v
		}
		return out
	}
	t.Fatalf("no column %q in %q", name, c.Table.Columns)
	return nil
}

// TestRetryStormLanes: the storm chart has one lane per way of retrying,
// named for it (the design's own mode once), each lane's offered and
// admitted series on the same bins, and each lane's admitted requests per
// bin are those of a storm simulated here, independently, with that lane's
// jitter mode: twice the token bucket's burst of clients (within 100 and
// 10 000) at once, retrying as the design's retry policy says (calc's
// defaults: 5 attempts from 1 s, ×2, at most 30 s; proportional jitter
// 0.5), ignoring Retry-After, seeded as the chosen pattern is. The bin is
// the decorrelated run's own: its reach, 3 + 9 + 27 + 30 + 30 = 99 s, is
// the longest (proportional 50 % reaches 1.5 × 31 = 46.5 s, the others
// 31 s).
func TestRetryStormLanes(t *testing.T) {
	const (
		nothing = views.StormNoJitter
		full    = views.StormFull
		equal   = views.StormEqual
		decor   = views.StormDecorrelated
	)
	tests := []struct {
		name  string
		retry calc.Retry
		lanes []string
		modes []algorithms.JitterMode
		fracs []float64 // each lane's proportional fraction
	}{
		{"the default", calc.Retry{},
			[]string{nothing, "design's: proportional 50 %", full, equal, decor},
			[]algorithms.JitterMode{"proportional", "proportional", "full", "equal", "decorrelated"}, []float64{0, 0.5, 0.5, 0.5, 0.5}},
		{"proportional 20 %", calc.Retry{Jitter: new(0.2), JitterMode: "proportional"},
			[]string{nothing, "design's: proportional 20 %", full, equal, decor},
			[]algorithms.JitterMode{"proportional", "proportional", "full", "equal", "decorrelated"}, []float64{0, 0.2, 0.2, 0.2, 0.2}},
		{"no jitter", calc.Retry{Jitter: new(0.0)},
			[]string{"no jitter: the design's", "calculator default: proportional 50 %", full, equal, decor},
			[]algorithms.JitterMode{"proportional", "proportional", "full", "equal", "decorrelated"}, []float64{0, 0.5, 0, 0, 0}},
		{"full", calc.Retry{JitterMode: "full"},
			[]string{nothing, "design's: full jitter", equal, decor},
			[]algorithms.JitterMode{"proportional", "full", "equal", "decorrelated"}, []float64{0, 0.5, 0.5, 0.5}},
		{"equal", calc.Retry{JitterMode: "equal"},
			[]string{nothing, "design's: equal jitter", full, decor},
			[]algorithms.JitterMode{"proportional", "equal", "full", "decorrelated"}, []float64{0, 0.5, 0.5, 0.5}},
		{"decorrelated", calc.Retry{JitterMode: "decorrelated"},
			[]string{nothing, "design's: decorrelated jitter", full, equal},
			[]algorithms.JitterMode{"proportional", "decorrelated", "full", "equal"}, []float64{0, 0.5, 0.5, 0.5}},
	}
	chosen := algorithms.DefaultPattern(algorithms.PatternRamp)
	chosen.Seed = 42
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := calc.Size(calc.Input{Capacity: 500, Clients: 20, P99: 3, Retry: tt.retry})
			if err != nil {
				t.Fatal(err)
			}
			tb := res.Spec(algorithms.NameTokenBucket)
			c, err := retryStormChart(res, tb, chosen)
			if err != nil {
				t.Fatal(err)
			}
			if views.ChartSlug(c.ID) != "retry-storm" {
				t.Errorf("slug %q", views.ChartSlug(c.ID))
			}
			if !slices.Equal(c.Lanes, tt.lanes) {
				t.Fatalf("lanes %q, want %q", c.Lanes, tt.lanes)
			}
			var cols []string
			for _, l := range tt.lanes {
				cols = append(cols, "offered, "+l, "admitted, "+l)
			}
			if got := c.Table.Columns[1:]; !slices.Equal(got, cols) {
				t.Errorf("columns %q, want %q", got, cols)
			}
			if len(c.Lanes) > views.MaxLanes {
				t.Errorf("%d lanes, more than a chart stacks", len(c.Lanes))
			}

			storm := algorithms.DefaultPattern(algorithms.PatternRetryStorm)
			storm.Clients, storm.Seed = int(min(max(2*tb.Burst, 100), 10_000)), 42
			traffic, err := storm.Generate(1_000_000)
			if err != nil {
				t.Fatal(err)
			}
			policy := func(mode algorithms.JitterMode, jitter float64) *algorithms.RetryPolicy {
				return &algorithms.RetryPolicy{Attempts: 5, Base: time.Second, Factor: 2, Cap: 30 * time.Second,
					Jitter: jitter, JitterMode: mode, Seed: 42}
			}
			// Bins of half the first wait (1 s), as the run of 5 attempts
			// capped at 30 s stays well within 240 of them.
			bin := policy(algorithms.JitterDecorrelated, 0.5).Base / 2
			if want := "requests per " + views.Duration(bin); c.YName != want {
				t.Errorf("y axis %q, want %q: half the first wait", c.YName, want)
			}
			x := column(t, c, "time (s)")
			for i, v := range x {
				if want := (time.Duration(i) * bin).Seconds(); v != want {
					t.Fatalf("bin %d starts at %v s, want %v", i, v, want)
				}
			}
			admittedByLane := map[string][]float64{}
			leastRejected := int64(-1)
			for i, name := range tt.lanes {
				want, err := algorithms.Simulate(algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: tb}},
					Traffic: algorithms.Traffic{Arrivals: traffic.Arrivals, Retry: policy(tt.modes[i], tt.fracs[i])}, Bin: bin})
				if err != nil {
					t.Fatal(err)
				}
				w := want.Lanes[0]
				adm, off := column(t, c, "admitted, "+name), column(t, c, "offered, "+name)
				if len(w.Series) > len(adm) {
					t.Fatalf("%s: %d bins, the chart %d", name, len(w.Series), len(adm))
				}
				for j := range adm {
					var wa, wo int64
					if j < len(w.Series) {
						wa, wo = w.Series[j].Admitted, w.Series[j].Offered
					}
					if adm[j] != float64(wa) || off[j] != float64(wo) {
						t.Fatalf("%s bin %d: chart admitted %v of %v, simulation %d of %d", name, j, adm[j], off[j], wa, wo)
					}
				}
				admittedByLane[name] = adm
				if leastRejected < 0 || w.Summary.Rejected < leastRejected {
					leastRejected = w.Summary.Rejected
				}
			}
			if want := fmt.Sprintf("is rejected least (%d rejections)", leastRejected); !strings.Contains(c.Caption, want) {
				t.Errorf("caption %q does not say %q", c.Caption, want)
			}
			for i, m := range tt.modes[1:] {
				if want := string(m) + " jitter"; !strings.Contains(c.Caption, want) {
					t.Errorf("caption does not describe lane %d's %s: %q", i+1, want, c.Caption)
				}
			}
			// Full jitter spreads what lockstep sends back together.
			if f, ok := admittedByLane[full]; ok && slices.Equal(f, admittedByLane[tt.lanes[0]]) {
				t.Errorf("full jitter admits exactly what the clients in lockstep do")
			}
		})
	}
}

// TestRetryStormVerdict: the caption names the lane that gets the most
// through early and the one rejected least, from the runs. Three made-up
// runs of 6 clients at 0 against a limit of burst 2, rate 1/s, with 1 s
// bins: the ideal limiter admits 2 at once and the other 4 by 4 s.
func TestRetryStormVerdict(t *testing.T) {
	run := func(rejected int64, admitted ...int64) algorithms.Result {
		var series []algorithms.Bin
		for i, a := range admitted {
			series = append(series, algorithms.Bin{Start: time.Duration(i) * time.Second, Admitted: a})
		}
		return algorithms.Result{Bin: time.Second, Lanes: []algorithms.LaneResult{{Series: series, Summary: algorithms.Summary{Rejected: rejected}}}}
	}
	lanes := []stormLane{
		{say: "lockstep", run: run(20, 2, 0, 1, 0, 3)}, // 3 in the first 4 s
		{say: "early", run: run(9, 2, 1, 1, 1, 1)},     // 5
		{say: "thrifty", run: run(7, 2, 0, 1, 1, 2)},   // 4
	}
	arrivals := make([]algorithms.Arrival, 6)
	for i := range arrivals {
		arrivals[i] = algorithms.Arrival{Key: "k", Cost: 1}
	}
	tb := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 2}
	got := stormVerdict(lanes, tb, arrivals)
	for _, want := range []string{"In the first 4 s", "early gets the most through (5 of 6)", "thrifty is rejected least (7 rejections)"} {
		if !strings.Contains(got, want) {
			t.Errorf("verdict %q does not say %q", got, want)
		}
	}
	// A tie names every lane that ties; a burst that holds every client
	// leaves nothing to compare.
	lanes[2].run = run(9, 2, 1, 1, 1, 0)
	if got := stormVerdict(lanes, tb, arrivals); !strings.Contains(got, "early and thrifty get the most through (5 of 6)") ||
		!strings.Contains(got, "early and thrifty are rejected least (9 rejections)") {
		t.Errorf("tie: %q", got)
	}
	lanes[0].run = run(9, 2, 1, 1, 1, 0)
	if got := stormVerdict(lanes, tb, arrivals); !strings.Contains(got, "every lane gets the most through (5 of 6)") {
		t.Errorf("all tie: %q", got)
	}
	tb.Burst = 6
	if got := stormVerdict(lanes, tb, arrivals); !strings.Contains(got, "admits all 6 clients at once") {
		t.Errorf("no rejections: %q", got)
	}
}

// TestRetryStormPatternJitterMode: with the retry_storm pattern chosen,
// its clients retry with the design's jitter mode (here full) and the
// pattern's fraction (0, which full jitter ignores): the token bucket's
// admitted requests per bin are those of a storm simulated here with
// full jitter, not those of clients in lockstep.
func TestRetryStormPatternJitterMode(t *testing.T) {
	res, err := calc.Size(calc.Input{Capacity: 500, Clients: 20, P99: 3, Retry: calc.Retry{JitterMode: "full"}})
	if err != nil {
		t.Fatal(err)
	}
	p := algorithms.DefaultPattern(algorithms.PatternRetryStorm) // 100 clients, jitter 0
	charts, _, err := Build(res, p)
	if err != nil {
		t.Fatal(err)
	}
	var adm views.Chart
	for _, c := range charts {
		if c.ID == views.ChartAdmitted {
			adm = c
		}
	}
	x := column(t, adm, "time (s)")
	bin := time.Duration(math.Round((x[1] - x[0]) * 1e9))
	got := column(t, adm, string(algorithms.NameTokenBucket))
	traffic, err := p.Generate(1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	run := func(mode algorithms.JitterMode) []float64 {
		r := algorithms.RetryPolicy{Attempts: 5, Base: time.Second, Factor: 2, Cap: 30 * time.Second, JitterMode: mode, Seed: p.Seed}
		sim, err := algorithms.Simulate(algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: res.Spec(algorithms.NameTokenBucket)}},
			Traffic: algorithms.Traffic{Arrivals: traffic.Arrivals, Retry: &r}, Bin: bin})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(got))
		for i := 0; i < len(out) && i < len(sim.Lanes[0].Series); i++ {
			out[i] = float64(sim.Lanes[0].Series[i].Admitted)
		}
		return out
	}
	if want := run(algorithms.JitterFull); !slices.Equal(got, want) {
		t.Errorf("token bucket admitted per bin\n got %v\nwant %v (full jitter)", got, want)
	}
	if slices.Equal(got, run("")) {
		t.Error("the storm's clients retried in lockstep, not with the design's full jitter")
	}
}

// TestPolicyLoadIsPerSecond: the backend's load is weighed against its
// capacity a second at a time. Ten clients each send 50 requests at once
// after an idle spell, through a token bucket of burst 10 that refills 1
// a second: 10 clients × 10 = 100 requests pass, all in one bin, so the
// busiest second holds 100 (within the usable 800/s of a capacity of
// 1000), though the bin alone, a fraction of a second, ran faster.
func TestPolicyLoadIsPerSecond(t *testing.T) {
	p := policy.Policy{APIVersion: policy.APIVersion, Kind: policy.Kind, Metadata: policy.Metadata{Name: "load"},
		Service:  policy.Service{Capacity: 1000},
		Defaults: policy.Defaults{Limit: algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 10}},
		Tiers:    []policy.Tier{{Name: "all", Clients: 10}},
	}
	pattern := algorithms.DefaultPattern(algorithms.PatternIdleThenBurst)
	pattern.Count = 50
	_, info, err := Policy(p, pattern)
	if err != nil {
		t.Fatal(err)
	}
	l := info.Load
	if l == nil {
		t.Fatal("no load")
	}
	if l.Peak != 100 || l.Over != 0 || l.Capacity != 1000 || l.Usable != 800 {
		t.Errorf("load %+v; want a peak of 100/s, never over the usable 800/s of 1000", *l)
	}
	// Both classes (the default's clients and the tier's, under the same
	// limit) admit their burst and reject the rest at once.
	if len(info.Outcomes) != 2 {
		t.Fatalf("%d outcomes, want the default's and the tier's", len(info.Outcomes))
	}
	for _, o := range info.Outcomes {
		if o.Offered != 50 || o.Admitted != 10 || o.Rejected != 40 || o.FirstRejection != pattern.Idle {
			t.Errorf("%s: %+v; want 10 of 50 admitted, the first rejected at %v", o.Class.Who, o, pattern.Idle)
		}
	}
}

// TestPolicyOutcomesCountDelays: a leaky bucket of 10 r/s with a queue of
// 5 meets 10 requests at once: the first goes straight through, the next
// 5 wait their turns of 100 ms (the last 500 ms), and the other 4 find
// the queue full.
func TestPolicyOutcomesCountDelays(t *testing.T) {
	p := policy.Policy{APIVersion: policy.APIVersion, Kind: policy.Kind, Metadata: policy.Metadata{Name: "queue"},
		Service:  policy.Service{Capacity: 1000},
		Defaults: policy.Defaults{Limit: algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 10, Queue: 5}},
	}
	pattern := algorithms.DefaultPattern(algorithms.PatternIdleThenBurst)
	pattern.Count = 10
	_, info, err := Policy(p, pattern)
	if err != nil {
		t.Fatal(err)
	}
	want := Outcome{Offered: 10, Admitted: 6, Rejected: 4, FirstRejection: pattern.Idle, Delayed: 5, MaxDelay: 500 * time.Millisecond}
	if len(info.Outcomes) != 1 {
		t.Fatalf("%d outcomes, want the default's", len(info.Outcomes))
	}
	got := info.Outcomes[0]
	got.Class = Outcome{}.Class
	if got != want {
		t.Errorf("outcome %+v, want %+v", got, want)
	}
}
