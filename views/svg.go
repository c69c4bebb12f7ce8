package views

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Theme names the colours of a static SVG chart.
type Theme string

// Themes: light (the default) and dark, with the colours of the embed
// page's stylesheet (static/css/embed.css).
const (
	ThemeLight Theme = "light"
	ThemeDark  Theme = "dark"
)

// svgColors are a theme's colours: text and muted text (tick labels,
// axis names, the caption line) on the background, grid lines, and the
// axis lines.
type svgColors struct {
	Background, Text, Muted, Grid, Axis string
}

// colors returns the theme's colours; "" is ThemeLight.
func (t Theme) colors() (svgColors, error) {
	switch t {
	case "", ThemeLight:
		return svgColors{Background: "#ffffff", Text: "#1f2328", Muted: "#57606a", Grid: "#eaeef2", Axis: "#6e7781"}, nil
	case ThemeDark:
		return svgColors{Background: "#0d1117", Text: "#e6edf3", Muted: "#9198a1", Grid: "#21262d", Axis: "#6e7681"}, nil
	}
	return svgColors{}, fmt.Errorf("svg theme %q: want %q or %q", string(t), ThemeLight, ThemeDark)
}

// seriesPalette is the palette go-echarts writes into every option
// ("color", echarts 5's default palette), in order: a series without its
// own colour (SeriesStyle.Color; the views give every series one) is
// seriesPalette[i % 9] in the interactive chart and in the SVG alike, in
// both themes.
var seriesPalette = [...]string{"#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"}

// SVG sizes: the default, and the range RenderSVG accepts, in pixels.
const (
	DefaultSVGWidth  = 720
	DefaultSVGHeight = 400
	MinSVGSize       = 240
	MaxSVGSize       = 4096
)

// SVGOptions are how RenderSVG draws a chart. The zero value is a light
// 720×400 chart without a caption line.
type SVGOptions struct {
	Theme Theme // "" is ThemeLight
	// Width and Height are the size in pixels, each from MinSVGSize to
	// MaxSVGSize; 0 takes DefaultSVGWidth or DefaultSVGHeight. The legend
	// wraps into rows and takes height from the plot, so charts with many
	// series need room: the designer's charts fit from 480×260 or 320×320
	// up, and a size that leaves less than 40×40 pixels to plot is an error.
	Width, Height int
	// Subtitle is the one-line caption of the policy drawn under the
	// chart, such as "token_bucket rate=5/s burst=10 · pattern burst".
	// A line too long for the width ends in "…"; <desc> keeps it whole.
	Subtitle string
}

// RenderSVG draws c as a standalone SVG document for pages that show
// images but run no script (Markdown renderers, API documentation): the
// title, a legend, a value axis of time in seconds (Table.Columns[0]) and
// a value axis named c.YName, both with 1-2-5 ticks, grid lines, one
// polyline per series styled as c.Series (colour, dashes, width, as in the
// echarts option), and the Subtitle line. It draws c.Table, which holds
// exactly the numbers of the interactive chart; the option is not read.
//
// The document is deterministic: the same Chart and options give the same
// bytes (numbers have fixed decimals, no maps are iterated, no clock is
// read). It references nothing outside itself (no fonts, images, links,
// scripts, style sheets or style attributes: colours are presentation
// attributes), so it renders under a Content-Security-Policy without
// 'unsafe-inline' and inside an <img>. Every text is escaped.
//
// The plot group (data-testid="svg-plot") carries its extents in data
// units (data-xmin, data-xmax, data-ymin, data-ymax) and its rectangle in
// pixels (data-left, data-top, data-width, data-height; bottom = top +
// height). A point (x, y) of the table is drawn at
//
//	x px = left + (x − xmin)/(xmax − xmin)·width
//	y px = bottom − (y − ymin)/(ymax − ymin)·height
//
// rounded to 0.01 px, in the points attribute of the series' polyline
// (data-series is its name). A point with the same y as its neighbours
// and an x between theirs is left out: it lies on the segment joining
// them, so the line looks the same, dashes included (a dash pattern
// follows the path's length, which such a point does not change). Flat
// stretches, common in the designer's series, thus cost two points.
//
// The document starts with an XML declaration; to inline it in HTML, drop
// the first line. RenderSVG fails on an unknown theme, a size out of
// range, a table row of the wrong length, a cell that is not a number
// from -1e12 to 1e12, or a legend that leaves no room to plot.
func RenderSVG(c Chart, o SVGOptions) ([]byte, error) {
	v, err := newSVGView(c, o)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeSVGView(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteSVG writes RenderSVG(c, o) to w. Nothing is written when the chart
// or the options are invalid.
func WriteSVG(w io.Writer, c Chart, o SVGOptions) error {
	b, err := RenderSVG(c, o)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func writeSVGView(w io.Writer, v svgView) error {
	if _, err := io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"); err != nil {
		return err
	}
	if err := svgDocument(v).Render(context.Background(), w); err != nil {
		return fmt.Errorf("svg %s: %w", v.ID, err)
	}
	return nil
}

// svgFont is a generic system font stack: the SVG loads no font.
const svgFont = "system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif"

// Layout, in pixels. Text widths are estimated at charWidth × font size
// per character, a little wider than most sans-serif text, since the
// SVG cannot measure its own text.
const (
	svgPad        = 16
	titleSize     = 16
	legendSize    = 12
	labelSize     = 11
	captionSize   = 12
	legendRow     = 18
	legendSwatch  = 24
	legendGap     = 6  // swatch to label
	legendSpacing = 16 // label to next swatch
	charWidth     = 0.6
	minPlot       = 40 // the smallest plot width and height
	captionRow    = 22 // the caption line under the x axis's name
	laneTopGap    = 6  // between the legend and the first lane's name
	laneLabelRow  = 18 // a lane's name above its plot
	laneGap       = 10 // between a lane's plot and the next lane's name
	minLanePlot   = 36 // the smallest lane plot; less draws one plot
	legendTop     = svgPad + titleSize + 8
)

// svgView is everything svg.templ draws, each number already formatted.
type svgView struct {
	ID, TitleID, DescID   string
	Width, Height, Box    string
	Theme                 string
	Colors                svgColors
	Font                  string
	Title                 svgText
	Desc                  string
	Legend                []svgLegendItem
	XName, YName, Caption svgText
	Grid, Axes            []svgLine
	XLabels, YLabels      []svgText
	LaneLabels            []svgText
	Plots                 []svgPlot
}

type svgText struct {
	X, Y, Anchor, Text string
}

type svgLine struct {
	X1, Y1, X2, Y2 string
}

type svgLegendItem struct {
	Line  svgLine
	Label svgText
	Name  string
	Style svgStroke
}

type svgStroke struct {
	Color, Width, Dash string
}

// svgPlot is one plot rectangle and its lines: the whole chart's, or one
// lane's (Lane is its index into Chart.Lanes, "" without lanes).
type svgPlot struct {
	Lane                     string
	XMin, XMax, YMin, YMax   string
	Left, Top, Width, Height string
	Series                   []svgSeries
}

type svgSeries struct {
	Name   string
	Style  svgStroke
	Points string
}

// svgPoint is a point of a series in data units.
type svgPoint struct{ x, y float64 }

func newSVGView(c Chart, o SVGOptions) (svgView, error) {
	colors, err := o.Theme.colors()
	if err != nil {
		return svgView{}, err
	}
	w, err := svgSize("width", o.Width, DefaultSVGWidth)
	if err != nil {
		return svgView{}, err
	}
	h, err := svgSize("height", o.Height, SVGDefaultHeight(c, o))
	if err != nil {
		return svgView{}, err
	}
	series, err := tableSeries(c)
	if err != nil {
		return svgView{}, err
	}
	theme := o.Theme
	if theme == "" {
		theme = ThemeLight
	}
	id := "svg-" + idSafe(c.ID)
	v := svgView{
		ID: cleanText(c.ID), TitleID: id + "-title", DescID: id + "-desc",
		Width: strconv.Itoa(w), Height: strconv.Itoa(h), Box: "0 0 " + strconv.Itoa(w) + " " + strconv.Itoa(h),
		Theme: string(theme), Colors: colors, Font: svgFont,
	}
	title := cleanText(c.Title)
	v.Title = svgText{X: px(svgPad), Y: px(svgPad + titleSize - 2), Anchor: "start", Text: fitText(title, titleSize, float64(w-2*svgPad))}
	v.Desc = description(title, cleanText(c.Caption), cleanText(o.Subtitle))

	var rows int
	v.Legend, rows = layoutLegend(series, w)
	top := legendTop + rows*legendRow
	avail := float64(w - 2*svgPad)

	// Axes: y name above the plot (on the first lane's label row with
	// lanes), x tick labels, x name and the caption line below it.
	xs, ys := axisExtent(series, func(p svgPoint) float64 { return p.x }), axisExtent(series, func(p svgPoint) float64 { return p.y })
	bottom := h - svgPad
	caption := cleanText(o.Subtitle)
	if caption != "" {
		v.Caption = svgText{X: px(svgPad), Y: px(float64(bottom)), Anchor: "start", Text: fitText(caption, captionSize, avail)}
		bottom -= captionRow
	}
	xNameBase := bottom
	xLabelBase := xNameBase - 18
	plotBottom := xLabelBase - labelSize - 4

	// Lanes, when the chart has them and each gets a plot of at least
	// minLanePlot pixels; else one plot for every line.
	lanes := svgLanes(c, series)
	lanePlot := 0
	if lanes != nil {
		n := len(lanes)
		lanePlot = (plotBottom - top - laneTopGap - n*laneLabelRow - (n-1)*laneGap) / n
		if lanePlot < minLanePlot {
			lanes = nil
		}
	}
	type rect struct{ top, bottom int }
	var rects []rect
	yTarget := 0
	if lanes != nil {
		for g := range lanes {
			t := top + laneTopGap + g*(laneLabelRow+lanePlot+laneGap) + laneLabelRow
			rects = append(rects, rect{t, t + lanePlot})
		}
		yTarget = 2
	} else {
		plotTop := top + 14 + 10 // the y name's row
		rects = []rect{{plotTop, plotBottom}}
		yTarget = max(2, min(10, (plotBottom-plotTop)/50))
	}
	yAxis := niceAxis(ys.lo, ys.hi, yTarget)
	labelW := 0.0
	for _, t := range yAxis.ticks() {
		labelW = max(labelW, textWidth(yAxis.label(t), labelSize))
	}
	left := svgPad + int(math.Ceil(labelW)) + 8
	right := w - svgPad - 12 // room for half the last x label
	if plotH := rects[0].bottom - rects[0].top; right-left < minPlot || plotH < minPlot && lanes == nil {
		return svgView{}, fmt.Errorf("svg %s: a %d×%d chart leaves %d×%d pixels to plot after the legend of %d series and the labels; want at least %d×%d: make it larger",
			v.ID, w, h, max(0, right-left), max(0, plotH), len(series), minPlot, minPlot)
	}
	xAxis := niceAxis(xs.lo, xs.hi, max(2, min(10, (right-left)/80)))
	pw := float64(right - left)
	mapX := func(x float64) float64 { return float64(left) + (x-xAxis.lo)/(xAxis.hi-xAxis.lo)*pw }

	xName := "time (s)"
	if len(c.Table.Columns) > 0 && strings.TrimSpace(c.Table.Columns[0]) != "" {
		xName = cleanText(c.Table.Columns[0])
	}
	v.XName = svgText{X: px(float64(left) + pw/2), Y: px(float64(xNameBase)), Anchor: "middle", Text: fitText(xName, labelSize, avail)}
	yName := cleanText(c.YName)
	if lanes != nil {
		base := float64(rects[0].top - 5)
		v.YName = svgText{X: px(float64(right)), Y: px(base), Anchor: "end", Text: fitText(yName, labelSize, avail/2)}
		for g := range lanes {
			name := ""
			if g < len(c.Lanes) {
				name = cleanText(c.Lanes[g])
			}
			v.LaneLabels = append(v.LaneLabels, svgText{X: px(float64(left)), Y: px(float64(rects[g].top - 5)), Anchor: "start", Text: fitText(name, legendSize, avail/2-8)})
		}
	} else {
		v.YName = svgText{X: px(svgPad), Y: px(float64(top + 14)), Anchor: "start", Text: fitText(yName, labelSize, avail)}
	}
	for _, t := range xAxis.ticks() {
		x := px(mapX(t))
		for _, r := range rects {
			v.Grid = append(v.Grid, svgLine{X1: x, Y1: px(float64(r.top)), X2: x, Y2: px(float64(r.bottom))})
		}
		v.XLabels = append(v.XLabels, svgText{X: x, Y: px(float64(xLabelBase)), Anchor: "middle", Text: xAxis.label(t)})
	}
	for g, r := range rects {
		ph := float64(r.bottom - r.top)
		bottom := r.bottom
		mapY := func(y float64) float64 { return float64(bottom) - (y-yAxis.lo)/(yAxis.hi-yAxis.lo)*ph }
		for _, t := range yAxis.ticks() {
			y := px(mapY(t))
			v.Grid = append(v.Grid, svgLine{X1: px(float64(left)), Y1: y, X2: px(float64(right)), Y2: y})
			v.YLabels = append(v.YLabels, svgText{X: px(float64(left - 6)), Y: px(mapY(t) + 4), Anchor: "end", Text: yAxis.label(t)})
		}
		v.Axes = append(v.Axes,
			svgLine{X1: px(float64(left)), Y1: px(float64(r.bottom)), X2: px(float64(right)), Y2: px(float64(r.bottom))},
			svgLine{X1: px(float64(left)), Y1: px(float64(r.top)), X2: px(float64(left)), Y2: px(float64(r.bottom))})
		plot := svgPlot{
			XMin: exact(xAxis.lo), XMax: exact(xAxis.hi), YMin: exact(yAxis.lo), YMax: exact(yAxis.hi),
			Left: strconv.Itoa(left), Top: strconv.Itoa(r.top), Width: strconv.Itoa(right - left), Height: strconv.Itoa(r.bottom - r.top),
		}
		members := make([]int, len(series))
		for i := range members {
			members[i] = i
		}
		if lanes != nil {
			plot.Lane = strconv.Itoa(g)
			members = lanes[g]
		}
		for _, i := range members {
			s := series[i]
			var b strings.Builder
			for j, p := range dropHorizontalRuns(s.points) {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(px(mapX(p.x)))
				b.WriteByte(',')
				b.WriteString(px(mapY(p.y)))
			}
			style := s.style
			if lanes != nil {
				// A line in a lane of its own needs no nesting width;
				// the interactive chart draws lanes at echarts' default.
				style.Width = 0
			}
			plot.Series = append(plot.Series, svgSeries{Name: s.name, Style: stroke(i, style, 0), Points: b.String()})
		}
		v.Plots = append(v.Plots, plot)
	}
	return v, nil
}

// layoutLegend lays the legend of series out in rows under the title of
// a chart w pixels wide, wrapping when the next item does not fit, and
// returns its items and the number of rows (0 without series).
func layoutLegend(series []namedSeries, w int) ([]svgLegendItem, int) {
	var items []svgLegendItem
	x, row := float64(svgPad), 0
	avail := float64(w - 2*svgPad)
	for i, s := range series {
		label := fitText(s.name, legendSize, avail-legendSwatch-legendGap)
		iw := legendSwatch + legendGap + textWidth(label, legendSize)
		if x > svgPad && x+iw > float64(w-svgPad) {
			x, row = svgPad, row+1
		}
		mid := float64(legendTop + row*legendRow + legendRow/2)
		items = append(items, svgLegendItem{
			Line:  svgLine{X1: px(x), Y1: px(mid), X2: px(x + legendSwatch), Y2: px(mid)},
			Label: svgText{X: px(x + legendSwatch + legendGap), Y: px(mid + 4), Anchor: "start", Text: label},
			Name:  s.name,
			Style: stroke(i, s.style, 3),
		})
		x += iw + legendSpacing
	}
	if len(series) == 0 {
		return nil, 0
	}
	return items, row + 1
}

// svgLanes is, for a chart with lanes (2 to MaxLanes), the series each
// lane draws: its own (SeriesStyle.Lane) and the reference lines
// (LaneEvery), in table order. It is nil for a chart of one plot, or when
// a series names no lane of the chart.
func svgLanes(c Chart, series []namedSeries) [][]int {
	n := len(c.Lanes)
	if n < 2 || n > MaxLanes {
		return nil
	}
	lanes := make([][]int, n)
	for i, s := range series {
		switch l := s.style.Lane; {
		case l == LaneEvery:
			for g := range lanes {
				lanes[g] = append(lanes[g], i)
			}
		case l >= 0 && l < n && i < len(c.Series):
			lanes[l] = append(lanes[l], i)
		default:
			return nil
		}
	}
	return lanes
}

// SVGDefaultHeight is the height in pixels RenderSVG draws c at when
// o.Height is 0: DefaultSVGHeight for a chart of one plot, and for a
// chart with lanes the height that gives each lane a plot of
// svgLanePlot(n) pixels at o's width.
func SVGDefaultHeight(c Chart, o SVGOptions) int {
	n := len(c.Lanes)
	if n < 2 || n > MaxLanes {
		return DefaultSVGHeight
	}
	series, err := tableSeries(c)
	if err != nil || svgLanes(c, series) == nil {
		return DefaultSVGHeight
	}
	w := o.Width
	if w < MinSVGSize || w > MaxSVGSize {
		w = DefaultSVGWidth
	}
	_, rows := layoutLegend(series, w)
	h := legendTop + rows*legendRow + laneTopGap + n*(laneLabelRow+svgLanePlot(n)) + (n-1)*laneGap + labelSize + 4 + 18 + svgPad
	if cleanText(o.Subtitle) != "" {
		h += captionRow
	}
	return min(max(h, MinSVGSize), MaxSVGSize)
}

// svgLanePlot is the plot height in pixels of each of n lanes at the
// default height: fewer lanes get taller plots, as on the page.
func svgLanePlot(n int) int {
	switch {
	case n <= 2:
		return 120
	case n <= 4:
		return 84
	}
	return 64
}

func svgSize(field string, v, def int) (int, error) {
	if v == 0 {
		return def, nil
	}
	if v < MinSVGSize || v > MaxSVGSize {
		return 0, fmt.Errorf("svg %s %d: want 0 (default %d) or %d to %d pixels", field, v, def, MinSVGSize, MaxSVGSize)
	}
	return v, nil
}

// description is the <desc> of the SVG: the caption and the policy line,
// or the title when there is neither.
func description(title, caption, subtitle string) string {
	var parts []string
	for _, s := range []string{caption, subtitle} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return title
	}
	return strings.Join(parts, " — ")
}

// stroke is the i-th series' colour, width and dashes, as echarts draws
// them: its own colour, or the palette's i-th without one; width 0 is echarts' default 2, and "dashed" is dashes of 4 widths
// with gaps of 2. maxWidth > 0 caps the width (legend swatches).
func stroke(i int, st SeriesStyle, maxWidth float64) svgStroke {
	w := float64(st.Width)
	if !(w > 0) || math.IsInf(w, 0) {
		w = 2
	}
	w = min(w, 20)
	if maxWidth > 0 {
		w = min(w, maxWidth)
	}
	color := seriesPalette[i%len(seriesPalette)]
	if isHexColor(st.Color) {
		color = st.Color
	}
	s := svgStroke{Color: color, Width: px(w)}
	if st.Dashed {
		s.Dash = px(4*w) + " " + px(2*w)
	}
	return s
}

// isHexColor reports whether s is "#rrggbb", the only colour form the SVG
// writes, so no other text reaches its attributes.
func isHexColor(s string) bool {
	if len(s) != 7 || s[0] != '#' {
		return false
	}
	for _, r := range s[1:] {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

// maxSVGValue bounds the table's numbers, so axis arithmetic stays finite.
const maxSVGValue = 1e12

// namedSeries is one column of a chart's table with its style.
type namedSeries struct {
	name   string
	style  SeriesStyle
	points []svgPoint
}

// tableSeries reads c's table: x from the first column, one series per
// further column, styled by c.Series when it lists that column.
func tableSeries(c Chart) ([]namedSeries, error) {
	cols := c.Table.Columns
	if len(cols) == 0 {
		return nil, nil
	}
	series := make([]namedSeries, len(cols)-1)
	for j := range series {
		series[j].name = cleanText(cols[j+1])
		if j < len(c.Series) {
			series[j].style = c.Series[j]
		}
		series[j].points = make([]svgPoint, len(c.Table.Rows))
	}
	for i, row := range c.Table.Rows {
		if len(row) != len(cols) {
			return nil, fmt.Errorf("svg %s: table row %d has %d cells, want %d", cleanText(c.ID), i, len(row), len(cols))
		}
		nums := make([]float64, len(row))
		for j, cell := range row {
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || !(math.Abs(v) <= maxSVGValue) {
				return nil, fmt.Errorf("svg %s: table row %d, column %q: %q is not a number from -1e12 to 1e12", cleanText(c.ID), i, cleanText(cols[j]), cleanText(cell))
			}
			nums[j] = v
		}
		for j := range series {
			series[j].points[i] = svgPoint{nums[0], nums[j+1]}
		}
	}
	return series, nil
}

// dropHorizontalRuns drops each point that has the same y as the points
// before and after it and an x between theirs: it lies on the segment
// joining them. Of a horizontal run only the ends and the turns remain.
func dropHorizontalRuns(pts []svgPoint) []svgPoint {
	if len(pts) < 3 {
		return pts
	}
	out := []svgPoint{pts[0]}
	for i := 1; i < len(pts)-1; i++ {
		prev, p, next := out[len(out)-1], pts[i], pts[i+1]
		if prev.y == p.y && p.y == next.y && min(prev.x, next.x) <= p.x && p.x <= max(prev.x, next.x) {
			continue
		}
		out = append(out, p)
	}
	return append(out, pts[len(pts)-1])
}

// extent is the range of some numbers.
type extent struct{ lo, hi float64 }

// axisExtent is the range of f over every point, with 0 included, as
// echarts' value axes include it by default.
func axisExtent(series []namedSeries, f func(svgPoint) float64) extent {
	e := extent{0, 0}
	for _, s := range series {
		for _, p := range s.points {
			e.lo, e.hi = min(e.lo, f(p)), max(e.hi, f(p))
		}
	}
	return e
}

// axis is a value axis from lo to hi with ticks every step.
type axis struct {
	lo, hi, step float64
	decimals     int // of the tick labels
}

// niceAxis widens [lo, hi] to whole multiples of a step of 1, 2 or 5
// times a power of ten, chosen for about target intervals. An empty range
// becomes one step wide.
func niceAxis(lo, hi float64, target int) axis {
	if hi <= lo {
		hi = lo + max(1, math.Abs(lo))
	}
	raw := (hi - lo) / float64(max(target, 1))
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*mag*(1+1e-9) {
			step = m * mag
			break
		}
	}
	a := axis{
		lo:       math.Floor(lo/step+1e-9) * step,
		hi:       math.Ceil(hi/step-1e-9) * step,
		step:     step,
		decimals: max(0, -int(math.Floor(math.Log10(step)+1e-9))),
	}
	// Computed as k·step, so 0.1·3 reads 0.3 and not 0.30000000000000004.
	a.lo, a.hi = roundTo(a.lo, a.decimals), roundTo(a.hi, a.decimals)
	return a
}

// ticks are lo, lo + step, … hi.
func (a axis) ticks() []float64 {
	n := int(math.Round((a.hi - a.lo) / a.step))
	t := make([]float64, n+1)
	for i := range t {
		t[i] = roundTo(a.lo+float64(i)*a.step, a.decimals)
	}
	return t
}

func (a axis) label(v float64) string { return fixed(v, a.decimals) }

func roundTo(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

// fixed formats v with decimals digits after the point, never "-0".
func fixed(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Trim(s, "-0.") == "" {
		return strconv.FormatFloat(0, 'f', decimals, 64)
	}
	return s
}

// px formats a coordinate in pixels with two decimals.
func px(v float64) string { return fixed(v, 2) }

// exact formats an axis extent so that parsing it gives the same float64.
func exact(v float64) string { return fixed(v, -1) }

// textWidth estimates the width of s in pixels at font size size.
func textWidth(s string, size float64) float64 {
	return float64(utf8.RuneCountInString(s)) * charWidth * size
}

// fitText shortens s to fit width pixels at font size size, ending it in
// "…" when cut.
func fitText(s string, size, width float64) string {
	if textWidth(s, size) <= width {
		return s
	}
	n := max(0, int(width/(charWidth*size))-1)
	r := []rune(s)
	return strings.TrimSpace(string(r[:min(n, len(r))])) + "…"
}

// cleanText makes s one line of text that XML can carry: invalid UTF-8 and
// characters XML 1.0 forbids (control characters, U+FFFE, U+FFFF) become
// U+FFFD, and line breaks and tabs become spaces. Escaping <, & and quotes
// is templ's.
func cleanText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case r < 0x20, r == 0xFFFE, r == 0xFFFF, r == utf8.RuneError:
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}

// idSafe keeps letters, digits, '-' and '_' of s for an id attribute.
func idSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
}
