package server

import (
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// tieredWithEverything is a design whose results show every part:
// tiers, an endpoint, local replicas.
const tieredWithEverything = "/?capacity=2000&p99=5&tiers.0.name=free&tiers.0.clients=180&tiers.1.name=paid&tiers.1.clients=20" +
	"&tiers.1.multiplier=4&tiers.1.limit.algorithm=gcra&endpoints.0.method=GET&endpoints.0.path=/v1/reports&endpoints.0.cost=3" +
	"&replicas=3&enforcement=local"

// TestBrowserPageNavOnAPhone: on a phone, where the form follows every
// chart (about 25 000 px down), the links after the answer take a reader
// to the form and to each part of the results, and the form's link takes
// them back; the answer's table and the retries show whole, as cards,
// not in a box that scrolls (the tiered design's global limit was hidden
// in one); axe finds nothing serious. At 1440 px, beside the form, the
// links to and from the form are not shown.
func TestBrowserPageNavOnAPhone(t *testing.T) {
	axe := readAxe(t)
	s := newBrowserSession(t)
	ctx := s.ctx
	metrics := func(w, h int64, mobile bool) {
		t.Helper()
		if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: w, Height: h, DeviceScaleFactor: 1, Mobile: mobile}); err != nil {
			t.Fatal(err)
		}
	}
	// inView reports whether sel's top is within the viewport's first
	// quarter, where a jump to it puts it.
	inView := func(sel string) bool {
		return eval[bool](t, ctx, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return r.top >= -1 && r.top < innerHeight / 4; })()`, sel))
	}
	click := func(sel string) {
		t.Helper()
		s.do(t, ctx, "click "+sel, chromedp.Click(chromedp.CSS(sel)))
		// A jump to a fragment scrolls at once (no smooth scrolling).
	}

	metrics(390, 844, true)
	s.do(t, ctx, "load the tiered design", chromedp.Navigate(s.srv.URL+tieredWithEverything))
	waitFor(t, ctx, "the charts", chartsDrawn)
	nav := `[data-testid="page-nav"]`
	if y := eval[float64](t, ctx, `document.querySelector('`+nav+`').getBoundingClientRect().top + scrollY`); y > 2*844 {
		t.Errorf("the page nav starts at %v px, past the second screen", y)
	}
	if form := eval[float64](t, ctx, `document.querySelector('#design').getBoundingClientRect().top + scrollY`); form < 10*844 {
		t.Errorf("the form starts at %v px: the test wants a page where it is far down", form)
	}
	click(nav + ` a[href="#design"]`)
	if !inView("#design") {
		t.Error(`"Edit the design" did not bring the form into view`)
	}
	click(`[data-testid="to-results-top"]`)
	if !inView("#results") {
		t.Error(`the form's "Back to the results" did not bring the results into view`)
	}
	for _, id := range []string{"backoff-heading", "tiers-heading", "endpoints-heading", "replica-heading", "algorithms-heading"} {
		click(nav + ` a[href="#` + id + `"]`)
		if !inView("#" + id) {
			t.Errorf("the link to #%s did not bring it into view", id)
		}
	}
	for _, sel := range []string{`[data-testid="policy-limits"] .table-fit`, `[data-testid="backoff"] .table-fit`} {
		got := eval[[]float64](t, ctx, `(() => { const e = document.querySelector('`+sel+`'); return [e.scrollWidth, e.clientWidth, e.scrollHeight, e.clientHeight]; })()`)
		if got[0] > got[1] || got[2] > got[3] {
			t.Errorf("%s scrolls (%v × %v of %v × %v px): on a phone its rows are cards, shown whole", sel, got[0], got[2], got[1], got[3])
		}
	}
	// Every value's "why?" sits on its line, not alone on the next.
	apart := eval[[]string](t, ctx, `[...document.querySelectorAll('dl.values dd')].filter(dd => {
		const v = dd.querySelector('.value'), w = dd.querySelector('details.why > summary');
		return v && w && Math.abs(w.getBoundingClientRect().bottom - v.getBoundingClientRect().bottom) > 4;
	}).map(dd => dd.previousElementSibling.textContent)`)
	if len(apart) > 0 {
		t.Errorf(`on a phone the "why?" of %q is not on its value's line`, apart)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="summary"] dl.values details.why').length`); n < 5 {
		t.Errorf("%d reasons in the limit per client: the test wants the values it checks", n)
	}
	if w := eval[float64](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the page is %v px wide on a 390 px screen", w)
	}
	for _, v := range runAxe(t, ctx, axe) {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("axe %s %s: %s (%d elements)", v.Impact, v.ID, v.Help, len(v.Nodes))
		}
	}

	metrics(1440, 900, false)
	s.do(t, ctx, "load the tiered design", chromedp.Navigate(s.srv.URL+tieredWithEverything))
	waitFor(t, ctx, "the charts", chartsDrawn)
	for _, sel := range []string{nav + ` a[href="#design"]`, `[data-testid="to-results-top"]`, `[data-testid="to-results"]`} {
		if shown := eval[bool](t, ctx, `document.querySelector('`+sel+`').checkVisibility()`); shown {
			t.Errorf("%s is shown beside the form", sel)
		}
	}
	if shown := eval[bool](t, ctx, `document.querySelector('`+nav+` a[href="#checks-heading"]').checkVisibility()`); !shown {
		t.Error("the link to the checks is hidden at 1440 px")
	}
}
