package server

import (
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
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
	// autofocus applies once the document is ready, which a loaded
	// machine may reach after the load event: wait for it.
	waitFor(t, ctx, "the focus on the import errors", `document.activeElement === document.querySelector('[data-testid="import-errors"]')`)
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

// TestBrowserExportsOnAPhone loads /exports at 390×844 with every preview
// open: the page does not scroll sideways, each preview has a copy
// button for it, no mapping's cells overlap, and no policy key breaks
// inside a word.
func TestBrowserExportsOnAPhone(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 390, Height: 844, DeviceScaleFactor: 1, Mobile: true}); err != nil {
		t.Fatal(err)
	}
	s.do(t, ctx, "load /exports", chromedp.Navigate(s.srv.URL+"/exports?"+measureDesign),
		chromedp.WaitReady(chromedp.CSS(`[data-testid="export-item"]`)))
	eval[bool](t, ctx, `(document.querySelectorAll("details.preview").forEach(function (d) { d.open = true; }), true)`)
	if w := eval[float64](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the page is %v px wide on a 390 px screen", w)
	}
	if missing := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('[data-testid="export-preview"]')).filter(function (pre) {
  return !document.querySelector('button.copy[data-copy="' + pre.id + '"]');
}).map(function (pre) { return pre.closest("[data-target]").dataset.target; })`); len(missing) > 0 {
		t.Errorf("previews without a copy button: %v", missing)
	}
	if n := eval[float64](t, ctx, `document.querySelectorAll('[data-testid="export-copy"]').length`); n == 0 {
		t.Error("no copy buttons")
	}
	overlaps := eval[[]string](t, ctx, `(function () {
  var out = [];
  document.querySelectorAll('[data-testid="mappings"] tbody tr').forEach(function (tr) {
    var cells = Array.from(tr.children).map(function (c) { return c.getBoundingClientRect(); });
    for (var i = 0; i < cells.length; i++) {
      for (var j = i + 1; j < cells.length; j++) {
        var a = cells[i], b = cells[j];
        if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) {
          out.push(tr.firstElementChild.textContent + ": cells " + i + " and " + j);
        }
      }
    }
    var key = tr.querySelector("th code");
    if (key && key.getClientRects().length > 1 || key && key.scrollWidth > key.parentElement.clientWidth + 1) {
      out.push(key.textContent + ": the key breaks or overflows");
    }
    if (key && key.getBoundingClientRect().height > 1.6 * parseFloat(getComputedStyle(key).lineHeight || 20)) {
      out.push(key.textContent + ": the key wraps");
    }
  });
  return out;
})()`)
	for _, o := range overlaps {
		t.Error(o)
	}
}
