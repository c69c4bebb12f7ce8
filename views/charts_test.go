package views

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/static"
)

// optionSeries is the part of an option's series the tests read.
type optionSeries struct {
	Name string       `json:"name"`
	Type string       `json:"type"`
	Data [][2]float64 `json:"data"`
}

// option is the part of an echarts option the tests read.
type option struct {
	Series  []optionSeries   `json:"series"`
	XAxis   []map[string]any `json:"xAxis"`
	Tooltip map[string]any   `json:"tooltip"`
}

func parseOption(t *testing.T, c Chart) option {
	t.Helper()
	if c.Option == "" {
		t.Fatalf("%s: no option", c.ID)
	}
	var o option
	if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
		t.Fatalf("%s: option is not JSON: %v\n%s", c.ID, err, c.Option)
	}
	return o
}

// series returns the named series' points, failing when it is missing.
func series(t *testing.T, c Chart, o option, name string) [][2]float64 {
	t.Helper()
	for _, s := range o.Series {
		if s.Name == name {
			return s.Data
		}
	}
	t.Fatalf("%s: no series %q", c.ID, name)
	return nil
}

// seriesNames are o's series names in order, each once: with lanes, the
// reference lines repeat in every lane.
func seriesNames(o option) []string {
	var names []string
	for _, s := range o.Series {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	return names
}

func chartByID(t *testing.T, cs []Chart, id string) Chart {
	t.Helper()
	for _, c := range cs {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no chart %s", id)
	return Chart{}
}

// sixLanes are the six algorithms sized for 10 requests/s with a burst of
// 20 and 600 per minute.
func sixLanes() []algorithms.Lane {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 20},
		{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 20},
		{Algorithm: algorithms.NameLeakyBucket, Rate: 10, Queue: 19},
		{Algorithm: algorithms.NameFixedWindow, Limit: 600, Window: time.Minute},
		{Algorithm: algorithms.NameSlidingLog, Limit: 600, Window: time.Minute},
		{Algorithm: algorithms.NameSlidingWindow, Limit: 600, Window: time.Minute},
	}
	lanes := make([]algorithms.Lane, len(specs))
	for i, s := range specs {
		lanes[i] = algorithms.Lane{Spec: s}
	}
	return lanes
}

func simulate(t *testing.T, s algorithms.Simulation) algorithms.Result {
	t.Helper()
	res, err := algorithms.Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func generate(t *testing.T, p algorithms.Pattern) algorithms.Traffic {
	t.Helper()
	tr, err := p.Generate(1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestPatternChartsCarryTheSimulation checks every series of the four
// pattern charts against a separate run of the same simulation, and each
// table against its option.
func TestPatternChartsCarryTheSimulation(t *testing.T) {
	sim := algorithms.Simulation{Lanes: sixLanes(), Traffic: generate(t, algorithms.DefaultPattern(algorithms.PatternRamp)), Until: 40 * time.Second}
	charts := PatternCharts(simulate(t, sim), "client-1", IdealLine{Rate: 10, Burst: 20, Keys: 1})
	want := simulate(t, sim) // independent run: Simulate is deterministic
	if len(charts) != 4 {
		t.Fatalf("got %d charts, want 4", len(charts))
	}
	bin := want.Bin.Seconds()

	adm := chartByID(t, charts, ChartAdmitted)
	o := parseOption(t, adm)
	names := []string{SeriesOffered}
	for _, l := range want.Lanes {
		names = append(names, string(l.Lane.Spec.Algorithm))
	}
	if got := seriesNames(o); strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("admitted series: got %q, want %q", got, names)
	}
	rej := parseOption(t, chartByID(t, charts, ChartRejected))
	cum := parseOption(t, chartByID(t, charts, ChartCumulative))
	quota := parseOption(t, chartByID(t, charts, ChartQuota))
	for _, l := range want.Lanes {
		name := string(l.Lane.Spec.Algorithm)
		a := series(t, adm, o, name)
		r := series(t, adm, rej, name)
		c := series(t, adm, cum, name)
		q := series(t, adm, quota, name+" remaining")
		if len(a) != len(l.Series) {
			t.Fatalf("%s: %d points, want one per bin, %d", name, len(a), len(l.Series))
		}
		total := 0.0
		for i, b := range l.Series {
			start, end := float64(i)*bin, float64(i+1)*bin
			total += float64(b.Admitted)
			if a[i] != [2]float64{round3(start), float64(b.Admitted)} {
				t.Fatalf("%s admitted[%d]: got %v, want [%g %d]", name, i, a[i], start, b.Admitted)
			}
			if r[i] != [2]float64{round3(start), float64(b.Rejected)} {
				t.Fatalf("%s rejected[%d]: got %v, want [%g %d]", name, i, r[i], start, b.Rejected)
			}
			if c[i] != [2]float64{round3(end), total} {
				t.Fatalf("%s cumulative[%d]: got %v, want [%g %g]", name, i, c[i], end, total)
			}
			if q[i] != [2]float64{round3(end), float64(b.Remaining)} {
				t.Fatalf("%s remaining[%d]: got %v, want [%g %d]", name, i, q[i], end, b.Remaining)
			}
		}
		if total != float64(l.Summary.Admitted) {
			t.Errorf("%s: cumulative ends at %g, want the summary's %d", name, total, l.Summary.Admitted)
		}
		if l.Lane.Spec.Algorithm == algorithms.NameLeakyBucket {
			qd := series(t, adm, quota, name+" queued")
			for i, b := range l.Series {
				if qd[i][1] != float64(b.Queued) {
					t.Fatalf("leaky_bucket queued[%d]: got %v, want %d", i, qd[i], b.Queued)
				}
			}
		}
	}
	// The ramp outruns the token bucket, and rejection shows.
	if want.Lanes[0].Summary.Rejected == 0 {
		t.Fatal("the ramp should be rejected by the token bucket at 10/s")
	}
	ideal := series(t, adm, cum, SeriesIdeal)
	for _, p := range ideal {
		if w := round3(10*p[0] + 20); p[1] != w {
			t.Fatalf("ideal at %g: got %g, want rate·t + burst = %g", p[0], p[1], w)
		}
	}

	for _, c := range charts {
		checkTableMatchesOption(t, c)
		o := parseOption(t, c)
		if o.Tooltip["renderMode"] != "richText" {
			t.Errorf("%s: tooltip %v; want renderMode richText (HTML tooltips inject inline styles)", c.ID, o.Tooltip)
		}
		if strings.Contains(c.Option, "function") {
			t.Errorf("%s: the option holds a function; options must be plain data", c.ID)
		}
	}
}

// checkTableMatchesOption holds the rule that the table beside a chart has
// the chart's numbers: one row per point, one column per series.
func checkTableMatchesOption(t *testing.T, c Chart) {
	t.Helper()
	o := parseOption(t, c)
	// A reference line drawn in every lane is one column, with the same
	// points in each lane.
	unique := o.Series[:0:0]
	for _, s := range o.Series {
		k := slices.IndexFunc(unique, func(u optionSeries) bool { return u.Name == s.Name })
		if k < 0 {
			unique = append(unique, s)
			continue
		}
		if !slices.Equal(unique[k].Data, s.Data) {
			t.Errorf("%s: series %q differs between lanes", c.ID, s.Name)
		}
	}
	if len(c.Table.Columns) != len(unique)+1 {
		t.Fatalf("%s: table has %d columns, want time and %d series", c.ID, len(c.Table.Columns), len(unique))
	}
	for j, s := range unique {
		if c.Table.Columns[j+1] != s.Name {
			t.Errorf("%s: column %d is %q, want %q", c.ID, j+1, c.Table.Columns[j+1], s.Name)
		}
		if len(s.Data) != len(c.Table.Rows) {
			t.Fatalf("%s: %d rows for %d points", c.ID, len(c.Table.Rows), len(s.Data))
		}
		for i, d := range s.Data {
			x, _ := strconv.ParseFloat(c.Table.Rows[i][0], 64)
			y, _ := strconv.ParseFloat(c.Table.Rows[i][j+1], 64)
			if x != d[0] || y != d[1] {
				t.Fatalf("%s row %d, %s: table has (%s, %s), option (%g, %g)", c.ID, i, s.Name, c.Table.Rows[i][0], c.Table.Rows[i][j+1], d[0], d[1])
			}
		}
	}
}

func TestReplicaChartLocalMultiplies(t *testing.T) {
	tb := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 20}
	sim := algorithms.Simulation{
		Lanes: []algorithms.Lane{
			{Spec: tb},
			{Spec: tb, Replicas: algorithms.Replicas{Count: 3, Balance: algorithms.RoundRobin}},
		},
		Traffic: generate(t, algorithms.DefaultPattern(algorithms.PatternIdleThenBurst)),
	}
	c := ReplicaChart(simulate(t, sim), []string{"shared", "local ×3"}, "caption")
	want := simulate(t, sim)
	o := parseOption(t, c)
	if got := seriesNames(o); strings.Join(got, ",") != "offered,shared,local ×3" {
		t.Errorf("series: got %q", got)
	}
	shared, local := series(t, c, o, "shared"), series(t, c, o, "local ×3")
	if got, w := shared[len(shared)-1][1], float64(want.Lanes[0].Summary.Admitted); got != w || got != 20 {
		t.Errorf("shared admits %g, want the burst, 20 (simulation: %g)", got, w)
	}
	if got, w := local[len(local)-1][1], float64(want.Lanes[1].Summary.Admitted); got != w || got != 60 {
		t.Errorf("local ×3 admits %g, want three bursts, 60 (simulation: %g)", got, w)
	}
	checkTableMatchesOption(t, c)
}

// TestRetryStormChart: one lane per run, named as given, each with its
// offered (dashed) and admitted series in the lane's colour, every value
// the run's own per bin; the runs share the bins.
func TestRetryStormChart(t *testing.T) {
	tb := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 50}
	p := algorithms.DefaultPattern(algorithms.PatternRetryStorm)
	traffic := generate(t, p)
	run := func(mode algorithms.JitterMode, jitter float64, bin time.Duration) algorithms.Result {
		r := *traffic.Retry
		r.JitterMode, r.Jitter = mode, jitter
		return simulate(t, algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: tb}}, Traffic: algorithms.Traffic{Arrivals: traffic.Arrivals, Retry: &r}, Bin: bin})
	}
	// Bins of 500 ms, fine enough to tell the jittered retries apart.
	const bin = 500 * time.Millisecond
	decorrelated := run(algorithms.JitterDecorrelated, 0, bin)
	still := run("", 0, bin)
	proportional := run(algorithms.JitterProportional, 0.5, bin)
	full := run(algorithms.JitterFull, 0, bin)
	jittered := algorithms.Result{Bin: bin, Lanes: []algorithms.LaneResult{proportional.Lanes[0], full.Lanes[0], decorrelated.Lanes[0]}}
	names := []string{StormNoJitter, "design's: proportional 50 %", StormFull, StormDecorrelated}
	runs := []algorithms.Result{still, proportional, full, decorrelated}

	c := RetryStormChart(still, jittered, "caption", names...)
	if !slices.Equal(c.Lanes, names) {
		t.Fatalf("lanes %q, want %q", c.Lanes, names)
	}
	o := parseOption(t, c)
	var want []string
	for _, n := range names {
		want = append(want, StormSeries(SeriesStormOffered, n), StormSeries(SeriesStormAdmitted, n))
	}
	if got := seriesNames(o); !slices.Equal(got, want) {
		t.Fatalf("series: got %q, want %q", got, want)
	}
	if want[6] != "offered, decorrelated jitter" {
		t.Errorf("series name %q", want[6])
	}
	// Equal jitter is left out: decorrelated keeps its own colour.
	colours := []string{ClassColor(0), ClassColor(1), ClassColor(2), ClassColor(4)}
	for i, st := range c.Series {
		lane := i / 2
		if st.Color != colours[lane] || st.Dashed != (i%2 == 0) || st.Lane != lane {
			t.Errorf("%s: colour %s dashed %v lane %d; want %s, dashed %v, lane %d", st.Name, st.Color, st.Dashed, st.Lane, colours[lane], i%2 == 0, lane)
		}
	}
	n := 0
	for _, r := range runs {
		n = max(n, len(r.Lanes[0].Series))
	}
	for i, name := range names {
		l := runs[i].Lanes[0]
		for _, tt := range []struct {
			series string
			f      func(algorithms.Bin) int64
		}{{StormSeries(SeriesStormOffered, name), offered}, {StormSeries(SeriesStormAdmitted, name), admitted}} {
			pts := series(t, c, o, tt.series)
			if len(pts) != n {
				t.Fatalf("%s: %d points, want the longest run's %d bins", tt.series, len(pts), n)
			}
			var sum float64
			for j, pt := range pts {
				var want int64
				if j < len(l.Series) {
					want = tt.f(l.Series[j])
				}
				if x := (time.Duration(j) * bin).Seconds(); pt[0] != x || pt[1] != float64(want) {
					t.Fatalf("%s[%d]: got %v, want [%v %d]", tt.series, j, pt, x, want)
				}
				sum += pt[1]
			}
			if tt.series == StormSeries(SeriesStormOffered, name) && sum != float64(l.Summary.Offered) {
				t.Errorf("%s sums to %g, want the %d offered (retries included)", tt.series, sum, l.Summary.Offered)
			}
		}
	}
	// In lockstep the retries come back in one bin; jitter spreads them.
	peak := func(name string) float64 {
		m := 0.0
		for _, pt := range series(t, c, o, name)[1:] { // after the first burst
			m = math.Max(m, pt[1])
		}
		return m
	}
	for _, name := range names[1:] {
		if s, j := peak(StormSeries(SeriesStormOffered, StormNoJitter)), peak(StormSeries(SeriesStormOffered, name)); s <= j {
			t.Errorf("retry peak without jitter %g, with %s %g; want jitter to lower it", s, name, j)
		}
	}
	checkTableMatchesOption(t, c)

	// Unnamed, two runs are the lanes without and with jitter.
	two := RetryStormChart(still, proportional, "caption")
	if !slices.Equal(two.Lanes, []string{StormNoJitter, StormWithJitter}) || two.Table.Columns[4] != "admitted, with jitter" {
		t.Errorf("two runs: lanes %q, columns %q", two.Lanes, two.Table.Columns)
	}
}

func TestChartValuesStayFinite(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := round3(v); got != 0 {
			t.Errorf("round3(%v) = %v, want 0", v, got)
		}
	}
	if got := round3(1.23456); got != 1.235 {
		t.Errorf("round3(1.23456) = %v", got)
	}
}

func TestAlgorithmLinesNestInTheSVG(t *testing.T) {
	// token_bucket and gcra admit the same requests, so their lines
	// coincide where the SVG draws them on one plot; each algorithm's line
	// is thinner than the one before it, so a later line sits inside an
	// earlier one instead of hiding it.
	sim := algorithms.Simulation{Lanes: sixLanes(), Traffic: generate(t, algorithms.DefaultPattern(algorithms.PatternIdleThenBurst))}
	charts := PatternCharts(simulate(t, sim), "client-1", IdealLine{Rate: 10, Burst: 20, Keys: 1})
	for _, id := range []string{ChartAdmitted, ChartRejected, ChartCumulative} {
		prev := float32(math.Inf(1))
		seen := 0
		for _, s := range chartByID(t, charts, id).Series {
			if !slices.Contains(algorithms.Names, algorithms.Name(s.Name)) {
				continue
			}
			seen++
			if s.Width <= 0 || s.Width >= prev {
				t.Errorf("%s: %s line width %v after %v; want each algorithm thinner than the one before", id, s.Name, s.Width, prev)
			}
			prev = s.Width
		}
		if seen != 6 {
			t.Errorf("%s: %d algorithm lines, want 6", id, seen)
		}
	}
}

// laneOption is the layout part of a stacked chart's option.
type laneOption struct {
	Grid []struct {
		Top, Height string
	} `json:"grid"`
	XAxis []struct {
		GridIndex int     `json:"gridIndex"`
		Min       float64 `json:"min"`
		Max       float64 `json:"max"`
		AxisLabel struct {
			Show bool `json:"show"`
		} `json:"axisLabel"`
		Name string `json:"name"`
	} `json:"xAxis"`
	YAxis []struct {
		GridIndex int     `json:"gridIndex"`
		Min       float64 `json:"min"`
		Max       float64 `json:"max"`
		Name      string  `json:"name"`
	} `json:"yAxis"`
	Series []struct {
		Name       string       `json:"name"`
		XAxisIndex int          `json:"xAxisIndex"`
		YAxisIndex int          `json:"yAxisIndex"`
		Data       [][2]float64 `json:"data"`
	} `json:"series"`
}

// gridPercent reads "12.5%" as 12.5.
func gridPercent(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || !strings.HasSuffix(s, "%") {
		t.Fatalf("grid position %q: want a percentage", s)
	}
	return v
}

// TestLanesStackOnSharedAxes: the algorithm and policy charts draw each
// algorithm (or class, or limit) in a lane of its own, stacked without
// overlap, every lane with the offered line where the chart has one, on
// one x range and one y range that holds every value, tick labels under
// the last lane only.
func TestLanesStackOnSharedAxes(t *testing.T) {
	sim := algorithms.Simulation{Lanes: sixLanes(), Traffic: generate(t, algorithms.DefaultPattern(algorithms.PatternRamp)), Until: 40 * time.Second}
	charts := PatternCharts(simulate(t, sim), "client-1", IdealLine{Rate: 10, Burst: 20, Keys: 1})
	lanes := []PolicyLane{{Name: "default", Run: policyRun(t)}, {Name: "gold", Run: policyRun(t)}}
	charts = append(charts, PolicyCharts(lanes, "test")...)
	wantLanes := map[string][]string{
		ChartAdmitted:         {"token_bucket", "gcra", "leaky_bucket", "fixed_window", "sliding_log", "sliding_window"},
		ChartRejected:         {"token_bucket", "gcra", "leaky_bucket", "fixed_window", "sliding_log", "sliding_window"},
		ChartQuota:            {"token_bucket", "gcra", "leaky_bucket", "fixed_window", "sliding_log", "sliding_window"},
		ChartCumulative:       {"token_bucket", "gcra", "leaky_bucket", "fixed_window", "sliding_log", "sliding_window"},
		ChartPolicyAdmitted:   {"default", "gold"},
		ChartPolicyCumulative: {"default", "gold"},
		ChartPolicyRejected:   {"default · by default", "gold · by default"},
	}
	withOffered := map[string]bool{ChartAdmitted: true, ChartCumulative: true, ChartPolicyAdmitted: true, ChartPolicyCumulative: true}
	for _, c := range charts {
		want := wantLanes[c.ID]
		if !slices.Equal(c.Lanes, want) {
			t.Errorf("%s: lanes %q, want %q", c.ID, c.Lanes, want)
			continue
		}
		var o laneOption
		if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
			t.Fatal(err)
		}
		n := len(want)
		if len(o.Grid) != n || len(o.XAxis) != n || len(o.YAxis) != n {
			t.Fatalf("%s: %d grids, %d x axes, %d y axes; want %d of each", c.ID, len(o.Grid), len(o.XAxis), len(o.YAxis), n)
		}
		if c.Height != LanesHeight(n) {
			t.Errorf("%s: height %d, want %d for %d lanes", c.ID, c.Height, LanesHeight(n), n)
		}
		bottom := 0.0
		for g := range n {
			top, h := gridPercent(t, o.Grid[g].Top), gridPercent(t, o.Grid[g].Height)
			if top < bottom || h <= 0 || top+h > 100 {
				t.Errorf("%s lane %d: from %g%% to %g%%, after the lane above ending at %g%%", c.ID, g, top, top+h, bottom)
			}
			bottom = top + h
			x, y := o.XAxis[g], o.YAxis[g]
			if x.GridIndex != g || y.GridIndex != g {
				t.Errorf("%s lane %d: axes on grids %d and %d", c.ID, g, x.GridIndex, y.GridIndex)
			}
			if x.Min != o.XAxis[0].Min || x.Max != o.XAxis[0].Max || y.Min != 0 || y.Max != o.YAxis[0].Max {
				t.Errorf("%s lane %d: x %g..%g y %g..%g; want the first lane's ranges", c.ID, g, x.Min, x.Max, y.Min, y.Max)
			}
			if last := g == n-1; x.AxisLabel.Show != last || (x.Name != "") != last {
				t.Errorf("%s lane %d: x labels shown %v, name %q; want them under the last lane only", c.ID, g, x.AxisLabel.Show, x.Name)
			}
			if !strings.HasPrefix(y.Name, want[g]) {
				t.Errorf("%s lane %d: label %q, want %q", c.ID, g, y.Name, want[g])
			}
		}
		perLane := make([][]string, n)
		for _, s := range o.Series {
			if s.XAxisIndex != s.YAxisIndex || s.XAxisIndex >= n {
				t.Fatalf("%s %q: on x axis %d, y axis %d", c.ID, s.Name, s.XAxisIndex, s.YAxisIndex)
			}
			perLane[s.XAxisIndex] = append(perLane[s.XAxisIndex], s.Name)
			for _, d := range s.Data {
				if d[1] > o.YAxis[0].Max || d[0] < o.XAxis[0].Min || d[0] > o.XAxis[0].Max {
					t.Fatalf("%s %q: point %v outside the shared ranges", c.ID, s.Name, d)
				}
			}
		}
		for g, names := range perLane {
			if !slices.ContainsFunc(names, func(s string) bool { return strings.HasPrefix(s, want[g]) }) {
				t.Errorf("%s lane %d: series %q, want %q's", c.ID, g, names, want[g])
			}
			if slices.Contains(names, SeriesOffered) != withOffered[c.ID] {
				t.Errorf("%s lane %d: series %q; offered wanted: %v", c.ID, g, names, withOffered[c.ID])
			}
			for _, other := range want {
				if other != want[g] && slices.Contains(names, other) {
					t.Errorf("%s lane %d (%s) also draws %s", c.ID, g, want[g], other)
				}
			}
		}
	}
}

// TestYAxisNameStartsAtTheAxis: every chart's y axis name is aligned to
// start at the axis, so a long unit is not cut at the canvas's left edge
// (centred over the axis, "requests per 500 ms" lost its first letters).
func TestYAxisNameStartsAtTheAxis(t *testing.T) {
	for _, c := range PolicyCharts([]PolicyLane{{Name: "default", Run: policyRun(t)}}, "test") {
		var o struct {
			YAxis []struct {
				Name          string `json:"name"`
				NameTextStyle struct {
					Align string `json:"align"`
				} `json:"nameTextStyle"`
			} `json:"yAxis"`
		}
		if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
			t.Fatal(err)
		}
		if len(o.YAxis) != 1 || o.YAxis[0].Name != c.YName || o.YAxis[0].NameTextStyle.Align != "left" {
			t.Errorf("%s: y axis %+v, want %q aligned left", c.ID, o.YAxis, c.YName)
		}
	}
}

// policyRun is a small whole-policy run for chart tests.
func policyRun(t *testing.T) engine.Result {
	t.Helper()
	p := policy.Policy{APIVersion: policy.APIVersion, Kind: policy.Kind, Metadata: policy.Metadata{Name: "t"},
		Service:  policy.Service{Capacity: 100},
		Defaults: policy.Defaults{Limit: algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 2}}}
	var reqs []engine.Request
	for i := range 10 {
		reqs = append(reqs, engine.Request{At: time.Duration(i) * 100 * time.Millisecond, Key: "k"})
	}
	r, err := engine.Simulate(p, engine.Simulation{Requests: reqs, Bin: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// seriesColors reads each series' line and item colour from c's option.
func seriesColors(t *testing.T, c Chart) map[string][2]string {
	t.Helper()
	var o struct {
		Series []struct {
			Name      string
			LineStyle struct{ Color string } `json:"lineStyle"`
			ItemStyle struct{ Color string } `json:"itemStyle"`
		}
	}
	if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
		t.Fatal(err)
	}
	m := map[string][2]string{}
	for _, s := range o.Series {
		m[s.Name] = [2]string{s.LineStyle.Color, s.ItemStyle.Color}
	}
	return m
}

// TestOneColourPerAlgorithm: every chart that draws an algorithm draws it
// in that algorithm's colour (line and legend alike), the reference lines
// are grey, and the SVG of each chart strokes every series in the
// option's colour.
func TestOneColourPerAlgorithm(t *testing.T) {
	d := designerSVGCharts(t)
	seen := map[algorithms.Name]int{}
	for _, c := range d.charts {
		colors := seriesColors(t, c)
		for name, col := range colors {
			if col[0] == "" || col[0] != col[1] {
				t.Errorf("%s %q: line colour %q, item colour %q; want one colour on both", c.ID, name, col[0], col[1])
			}
			base, _, _ := strings.Cut(name, " ")
			if a := algorithms.Name(base); slices.Contains(algorithms.Names, a) {
				seen[a]++
				if col[0] != AlgorithmColor(a) {
					t.Errorf("%s %q: colour %s, want %s's %s", c.ID, name, col[0], a, AlgorithmColor(a))
				}
			}
			if name == SeriesOffered || name == SeriesIdeal {
				if col[0] != ColorReference {
					t.Errorf("%s %q: colour %s, want the reference grey %s", c.ID, name, col[0], ColorReference)
				}
			}
		}
		p := parseSVG(t, renderSVG(t, c, SVGOptions{Theme: ThemeDark}))
		for _, ps := range p.series {
			if want := colors[ps.name][0]; ps.stroke != want {
				t.Errorf("%s SVG %q: stroke %s, want the option's %s", c.ID, ps.name, ps.stroke, want)
			}
		}
	}
	for _, a := range algorithms.Names {
		if seen[a] < 4 {
			t.Errorf("%s is in %d series, want it on each of the four algorithm charts", a, seen[a])
		}
	}
	// The whole-policy charts colour each class in order, offered grey.
	lanes := []PolicyLane{{Name: "default", Run: policyRun(t)}, {Name: "gold", Run: policyRun(t)}}
	for _, c := range PolicyCharts(lanes, "test") {
		colors := seriesColors(t, c)
		for name, col := range colors {
			want := ColorReference
			switch {
			case name == "default" || strings.HasPrefix(name, "default ·"):
				want = ClassColor(0)
			case name == "gold" || strings.HasPrefix(name, "gold ·"):
				want = ClassColor(1)
			}
			if col[0] != want || col[1] != want {
				t.Errorf("%s %q: colours %q, want %s", c.ID, name, col, want)
			}
		}
	}
}

// TestPaletteContrast: each series colour stands out from the light and
// the dark backgrounds of the page, the embeds and the SVGs by at least
// 3:1 (WCAG's non-text contrast), and no two algorithms share a colour.
func TestPaletteContrast(t *testing.T) {
	backgrounds := []string{"#ffffff", "#0d1117", "#0f1419", "#161c23"}
	all := append(slices.Clone(classColors[:]), ColorReference)
	used := map[string]algorithms.Name{}
	for _, a := range algorithms.Names {
		c := AlgorithmColor(a)
		if b, dup := used[c]; dup {
			t.Errorf("%s and %s share %s", a, b, c)
		}
		used[c] = a
		all = append(all, c)
	}
	for _, c := range all {
		for _, bg := range backgrounds {
			if r := contrast(t, c, bg); r < 3 {
				t.Errorf("%s on %s: contrast %.2f:1, want at least 3:1", c, bg, r)
			}
		}
	}
}

// TestLaneHeightsInCSS: the stylesheet, as served, gives each lane
// count's class the height its lanes are laid out for, so a chart's box
// has its height before the script draws it.
func TestLaneHeightsInCSS(t *testing.T) {
	css, err := fs.ReadFile(static.FS, "css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= MaxLanes; n++ {
		c := Chart{Lanes: make([]string, n)}
		rule := fmt.Sprintf(".chart.%s {\nheight: %dpx;\n}", c.HeightClass(), LanesHeight(n))
		if !strings.Contains(string(css), rule) {
			t.Errorf("app.css has no rule %q", rule)
		}
	}
}

// TestRowHeightsInCSS: the same for the timeline's rows.
func TestRowHeightsInCSS(t *testing.T) {
	css, err := fs.ReadFile(static.FS, "css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= MaxLanes; n++ {
		c := Chart{heightClass: "rows-" + strconv.Itoa(n)}
		rule := fmt.Sprintf(".chart.%s {\nheight: %dpx;\n}", c.HeightClass(), RowsHeight(n))
		if !strings.Contains(string(css), rule) {
			t.Errorf("app.css has no rule %q", rule)
		}
	}
}

// TestOptionsAsEncodingJSON: every option the chart builders encode comes
// out of marshalOption with the bytes encoding/json writes for it.
func TestOptionsAsEncodingJSON(t *testing.T) {
	defer func(m func(any) ([]byte, error)) { marshalOption = m }(marshalOption)
	fast := marshalOption
	compared := 0
	marshalOption = func(v any) ([]byte, error) {
		got, err := fast(v)
		want, werr := json.Marshal(v)
		if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Errorf("option encoded as\n%.400s\nencoding/json writes\n%.400s", got, want)
		}
		compared++
		return got, err
	}
	sim := algorithms.Simulation{Lanes: sixLanes(), Traffic: generate(t, algorithms.DefaultPattern(algorithms.PatternRamp)), Until: 40 * time.Second}
	PatternCharts(simulate(t, sim), "client-1", IdealLine{Rate: 10, Burst: 20, Keys: 1})
	PolicyCharts([]PolicyLane{{Name: "default", Run: policyRun(t)}, {Name: "gold", Run: policyRun(t)}}, "test")
	tb := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 20}
	burst := generate(t, algorithms.DefaultPattern(algorithms.PatternIdleThenBurst))
	ReplicaChart(simulate(t, algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: tb}, {Spec: tb, Replicas: algorithms.Replicas{Count: 3, Balance: algorithms.RoundRobin}}}, Traffic: burst}),
		[]string{"shared", "local ×3"}, "caption <&> \u2028")
	storm := generate(t, algorithms.DefaultPattern(algorithms.PatternRetryStorm))
	still := simulate(t, algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: tb}}, Traffic: storm})
	RetryStormChart(still, still, "caption", StormNoJitter, "a <b> & \"c\"")
	if compared < 8 {
		t.Errorf("%d options compared; want every chart's", compared)
	}
}
