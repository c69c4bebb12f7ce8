package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ratelab/ratelab/engine"
)

// Chart IDs of the whole-policy charts.
const (
	ChartPolicyAdmitted   = "chart-policy-admitted"
	ChartPolicyRejected   = "chart-policy-rejected"
	ChartPolicyCumulative = "chart-policy-cumulative"
)

// PolicyLane is one class of clients (the default, or a tier) sending the
// same traffic through the whole policy: its name as the legend shows it
// and the run. Every lane of a chart set shares one bin width.
type PolicyLane struct {
	Name string
	Run  engine.Result
}

// PolicyCharts draws the policy's own limits on the same traffic, one line
// per class of clients:
//
//   - ChartPolicyAdmitted: requests admitted per bin, and offered;
//   - ChartPolicyRejected: requests rejected per bin, one line per class
//     and limit that rejected any (the limit named first, as the 429 would
//     say);
//   - ChartPolicyCumulative: requests admitted so far, and offered.
//
// caption describes the traffic. lanes must not be empty.
func PolicyCharts(lanes []PolicyLane, caption string) []Chart {
	if len(lanes) == 0 {
		return nil
	}
	bin := lanes[0].Run.Bin
	n := 0
	for _, l := range lanes {
		n = max(n, len(l.Run.Series))
	}
	starts, ends := make([]float64, n), make([]float64, n)
	for i := range n {
		starts[i] = (time.Duration(i) * bin).Seconds()
		ends[i] = (time.Duration(i+1) * bin).Seconds()
	}
	per := func(r engine.Result, f func(engine.Bin) int64) []float64 {
		y := make([]float64, n)
		for i := 0; i < n && i < len(r.Series); i++ {
			y[i] = float64(f(r.Series[i]))
		}
		return y
	}
	sum := func(y []float64) []float64 {
		for i := 1; i < len(y); i++ {
			y[i] += y[i-1]
		}
		return y
	}
	offeredOf := func(b engine.Bin) int64 { return b.Offered }
	admittedOf := func(b engine.Bin) int64 { return b.Admitted }

	label := binLabel(bin)
	adm := lines{xName: "time (s)", yName: label, x: starts,
		series: []line{{name: SeriesOffered, y: per(lanes[0].Run, offeredOf), color: ColorReference, dashed: true, ref: true}}}
	cum := lines{xName: "time (s)", yName: "requests", x: ends,
		series: []line{{name: SeriesOffered, y: sum(per(lanes[0].Run, offeredOf)), color: ColorReference, dashed: true, ref: true}}}
	rej := lines{xName: "time (s)", yName: label, x: starts}
	for i, l := range lanes {
		w, col := laneWidth(i, len(lanes)), ClassColor(i)
		adm.add(line{name: l.Name, y: per(l.Run, admittedOf), color: col, width: w})
		cum.add(line{name: l.Name, y: sum(per(l.Run, admittedOf)), color: col, width: w})
		// A class's rejections take its colour; its second and later
		// limits are dashed, so two limits of one class stay apart.
		nth := 0
		for j, lim := range l.Run.Limits {
			if l.Run.Summary.RejectedBy[j] == 0 {
				continue
			}
			rej.add(line{name: l.Name + " · by " + lim.Name,
				y: per(l.Run, func(b engine.Bin) int64 { return b.RejectedBy[j] }), color: col, dashed: nth > 0, width: w})
			nth++
		}
	}
	rejCaption := fmt.Sprintf("Requests rejected per %s bin, by the limit that rejected them; a rejected request takes no quota from any limit.", seconds(bin.Seconds()))
	if len(rej.series) == 0 {
		rejCaption = "No limit of the policy rejects any of this traffic."
		rej.series = []line{{name: "rejected", y: make([]float64, n), color: ColorReference}}
	}
	return []Chart{
		adm.chart(ChartPolicyAdmitted, "Your policy: admitted over time",
			fmt.Sprintf("Requests the whole policy admitted per %s bin for each class of clients sending the same traffic (%s): the client's limit, the endpoint's and the global limit together.", seconds(bin.Seconds()), caption)),
		rej.chart(ChartPolicyRejected, "Your policy: rejected over time", rejCaption),
		cum.chart(ChartPolicyCumulative, "Your policy: admitted so far",
			fmt.Sprintf("Requests the whole policy admitted so far for each class of clients, against those offered (%s).", caption)),
	}
}

// ChartPolicyTimeline is the request timeline; the designer draws it and
// offers no embed of it (it is not in ChartSlugs).
const ChartPolicyTimeline = "chart-policy-timeline"

// TimelineClass is one class of clients' requests for the timeline: its
// name, the arrival time of each request and the whole policy's decision
// on it (in the same order), and the policy's limits, which
// Decision.Rejected indexes.
type TimelineClass struct {
	Name      string
	At        []time.Duration
	Decisions []engine.Decision
	Limits    []string
}

// Timeline outcomes, as the rows name them.
const (
	OutcomeAdmitted = "admitted"
	OutcomeDelayed  = "delayed"
)

// shortClass is a class's name without its limit: "tier paid" from
// "tier paid: gcra(rate=20/s, burst=200)".
func shortClass(name string) string {
	if i := strings.Index(name, ": "); i > 0 {
		return name[:i]
	}
	return name
}

// PolicyTimeline draws every request of classes at its arrival time, one
// row per class and outcome: admitted, delayed (admitted after waiting in
// a leaky bucket's queue) or rejected by the limit that rejected it first,
// as the 429 names it. shown and total say how many of the pattern's
// requests each class's row holds and how many the pattern has, for the
// caption. The table counts each row's requests and gives its first and
// last arrival.
func PolicyTimeline(classes []TimelineClass, shown, total int) Chart {
	type row struct {
		name   string
		color  string
		symbol string
		points [][2]float64
	}
	var rows []row
	for i, c := range classes {
		short := shortClass(c.Name)
		adm := row{name: short + " · " + OutcomeAdmitted, color: ClassColor(i), symbol: "circle"}
		del := row{name: short + " · " + OutcomeDelayed, color: ClassColor(i), symbol: "triangle"}
		rej := make([]row, len(c.Limits))
		for j, l := range c.Limits {
			rej[j] = row{name: short + " · rejected by " + l, color: ColorReference, symbol: "rect"}
		}
		for k, d := range c.Decisions {
			if k >= len(c.At) {
				break
			}
			p := [2]float64{round3(c.At[k].Seconds()), 0}
			switch {
			case d.Rejected >= 0 && d.Rejected < len(rej):
				rej[d.Rejected].points = append(rej[d.Rejected].points, p)
			case d.Delay > 0:
				del.points = append(del.points, p)
			default:
				adm.points = append(adm.points, p)
			}
		}
		for _, r := range append([]row{adm, del}, rej...) {
			if len(r.points) > 0 {
				rows = append(rows, r)
			}
		}
	}
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.name
	}
	c := charts.NewScatter()
	c.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
	)
	table := Table{Columns: []string{"class · outcome", "requests", "first (s)", "last (s)"}}
	var styles []SeriesStyle
	for i, r := range rows {
		for k := range r.points {
			r.points[k][1] = float64(i) // the row, as the category axis counts
		}
		// Large mode draws a row's points as one path: the timeline is
		// the first chart an update draws, and thousands of separate
		// symbols took it tens of milliseconds.
		c.AddSeries(r.name, nil,
			charts.WithScatterChartOpts(opts.ScatterChart{Symbol: r.symbol, SymbolSize: 6}),
			func(s *charts.SingleSeries) { s.Large, s.LargeThreshold = opts.Bool(true), 200 },
			charts.WithItemStyleOpts(opts.ItemStyle{Color: r.color}))
		withPoints(&c.BaseConfiguration, r.points)
		table.Rows = append(table.Rows, []string{r.name, strconv.Itoa(len(r.points)), format(r.points[0][0]), format(r.points[len(r.points)-1][0])})
		styles = append(styles, SeriesStyle{Name: r.name, Color: r.color})
	}
	c.Validate()
	option := pageOption(c.JSON(), "item")
	option["grid"] = []map[string]any{{"left": "3%", "right": "4%", "top": rowsTop, "bottom": laneAxis, "containLabel": true}}
	option["xAxis"] = []map[string]any{{"type": "value", "name": "time (s)", "nameLocation": "middle", "nameGap": 25, "min": 0}}
	option["yAxis"] = []map[string]any{{"type": "category", "data": names, "inverse": true,
		"splitLine": map[string]any{"show": true}, "axisLabel": map[string]any{"width": 180, "overflow": "truncate"}}}
	caption := "Each request the pattern sends, at its arrival, for each class of clients: admitted, delayed (it waited in a leaky bucket's queue) or rejected, on the row of the limit that rejected it first, as the 429 names it."
	if shown < total {
		caption += fmt.Sprintf(" The first %d of the pattern's %d requests.", shown, total)
	}
	n := min(max(len(names), 1), MaxLanes) // more rows share the tallest box
	return Chart{ID: ChartPolicyTimeline, Title: "Your policy: every request", Caption: caption, Option: encodeOption(option),
		Table: table, YName: "class · outcome", Series: styles, Height: RowsHeight(n), heightClass: "rows-" + strconv.Itoa(n)}
}

// ChartPolicyLoad is the backend's load against its capacity.
const ChartPolicyLoad = "chart-policy-load"

// Load series names.
const (
	SeriesLoadOffered  = "offered by all clients"
	SeriesLoadAdmitted = "admitted: the backend's load"
	SeriesCapacity     = "capacity"
	SeriesUsable       = "usable capacity"
)

// PolicyLoad draws what the backend sees when every client of the design
// sends the traffic at once: requests offered and admitted per second, in
// each bin of run, multiplied by scale (how many clients each simulated
// client stands for), against the service's capacity and usable capacity
// (requests/s).
func PolicyLoad(run engine.Result, scale, capacity, usable float64, caption string) Chart {
	n := len(run.Series)
	x := make([]float64, n)
	off, adm := make([]float64, n), make([]float64, n)
	capY, useY := make([]float64, n), make([]float64, n)
	per := scale / run.Bin.Seconds()
	for i, b := range run.Series {
		x[i] = (time.Duration(i) * run.Bin).Seconds()
		off[i] = float64(b.Offered) * per
		adm[i] = float64(b.Admitted) * per
		capY[i], useY[i] = capacity, usable
	}
	l := lines{xName: "time (s)", yName: "requests/s", x: x, series: []line{
		{name: SeriesLoadOffered, y: off, color: ColorReference, dashed: true},
		{name: SeriesLoadAdmitted, y: adm, color: ColorBlue, width: 2.5},
		{name: SeriesCapacity, y: capY, color: ColorVermilion, dashed: true},
		{name: SeriesUsable, y: useY, color: ColorOrange, dashed: true},
	}}
	return l.chart(ChartPolicyLoad, "Your policy: the backend's load against capacity", caption)
}
