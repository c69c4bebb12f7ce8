package views

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	sjson "github.com/segmentio/encoding/json"

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
	// Lanes names the chart's small multiples, top to bottom: one grid
	// per lane on shared axes, each with its own lines and the reference
	// lines (offered, ideal). Nil for a chart drawn on one grid.
	Lanes []string
	// Height is the chart's height in pixels at which its lanes are laid
	// out (the designer's chart box takes it; an embed stretches it).
	Height int
	// heightClass is the class of a box whose height is not its lanes'
	// (the timeline's rows); "" means by Lanes.
	heightClass string
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
	// Lane is the index into Chart.Lanes of the small multiple the line is
	// drawn in, or LaneEvery for a reference line drawn in every lane; 0
	// on a chart without lanes.
	Lane int
}

// LaneEvery is SeriesStyle.Lane of a reference line (offered, ideal) that
// a chart with lanes draws in each of them.
const LaneEvery = -1

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
// x axis (seconds). With lanes, the chart is drawn as small multiples:
// one grid per lane, stacked, all on the same x and y ranges, so lines
// that coincide (token_bucket and gcra admit the same requests) each stay
// visible in their own lane. The table and the SVG are the same either
// way.
type lines struct {
	xName, yName string
	x            []float64
	series       []line
	lanes        []lane
}

type line struct {
	name   string
	y      []float64
	color  string // "#rrggbb"
	dashed bool
	width  float32 // pixels; 0 is echarts' default
	// ref marks a reference line (offered, ideal): with lanes it is drawn
	// in every lane, and the table has it once.
	ref bool
}

// lane is one small multiple: its label and the indexes into
// lines.series of its own lines.
type lane struct {
	name   string
	series []int
}

// add appends s as a lane of its own, named after it.
func (l *lines) add(s line) {
	l.series = append(l.series, s)
	l.lanes = append(l.lanes, lane{name: s.name, series: []int{len(l.series) - 1}})
}

// MaxLanes is the most small multiples a chart stacks; a chart with more
// lines (a policy with many tiers and endpoints) draws them on one grid.
const MaxLanes = 8

// Lane layout, in pixels: the legend's row, the label above each lane,
// the x axis's labels and name under the last lane, the plots' left
// margin (the y axis's labels), and a lane's plot height for a chart of n
// lanes (fewer lanes get taller plots).
const (
	laneLegend = 34
	laneLabel  = 26
	laneAxis   = 46
	laneLeft   = 56
)

func laneHeight(n int) int {
	switch {
	case n <= 1:
		return 250
	case n == 2:
		return 120
	case n <= 4:
		return 90
	}
	return 68
}

// LanesHeight is the height in pixels of a chart of n lanes.
func LanesHeight(n int) int {
	return laneLegend + n*(laneLabel+laneHeight(n)) + laneAxis
}

// HeightClass is the stylesheet class that gives c's box its Height
// ("lanes-6"; static/css/app.css has one per lane count), so the page
// lays out at the chart's height before any script runs.
func (c Chart) HeightClass() string {
	if c.heightClass != "" {
		return c.heightClass
	}
	return "lanes-" + strconv.Itoa(max(1, len(c.Lanes)))
}

// Rows of the timeline: the space above the first row, and each row's
// height, in pixels.
const (
	rowsTop   = 10
	rowHeight = 30
)

// RowsHeight is the height in pixels of a timeline of n rows.
func RowsHeight(n int) int { return rowsTop + max(n, 2)*rowHeight + laneAxis }

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

// format is v as the table shows it: the shortest decimal that reads
// back as v. Whole numbers below 100 (most counts) come from strconv's
// table without allocating.
func format(v float64) string {
	if v >= 0 && v < 100 && v == math.Trunc(v) {
		return strconv.Itoa(int(v))
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// chart turns l into a Chart: a go-echarts line chart with a value x axis,
// no animation and canvas (rich text) tooltips, and the table of the same
// numbers. With two or more lanes (at most MaxLanes) the lines are drawn
// as small multiples (see lines).
func (l lines) chart(id, title, caption string) Chart {
	stacked := len(l.lanes) >= 2 && len(l.lanes) <= MaxLanes
	c := charts.NewLine()
	c.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "plain", Top: "0"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: l.xName, NameLocation: "middle", NameGap: 25}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: l.yName}),
	)
	table := Table{Columns: []string{l.xName}, Rows: make([][]string, len(l.x))}
	var styles []SeriesStyle
	for i, x := range l.x {
		table.Rows[i] = make([]string, 1, 1+len(l.series))
		table.Rows[i][0] = format(round3(x))
	}
	// The table's columns, the styles and the option's series come in
	// the order the chart draws them: with lanes, the reference lines,
	// then each lane's own.
	order := make([]int, 0, len(l.series))
	laneOf := make([]int, len(l.series)) // 0 without lanes
	if stacked {
		for k, s := range l.series {
			if s.ref {
				order = append(order, k)
				laneOf[k] = LaneEvery
			}
		}
		for g, ln := range l.lanes {
			order = append(order, ln.series...)
			for _, k := range ln.series {
				laneOf[k] = g
			}
		}
	} else {
		for k := range l.series {
			order = append(order, k)
		}
	}
	data := make([][][2]float64, len(l.series))
	for _, k := range order {
		s := l.series[k]
		pts := make([][2]float64, len(l.x))
		for i, x := range l.x {
			v := 0.0
			if i < len(s.y) {
				v = round3(s.y[i])
			}
			pts[i] = [2]float64{round3(x), v}
			table.Rows[i] = append(table.Rows[i], format(v))
		}
		data[k] = pts
		table.Columns = append(table.Columns, s.name)
		styles = append(styles, SeriesStyle{Name: s.name, Color: s.color, Dashed: s.dashed, Width: s.width, Lane: laneOf[k]})
	}
	add := func(s line, d [][2]float64, grid int, width float32) {
		so := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false), XAxisIndex: grid, YAxisIndex: grid})}
		if s.dashed || width > 0 || s.color != "" {
			style := opts.LineStyle{Width: width, Color: s.color}
			if s.dashed {
				style.Type = "dashed"
			}
			so = append(so, charts.WithLineStyleOpts(style))
		}
		if s.color != "" {
			// The legend and the tooltip take the item's colour.
			so = append(so, charts.WithItemStyleOpts(opts.ItemStyle{Color: s.color}))
		}
		c.AddSeries(s.name, nil, so...)
		withPoints(&c.BaseConfiguration, d)
	}
	var laneNames []string
	height := LanesHeight(1)
	if stacked {
		// Each lane draws the reference lines, then its own; lines in
		// their own lane need no nesting widths.
		for g, ln := range l.lanes {
			laneNames = append(laneNames, ln.name)
			for k, s := range l.series {
				if s.ref {
					add(s, data[k], g, 0)
				}
			}
			for _, k := range ln.series {
				add(l.series[k], data[k], g, 0)
			}
		}
		height = LanesHeight(len(l.lanes))
	} else {
		for k, s := range l.series {
			add(s, data[k], 0, s.width)
		}
	}
	c.Validate()
	option := pageOption(c.JSON(), "axis")
	if stacked {
		l.stack(option, height)
	} else {
		option["grid"] = []map[string]any{{"left": "3%", "right": "4%", "top": "40", "bottom": "40", "containLabel": true}}
		// The y axis's name sits above the axis, starting at it, so a
		// long unit ("requests per 500 ms") is not cut at the canvas's
		// left edge.
		option["yAxis"] = []map[string]any{{"type": "value", "name": l.yName, "nameTextStyle": map[string]any{"align": "left"}}}
	}
	return Chart{ID: id, Title: title, Caption: caption, Option: encodeOption(option), Table: table,
		YName: l.yName, Series: styles, Lanes: laneNames, Height: height}
}

// withPoints gives the series last added to c its points as bare [x, y]
// pairs. go-echarts boxes each point as {"value": [x, y]}, which echarts
// reads the same way in about five times the bytes: on the designer that
// was a third of every live update's response and of its encoding time.
func withPoints(c *charts.BaseConfiguration, pts [][2]float64) {
	c.MultiSeries[len(c.MultiSeries)-1].Data = pts
}

// pageOption makes a go-echarts option fit the page: a tooltip on trigger
// ("axis" or "item") drawn as rich text (echarts' default HTML tooltip
// injects inline styles, which the Content-Security-Policy forbids),
// generated descriptions for screen readers, and no title (the page shows
// it as a heading).
func pageOption(option map[string]any, trigger string) map[string]any {
	option["tooltip"] = map[string]any{"show": true, "trigger": trigger, "renderMode": "richText"}
	option["aria"] = map[string]any{"enabled": true}
	delete(option, "title")
	return option
}

// marshalOption encodes a chart's option: segmentio/encoding's Marshal
// writes the same bytes as encoding/json's (TestOptionsAsEncodingJSON)
// in less time, and the options, maps of go-echarts' structs, were a fifth
// of a keystroke's recompute (BenchmarkDesignerRecompute). A variable, so
// the test can set both side by side.
var marshalOption = sjson.Marshal

// encodeOption is option as JSON. Options hold finite numbers and fixed
// strings, so this cannot fail; if it did, the page would show the table
// without the chart ("").
func encodeOption(option map[string]any) string {
	b, err := marshalOption(option)
	if err != nil {
		return ""
	}
	return string(b)
}

// stack lays option out as l's lanes, top to bottom, for a chart height
// pixels tall (as percentages, so an embed that stretches the chart keeps
// the layout): one grid per lane with its label above it (the first
// lane's label also gives the unit), every y axis from 0 to the same
// nice maximum, every x axis over the same range, tick labels and the x
// axis's name under the last lane only, and one axis pointer across all
// lanes.
func (l lines) stack(option map[string]any, height int) {
	ymax, xmin, xmax := 0.0, 0.0, 0.0
	for _, s := range l.series {
		for _, v := range s.y {
			ymax = max(ymax, round3(v))
		}
	}
	if len(l.x) > 0 {
		// Whole ticks at both ends, as echarts picks them on one grid.
		x := niceAxis(round3(l.x[0]), round3(l.x[len(l.x)-1]), 8)
		xmin, xmax = x.lo, x.hi
	}
	y := niceAxis(0, ymax, 2)
	n := len(l.lanes)
	pct := func(px int) string { return strconv.FormatFloat(100*float64(px)/float64(height), 'f', 2, 64) + "%" }
	grids := make([]map[string]any, n)
	xs := make([]map[string]any, n)
	ys := make([]map[string]any, n)
	for g, ln := range l.lanes {
		top := laneLegend + g*(laneLabel+laneHeight(n)) + laneLabel
		// Fixed margins, not containLabel: the last lane's x labels
		// would otherwise make its plot narrower than the others'. And no
		// outer bounds: echarts 6 otherwise narrows a lane whose label
		// (its y axis's name) runs past the chart's edge, so lanes under
		// long limit names were narrower than the rest (the page cuts a
		// long label at the edge instead, charts.js).
		grids[g] = map[string]any{"left": laneLeft, "right": 28, "top": pct(top), "height": pct(laneHeight(n)), "outerBoundsMode": "none"}
		last := g == n-1
		x := map[string]any{"type": "value", "gridIndex": g, "min": xmin, "max": xmax,
			"axisLabel": map[string]any{"show": last}, "axisTick": map[string]any{"show": last}}
		if last {
			x["name"], x["nameLocation"], x["nameGap"] = l.xName, "middle", 25
		}
		xs[g] = x
		name := ln.name
		if g == 0 {
			name += " · " + l.yName
		}
		ys[g] = map[string]any{"type": "value", "gridIndex": g, "min": 0, "max": y.hi, "interval": y.step,
			"name": name, "nameGap": 8, "nameTextStyle": map[string]any{"align": "left", "fontWeight": "bold"}}
	}
	option["grid"], option["xAxis"], option["yAxis"] = grids, xs, ys
	option["axisPointer"] = map[string]any{"link": []map[string]any{{"xAxisIndex": "all"}}}
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
		adm.series = append(adm.series, line{name: SeriesOffered, y: perBin(sim.Lanes[0], n, offered), color: ColorReference, dashed: true, ref: true})
		cum.series = append(cum.series, line{name: SeriesOffered, y: cumulative(sim.Lanes[0], n, offered), color: ColorReference, dashed: true, ref: true})
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
	cum.series = append(cum.series, line{name: idealName, y: idealY, color: ColorReference, dashed: true, ref: true})
	for i, l := range sim.Lanes {
		name, w := string(l.Lane.Spec.Algorithm), laneWidth(i, len(sim.Lanes))
		col := AlgorithmColor(l.Lane.Spec.Algorithm)
		adm.add(line{name: name, y: perBin(l, n, admitted), color: col, width: w})
		rej.add(line{name: name, y: perBin(l, n, rejected), color: col, width: w})
		quota.add(line{name: name + " remaining", y: state(l, n, remaining), color: col, width: w})
		quota.lanes[len(quota.lanes)-1].name = name
		cum.add(line{name: name, y: cumulative(l, n, admitted), color: col, width: w})
	}
	// The leaky bucket's queue depth shares its lane, dashed; in the
	// table and the SVG it follows the other lines, as before.
	for i, l := range sim.Lanes {
		if l.Lane.Spec.Algorithm == algorithms.NameLeakyBucket {
			quota.series = append(quota.series, line{name: string(l.Lane.Spec.Algorithm) + " queued", y: state(l, n, queued), color: AlgorithmColor(l.Lane.Spec.Algorithm), dashed: true})
			quota.lanes[i].series = append(quota.lanes[i].series, len(quota.series)-1)
		}
	}

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
		l.series = append(l.series, line{name: SeriesOffered, y: cumulative(sim.Lanes[0], n, offered), color: ColorReference, dashed: true, ref: true})
	}
	for i, lane := range sim.Lanes {
		name := SpecLabel(lane.Lane.Spec)
		if i < len(names) {
			name = names[i]
		}
		l.add(line{name: name, y: cumulative(lane, n, admitted), color: ClassColor(i)})
	}
	return l.chart(ChartReplicas, "Replicas: local against shared enforcement", caption)
}

// Retry-storm lanes with a fixed name, and the two series of every lane:
// StormSeries(SeriesStormOffered, lane) and StormSeries(SeriesStormAdmitted,
// lane), "offered, full jitter" and "admitted, full jitter".
const (
	StormNoJitter       = "no jitter"
	StormWithJitter     = "with jitter" // a jittered run without a name of its own
	StormFull           = "full jitter"
	StormEqual          = "equal jitter"
	StormDecorrelated   = "decorrelated jitter"
	SeriesStormOffered  = "offered"
	SeriesStormAdmitted = "admitted"
)

// StormSeries is the name of the retry-storm series of what
// (SeriesStormOffered or SeriesStormAdmitted) in lane.
func StormSeries(what, lane string) string { return what + ", " + lane }

// RetryStormChart draws one retry storm run once per way its clients
// retry, each run in a lane of its own, on the same limit and the same
// bins: the requests offered per bin (retries included, dashed) and those
// admitted, in one colour per lane. still, the clients retrying in
// lockstep (no jitter), is the first lane; jittered holds the jittered
// runs as its lanes (one Simulate each, every one at still's bin width),
// the lanes after it in order. names labels the lanes, still's first; a
// lane it leaves out is StormNoJitter (still) or StormWithJitter. Lane i
// is drawn in ClassColor(i), except that the lanes named StormFull,
// StormEqual and StormDecorrelated always take ClassColor(2), (3) and (4),
// so a jitter mode keeps its colour whichever lanes a design leaves out.
func RetryStormChart(still, jittered algorithms.Result, caption string, names ...string) Chart {
	var runs []algorithms.LaneResult
	if len(still.Lanes) > 0 && len(jittered.Lanes) > 0 {
		runs = append(append(runs, still.Lanes[0]), jittered.Lanes...)
	}
	n := 0
	for _, r := range runs {
		n = max(n, len(r.Series))
	}
	l := lines{xName: "time (s)", yName: binLabel(still.Bin), x: binTimes(still, n, false)}
	for i, r := range runs {
		name := StormWithJitter
		switch {
		case i < len(names):
			name = names[i]
		case i == 0:
			name = StormNoJitter
		}
		slot := i
		switch name {
		case StormFull:
			slot = 2
		case StormEqual:
			slot = 3
		case StormDecorrelated:
			slot = 4
		}
		col := ClassColor(slot)
		l.series = append(l.series,
			line{name: StormSeries(SeriesStormOffered, name), y: perBin(r, n, offered), color: col, dashed: true},
			line{name: StormSeries(SeriesStormAdmitted, name), y: perBin(r, n, admitted), color: col})
		l.lanes = append(l.lanes, lane{name: name, series: []int{2 * i, 2*i + 1}})
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
