package server

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserLongPolicyShowsItsFirstLimits: the largest design's table
// shows its first views.ShownLimits limits, the checks and the
// simulation come up under them, and the toggle under the table shows
// every limit and hides them again.
func TestBrowserLongPolicyShowsItsFirstLimits(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	s.do(t, ctx, "load the largest design", chromedp.Navigate(s.srv.URL+"/?"+largestDesign()))
	waitFor(t, ctx, "the charts", `document.querySelectorAll("[data-chart-option]").length > 0 &&
		document.querySelectorAll("[data-chart-option]").length === document.querySelectorAll("[data-chart-option][data-chart-drawn] canvas").length`)
	const shown = `[...document.querySelectorAll('[data-testid="policy-limit"]')].filter(r => r.getClientRects().length > 0).length`
	all := eval[int](t, ctx, `document.querySelectorAll('[data-testid="policy-limit"]').length`)
	if got := eval[int](t, ctx, shown); got != 8 || all != 118 {
		t.Fatalf("%d of %d limits shown, want 8 of 118", got, all)
	}
	if top := eval[float64](t, ctx, `document.getElementById("charts-heading").getBoundingClientRect().top`); top > 900 {
		t.Errorf("the simulation starts %g px down, below the first screen of 900", top)
	}
	toggle := `document.querySelector('[data-testid="more-limits"] > summary')`
	if text := eval[string](t, ctx, toggle+`.innerText`); text != "Show the other 110 limits" {
		t.Errorf("the toggle says %q", text)
	}
	eval[bool](t, ctx, toggle+`.click() || true`)
	if got := eval[int](t, ctx, shown); got != all {
		t.Fatalf("after the toggle, %d of %d limits shown", got, all)
	}
	if text := eval[string](t, ctx, toggle+`.innerText`); text != "Show the first 8 only" {
		t.Errorf("the open toggle says %q", text)
	}
	eval[bool](t, ctx, toggle+`.click() || true`)
	if got := eval[int](t, ctx, shown); got != 8 {
		t.Errorf("after the toggle again, %d limits shown, want 8", got)
	}
}
