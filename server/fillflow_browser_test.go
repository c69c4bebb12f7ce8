package server

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserMeasureFillFlow walks measure → fill → designer as a person
// would, from a measure page opened without a design: the page asks for
// the capacity the calculator needs, the log is measured, and "Fill the
// calculator" lands on a designer that has that capacity, the log's
// percentiles and results without problems.
func TestBrowserMeasureFillFlow(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	log := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(log, []byte(measureLog()), 0o644); err != nil {
		t.Fatal(err)
	}
	s.do(t, ctx, "open /measure", chromedp.Navigate(s.srv.URL+"/measure"))
	waitFor(t, ctx, "the capacity field", `!!document.getElementById("m-capacity")`)
	s.do(t, ctx, "give the capacity", chromedp.SendKeys(chromedp.ID("m-capacity"), "750"))
	s.do(t, ctx, "choose the log", chromedp.SetUploadFiles(chromedp.CSS(`#m-log`), []string{log}))
	s.do(t, ctx, "submit", chromedp.Click(chromedp.CSS(`[data-testid="measure-submit"]`)))
	waitFor(t, ctx, "the fill link", `!!document.querySelector('a[data-testid="fill-calculator"]')`)
	href := eval[string](t, ctx, `document.querySelector('a[data-testid="fill-calculator"]').href`)
	u, err := url.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Query().Get("capacity"); got != "750" {
		t.Fatalf("the fill link %s carries capacity %q, want 750", href, got)
	}
	s.do(t, ctx, "fill the calculator", chromedp.Navigate(href))
	waitFor(t, ctx, "the designer's results", `!!document.querySelector('[data-testid="policy-limits"]')`)
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="problems"]').length`); n != 0 {
		t.Errorf("the filled design has problems: %s", eval[string](t, ctx, `document.querySelector('[data-testid="problems"]').textContent`))
	}
	if got := eval[string](t, ctx, `document.getElementById("f-capacity").value`); got != "750" {
		t.Errorf("capacity on the designer %q, want 750", got)
	}
	if got := eval[string](t, ctx, `document.getElementById("f-p99").value`); got == "" {
		t.Error("the designer has no p99 from the log")
	}
}
