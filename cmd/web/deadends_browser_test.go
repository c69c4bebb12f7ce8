package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// TestBrowserImportErrorsFocused submits a policy that does not decode:
// the page that comes back shows the errors inside the first viewport,
// above the form, and they have the focus (autofocus, no script).
func TestBrowserImportErrorsFocused(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	// The 422 of the failed import is the answer under test, not a
	// problem; cleanups run last first, so this one runs before the
	// session reports.
	t.Cleanup(func() { s.expect("status of 422", importPath) })
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	s.do(t, ctx, "paste a bad policy", chromedp.Evaluate[chromedp.Void](`document.getElementById("import-yaml").value = "apiVersion: ratelab/v1\\nkind: ["`))
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(`[data-testid="import-submit"]`)))); err != nil {
		t.Fatalf("import: %v", err)
	}
	waitFor(t, ctx, "the import errors", `!!document.querySelector('[data-testid="import-errors"]')`)
	if !eval[bool](t, ctx, `document.activeElement === document.querySelector('[data-testid="import-errors"]')`) {
		t.Errorf("focus is on %s, not the errors", eval[string](t, ctx, `document.activeElement.outerHTML.slice(0, 80)`))
	}
	box := eval[[]float64](t, ctx, `(function () { var r = document.querySelector('[data-testid="import-errors"]').getBoundingClientRect(); return [r.top, r.bottom, window.innerHeight, window.scrollY]; })()`)
	if box[0] < 0 || box[1] > box[2] || box[3] != 0 {
		t.Errorf("errors at %v..%v of a %v px viewport scrolled %v px; want them in the first viewport", box[0], box[1], box[2], box[3])
	}
	if eval[bool](t, ctx, `!!document.querySelector('[data-testid="results"]')`) {
		t.Error("the failed import shows a design")
	}
}

// expect drops the recorded problems that hold every one of parts: ones
// a test provokes on purpose.
func (s *browserSession) expect(parts ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = slices.DeleteFunc(s.problems, func(p string) bool {
		for _, part := range parts {
			if !strings.Contains(p, part) {
				return false
			}
		}
		return true
	})
}
