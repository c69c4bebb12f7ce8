package server

import (
	"math"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestBrowserLiveRedrawsInPlace: an update draws each chart's new option
// in the echarts instance (and canvas) of the chart it replaces, and
// every chart then shows its new option's data, not its predecessor's.
func TestBrowserLiveRedrawsInPlace(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	waitFor(t, ctx, "the charts", chartsDrawn)
	// Mark every chart's canvas, and note the data each chart shows.
	before := eval[map[string]string](t, ctx, `(function () {
  var out = {};
  document.querySelectorAll("[data-chart-option]").forEach(function (el) {
    el.querySelector("canvas").ratelabMark = el.id;
    out[el.id] = JSON.stringify(echarts.getInstanceByDom(el).getOption().series.map(function (s) { return s.data; }));
  });
  return out;
})()`)
	if len(before) == 0 {
		t.Fatal("no charts on the page")
	}
	eval[bool](t, ctx, `document.getElementById("f-p99").select() || true`)
	s.do(t, ctx, "type p99", chromedp.KeyEvent("9"))
	waitFor(t, ctx, "the results to update", `document.querySelector('[data-testid="summary-rate"]').textContent === "18 requests/s"`)
	waitFor(t, ctx, "the charts again", chartsDrawn)
	type state struct {
		Reused, Matches bool
		Shown, Want     string
	}
	after := eval[map[string]state](t, ctx, `(function () {
  var out = {};
  document.querySelectorAll("[data-chart-option]").forEach(function (el) {
    var canvas = el.querySelector("canvas");
    var shown = JSON.stringify(echarts.getInstanceByDom(el).getOption().series.map(function (s) { return s.data; }));
    var want = JSON.stringify(JSON.parse(el.getAttribute("data-chart-option")).series.map(function (s) { return s.data; }));
    out[el.id] = { Reused: !!canvas && canvas.ratelabMark === el.id, Matches: shown === want, Shown: shown, Want: want };
  });
  return out;
})()`)
	changed := 0
	for id, st := range after {
		if !st.Reused {
			t.Errorf("%s: drawn in a new instance; want the instance of the chart it replaced", id)
		}
		if !st.Matches {
			t.Errorf("%s shows %.80s…, want its new option's %.80s…", id, st.Shown, st.Want)
		}
		if b, ok := before[id]; ok && b != st.Shown {
			changed++
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d charts after the update, %d before", len(after), len(before))
	}
	// p99 changes the limits, so some charts show other numbers (the check
	// above would pass on a stale chart whose option did not change).
	if changed == 0 {
		t.Error("no chart shows other data after p99 changed; want the new design's")
	}
}

// TestBrowserTimelineLabelsWhole: each row of the request timeline, which
// names the limit that rejected, is drawn whole, on a desktop-wide chart
// and on a phone's: every line of its label (one on a desktop, the class
// and the outcome on a phone) fits the width charts.js gives the axis in
// the axis's font, and a phone's two lines fit the row. The first tier is
// named "starter" so that its rejected row on one line is wider than the
// option's own width in narrow fonts too (Liberation Sans as well as
// DejaVu Sans), else the check could not fail.
func TestBrowserTimelineLabelsWhole(t *testing.T) {
	for _, screen := range []struct {
		name          string
		width, height int64
		lines         int
	}{{"desktop", 1440, 900, 1}, {"phone", 390, 844, 2}} {
		t.Run(screen.name, func(t *testing.T) {
			s := newBrowserSession(t)
			ctx := s.ctx
			if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
				Width: screen.width, Height: screen.height, DeviceScaleFactor: 1, Mobile: screen.width < 600}); err != nil {
				t.Fatal(err)
			}
			const tiered = "capacity=2000&p99=5&tiers.0.name=starter&tiers.0.clients=180&tiers.1.name=paid&tiers.1.clients=20&tiers.1.multiplier=4&pattern=idle_then_burst&pattern.count=300"
			s.do(t, ctx, "load the tiered design", chromedp.Navigate(s.srv.URL+"/?"+tiered))
			waitFor(t, ctx, "the charts", chartsDrawn)
			type row struct {
				Name                  string
				Lines                 []string
				Widest, Room, Given   float64
				OneLine               float64 // the whole name on one line, in the axis's font
				LinesHeight, RowSpace float64
			}
			rows := eval[[]row](t, ctx, `(function () {
  var el = document.getElementById("chart-policy-timeline");
  var chart = echarts.getInstanceByDom(el);
  var label = chart.getOption().yAxis[0].axisLabel;
  var given = JSON.parse(el.getAttribute("data-chart-option")).yAxis[0].axisLabel.width;
  var ctx = document.createElement("canvas").getContext("2d");
  var size = label.fontSize || 12;
  ctx.font = size + "px " + (label.fontFamily || "sans-serif");
  var space = Math.abs(chart.convertToPixel({ yAxisIndex: 0 }, 1) - chart.convertToPixel({ yAxisIndex: 0 }, 0));
  return chart.getOption().yAxis[0].data.map(function (n) {
    var shown = typeof label.formatter === "function" ? label.formatter(n) : n;
    var lines = shown.split("\n");
    var widest = Math.max.apply(null, lines.map(function (l) { return ctx.measureText(l).width; }));
    return { Name: n, Lines: lines, Widest: widest, Room: label.width, Given: given, OneLine: ctx.measureText(n).width,
      LinesHeight: lines.length * (label.lineHeight || size * 1.2), RowSpace: space };
  });
})()`)
			if len(rows) < 4 {
				t.Fatalf("%d timeline rows, want the tiers' admitted and rejected rows", len(rows))
			}
			tooWide := 0
			for _, r := range rows {
				if r.Widest > r.Room {
					t.Errorf("row %q: a line is %.0f px, its label %.0f px: truncated", r.Name, r.Widest, r.Room)
				}
				if len(r.Lines) != screen.lines || r.LinesHeight > r.RowSpace {
					t.Errorf("row %q on %d lines %q, %.0f px high in a row of %.0f px; want %d lines that fit", r.Name, len(r.Lines), r.Lines, r.LinesHeight, r.RowSpace, screen.lines)
				}
				// The test must be able to fail: some row, on one line,
				// is wider than the option's own width.
				if r.OneLine > r.Given {
					tooWide++
				}
			}
			if tooWide == 0 {
				t.Errorf("no row is wider than the option's %.0f px; the check proves nothing", rows[0].Given)
			}
		})
	}
}

// TestBrowserLegendsWholeLanesAligned: on a phone and on a desktop, with
// the tiered design's long limit names, every chart's legend, as echarts
// laid it out, shows every series's name within the chart's width and
// ends above every plot (a legend laid out in rows from the left at least
// 20 px above, room for the y axis's name), and the stacked lanes of a
// chart share one left edge and one width; and so on a desktop's page
// narrowed to a phone's width after it was drawn. Some legends' names do not fit
// one row of their chart, so a plot not moved down for the rows echarts
// wraps the legend onto fails, and so do lanes echarts narrows for a long
// lane label (its outer bounds).
func TestBrowserLegendsWholeLanesAligned(t *testing.T) {
	for _, screen := range []struct {
		name          string
		width, height int64
		turned        bool // loaded at the other screen's size, then resized to this one
	}{{"desktop", 1440, 900, false}, {"phone", 390, 844, false}, {"desktop narrowed to a phone", 390, 844, true}} {
		t.Run(screen.name, func(t *testing.T) {
			s := newBrowserSession(t)
			ctx := s.ctx
			size := func(width, height int64) {
				if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
					Width: width, Height: height, DeviceScaleFactor: 1, Mobile: width < 600}); err != nil {
					t.Fatal(err)
				}
			}
			if screen.turned {
				size(1440, 900)
			} else {
				size(screen.width, screen.height)
			}
			const tiered = "capacity=2000&p99=5&tiers.0.name=free&tiers.0.clients=180&tiers.1.name=paid&tiers.1.clients=20&tiers.1.multiplier=4&pattern=idle_then_burst&pattern.count=300"
			s.do(t, ctx, "load the tiered design", chromedp.Navigate(s.srv.URL+"/?"+tiered))
			waitFor(t, ctx, "the charts", chartsDrawn)
			if screen.turned {
				size(screen.width, screen.height)
				// Every chart at its new width (charts.js waits for the
				// resizing to settle).
				waitFor(t, ctx, "the charts at the new width", `Array.prototype.every.call(document.querySelectorAll("[data-chart-option]"),
  function (el) { var c = echarts.getInstanceByDom(el); return c && c.getWidth() === el.clientWidth && el.hasAttribute("data-chart-drawn"); })`)
			}
			type grid struct{ X, Y, Width, Height float64 }
			type chart struct {
				ID                      string
				Rows                    bool    // the legend is laid out in rows from the left
				Overflows               bool    // the option's legend names need more than one row of the chart
				LegendBottom            float64 // -1 without a legend shown
				LegendLeft, LegendRight float64
				Width                   float64
				Items, Names            int // the legend's items drawn, the series' names
				Grids                   []grid
			}
			charts := eval[[]chart](t, ctx, `Array.from(document.querySelectorAll("[data-chart-option]"), function (el) {
  var chart = echarts.getInstanceByDom(el);
  var given = JSON.parse(el.getAttribute("data-chart-option"));
  var model = chart.getModel();
  var out = { ID: el.id, Rows: false, Overflows: false, LegendBottom: -1, LegendLeft: 0, LegendRight: 0,
    Width: el.clientWidth, Items: 0, Names: 0, Grids: [] };
  var legend = model.getComponent("legend");
  if (legend && legend.get("show")) {
    out.Rows = legend.get("left") !== "center";
    var g = chart.getViewOfComponentModel(legend).group;
    var r = g.getBoundingRect();
    out.LegendBottom = g.y + r.y + r.height;
    out.LegendLeft = g.x + r.x;
    out.LegendRight = g.x + r.x + r.width;
    g.childAt(0).eachChild(function () { out.Items++; });
    var ctx = document.createElement("canvas").getContext("2d");
    ctx.font = "12px sans-serif";
    var names = (given.series || []).map(function (s) { return s.name; }).filter(function (n, i, all) { return n && all.indexOf(n) === i; });
    out.Names = names.length;
    var row = names.reduce(function (w, n) { return w + 31 + ctx.measureText(n).width + 8; }, 0);
    out.Overflows = row > el.clientWidth - 16;
  }
  model.eachComponent("grid", function (gm) {
    var r = gm.coordinateSystem.getRect();
    out.Grids.push({ X: r.x, Y: r.y, Width: r.width, Height: r.height });
  });
  return out;
})`)
			overflowing := 0
			for _, c := range charts {
				if c.Overflows {
					overflowing++
				}
				if c.LegendBottom >= 0 && (c.Items != c.Names || c.LegendLeft < 0 || c.LegendRight > c.Width) {
					t.Errorf("%s: the legend shows %d items of %d names from %.0f to %.0f px in a chart %.0f px wide", c.ID, c.Items, c.Names, c.LegendLeft, c.LegendRight, c.Width)
				}
				// A legend laid out in rows from the left needs room for the
				// y axis's name under it; a one-row legend, centred, clears
				// the name at the left and need only clear the plot.
				room := 0.0
				if c.Rows {
					room = 20
				}
				for i, g := range c.Grids {
					if c.LegendBottom >= 0 && c.LegendBottom > g.Y-room {
						t.Errorf("%s: the legend ends at %.0f px, %.0f px above plot %d at %.0f px; want at least %.0f", c.ID, c.LegendBottom, g.Y-c.LegendBottom, i, g.Y, room)
					}
					if g0 := c.Grids[0]; math.Abs(g.X-g0.X) > 0.5 || math.Abs(g.Width-g0.Width) > 0.5 {
						t.Errorf("%s: lane %d spans x %.0f+%.0f px, lane 0 %.0f+%.0f: the lanes are not aligned", c.ID, i, g.X, g.Width, g0.X, g0.Width)
					}
				}
			}
			// The test must be able to fail: some legend's names do not
			// fit one row of its chart, as the option gives them.
			if overflowing == 0 {
				t.Errorf("no legend of the %d charts needs more than one row; the check proves nothing", len(charts))
			}
		})
	}
}
