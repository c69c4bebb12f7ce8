package server

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserLazyPanels: opening the docs panel or a chart's snippets
// fetches its content into the page (static/js/lazy.js): the snippet
// fields appear in place of the link, ready to copy.
func TestBrowserLazyPanels(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	waitFor(t, ctx, "the charts", chartsDrawn)
	for _, tt := range []struct{ panel, field string }{
		{"docs-panel", "docs-markdown"},
		{"chart-admitted-snippets", "chart-admitted-markdown"},
	} {
		if eval[bool](t, ctx, `!!document.getElementById("`+tt.field+`")`) {
			t.Fatalf("%s is in the page before its panel opens", tt.field)
		}
		eval[bool](t, ctx, `(document.getElementById("`+tt.panel+`").open = true)`)
		waitFor(t, ctx, tt.field+" in the open panel",
			`!!document.querySelector("#`+tt.panel+` #`+tt.field+`") && !document.querySelector("#`+tt.panel+` [data-lazy-body]")`)
		if !eval[bool](t, ctx, `!!document.querySelector("#`+tt.panel+` button[data-copy='`+tt.field+`']")`) {
			t.Errorf("%s: no copy button after loading", tt.panel)
		}
	}
}
