package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserMeasureUpload picks a log file in Chromium and measures it:
// the upload goes through upload.js (the document is not reloaded), the
// results and the shadow report replace the page's main part, and the
// shadow chart is drawn; the session checks for console errors and CSP
// violations.
func TestBrowserMeasureUpload(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	log := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(log, []byte(measureLog()), 0o644); err != nil {
		t.Fatal(err)
	}
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/?"+measureDesign))
	href := eval[string](t, ctx, `document.querySelector('[data-testid="measure-link"]').href`)
	s.do(t, ctx, "open the measure link", chromedp.Navigate(href))
	waitFor(t, ctx, "the measure page", `!!document.querySelector('[data-testid="measure-form"]')`)
	eval[bool](t, ctx, `(window.__sameDocument = true)`)
	s.do(t, ctx, "choose the log", chromedp.SetUploadFiles(chromedp.CSS(`#m-log`), []string{log}))
	s.do(t, ctx, "submit", chromedp.Click(chromedp.CSS(`[data-testid="measure-submit"]`)))
	waitFor(t, ctx, "the shadow report", `!!document.querySelector('[data-testid="shadow-summary"]')`)
	waitFor(t, ctx, "the shadow chart", `!!document.querySelector('#chart-shadow[data-chart-drawn] canvas')`)
	if !eval[bool](t, ctx, `window.__sameDocument === true`) {
		t.Error("the page reloaded instead of swapping the results in")
	}
	summary := eval[string](t, ctx, `document.querySelector('[data-testid="shadow-summary"]').textContent`)
	if !strings.Contains(summary, "would have been rejected") {
		t.Errorf("shadow summary %q", summary)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-testid="measure-windows"] tbody td').textContent`); got != "10" {
		t.Errorf("1s p50 %q, want 10", got)
	}
}
