package server

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ratelab/ratelab/views"
)

// TestBrowserLiveKeepsPanels: an update keeps the panels the reader opened
// (and the one they closed), the focus in the input being typed in, and
// the scroll position.
func TestBrowserLiveKeepsPanels(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	waitFor(t, ctx, "the charts", chartsDrawn)

	// Open a data table, a "why?", the docs panel and a chart's snippets;
	// close the first response headers panel, which a page opens.
	opened := eval[[]string](t, ctx, `(function () {
  var ids = [document.querySelector("details.chart-data").id, document.querySelector("details.why").id,
    "docs-panel", document.querySelector("details.docs-snippets").id];
  ids.forEach(function (id) { document.getElementById(id).open = true; });
  return ids;
})()`)
	closed := eval[string](t, ctx, `(function () { var d = document.querySelector("details.headers[open]"); d.open = false; return d.id; })()`)
	for _, id := range opened {
		if id == "" {
			t.Fatalf("a panel without an id among %q", opened)
		}
	}
	// Focus p99 without scrolling to it, then scroll to the data table.
	y := eval[float64](t, ctx, `(function () {
  document.getElementById("f-p99").focus({ preventScroll: true });
  var el = document.getElementById("`+opened[0]+`");
  window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 200);
  return window.scrollY;
})()`)
	if y < 300 {
		t.Fatalf("scrolled only to %v px; want a position an update could lose", y)
	}
	eval[bool](t, ctx, `document.getElementById("f-p99").select() || true`)
	s.do(t, ctx, "type p99 without moving", chromedp.KeyEvent("10"))
	waitFor(t, ctx, "the results to update", `document.querySelector('[data-testid="summary-rate"]').textContent === "20 requests/s"`)
	waitFor(t, ctx, "the charts again", chartsDrawn)
	for _, id := range opened {
		if !eval[bool](t, ctx, `document.getElementById("`+id+`").open`) {
			t.Errorf("panel %s closed by the update; want it kept open", id)
		}
	}
	if eval[bool](t, ctx, `document.getElementById("`+closed+`").open`) {
		t.Errorf("panel %s reopened by the update; want it kept closed", closed)
	}
	if got := eval[string](t, ctx, `document.activeElement && document.activeElement.id`); got != "f-p99" {
		t.Errorf("focus after the update on %q; want f-p99", got)
	}
	if got := eval[float64](t, ctx, `window.scrollY`); got < y-2 || got > y+2 {
		t.Errorf("scrollY after the update %v; want %v ± 2", got, y)
	}

	// The update left the data tables out; the one kept open, and one
	// opened now, fetch the server's numbers for the new design.
	query := strings.TrimPrefix(eval[string](t, ctx, `location.search`), "?")
	want := map[string]views.Chart{}
	for _, c := range designerView(query).Results.Charts {
		want[c.ID+"-data"] = c
	}
	later := eval[string](t, ctx, `(function () { var d = document.querySelectorAll("details.chart-data")[2]; d.open = true; return d.id; })()`)
	for _, id := range []string{opened[0], later} {
		c, ok := want[id]
		if !ok {
			t.Fatalf("panel %s belongs to no chart of %s", id, query)
		}
		waitFor(t, ctx, "the table of "+id, `document.querySelectorAll("#`+id+` tbody tr").length > 0`)
		cells := eval[[][]string](t, ctx, `Array.from(document.querySelectorAll("#`+id+` tbody tr"), function (tr) { return Array.from(tr.cells, function (td) { return td.textContent; }); })`)
		if !reflect.DeepEqual(cells, c.Table.Rows) {
			t.Errorf("panel %s: %d rows in the page, want the server's %d for the updated design", id, len(cells), len(c.Table.Rows))
		}
	}
}

// TestBrowserLiveStale: a value that makes the design invalid shows its
// message beside the field and keeps the last valid results, marked
// stale; the address stays that design's. Fixing it brings fresh results.
func TestBrowserLiveStale(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	waitFor(t, ctx, "the charts", chartsDrawn)
	before := eval[string](t, ctx, `location.href`)

	s.do(t, ctx, "type a bad capacity", clearField("f-capacity"), chromedp.SendKeys(chromedp.ID("f-capacity"), "-1"))
	waitFor(t, ctx, "the capacity message", `document.getElementById("msg-capacity").textContent.indexOf("capacity") === 0`)
	waitFor(t, ctx, "the stale mark", `document.getElementById("results").classList.contains("stale")`)
	note := eval[string](t, ctx, `document.getElementById("results-stale").textContent`)
	if !strings.Contains(note, "Results for the last valid design") || !strings.Contains(note, "capacity") {
		t.Errorf("stale note %q; want it to say the results are the last valid design's and name capacity", note)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-testid="summary-rate"]').textContent`); got != "10 requests/s" {
		t.Errorf("results while invalid show rate %q; want the last valid design's 10 requests/s", got)
	}
	waitFor(t, ctx, "the last valid charts", chartsDrawn)
	if got := eval[string](t, ctx, `location.href`); got != before {
		t.Errorf("address while invalid %s; want the last valid design's %s", got, before)
	}

	s.do(t, ctx, "fix the capacity", clearField("f-capacity"), chromedp.SendKeys(chromedp.ID("f-capacity"), "3000"))
	waitFor(t, ctx, "fresh results", `location.search.indexOf("capacity=3000") >= 0 && !document.getElementById("results").classList.contains("stale")`)
	if got := eval[string](t, ctx, `document.getElementById("msg-capacity").textContent + document.getElementById("results-stale").textContent`); strings.TrimSpace(got) != "" {
		t.Errorf("after the fix the message and stale note read %q; want both empty", got)
	}
	waitFor(t, ctx, "the charts after the fix", chartsDrawn)
}

// TestBrowserLiveBack: every update pushes its design's URL, and the back
// button walks the designs, form and results together.
func TestBrowserLiveBack(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	waitFor(t, ctx, "the charts", chartsDrawn)
	rate := `document.querySelector('[data-testid="summary-rate"]').textContent`
	for _, step := range []struct{ p99, rate string }{{"10", "20 requests/s"}, {"20", "40 requests/s"}} {
		s.do(t, ctx, "type p99 "+step.p99, clearField("f-p99"), chromedp.SendKeys(chromedp.ID("f-p99"), step.p99))
		waitFor(t, ctx, "the design p99="+step.p99, `location.search.indexOf("p99=`+step.p99+`&") >= 0 && `+rate+` === "`+step.rate+`"`)
	}
	for _, step := range []struct{ p99, rate, search string }{{"10", "20 requests/s", "p99=10&"}, {"5", "10 requests/s", ""}} {
		eval[bool](t, ctx, `history.back() || true`)
		waitAcrossLoads(t, ctx, "back to p99="+step.p99,
			`document.readyState === "complete" && location.search.indexOf("`+step.search+`") >= 0 && !!document.getElementById("f-p99") && document.getElementById("f-p99").value === "`+step.p99+`" && !!document.querySelector('[data-testid="summary-rate"]') && `+rate+` === "`+step.rate+`"`)
		waitFor(t, ctx, "the charts after going back", chartsDrawn)
	}
}

// waitAcrossLoads polls a condition while the page may be reloading (htmx
// reloads the design URL on going back): an evaluation the navigation
// interrupts is tried again.
func waitAcrossLoads(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s (%s): %v", what, cond, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
