package views

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

const svgNS = "http://www.w3.org/2000/svg"

// designerSVG is every chart the designer draws for one small design,
// built as cmd/web builds them: calc.Size, then the six algorithms on a
// pattern (PatternCharts), the token bucket shared and local on three
// replicas (ReplicaChart), and a retry storm without and with jitter
// (RetryStormChart). sim is the pattern's simulation.
type designerSVG struct {
	charts []Chart
	sim    algorithms.Result
}

func designerSVGCharts(t *testing.T) designerSVG {
	t.Helper()
	// 80 requests/s usable over 10 clients: 8/s with a burst of 80 each,
	// so idle_then_burst's 100 requests are partly rejected.
	res, err := calc.Size(calc.Input{Capacity: 100, Clients: 10, Replicas: 3, Enforcement: calc.Local})
	if err != nil {
		t.Fatal(err)
	}
	traffic := generate(t, algorithms.DefaultPattern(algorithms.PatternIdleThenBurst))
	arrivals := traffic.Arrivals
	last := arrivals[len(arrivals)-1].At
	until := min(last+max(2*time.Second, last/4), algorithms.MaxWindow)
	var lanes []algorithms.Lane
	for _, a := range res.Algorithms {
		lanes = append(lanes, algorithms.Lane{Spec: a.Spec()})
	}
	sim := simulate(t, algorithms.Simulation{Lanes: lanes, Traffic: traffic, Until: until})
	tb := res.Spec(algorithms.NameTokenBucket)
	charts := PatternCharts(sim, arrivals[0].Key, IdealLine{Rate: tb.Rate, Burst: float64(tb.Burst), Keys: 1})

	local := algorithms.Replicas{Count: 3, Balance: algorithms.RoundRobin}
	replicaLanes := []algorithms.Lane{{Spec: tb}, {Spec: tb, Replicas: local}}
	names := []string{"shared", "local ×3, full limit each"}
	if res.PerReplica != nil {
		replicaLanes = append(replicaLanes, algorithms.Lane{Spec: res.PerReplica.Spec(algorithms.NameTokenBucket), Replicas: local})
		names = append(names, "local ×3, per-replica split")
	}
	replicas := simulate(t, algorithms.Simulation{Lanes: replicaLanes, Traffic: traffic, Until: until})
	charts = append(charts, ReplicaChart(replicas, names, "Requests admitted so far, shared and local."))

	storm := algorithms.DefaultPattern(algorithms.PatternRetryStorm)
	storm.Clients = int(min(max(2*tb.Burst, 100), 10_000))
	storm.Jitter = calc.DefaultRetryJitter
	jittered := simulate(t, algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: tb}}, Traffic: generate(t, storm)})
	storm.Jitter = 0
	still := simulate(t, algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: tb}}, Traffic: generate(t, storm), Bin: jittered.Bin})
	charts = append(charts, RetryStormChart(still, jittered, "A retry storm."))

	if len(charts) != 6 {
		t.Fatalf("got %d charts, want the designer's 6", len(charts))
	}
	return designerSVG{charts: charts, sim: sim}
}

var svgThemes = []Theme{ThemeLight, ThemeDark}

const svgSubtitle = "token_bucket rate=8/s burst=80 · pattern idle_then_burst"

func renderSVG(t *testing.T, c Chart, o SVGOptions) []byte {
	t.Helper()
	b, err := RenderSVG(c, o)
	if err != nil {
		t.Fatalf("%s: %v", c.ID, err)
	}
	return b
}

// parsedSVG is what the tests read back from an SVG document.
type parsedSVG struct {
	root     xml.StartElement
	elements []xml.StartElement   // every element, in document order
	texts    map[string]string    // text of each element with a data-testid
	plots    []map[string]float64 // each plot group's data-* numbers, in order
	series   []parsedSeries
	legend   []string
	lanes    []string // the lanes' names, top to bottom
	xLabels  []string
	yLabels  []string
	// xLabelY is the y of every x tick label, in pixels.
	xLabelY []float64
}

type parsedSeries struct {
	name, stroke, width, dash string
	plot                      int        // index into parsedSVG.plots
	points                    []svgPoint // in pixels
}

func attr(e xml.StartElement, name string) (string, bool) {
	for _, a := range e.Attr {
		if a.Name.Local == name && (a.Name.Space == "" || a.Name.Space == svgNS) {
			return a.Value, true
		}
	}
	return "", false
}

// parseSVG decodes every token of b, failing on the first XML error.
func parseSVG(t *testing.T, b []byte) parsedSVG {
	t.Helper()
	p := parsedSVG{texts: map[string]string{}}
	d := xml.NewDecoder(bytes.NewReader(b))
	var stack []xml.StartElement
	var text strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, b)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			tok = tok.Copy()
			if len(p.elements) == 0 {
				p.root = tok
			}
			p.elements = append(p.elements, tok)
			stack = append(stack, tok)
			text.Reset()
			switch tid, _ := attr(tok, "data-testid"); {
			case tid == "svg-plot":
				plot := map[string]float64{}
				for _, a := range tok.Attr {
					if k, ok := strings.CutPrefix(a.Name.Local, "data-"); ok && k != "testid" {
						v, err := strconv.ParseFloat(a.Value, 64)
						if err != nil {
							t.Fatalf("plot %s=%q: %v", a.Name.Local, a.Value, err)
						}
						plot[k] = v
					}
				}
				p.plots = append(p.plots, plot)
			case tok.Name.Local == "polyline":
				s := parsedSeries{plot: len(p.plots) - 1}
				s.name, _ = attr(tok, "data-series")
				s.stroke, _ = attr(tok, "stroke")
				s.width, _ = attr(tok, "stroke-width")
				s.dash, _ = attr(tok, "stroke-dasharray")
				pts, _ := attr(tok, "points")
				for _, f := range strings.Fields(pts) {
					xs, ys, ok := strings.Cut(f, ",")
					x, errX := strconv.ParseFloat(xs, 64)
					y, errY := strconv.ParseFloat(ys, 64)
					if !ok || errX != nil || errY != nil {
						t.Fatalf("series %s: point %q is not x,y", s.name, f)
					}
					s.points = append(s.points, svgPoint{x, y})
				}
				p.series = append(p.series, s)
			}
		case xml.CharData:
			text.Write(tok)
		case xml.EndElement:
			e := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if tid, ok := attr(e, "data-testid"); ok && e.Name.Local == "text" {
				p.texts[tid] = text.String()
			}
			if e.Name.Local == "title" || e.Name.Local == "desc" {
				p.texts[e.Name.Local] = text.String()
			}
			if _, ok := attr(e, "data-legend"); ok {
				p.legend = append(p.legend, text.String())
			}
			if _, ok := attr(e, "data-lane"); ok && e.Name.Local == "text" {
				p.lanes = append(p.lanes, text.String())
			}
			switch ax, _ := attr(e, "data-axis"); ax {
			case "x":
				p.xLabels = append(p.xLabels, text.String())
				y, _ := attr(e, "y")
				v, err := strconv.ParseFloat(y, 64)
				if err != nil {
					t.Fatalf("x label y %q: %v", y, err)
				}
				p.xLabelY = append(p.xLabelY, v)
			case "y":
				p.yLabels = append(p.yLabels, text.String())
			}
		}
	}
	if p.root.Name.Local != "svg" || p.root.Name.Space != svgNS {
		t.Fatalf("root element %v, want svg in %s", p.root.Name, svgNS)
	}
	return p
}

// TestSVGParsesForEveryDesignerChart renders every chart the designer
// draws in both themes and decodes every token as XML; each has the
// accessibility parts, one polyline and one legend item per series, the
// axis names and the caption line.
func TestSVGParsesForEveryDesignerChart(t *testing.T) {
	d := designerSVGCharts(t)
	for _, c := range d.charts {
		for _, theme := range svgThemes {
			t.Run(c.ID+"/"+string(theme), func(t *testing.T) {
				p := parseSVG(t, renderSVG(t, c, SVGOptions{Theme: theme, Subtitle: svgSubtitle}))
				for _, a := range []string{"viewBox", "width", "height", "role"} {
					if _, ok := attr(p.root, a); !ok {
						t.Errorf("svg has no %s", a)
					}
				}
				// One plot of 720×400, or lanes each at least 60 px tall,
				// stacked.
				wantH := 400
				if c.Lanes != nil {
					wantH = SVGDefaultHeight(c, SVGOptions{Subtitle: svgSubtitle})
					if len(p.plots) != len(c.Lanes) {
						t.Fatalf("%d plots for %d lanes", len(p.plots), len(c.Lanes))
					}
					for g, pl := range p.plots {
						if pl["height"] < 60 || pl["lane"] != float64(g) {
							t.Errorf("plot %d: lane %v, %v px tall; want lane %d at least 60 px", g, pl["lane"], pl["height"], g)
						}
					}
				}
				if got, _ := attr(p.root, "viewBox"); got != fmt.Sprintf("0 0 720 %d", wantH) {
					t.Errorf("viewBox %q, want 720×%d", got, wantH)
				}
				if got, _ := attr(p.root, "role"); got != "img" {
					t.Errorf("role %q, want img", got)
				}
				if p.elements[1].Name.Local != "title" || p.elements[2].Name.Local != "desc" {
					t.Errorf("first children %s, %s; want title and desc", p.elements[1].Name.Local, p.elements[2].Name.Local)
				}
				for key, want := range map[string]string{
					"title": c.Title, "svg-title": c.Title, "svg-x-name": "time (s)", "svg-y-name": c.YName, "svg-caption": svgSubtitle,
				} {
					if p.texts[key] != want {
						t.Errorf("%s: %q, want %q", key, p.texts[key], want)
					}
				}
				if c.YName == "" {
					t.Error("chart has no YName")
				}
				if !strings.Contains(p.texts["desc"], c.Caption) || !strings.Contains(p.texts["desc"], svgSubtitle) {
					t.Errorf("desc %q lacks the caption or the subtitle", p.texts["desc"])
				}
				names := c.Table.Columns[1:]
				if len(p.legend) != len(names) {
					t.Fatalf("%d legend items for %d series", len(p.legend), len(names))
				}
				for j := range names {
					if p.legend[j] != names[j] {
						t.Errorf("legend %d: %q, want %q", j, p.legend[j], names[j])
					}
				}
				// Each plot draws its lane's own lines and the reference
				// lines, in table order; one plot draws them all.
				for g := range p.plots {
					var want, got []string
					for j, name := range names {
						if c.Lanes == nil || c.Series[j].Lane == g || c.Series[j].Lane == LaneEvery {
							want = append(want, name)
						}
					}
					for _, s := range p.series {
						if s.plot == g {
							got = append(got, s.name)
						}
					}
					if !slices.Equal(got, want) {
						t.Errorf("plot %d draws %q, want %q", g, got, want)
					}
				}
				if c.Lanes != nil && !slices.Equal(p.lanes, c.Lanes) {
					t.Errorf("lane names %q, want %q", p.lanes, c.Lanes)
				}
				if len(p.xLabels) < 3 || len(p.yLabels) < 3 {
					t.Errorf("tick labels x %q, y %q; want at least 3 each", p.xLabels, p.yLabels)
				}
				// The smaller sizes SVGOptions promises for the designer's charts.
				for _, size := range [][2]int{{480, 260}, {320, 320}, {MaxSVGSize, MaxSVGSize}} {
					o := SVGOptions{Theme: theme, Width: size[0], Height: size[1], Subtitle: svgSubtitle}
					p := parseSVG(t, renderSVG(t, c, o))
					if got, _ := attr(p.root, "viewBox"); got != fmt.Sprintf("0 0 %d %d", size[0], size[1]) {
						t.Errorf("viewBox %q, want %v", got, size)
					}
					if got, _ := attr(p.root, "width"); got != strconv.Itoa(size[0]) {
						t.Errorf("width %q, want %d", got, size[0])
					}
				}
			})
		}
	}
}

// svgScale is the plot group's mapping, read from its data-* attributes.
type svgScale struct {
	xmin, xmax, ymin, ymax, left, top, width, height float64
}

// scaleOf is the scale of p's only plot.
func scaleOf(t *testing.T, p parsedSVG) svgScale {
	t.Helper()
	if len(p.plots) != 1 {
		t.Fatalf("%d plot groups, want 1", len(p.plots))
	}
	return plotScale(t, p, 0)
}

// plotScale is the scale of p's i-th plot group.
func plotScale(t *testing.T, p parsedSVG, i int) svgScale {
	t.Helper()
	plot := p.plots[i]
	for _, k := range []string{"xmin", "xmax", "ymin", "ymax", "left", "top", "width", "height"} {
		if _, ok := plot[k]; !ok {
			t.Fatalf("plot group %d has no data-%s", i, k)
		}
	}
	s := svgScale{plot["xmin"], plot["xmax"], plot["ymin"], plot["ymax"], plot["left"], plot["top"], plot["width"], plot["height"]}
	if !(s.xmax > s.xmin && s.ymax > s.ymin && s.width > 0 && s.height > 0) {
		t.Fatalf("degenerate plot %+v", s)
	}
	return s
}

// data inverts the documented mapping: x = xmin + (px − left)/width ·
// (xmax − xmin), y = ymin + (bottom − py)/height · (ymax − ymin).
func (s svgScale) data(p svgPoint) svgPoint {
	return svgPoint{
		x: s.xmin + (p.x-s.left)/s.width*(s.xmax-s.xmin),
		y: s.ymin + (s.top+s.height-p.y)/s.height*(s.ymax-s.ymin),
	}
}

// tolerance is 0.01 px in data units: coordinates are rounded to 0.01 px,
// so a point is drawn within 0.005 px of its place, far inside the half
// pixel an eye could tell. (Half a pixel would be too loose to match
// vertices to points: 5000 bins are 0.13 px apart.)
func (s svgScale) tolerance() (tx, ty float64) {
	return 0.01 * (s.xmax - s.xmin) / s.width, 0.01 * (s.ymax - s.ymin) / s.height
}

// checkDrawn holds that the polyline drawn (in data units) passes through
// every point of want in order: each point is a vertex, or was dropped
// from a horizontal run and lies on the horizontal segment between the
// vertices around it; and there is no other vertex.
func checkDrawn(t *testing.T, name string, drawn, want []svgPoint, tx, ty float64) {
	t.Helper()
	near := func(a, b svgPoint) bool { return math.Abs(a.x-b.x) <= tx && math.Abs(a.y-b.y) <= ty }
	k := 0
	for i, w := range want {
		if k < len(drawn) && near(drawn[k], w) {
			k++
			continue
		}
		if k == 0 || k == len(drawn) {
			t.Fatalf("%s: point %d (%g, %g) is not drawn (next vertex %d of %d)", name, i, w.x, w.y, k, len(drawn))
		}
		a, b := drawn[k-1], drawn[k]
		if math.Abs(a.y-w.y) > ty || math.Abs(b.y-w.y) > ty || w.x < a.x-tx || w.x > b.x+tx {
			t.Fatalf("%s: point %d (%g, %g) is neither a vertex nor on the horizontal segment (%g, %g)–(%g, %g)", name, i, w.x, w.y, a.x, a.y, b.x, b.y)
		}
	}
	if k != len(drawn) {
		t.Fatalf("%s: %d vertices, but only %d match the data; vertex %d is (%g, %g)", name, len(drawn), k, k, drawn[k].x, drawn[k].y)
	}
}

func tablePoints(t *testing.T, c Chart, col int) []svgPoint {
	t.Helper()
	pts := make([]svgPoint, len(c.Table.Rows))
	for i, row := range c.Table.Rows {
		x, errX := strconv.ParseFloat(row[0], 64)
		y, errY := strconv.ParseFloat(row[col], 64)
		if errX != nil || errY != nil {
			t.Fatalf("%s row %d: %q", c.ID, i, row)
		}
		pts[i] = svgPoint{x, y}
	}
	return pts
}

func inData(s svgScale, pts []svgPoint) []svgPoint {
	out := make([]svgPoint, len(pts))
	for i, p := range pts {
		out[i] = s.data(p)
	}
	return out
}

// TestSVGPointsAreTheSimulation reads each polyline back through the
// plot's extents and checks it passes through every number of the
// chart's table, within 0.01 px; then checks the token bucket's
// admitted line against a separate run of the simulation itself, so the
// test does not only compare the renderer with the table.
func TestSVGPointsAreTheSimulation(t *testing.T) {
	d := designerSVGCharts(t)
	rows, vertices := 0, 0
	for _, c := range d.charts {
		p := parseSVG(t, renderSVG(t, c, SVGOptions{}))
		for _, ps := range p.series {
			s := plotScale(t, p, ps.plot)
			tx, ty := s.tolerance()
			want := tablePoints(t, c, slices.Index(c.Table.Columns, ps.name))
			checkDrawn(t, c.ID+"/"+ps.name, inData(s, ps.points), want, tx, ty)
			rows += len(want)
			vertices += len(ps.points)
			for _, pt := range ps.points {
				if pt.x < s.left-0.01 || pt.x > s.left+s.width+0.01 || pt.y < s.top-0.01 || pt.y > s.top+s.height+0.01 {
					t.Fatalf("%s/%s: point (%g, %g) px outside the plot %+v", c.ID, ps.name, pt.x, pt.y, s)
				}
			}
		}
	}
	if vertices >= rows {
		t.Errorf("%d vertices for %d points: horizontal runs were not shortened", vertices, rows)
	}
	t.Logf("%d vertices draw %d points", vertices, rows)

	// Against the simulation: admitted per bin of the token bucket's lane,
	// at each bin's start, from an independent run.
	sim := d.sim
	adm := chartByID(t, d.charts, ChartAdmitted)
	p := parseSVG(t, renderSVG(t, adm, SVGOptions{Theme: ThemeDark}))
	for li, lane := range sim.Lanes {
		name := string(lane.Lane.Spec.Algorithm)
		var want []svgPoint
		for i, b := range lane.Series {
			want = append(want, svgPoint{(time.Duration(i) * sim.Bin).Seconds(), float64(b.Admitted)})
		}
		var drawn *parsedSeries
		for k := range p.series {
			if p.series[k].name == name {
				drawn = &p.series[k]
			}
		}
		if drawn == nil {
			t.Fatalf("no polyline for lane %d, %s", li, name)
		}
		s := plotScale(t, p, drawn.plot)
		tx, ty := s.tolerance()
		checkDrawn(t, "simulation/"+name, inData(s, drawn.points), want, tx, ty)
	}
	if sim.Lanes[0].Summary.Rejected == 0 {
		t.Fatal("the design should reject part of the burst, so the lines differ")
	}
	// And the cumulative line ends at the lane's total.
	cum := chartByID(t, d.charts, ChartCumulative)
	p = parseSVG(t, renderSVG(t, cum, SVGOptions{}))
	for _, ps := range p.series {
		if ps.name != string(algorithms.NameTokenBucket) {
			continue
		}
		s := plotScale(t, p, ps.plot)
		_, ty := s.tolerance()
		end := s.data(ps.points[len(ps.points)-1])
		if want := float64(sim.Lanes[0].Summary.Admitted); math.Abs(end.y-want) > ty {
			t.Errorf("cumulative token_bucket ends at %g, want the %g admitted", end.y, want)
		}
	}
}

// TestSVGStylesFollowTheOption checks each polyline's colour, width and
// dashes against the echarts option of the same chart, so the SVG and
// the interactive chart draw series alike.
func TestSVGStylesFollowTheOption(t *testing.T) {
	d := designerSVGCharts(t)
	for _, c := range d.charts {
		var o struct {
			Color  []string
			Series []struct {
				Name      string
				LineStyle struct {
					Width float64
					Type  string
					Color string
				} `json:"lineStyle"`
			}
		}
		if err := json.Unmarshal([]byte(c.Option), &o); err != nil {
			t.Fatal(err)
		}
		p := parseSVG(t, renderSVG(t, c, SVGOptions{}))
		// Each polyline is styled as the option's series of its name
		// (with lanes, a reference line repeats in every lane of both).
		if len(p.series) != len(o.Series) {
			t.Fatalf("%s: %d polylines, %d option series", c.ID, len(p.series), len(o.Series))
		}
		for i, ps := range p.series {
			k := slices.IndexFunc(o.Series, func(s struct {
				Name      string
				LineStyle struct {
					Width float64
					Type  string
					Color string
				} `json:"lineStyle"`
			}) bool {
				return s.Name == ps.name
			})
			if k < 0 {
				t.Fatalf("%s: polyline %q is no series of the option", c.ID, ps.name)
			}
			os := o.Series[k]
			w := os.LineStyle.Width
			if w == 0 {
				w = 2 // echarts' default line width
			}
			wantDash := ""
			if os.LineStyle.Type == "dashed" {
				wantDash = fmt.Sprintf("%.2f %.2f", 4*w, 2*w) // echarts: [4w, 2w]
			}
			if os.LineStyle.Color == "" {
				t.Errorf("%s series %d (%q): no colour of its own in the option", c.ID, k, os.Name)
			}
			if ps.stroke != os.LineStyle.Color || ps.width != fmt.Sprintf("%.2f", w) || ps.dash != wantDash {
				t.Errorf("%s polyline %d: drawn %q %s width %s dash %q; option %q %s width %g dash %q",
					c.ID, i, ps.name, ps.stroke, ps.width, ps.dash, os.Name, os.LineStyle.Color, w, wantDash)
			}
		}
	}
}

// TestSVGIsDeterministic renders each chart twice, the second time in
// another goroutine, and wants the same bytes.
func TestSVGIsDeterministic(t *testing.T) {
	d := designerSVGCharts(t)
	for _, c := range d.charts {
		for _, theme := range svgThemes {
			o := SVGOptions{Theme: theme, Width: 800, Height: 450, Subtitle: svgSubtitle}
			first := renderSVG(t, c, o)
			done := make(chan []byte)
			go func() {
				b, _ := RenderSVG(c, o)
				done <- b
			}()
			if second := <-done; !bytes.Equal(first, second) {
				t.Errorf("%s %s: two renders differ", c.ID, theme)
			}
			var buf bytes.Buffer
			if err := WriteSVG(&buf, c, o); err != nil || !bytes.Equal(first, buf.Bytes()) {
				t.Errorf("%s %s: WriteSVG differs from RenderSVG (err %v)", c.ID, theme, err)
			}
		}
	}
}

// TestSVGReferencesNothingOutside holds what an SVG may contain. It is
// shown in an <img> by Markdown renderers (which load nothing from inside
// it and often strip what they do not know) and served by ratelab under
// a Content-Security-Policy without 'unsafe-inline' (style-src 'self',
// script-src 'self'). So it has only the drawing elements it needs, no
// script, image, foreignObject, use, a or style element, no style or
// event handler (on*) attribute, no href of any kind, no url(…)
// reference, no DOCTYPE or entity, and no http(s) URL but the SVG
// namespace.
func TestSVGReferencesNothingOutside(t *testing.T) {
	allowed := map[string]bool{"svg": true, "title": true, "desc": true, "rect": true, "g": true, "line": true, "polyline": true, "text": true}
	d := designerSVGCharts(t)
	for _, c := range d.charts {
		for _, theme := range svgThemes {
			b := renderSVG(t, c, SVGOptions{Theme: theme, Subtitle: svgSubtitle})
			s := string(b)
			if n, ns := strings.Count(s, "http://"), strings.Count(s, svgNS); n != ns || ns != 1 {
				t.Errorf("%s: %d http:// URLs, %d of them the SVG namespace; want only the namespace, once", c.ID, n, ns)
			}
			for _, bad := range []string{"https://", "<script", "<image", "<foreignObject", "<use", "<a ", "<style", " style=", "href", "url(", "<!DOCTYPE", "<!ENTITY", "@import", "javascript:"} {
				if strings.Contains(s, bad) {
					t.Errorf("%s %s: contains %q", c.ID, theme, bad)
				}
			}
			for _, e := range parseSVG(t, b).elements {
				if !allowed[e.Name.Local] || e.Name.Space != svgNS {
					t.Errorf("%s: element %v is not allowed", c.ID, e.Name)
				}
				for _, a := range e.Attr {
					n := strings.ToLower(a.Name.Local)
					if n == "style" || strings.HasPrefix(n, "on") || strings.Contains(n, "href") || (a.Name.Space != "" && a.Name.Space != "xmlns") {
						t.Errorf("%s: <%s %s:%s> is not allowed", c.ID, e.Name.Local, a.Name.Space, a.Name.Local)
					}
				}
			}
		}
	}
}

// TestSVGEscapesText gives every text of a chart markup, quotes,
// ampersands and control characters, and wants them back as text.
func TestSVGEscapesText(t *testing.T) {
	evil := `</title><script>alert("x")</script> & 'q' <![CDATA[x]]>`
	c := Chart{
		ID:      `chart"><script>alert(1)</script>`,
		Title:   "Title " + evil,
		Caption: "Caption " + evil,
		YName:   "<b>requests</b> & more",
		Table: Table{
			Columns: []string{"time (s) <i>", `a"><script>x</script>`, "b & c\x01\nnext"},
			Rows:    [][]string{{"0", "1", "2"}, {"1", "3", "2"}},
		},
		Series: []SeriesStyle{{Name: "a", Dashed: true}, {Name: "b", Width: 3}},
	}
	sub := `policy <img src=x onerror=alert(1)> & "co"`
	b := renderSVG(t, c, SVGOptions{Subtitle: sub})
	if bytes.Contains(b, []byte("<script")) || bytes.Contains(b, []byte("<img")) || bytes.Contains(b, []byte("<b>")) {
		t.Fatalf("markup from the chart reached the SVG:\n%s", b)
	}
	p := parseSVG(t, b)
	for _, e := range p.elements {
		switch e.Name.Local {
		case "script", "img", "b", "i":
			t.Errorf("element %s from the chart's text", e.Name.Local)
		}
	}
	for key, want := range map[string]string{
		"title": c.Title, "svg-title": c.Title, "svg-y-name": c.YName, "svg-x-name": "time (s) <i>", "svg-caption": sub,
		"desc": "Caption " + evil + " — " + sub,
	} {
		if p.texts[key] != want {
			t.Errorf("%s: %q, want %q", key, p.texts[key], want)
		}
	}
	wantNames := []string{`a"><script>x</script>`, "b & c\uFFFD next"}
	for i, s := range p.series {
		if s.name != wantNames[i] || p.legend[i] != wantNames[i] {
			t.Errorf("series %d: polyline %q, legend %q, want %q", i, s.name, p.legend[i], wantNames[i])
		}
	}
	if got, _ := attr(p.root, "data-chart"); got != cleanText(c.ID) {
		t.Errorf("data-chart %q, want %q", got, c.ID)
	}
}

// relativeLuminance is WCAG 2's relative luminance of a #rrggbb colour.
func relativeLuminance(t *testing.T, hex string) float64 {
	t.Helper()
	if len(hex) != 7 || hex[0] != '#' {
		t.Fatalf("colour %q is not #rrggbb", hex)
	}
	var l float64
	for i, w := range []float64{0.2126, 0.7152, 0.0722} {
		v, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		if err != nil {
			t.Fatalf("colour %q: %v", hex, err)
		}
		c := float64(v) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		l += w * c
	}
	return l
}

// contrast is WCAG 2's contrast ratio, (L1 + 0.05) / (L2 + 0.05).
func contrast(t *testing.T, a, b string) float64 {
	la, lb := relativeLuminance(t, a), relativeLuminance(t, b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// TestSVGThemeContrast wants every text colour at least 4.5:1 on the
// background (WCAG 1.4.3, normal text) and the axis lines at least 3:1
// (WCAG 1.4.11, graphical objects), in both themes.
func TestSVGThemeContrast(t *testing.T) {
	if got := contrast(t, "#000000", "#ffffff"); math.Abs(got-21) > 1e-9 {
		t.Fatalf("black on white: %g, want 21", got)
	}
	if got := contrast(t, "#777777", "#ffffff"); got >= 4.5 {
		t.Fatalf("#777 on white: %g, want just under 4.5", got)
	}
	for _, theme := range svgThemes {
		c, err := theme.colors()
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name, color string
			min         float64
		}{{"text", c.Text, 4.5}, {"muted text", c.Muted, 4.5}, {"axis", c.Axis, 3}} {
			if got := contrast(t, tt.color, c.Background); got < tt.min {
				t.Errorf("%s: %s %s on %s: contrast %.2f, want at least %g", theme, tt.name, tt.color, c.Background, got, tt.min)
			}
		}
	}
}

// TestSVGTheColoursInTheDocument checks that the theme's colours are the
// ones drawn.
func TestSVGTheColoursInTheDocument(t *testing.T) {
	c := chartByID(t, designerSVGCharts(t).charts, ChartRejected)
	for _, theme := range svgThemes {
		colors, _ := theme.colors()
		p := parseSVG(t, renderSVG(t, c, SVGOptions{Theme: theme}))
		if got, _ := attr(p.elements[3], "fill"); p.elements[3].Name.Local != "rect" || got != colors.Background {
			t.Errorf("%s: background %s fill %q, want a rect of %s", theme, p.elements[3].Name.Local, got, colors.Background)
		}
		if got, _ := attr(p.root, "data-theme"); got != string(theme) {
			t.Errorf("data-theme %q, want %q", got, theme)
		}
	}
}

func TestNiceAxis(t *testing.T) {
	tests := []struct {
		lo, hi     float64
		target     int
		want       axis
		wantLabels string
	}{
		{0, 40.5, 5, axis{0, 50, 10, 0}, "0 10 20 30 40 50"},
		{0, 20, 4, axis{0, 20, 5, 0}, "0 5 10 15 20"},
		{0, 0.7, 4, axis{0, 0.8, 0.2, 1}, "0.0 0.2 0.4 0.6 0.8"},
		{0, 0, 5, axis{0, 1, 0.2, 1}, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{-3, 7, 5, axis{-4, 8, 2, 0}, "-4 -2 0 2 4 6 8"},
		{0, 1234, 5, axis{0, 1500, 500, 0}, "0 500 1000 1500"},
		{0, 0.003, 3, axis{0, 0.003, 0.001, 3}, "0.000 0.001 0.002 0.003"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.lo, tt.hi, tt.target), func(t *testing.T) {
			got := niceAxis(tt.lo, tt.hi, tt.target)
			if math.Abs(got.lo-tt.want.lo) > 1e-12 || math.Abs(got.hi-tt.want.hi) > 1e-12 || math.Abs(got.step-tt.want.step) > 1e-12 || got.decimals != tt.want.decimals {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			var labels []string
			for _, v := range got.ticks() {
				labels = append(labels, got.label(v))
			}
			if strings.Join(labels, " ") != tt.wantLabels {
				t.Errorf("labels %q, want %q", labels, tt.wantLabels)
			}
		})
	}
}

func TestDropHorizontalRuns(t *testing.T) {
	pts := []svgPoint{{0, 0}, {1, 0}, {2, 0}, {3, 5}, {4, 5}, {5, 5}, {6, 5}, {7, 1}, {8, 1}, {7, 1}, {6, 1}}
	want := []svgPoint{{0, 0}, {2, 0}, {3, 5}, {6, 5}, {7, 1}, {8, 1}, {6, 1}}
	if got := dropHorizontalRuns(pts); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v (x turning back on a run keeps the turn)", got, want)
	}
	if got := dropHorizontalRuns(pts[:2]); len(got) != 2 {
		t.Errorf("two points: got %v", got)
	}
}

// TestSVGLargeSeries draws 5000 bins: every point is still there after
// shortening the flat stretches, and the size stays bounded.
func TestSVGLargeSeries(t *testing.T) {
	const n = 5000
	c := Chart{ID: "big", Title: "big", YName: "requests", Table: Table{Columns: []string{"time (s)", "steps", "saw"}}}
	for i := range n {
		steps := float64(i / 500 * 10) // flat for 500 bins at a time
		c.Table.Rows = append(c.Table.Rows, []string{format(round3(float64(i) * 0.01)), format(steps), format(float64(i % 7))})
	}
	b := renderSVG(t, c, SVGOptions{Theme: ThemeDark})
	p := parseSVG(t, b)
	s := scaleOf(t, p)
	tx, ty := s.tolerance()
	for j, ps := range p.series {
		checkDrawn(t, ps.name, inData(s, ps.points), tablePoints(t, c, j+1), tx, ty)
	}
	if got := len(p.series[0].points); got != 20 {
		t.Errorf("steps: %d vertices, want 2 per flat stretch of 10, 20", got)
	}
	if got := len(p.series[1].points); got != n {
		t.Errorf("saw: %d vertices, want all %d", got, n)
	}
	if len(b) > 200_000 {
		t.Errorf("%d bytes for %d points", len(b), 2*n)
	}
}

func TestRenderSVGErrors(t *testing.T) {
	ok := Chart{ID: "c", Title: "t", Table: Table{Columns: []string{"time (s)", "a"}, Rows: [][]string{{"0", "1"}}}}
	many := ok
	many.Table = Table{Columns: []string{"time (s)"}}
	for i := range 60 {
		many.Table.Columns = append(many.Table.Columns, fmt.Sprintf("a rather long series name number %d", i))
	}
	tests := []struct {
		name    string
		c       Chart
		o       SVGOptions
		wantErr string
	}{
		{"theme", ok, SVGOptions{Theme: "blue"}, `svg theme "blue": want "light" or "dark"`},
		{"width", ok, SVGOptions{Width: 100}, "svg width 100: want 0 (default 720) or 240 to 4096 pixels"},
		{"height", ok, SVGOptions{Height: 5000}, "svg height 5000: want 0 (default 400) or 240 to 4096 pixels"},
		{"cell", Chart{ID: "c", Table: Table{Columns: []string{"x", "a"}, Rows: [][]string{{"0", "NaN"}}}}, SVGOptions{}, `svg c: table row 0, column "a": "NaN" is not a number from -1e12 to 1e12`},
		{"short row", Chart{ID: "c", Table: Table{Columns: []string{"x", "a"}, Rows: [][]string{{"0"}}}}, SVGOptions{}, "svg c: table row 0 has 1 cells, want 2"},
		{"legend", many, SVGOptions{}, "svg c: a 720×400 chart leaves"},
		{"fine", ok, SVGOptions{Theme: ThemeDark, Width: 240, Height: 240}, ""},
		{"empty", Chart{}, SVGOptions{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := RenderSVG(tt.c, tt.o)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				parseSVG(t, b)
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if b != nil {
				t.Errorf("%d bytes with an error", len(b))
			}
		})
	}
}

func ExampleRenderSVG() {
	c := Chart{
		ID: "chart-example", Title: "Admitted", YName: "requests per 1 s",
		Table:  Table{Columns: []string{"time (s)", "token_bucket"}, Rows: [][]string{{"0", "10"}, {"1", "5"}, {"2", "5"}, {"3", "5"}}},
		Series: []SeriesStyle{{Name: "token_bucket", Width: 2}},
	}
	b, err := RenderSVG(c, SVGOptions{Theme: ThemeDark, Subtitle: "token_bucket rate=5/s burst=10 · pattern burst"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The plot spans x 0–3 s over 654 px from left 38, and y 0–10 over 247 px
	// up from bottom 329: (1 s, 5) is at 38 + 1/3·654 = 256 and
	// 329 − 5/10·247 = 205.5. The point (2, 5) lies between (1, 5) and (3, 5)
	// and is left out.
	s := string(b)
	i := strings.Index(s, "<polyline")
	fmt.Println(s[i : i+strings.Index(s[i:], ">")+1])
	// Output:
	// <polyline data-series="token_bucket" points="38.00,82.00 256.00,205.50 692.00,205.50" stroke="#5470c6" stroke-width="2.00">
}

// TestSVGLanesShareAxes: a chart with lanes draws one plot per lane, top
// to bottom without overlap, all with the same data extents, left edge
// and width (shared axes, as on the page); the x tick labels once, under
// the last lane; and, at a height that leaves a lane less than
// minLanePlot pixels, one plot instead.
func TestSVGLanesShareAxes(t *testing.T) {
	d := designerSVGCharts(t)
	laned := 0
	for _, c := range d.charts {
		if c.Lanes == nil {
			continue
		}
		laned++
		p := parseSVG(t, renderSVG(t, c, SVGOptions{Subtitle: svgSubtitle}))
		first := plotScale(t, p, 0)
		for g := range p.plots {
			s := plotScale(t, p, g)
			if s.xmin != first.xmin || s.xmax != first.xmax || s.ymin != first.ymin || s.ymax != first.ymax || s.left != first.left || s.width != first.width {
				t.Errorf("%s lane %d: plot %+v, lane 0 %+v; want the same extents, left and width", c.ID, g, s, first)
			}
			if g > 0 {
				prev := plotScale(t, p, g-1)
				if s.top <= prev.top+prev.height {
					t.Errorf("%s lane %d starts at %v, inside lane %d (%v to %v)", c.ID, g, s.top, g-1, prev.top, prev.top+prev.height)
				}
			}
		}
		last := plotScale(t, p, len(p.plots)-1)
		for i, y := range p.xLabelY {
			if y <= last.top+last.height {
				t.Errorf("%s: x label %q at y %v, not under the last lane (bottom %v)", c.ID, p.xLabels[i], y, last.top+last.height)
			}
		}
		if n := len(p.xLabels); n < 3 || n > 11 {
			t.Errorf("%s: %d x labels; want one row of 3 to 11", c.ID, n)
		}
		if got := len(parseSVG(t, renderSVG(t, c, SVGOptions{Height: MinSVGSize})).plots); got != 1 && len(c.Lanes) > 2 {
			t.Errorf("%s at %d px: %d plots; want one plot when %d lanes do not fit", c.ID, MinSVGSize, got, len(c.Lanes))
		}
	}
	if laned < 4 {
		t.Errorf("%d of the designer's charts have lanes; want the pattern charts, replicas and the retry storm", laned)
	}
}
