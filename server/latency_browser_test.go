package server

import (
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// liveUpdateGoal is how long after the last keystroke the designer may
// take to show the new results with the charts in view drawn, debounce
// included, in milliseconds: the median of liveUpdateRuns updates. On the
// quiet 2-vCPU AMD EPYC that CI runs on the best median of a run is
// 110–125 ms: about 22 ms from the keystroke to the request (the browser
// handling the key and a frame; the delay itself is 1 ms), 30 ms of
// request, 20 ms of swap, 30 ms to draw the chart in view and 12 ms to
// paint. A loaded machine slows a whole round, so the test takes the best
// of up to liveUpdateRounds rounds: a regression fails every round, a busy
// moment only some.
//
// Under go test ./... other packages' tests (live nginx, Redis, HAProxy)
// share the cores, and the test holds only liveUpdateGuard, which catches
// a gross regression. With RATELAB_LATENCY=goal it holds liveUpdateGoal;
// .ci/run runs it so, alone, after the suite.
const (
	liveUpdateGoal   = 150
	liveUpdateGuard  = 400
	liveUpdateRuns   = 7
	liveUpdateRounds = 10
)

// TestBrowserLiveUpdateLatency types into the default design and measures,
// in the page, the time from the keystroke's input event to the frame
// after the new results are in and the charts in view drawn: the
// debounce, the request, the swap, the drawing and the paint. The median
// of a round of updates must be within liveUpdateGoal (liveUpdateGuard
// unless RATELAB_LATENCY=goal); each run's parts are logged.
func TestBrowserLiveUpdateLatency(t *testing.T) {
	// Without the page cache every update is computed, as for a reader
	// typing numbers the server has not seen.
	cfg := testConfig(t)
	cfg.pageCache = -1
	s := newBrowserSessionWith(t, cfg)
	ctx := s.ctx
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	waitFor(t, ctx, "the charts", chartsDrawn)
	eval[bool](t, ctx, `(function () {
  window.__lat = [];
  var cur = null;
  document.addEventListener("input", function () { cur = { input: performance.now() }; }, true);
  document.addEventListener("htmx:beforeRequest", function () { if (cur) { cur.request = performance.now(); } });
  document.addEventListener("htmx:beforeSwap", function () { if (cur && !cur.response) { cur.response = performance.now(); } });
  // The charts are drawn on the swap, before htmx settles; the update
  // is done when both happened.
  function done() {
    if (cur && cur.drawn && cur.swapped) {
      // The next frame starts once the browser painted the update.
      var run = cur;
      requestAnimationFrame(function () { run.end = performance.now(); window.__lat.push(run); });
      cur = null;
    }
  }
  // htmx ends a request after its swaps, out-of-band ones included.
  document.addEventListener("htmx:afterRequest", function () { if (cur && cur.response) { cur.swapped = performance.now(); done(); } });
  document.addEventListener("htmx:afterSwap", function () { if (cur && cur.response && !cur.first) { cur.first = performance.now(); } }, true);
  document.addEventListener("ratelab:drawn", function () { if (cur && cur.response && !cur.drawn) { cur.drawn = performance.now(); done(); } });
  return true;
})()`)
	limit := liveUpdateGuard
	if os.Getenv("RATELAB_LATENCY") == "goal" {
		limit = liveUpdateGoal
	}
	best := 0.0
	var rounds [][]float64
	n := 0
	for round := range liveUpdateRounds {
		var totals []float64
		for range liveUpdateRuns {
			// Alternate p99 between two valid values, one keystroke each
			// (a second keystroke would start the clock again on a design
			// already requested); without the page cache each is computed
			// afresh.
			want := []string{"18 requests/s", "10 requests/s"}[n%2]
			key := []string{"9", "5"}[n%2]
			eval[bool](t, ctx, `document.getElementById("f-p99").select() || true`)
			s.do(t, ctx, "type p99", chromedp.KeyEvent(key))
			waitFor(t, ctx, "the results to update", `document.querySelector('[data-testid="summary-rate"]').textContent === "`+want+`"`)
			waitFor(t, ctx, "the run to be measured", `window.__lat.length === `+strconv.Itoa(n+1))
			waitFor(t, ctx, "the charts again", chartsDrawn)
			run := eval[map[string]float64](t, ctx, `window.__lat[`+strconv.Itoa(n)+`]`)
			n++
			total := run["end"] - run["input"]
			totals = append(totals, total)
			t.Logf("round %d, update %d: %.0f ms in all: debounce %.0f, request %.0f; after the response: first swap %.0f, charts in view drawn %.0f, swaps done %.0f, painted %.0f", round+1, len(totals), total,
				run["request"]-run["input"], run["response"]-run["request"], run["first"]-run["response"], run["drawn"]-run["response"],
				run["swapped"]-run["response"], run["end"]-run["response"])
		}
		slices.Sort(totals)
		rounds = append(rounds, totals)
		median := totals[len(totals)/2]
		if round == 0 || median < best {
			best = median
		}
		if best <= float64(limit) {
			t.Logf("median update %.0f ms after the keystroke (round %d; the goal is %d ms, this run holds %d)", median, round+1, liveUpdateGoal, limit)
			return
		}
	}
	t.Errorf("best median update %.0f ms after the keystroke in %d rounds (sorted runs %v); want at most %d ms", best, liveUpdateRounds, rounds, limit)
}
