package server

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserEmbedInIframe serves a documentation page from a second
// server (another origin) that frames /embed/admitted, and checks in
// Chromium that the chart inside the frame is drawn with the dark theme,
// with no console error, no CSP violation (the session records both) and
// no request to any host but the two servers.
func TestBrowserEmbedInIframe(t *testing.T) {
	s := newBrowserSession(t)
	src := s.srv.URL + "/embed/admitted?" + embedDesign + "&theme=dark"
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>API docs</title></head><body>
<h1>Rate limits</h1>
<iframe id="chart" src="%s" width="720" height="420" title="Admitted over time"></iframe>
</body></html>`, html.EscapeString(src))
	}))
	t.Cleanup(docs.Close)
	u, err := url.Parse(docs.URL)
	if err != nil {
		t.Fatal(err)
	}
	if u.Host == s.host {
		t.Fatal("the docs page must be another origin")
	}
	s.mu.Lock()
	s.also = map[string]bool{u.Host: true}
	s.mu.Unlock()

	ctx := s.ctx
	s.do(t, ctx, "load the docs page", chromedp.Navigate(docs.URL))
	frames, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("iframe#chart")))
	if err != nil || len(frames) != 1 {
		t.Fatalf("iframe: %v (%d found)", err, len(frames))
	}
	in := chromedp.FromNode(frames[0])
	s.do(t, ctx, "the chart drawn inside the frame",
		chromedp.WaitVisible(chromedp.CSS(`[data-chart-drawn="true"] canvas`), in))
	theme, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`[data-chart-option]`), "data-chart-theme-used", in))
	if err != nil || !theme.Exists || theme.Value != "dark" {
		t.Errorf("theme used in the frame: %+v (err %v), want dark", theme, err)
	}
}
