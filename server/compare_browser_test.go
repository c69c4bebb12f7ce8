package server

import (
	"math"
	"net/url"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// pairBox is where one pair of the compare page's charts is drawn: the
// top, bottom, left and right of A's and B's chart, and the heights of
// their captions, in CSS pixels.
type pairBox struct {
	Kind                         string
	ATop, ABottom, ALeft, ARight float64
	BTop, BLeft                  float64
	ACaption, BCaption           float64
}

// TestBrowserComparePairsLineUp: on a wide screen the two designs' charts
// of a kind stand side by side with their tops level, though A's captions
// are longer than B's (they name A's global limit, and A's 200 clients
// are too many to simulate each, which the load chart's caption says; B
// has no global limit and 5 clients); on a phone B's chart comes under
// A's.
func TestBrowserComparePairsLineUp(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	a := "capacity=2000&clients=200&p99=5&pattern=ramp"
	b := "capacity=2000&clients=5&p99=5&pattern=ramp&global.limit.algorithm=none&limit.algorithm=sliding_window"
	path := "/compare?" + url.Values{"a": {a}, "b": {b}}.Encode()
	const boxes = `[...document.querySelectorAll('[data-testid="chart-pair"]')].filter(p => p.querySelectorAll('.chart').length === 2).map(p => {
		const [a, b] = [...p.querySelectorAll('.chart')].map(c => c.getBoundingClientRect());
		const [ca, cb] = [...p.querySelectorAll('figcaption')].map(c => {
			const r = document.createRange();
			r.selectNodeContents(c);
			return r.getBoundingClientRect().height; // the text's, not the grid row's
		});
		return {Kind: p.dataset.kind, ATop: a.top, ABottom: a.bottom, ALeft: a.left, ARight: a.right, BTop: b.top, BLeft: b.left, ACaption: ca, BCaption: cb};
	})`
	for _, size := range []struct {
		name   string
		w, h   int64
		mobile bool
	}{{"wide", 1440, 900, false}, {"phone", 390, 844, true}} {
		t.Run(size.name, func(t *testing.T) {
			if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: size.w, Height: size.h, DeviceScaleFactor: 1, Mobile: size.mobile}); err != nil {
				t.Fatal(err)
			}
			s.do(t, ctx, "load the compare page", chromedp.Navigate(s.srv.URL+path))
			waitFor(t, ctx, "the charts", `document.querySelectorAll("[data-chart-option]").length > 0 &&
				document.querySelectorAll("[data-chart-option]").length === document.querySelectorAll("[data-chart-option][data-chart-drawn] canvas").length`)
			pairs := eval[[]pairBox](t, ctx, boxes)
			if len(pairs) < 4 {
				t.Fatalf("%d pairs of charts, want the timeline, the load and the three policy charts", len(pairs))
			}
			uneven := 0
			for _, p := range pairs {
				if math.Abs(p.ACaption-p.BCaption) >= 1 {
					uneven++
				}
				switch size.name {
				case "wide":
					if math.Abs(p.ATop-p.BTop) >= 1 || p.ARight > p.BLeft {
						t.Errorf("%s: A's chart at top %g, right %g; B's at top %g, left %g; want them side by side, level", p.Kind, p.ATop, p.ARight, p.BTop, p.BLeft)
					}
				default:
					if p.BTop < p.ABottom || math.Abs(p.ALeft-p.BLeft) >= 1 {
						t.Errorf("%s: A's chart ends at %g, left %g; B's starts at %g, left %g; want B under A", p.Kind, p.ABottom, p.ALeft, p.BTop, p.BLeft)
					}
				}
			}
			if size.name == "wide" && uneven == 0 {
				t.Error("every pair's captions are as tall as each other: the check of level charts checked nothing")
			}
		})
	}
}
