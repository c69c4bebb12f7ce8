package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/labstack/echo/v4"
)

// TestErrorPageForBrowsers: a page route's error is, for a request that
// accepts HTML (a browser), a page of the site (its layout and viewport,
// the status's text as the heading, the message escaped, links back to
// the designer and the measure page) with the error's status; for any
// other client the same message as plain text; the API keeps its problem
// details either way.
func TestErrorPageForBrowsers(t *testing.T) {
	e := newServer(testConfig(t))
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	tests := []struct {
		name, target, accept string
		status               int
		html                 bool
		want                 []string // in the body
	}{
		{"unknown page, browser", "/no/such/page", browser, http.StatusNotFound, true,
			[]string{`<h1>Not Found</h1>`, `name="viewport"`, `<a href="/">Back to the designer</a>`, `href="/measure"`}},
		{"unknown page, curl", "/no/such/page", "*/*", http.StatusNotFound, false, []string{"Not Found"}},
		{"a panel named with markup", "/designer/docs/%3Cscript%3E?capacity=500&clients=20&p99=3", browser, http.StatusNotFound, true,
			[]string{`no panel &#34;&lt;script&gt;&#34;`}},
		{"a design with problems", "/designer/docs/docs-panel?capacity=500&clients=20&p95=5&p99=2", browser, http.StatusUnprocessableEntity, true,
			[]string{`<h1>Unprocessable Entity</h1>`, `this design has problems; the designer lists them at /?`, `&amp;`}},
		{"the API, browser", "/api/v1/nope", browser, http.StatusNotFound, false, []string{`"status":404`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, e, tt.target, echo.HeaderAccept, tt.accept)
			body := rec.Body.String()
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, body)
			}
			ct := rec.Header().Get(echo.HeaderContentType)
			if got := strings.HasPrefix(ct, "text/html"); got != tt.html {
				t.Errorf("Content-Type %q; want HTML %v", ct, tt.html)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q:\n%s", w, body)
				}
			}
			if strings.Contains(body, "<script>\"") || strings.Contains(body, `"<script>`) {
				t.Errorf("markup from the address reached the page unescaped:\n%s", body)
			}
		})
	}
}

// TestBrowserErrorPageFitsAPhone: on a phone (390 px) the error page of a
// design with problems, whose message holds the design's whole address,
// does not scroll sideways.
func TestBrowserErrorPageFitsAPhone(t *testing.T) {
	s := newBrowserSession(t)
	s.mu.Lock()
	s.failing = map[string]bool{"/designer/docs/docs-panel": true} // a 422, on purpose
	s.mu.Unlock()
	ctx := s.ctx
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: 390, Height: 844, DeviceScaleFactor: 1, Mobile: true}); err != nil {
		t.Fatal(err)
	}
	s.do(t, ctx, "open the error page", chromedp.Navigate(s.srv.URL+"/designer/docs/docs-panel?capacity=500&clients=20&p95=5&p99=2&tiers.0.name=free&tiers.0.clients=180&tiers.1.name=paid&tiers.1.clients=20"))
	waitFor(t, ctx, "the error page", `!!document.querySelector('[data-testid="error-message"]')`)
	w := eval[[]float64](t, ctx, `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`)
	if w[0] > w[1] {
		t.Errorf("the error page is %.0f px wide on a %.0f px screen: it scrolls sideways", w[0], w[1])
	}
}
