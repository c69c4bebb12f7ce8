package server

import (
	"net/url"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestBrowserResultsFirst: the answer is in the first viewport. At
// 1440×900 the policy's limits and the first chart start above the fold,
// beside the form; at 390×844 the limits come before the form, inside the
// first screen, and the page does not scroll sideways.
func TestBrowserResultsFirst(t *testing.T) {
	for _, size := range []struct {
		w, h   int64
		mobile bool
		chart  bool // the first chart starts in the viewport too
	}{
		{1440, 900, false, true},
		{390, 844, true, false},
	} {
		s := newBrowserSession(t)
		ctx := s.ctx
		if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: size.w, Height: size.h, DeviceScaleFactor: 1, Mobile: size.mobile}); err != nil {
			t.Fatal(err)
		}
		s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
		waitFor(t, ctx, "the charts", chartsDrawn)
		top := func(sel string) float64 {
			return eval[float64](t, ctx, `document.querySelector('`+sel+`').getBoundingClientRect().top + window.scrollY`)
		}
		if y := top(`[data-testid="policy-limits"]`); y >= float64(size.h) {
			t.Errorf("%d×%d: the policy's limits start at %v px, below the first screen", size.w, size.h, y)
		}
		if size.chart {
			if y := top(`[data-chart-option]`); y >= float64(size.h) {
				t.Errorf("%d×%d: the first chart starts at %v px, below the first screen", size.w, size.h, y)
			}
		}
		if size.mobile {
			if form, res := top(`[data-testid="design-form"]`), top(`[data-testid="results"]`); res >= form {
				t.Errorf("on a phone the results (%v px) come after the form (%v px)", res, form)
			}
		}
		if w := eval[float64](t, ctx, `document.documentElement.scrollWidth`); w > float64(size.w) {
			t.Errorf("%d×%d: the page is %v px wide", size.w, size.h, w)
		}
	}
}

// TestBrowserNewPagesOnAPhone: the reverse, compare, measure and exports pages do
// not scroll sideways at 390×844, and a table of cards (compare's limits
// of A and B) or the exports' targets at a glance shows whole, not in a
// box that scrolls.
func TestBrowserNewPagesOnAPhone(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 390, Height: 844, DeviceScaleFactor: 1, Mobile: true}); err != nil {
		t.Fatal(err)
	}
	cards := 0.0
	for _, path := range []string{
		"/reverse?algorithm=fixed_window&limit=600&window=60",
		"/compare?" + url.Values{"a": {embedDesign}, "b": {embedDesign + "&limit.algorithm=sliding_window"}}.Encode(),
		"/measure",
		"/measure?" + url.Values{"design": {embedDesign}}.Encode(),
		"/exports?" + embedDesign,
	} {
		s.do(t, ctx, "load "+path, chromedp.Navigate(s.srv.URL+path))
		waitFor(t, ctx, "the page", `document.readyState === 'complete'`)
		if w := eval[float64](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("%s is %v px wide on a 390 px screen", path, w)
		}
		scrolling := eval[[]string](t, ctx, `[...document.querySelectorAll('table.cards, table.glance')].map(t => t.parentElement).
			filter(e => e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight).
			map(e => e.getAttribute('aria-label') + ': ' + e.scrollWidth + '×' + e.scrollHeight + ' px in ' + e.clientWidth + '×' + e.clientHeight)`)
		for _, sc := range scrolling {
			t.Errorf("%s: a table that should show whole scrolls (%s)", path, sc)
		}
		cards += eval[float64](t, ctx, `document.querySelectorAll('table.cards').length`)
	}
	if cards == 0 {
		t.Error("no page has a table of cards: the check above checked nothing")
	}
}
