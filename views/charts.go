package views

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ratelab/ratelab/algorithms"
)

// Chart is one chart of the designer: its echarts option as JSON, which the
// page carries as data (data-chart-option) for static/js/charts.js to hand
// to echarts.setOption, and the same numbers as a table for readers without
// JavaScript or without sight. Option is plain data: no functions, no
// HTML, and tooltips render as rich text on the canvas, so a strict
// Content-Security-Policy holds.
type Chart struct {
	ID      string // unique in the page: "chart-admitted"
	Title   string
	Caption string
	Option  string
	Table   Table
	// YName is the y axis name with its unit ("requests per 0.1 s"); the
	// x axis is Table.Columns[0], "time (s)".
	YName string
	// Series styles the lines as the option does, one per column of
	// Table after the first, in the same order.
	Series []SeriesStyle
}

// SeriesStyle is how one line is drawn: its colour ("#rrggbb", set on
// every series the views build; "" falls back to the palette by position),
// dashed or solid, and its width in pixels, where 0 is echarts' default
// of 2.
type SeriesStyle struct {
	Name   string
	Color  string
	Dashed bool
	Width  float32
}

// The palette: one colour per algorithm on every chart, embed, SVG and
// docs page, so a token bucket is always blue. The colours are the
// Okabe–Ito set, which readers with any common colour-vision deficiency
// tell apart, with orange and sky blue darkened so that every colour has
// a contrast of at least 3:1 against both the light (#ffffff) and the
// dark (#0d1117, #0f1419) backgrounds (TestPaletteContrast).
const (
	ColorBlue      = "#0072b2"
	ColorVermilion = "#d55e00"
	ColorGreen     = "#009e73"
	ColorOrange    = "#b87700"
	ColorPurple    = "#cc79a7"
	ColorSky       = "#3391c7"
	// ColorReference is the grey of reference lines (offered, ideal),
	// which are also dashed.
	ColorReference = "#7d8590"
)

// algorithmColors maps each algorithm to its colour.
var algorithmColors = map[algorithms.Name]string{
	algorithms.NameTokenBucket:   ColorBlue,
	algorithms.NameGCRA:          ColorVermilion,
	algorithms.NameLeakyBucket:   ColorGreen,
	algorithms.NameFixedWindow:   ColorOrange,
	algorithms.NameSlidingLog:    ColorPurple,
	algorithms.NameSlidingWindow: ColorSky,
}

// classColors are the colours of the lines that are not algorithms
// (classes of clients, replica set-ups), in order.
var classColors = [...]string{ColorBlue, ColorVermilion, ColorGreen, ColorOrange, ColorPurple, ColorSky}

// AlgorithmColor is the colour of algorithm a's lines; an unknown name
// gets ColorReference.
func AlgorithmColor(a algorithms.Name) string {
	if c, ok := algorithmColors[a]; ok {
		return c
	}
	return ColorReference
}

// ClassColor is the colour of the i-th line of a chart that does not
// compare algorithms (the i-th class of clients), repeating after six.
func ClassColor(i int) string {
	return classColors[((i%len(classColors))+len(classColors))%len(classColors)]
}

// Table is a chart's data: a header row and one row per x value, the
// numbers formatted exactly as in the option.
type Table struct {
	Columns []string
	Rows    [][]string
}

// Chart IDs, one per chart the designer draws.
const (
	ChartAdmitted   = "chart-admitted"
	ChartRejected   = "chart-rejected"
	ChartQuota      = "chart-quota"
	ChartCumulative = "chart-cumulative"
	ChartReplicas   = "chart-replicas"
	ChartRetryStorm = "chart-retry-storm"
)

// Series names that are not an algorithm's name.
const (
	SeriesOffered = "offered"
	SeriesIdeal   = "ideal: rate·t + burst"
)

// lines is a chart's data before it becomes an option: series sharing one
// x axis (seconds).
type lines struct {
	xName, yName string
	x            []float64
	series       []line
}

type line struct {
	name   string
	y      []float64
	color  string // "#rrggbb"
	dashed bool
	width  float32 // pixels; 0 is echarts' default
}

// laneWidth gives the i-th of n algorithm lines a width that shrinks from
// the first to the last, so where two algorithms admit the same requests
// (token_bucket and gcra always do) the later line sits inside the earlier
// one and both stay visible.
func laneWidth(i, n int) float32 { return 1.5 + 1.2*float32(n-1-i) }

// round3 keeps three decimals: chart values are counts, and times are whole
// milliseconds, so only the ideal line is rounded, and the table shows the
// very number the chart draws.
// A value that is not finite (never expected) becomes 0, so JSON encoding
// cannot fail.
func round3(v float64) float64 {
	r := math.Round(v*1000) / 1000
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return 0
	}
	return r
}

func format(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// chart turns l into a Chart: a go-echarts line chart with a value x axis,
// no animation and canvas (rich text) tooltips, and the table of the same
// numbers.
func (l lines) chart(id, title, caption string) Chart {
	c := charts.NewLine()
	c.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Top: "0"}),
		charts.WithGridOpts(opts.Grid{Left: "3%", Right: "4%", Top: "40", Bottom: "40", ContainLabel: opts.Bool(true)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: l.xName, NameLocation: "middle", NameGap: 25}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: l.yName}),
	)
	table := Table{Columns: []string{l.xName}, Rows: make([][]string, len(l.x))}
	var styles []SeriesStyle
	for i, x := range l.x {
		table.Rows[i] = []string{format(round3(x))}
	}
	for _, s := range l.series {
		data := make([]opts.LineData, len(l.x))
		for i, x := range l.x {
			v := 0.0
			if i < len(s.y) {
				v = round3(s.y[i])
			}
			data[i] = opts.LineData{Value: [2]float64{round3(x), v}}
			table.Rows[i] = append(table.Rows[i], format(v))
		}
		table.Columns = append(table.Columns, s.name)
		styles = append(styles, SeriesStyle{Name: s.name, Color: s.color, Dashed: s.dashed, Width: s.width})
		so := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)})}
		if s.dashed || s.width > 0 || s.color != "" {
			style := opts.LineStyle{Width: s.width, Color: s.color}
			if s.dashed {
				style.Type = "dashed"
			}
			so = append(so, charts.WithLineStyleOpts(style))
		}
		if s.color != "" {
			// The legend and the tooltip take the item's colour.
			so = append(so, charts.WithItemStyleOpts(opts.ItemStyle{Color: s.color}))
		}
		c.AddSeries(s.name, data, so...)
	}
	c.Validate()
	option := c.JSON()
	// Echarts' default HTML tooltip injects inline styles, which the
	// Content-Security-Policy forbids; rich text draws on the canvas.
	option["tooltip"] = map[string]any{"show": true, "trigger": "axis", "renderMode": "richText"}
	option["aria"] = map[string]any{"enabled": true}
	// The y axis's name sits above the axis, starting at it, so a long
	// unit ("requests per 500 ms") is not cut at the canvas's left edge.
	option["yAxis"] = []map[string]any{{"type": "value", "name": l.yName, "nameTextStyle": map[string]any{"align": "left"}}}
	delete(option, "title") // the page shows the title as a heading
	ch := Chart{ID: id, Title: title, Caption: caption, Table: table, YName: l.yName, Series: styles}
	// Options hold finite numbers and fixed strings, so this cannot fail;
	// if it did, the page would show the table without the chart.
	if b, err := json.Marshal(option); err == nil {
		ch.Option = string(b)
	}
	return ch
}

// binsPerLane is the longest series of sim's lanes: lanes with retries may
// run longer than the others.
func binsPerLane(sim algorithms.Result) int {
	n := 0
	for _, l := range sim.Lanes {
		n = max(n, len(l.Series))
	}
	return n
}

// starts and ends are the bins' start and end times in seconds.
func binTimes(sim algorithms.Result, n int, end bool) []float64 {
	x := make([]float64, n)
	for i := range x {
		t := time.Duration(i) * sim.Bin
		if end {
			t += sim.Bin
		}
		x[i] = t.Seconds()
	}
	return x
}

// perBin is one value per bin of lane, 0 past its last bin.
func perBin(l algorithms.LaneResult, n int, f func(algorithms.Bin) int64) []float64 {
	y := make([]float64, n)
	for i := 0; i < n && i < len(l.Series); i++ {
		y[i] = float64(f(l.Series[i]))
	}
	return y
}

// cumulative is the running total of f over lane's bins, flat past its
// last bin.
func cumulative(l algorithms.LaneResult, n int, f func(algorithms.Bin) int64) []float64 {
	y := perBin(l, n, f)
	for i := 1; i < n; i++ {
		y[i] += y[i-1]
	}
	return y
}

// state is f at the end of each bin, holding the last value past the
// lane's last bin.
func state(l algorithms.LaneResult, n int, f func(algorithms.Bin) int64) []float64 {
	y := make([]float64, n)
	for i := range y {
		switch {
		case i < len(l.Series):
			y[i] = float64(f(l.Series[i]))
		case i > 0:
			y[i] = y[i-1]
		}
	}
	return y
}

func offered(b algorithms.Bin) int64   { return b.Offered }
func admitted(b algorithms.Bin) int64  { return b.Admitted }
func rejected(b algorithms.Bin) int64  { return b.Rejected }
func remaining(b algorithms.Bin) int64 { return b.Remaining }
func queued(b algorithms.Bin) int64    { return b.Queued }

// sameOffered reports whether every lane was offered the same requests in
// every bin: true without retries, when "offered" is one series.
func sameOffered(sim algorithms.Result) bool {
	for _, l := range sim.Lanes[1:] {
		if len(l.Series) != len(sim.Lanes[0].Series) {
			return false
		}
		for i, b := range l.Series {
			if b.Offered != sim.Lanes[0].Series[i].Offered {
				return false
			}
		}
	}
	return true
}

func binLabel(bin time.Duration) string {
	return "requests per " + Duration(bin)
}

// IdealLine is what a token bucket lets through at most: burst at once,
// then rate per second, for each of Keys clients.
type IdealLine struct {
	Rate  float64 // requests/s
	Burst float64 // requests
	Keys  int     // distinct keys in the arrivals; 0 counts as 1
}

// PatternCharts draws one simulation of several algorithms on the same
// arrivals (lanes named by their algorithm, as the calculator sized them):
//
//   - ChartAdmitted: requests admitted per bin, and offered when every
//     lane was offered the same;
//   - ChartRejected: requests rejected per bin;
//   - ChartQuota: the focus key's remaining quota at the end of each bin,
//     and the leaky bucket's queue depth;
//   - ChartCumulative: requests admitted so far, against ideal.
//
// Per-bin series are plotted at the bin's start, states and totals at its
// end. sim must have at least one lane.
func PatternCharts(sim algorithms.Result, focus string, ideal IdealLine) []Chart {
	n := binsPerLane(sim)
	starts, ends := binTimes(sim, n, false), binTimes(sim, n, true)
	specs := ""
	for i, l := range sim.Lanes {
		if i > 0 {
			specs += ", "
		}
		specs += SpecLabel(l.Lane.Spec)
	}
	per := binLabel(sim.Bin)

	adm := lines{xName: "time (s)", yName: per, x: starts}
	rej := lines{xName: "time (s)", yName: per, x: starts}
	quota := lines{xName: "time (s)", yName: "requests", x: ends}
	cum := lines{xName: "time (s)", yName: "requests", x: ends}
	if sameOffered(sim) && len(sim.Lanes) > 0 {
		adm.series = append(adm.series, line{name: SeriesOffered, y: perBin(sim.Lanes[0], n, offered), color: ColorReference, dashed: true})
		cum.series = append(cum.series, line{name: SeriesOffered, y: cumulative(sim.Lanes[0], n, offered), color: ColorReference, dashed: true})
	}
	for i, l := range sim.Lanes {
		name, w := string(l.Lane.Spec.Algorithm), laneWidth(i, len(sim.Lanes))
		col := AlgorithmColor(l.Lane.Spec.Algorithm)
		adm.series = append(adm.series, line{name: name, y: perBin(l, n, admitted), color: col, width: w})
		rej.series = append(rej.series, line{name: name, y: perBin(l, n, rejected), color: col, width: w})
		quota.series = append(quota.series, line{name: name + " remaining", y: state(l, n, remaining), color: col, width: w})
		cum.series = append(cum.series, line{name: name, y: cumulative(l, n, admitted), color: col, width: w})
	}
	for _, l := range sim.Lanes {
		if l.Lane.Spec.Algorithm == algorithms.NameLeakyBucket {
			quota.series = append(quota.series, line{name: string(l.Lane.Spec.Algorithm) + " queued", y: state(l, n, queued), color: AlgorithmColor(l.Lane.Spec.Algorithm), dashed: true})
		}
	}
	keys := max(ideal.Keys, 1)
	idealY := make([]float64, n)
	for i, t := range ends {
		idealY[i] = float64(keys) * (ideal.Rate*t + ideal.Burst)
	}
	idealName := SeriesIdeal
	idealWhy := fmt.Sprintf("the ideal line is rate·t + burst = %s·t + %s", Num(ideal.Rate), Num(ideal.Burst))
	if keys > 1 {
		idealWhy = fmt.Sprintf("the ideal line is keys × (rate·t + burst) = %d × (%s·t + %s)", keys, Num(ideal.Rate), Num(ideal.Burst))
	}
	cum.series = append(cum.series, line{name: idealName, y: idealY, color: ColorReference, dashed: true})

	return []Chart{
		adm.chart(ChartAdmitted, "Admitted over time",
			fmt.Sprintf("Requests each algorithm admitted per %s bin, on the same arrivals: %s.", seconds(sim.Bin.Seconds()), specs)),
		rej.chart(ChartRejected, "Rejected over time",
			fmt.Sprintf("Requests each algorithm rejected per %s bin; rejected requests take no quota. The leaky bucket delays instead of rejecting until its queue is full.", seconds(sim.Bin.Seconds()))),
		quota.chart(ChartQuota, "Token level and queue depth",
			fmt.Sprintf("Remaining quota of key %q at the end of each bin (tokens for the buckets, requests left in the window for the window algorithms), and the requests waiting in the leaky bucket's queue.", focus)),
		cum.chart(ChartCumulative, "Cumulative admitted against the ideal line",
			fmt.Sprintf("Requests admitted so far; %s, the most a token bucket can admit by time t.", idealWhy)),
	}
}

// ReplicaChart draws requests admitted so far by lanes that enforce the same
// limit in different places (one shared store, or locally per replica),
// named by names, one per lane, on the same arrivals.
func ReplicaChart(sim algorithms.Result, names []string, caption string) Chart {
	n := binsPerLane(sim)
	l := lines{xName: "time (s)", yName: "requests", x: binTimes(sim, n, true)}
	if len(sim.Lanes) > 0 && sameOffered(sim) {
		l.series = append(l.series, line{name: SeriesOffered, y: cumulative(sim.Lanes[0], n, offered), color: ColorReference, dashed: true})
	}
	for i, lane := range sim.Lanes {
		name := SpecLabel(lane.Lane.Spec)
		if i < len(names) {
			name = names[i]
		}
		l.series = append(l.series, line{name: name, y: cumulative(lane, n, admitted), color: ClassColor(i)})
	}
	return l.chart(ChartReplicas, "Replicas: local against shared enforcement", caption)
}

// Retry storm series names.
const (
	SeriesStormOffered        = "offered, no jitter"
	SeriesStormAdmitted       = "admitted, no jitter"
	SeriesStormOfferedJitter  = "offered, with jitter"
	SeriesStormAdmittedJitter = "admitted, with jitter"
)

// RetryStormChart draws a retry storm twice on the same limit: clients
// rejected together retrying in lockstep (still) and with jitter
// (jittered), requests offered (retries included) and admitted per bin.
// Both runs must use the same bin width.
func RetryStormChart(still, jittered algorithms.Result, caption string) Chart {
	n := max(binsPerLane(still), binsPerLane(jittered))
	l := lines{xName: "time (s)", yName: binLabel(still.Bin), x: binTimes(still, n, false)}
	if len(still.Lanes) > 0 && len(jittered.Lanes) > 0 {
		s, j := still.Lanes[0], jittered.Lanes[0]
		l.series = []line{
			{name: SeriesStormOffered, y: perBin(s, n, offered), color: ColorVermilion, dashed: true},
			{name: SeriesStormAdmitted, y: perBin(s, n, admitted), color: ColorVermilion},
			{name: SeriesStormOfferedJitter, y: perBin(j, n, offered), color: ColorBlue, dashed: true},
			{name: SeriesStormAdmittedJitter, y: perBin(j, n, admitted), color: ColorBlue},
		}
	}
	return l.chart(ChartRetryStorm, "Retry storm, with and without jitter", caption)
}

// ChartShadow is the shadow-mode report's chart.
const ChartShadow = "chart-shadow"

// Shadow series names.
const (
	SeriesLogged   = "logged requests"
	SeriesRejected = "would be rejected"
)

// ShadowChart draws a replayed log over time: requests per bin as logged
// and those the policy would have rejected, each bin plotted at its start
// in seconds since the first request. requests and rejected hold one count
// per bin.
func ShadowChart(bin time.Duration, requests, rejected []int64, caption string) Chart {
	n := len(requests)
	x := make([]float64, n)
	req := make([]float64, n)
	rej := make([]float64, n)
	for i := range n {
		x[i] = float64(i) * bin.Seconds()
		req[i] = float64(requests[i])
		if i < len(rejected) {
			rej[i] = float64(rejected[i])
		}
	}
	l := lines{xName: "time (s)", yName: binLabel(bin), x: x, series: []line{
		{name: SeriesLogged, y: req, color: ColorReference, dashed: true},
		{name: SeriesRejected, y: rej, color: ColorVermilion, width: 2.5},
	}}
	return l.chart(ChartShadow, "Would-be rejections over time", caption)
}
