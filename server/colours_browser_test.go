package server

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/ratelab/ratelab/algorithms"
)

// drawnStrokes reads, from every chart echarts drew on the page, the
// colour echarts actually strokes each series with (its data's visual
// style, after themes and palettes have had their say), as chart id,
// series name and colour.
const drawnStrokes = `(function () {
  var out = [];
  document.querySelectorAll("[data-chart-option][data-chart-drawn]").forEach(function (el) {
    var chart = echarts.getInstanceByDom(el);
    chart.getModel().getSeries().forEach(function (s) {
      var st = s.getData().getVisual("style") || {};
      out.push([el.id, s.name, String(st.stroke || st.fill || "").toLowerCase()]);
    });
  });
  return out;
})()`

// strokesByName groups drawn strokes by series name: name → colour →
// the charts that drew the name in that colour.
func strokesByName(rows [][]string) map[string]map[string][]string {
	m := map[string]map[string][]string{}
	for _, r := range rows {
		if m[r[1]] == nil {
			m[r[1]] = map[string][]string{}
		}
		m[r[1]][r[2]] = append(m[r[1]][r[2]], r[0])
	}
	return m
}

// TestBrowserOneColourPerAlgorithm reads the colours echarts drew with:
// on the designer each algorithm has one colour in every chart that draws
// it (its lines, lanes and legend), no two algorithms share one, and on
// the compare page a series keeps its colour across both designs' charts.
func TestBrowserOneColourPerAlgorithm(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	waitFor(t, ctx, "the charts", chartsDrawn)
	rows := eval[[][]string](t, ctx, drawnStrokes)
	byAlg := map[algorithms.Name]map[string][]string{}
	for _, r := range rows {
		base, _, _ := strings.Cut(r[1], " ")
		a := algorithms.Name(strings.TrimSuffix(base, ","))
		if !slices.Contains(algorithms.Names, a) {
			continue
		}
		if r[2] == "" {
			t.Errorf("%s %q: echarts drew no colour", r[0], r[1])
		}
		if byAlg[a] == nil {
			byAlg[a] = map[string][]string{}
		}
		byAlg[a][r[2]] = append(byAlg[a][r[2]], r[0])
	}
	owner := map[string]algorithms.Name{}
	for _, a := range algorithms.Names {
		cols := byAlg[a]
		if len(cols) != 1 {
			t.Errorf("%s is drawn in %d colours: %v; want one", a, len(cols), cols)
		}
		for col, charts := range cols {
			if len(slices.Compact(slices.Sorted(slices.Values(charts)))) < 4 {
				t.Errorf("%s drawn in %v only; want the four pattern charts at least", a, charts)
			}
			if other, ok := owner[col]; ok {
				t.Errorf("%s and %s share the colour %s", a, other, col)
			}
			owner[col] = a
		}
	}

	path := "/compare?" + url.Values{"a": {embedDesign}, "b": {embedDesign + "&limit.algorithm=sliding_window"}}.Encode()
	s.do(t, ctx, "load the compare page", chromedp.Navigate(s.srv.URL+path))
	waitFor(t, ctx, "the compare page's charts", `(function () {
  var all = document.querySelectorAll("[data-chart-option]");
  return all.length >= 4 && document.querySelectorAll("[data-chart-option][data-chart-drawn] canvas").length >= all.length;
})()`)
	rows = eval[[][]string](t, ctx, drawnStrokes)
	charts := map[string]bool{}
	for _, r := range rows {
		charts[r[0]] = true
	}
	if len(charts) < 4 {
		t.Fatalf("compare page: %d charts drawn; want both designs' charts", len(charts))
	}
	t.Logf("compare page: %d series in %d charts", len(rows), len(charts))
	shared := 0
	for name, cols := range strokesByName(rows) {
		if len(cols) != 1 {
			t.Errorf("compare page: %q is drawn in %d colours: %v; want one in both designs", name, len(cols), cols)
		}
		for _, ids := range cols {
			if len(ids) >= 2 {
				shared++
			}
		}
	}
	if shared == 0 {
		t.Error("compare page: no series appears in two charts; want the two designs' lines side by side")
	}
}
