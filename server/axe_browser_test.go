package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ratelab/ratelab/internal/integration"
)

// axePath is axe-core as npm installs it from testdata/axe/package-lock.json
// (.ci/run runs npm ci there).
const axePath = "testdata/axe/node_modules/axe-core/axe.min.js"

// readAxe returns axe-core's script. Without it the test skips, or fails
// when integration tests are required.
func readAxe(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(axePath)
	if err != nil {
		if integration.Required() {
			t.Fatalf("axe-core not found at server/%s, and integration tests are required (RATELAB_INTEGRATION=required): %v", axePath, err)
		}
		t.Skipf("skipping: axe-core not found at server/%s; install it with 'npm ci --prefix server/testdata/axe' (Debian's nodejs and npm packages) to run this test", axePath)
	}
	return string(b)
}

// emulateScheme makes the tab's prefers-color-scheme dark or light.
func emulateScheme(t *testing.T, ctx context.Context, scheme string) {
	t.Helper()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	}); err != nil {
		t.Fatalf("emulate prefers-color-scheme: %s: %v", scheme, err)
	}
}

// answerFavicon answers /favicon.ico with 204 No Content: an embed page
// opened on its own (not framed) names no icon, so Chromium asks for
// /favicon.ico, and the session would count the 404 as the page's error.
func answerFavicon(s *browserSession) {
	next := s.srv.Config.Handler
	s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// chartsThemed is the condition that the page has charts and each is
// drawn in theme.
func chartsThemed(theme string) string {
	return `(function () {
  var all = document.querySelectorAll("[data-chart-option]");
  if (all.length === 0) { return false; }
  return Array.prototype.every.call(all, function (el) {
    return el.getAttribute("data-chart-theme-used") === "` + theme + `" && el.querySelector("canvas") !== null;
  });
})()`
}

// TestBrowserChartsFollowTheColourScheme: the designer's charts and an
// embed with theme=auto are drawn dark when the reader prefers dark, and
// drawn again when the preference changes; the page is dark too.
func TestBrowserChartsFollowTheColourScheme(t *testing.T) {
	s := newBrowserSession(t)
	answerFavicon(s)
	ctx := s.ctx

	emulateScheme(t, ctx, "light")
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	waitFor(t, ctx, "the charts", chartsDrawn)
	waitFor(t, ctx, "light charts", chartsThemed("light"))

	emulateScheme(t, ctx, "dark")
	waitFor(t, ctx, "the charts redrawn dark after the scheme changed", chartsThemed("dark"))
	bg := eval[string](t, ctx, `getComputedStyle(document.body).backgroundColor`)
	if bg != "rgb(15, 20, 25)" {
		t.Errorf("dark page background: %s, want rgb(15, 20, 25)", bg)
	}
	checkOptionsMatchServer(t, ctx)

	s.do(t, ctx, "reload / in the dark", chromedp.Reload())
	waitFor(t, ctx, "the charts", chartsDrawn)
	waitFor(t, ctx, "dark charts on load", chartsThemed("dark"))

	s.do(t, ctx, "load an embed", chromedp.Navigate(s.srv.URL+"/embed/admitted?"+embedDesign+"&theme=auto"))
	waitFor(t, ctx, "a dark embed", chartsThemed("dark"))
	emulateScheme(t, ctx, "light")
	waitFor(t, ctx, "the embed redrawn light", chartsThemed("light"))
}

// axeViolation is the part of an axe-core result the test prints.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target         []any  `json:"target"`
		FailureSummary string `json:"failureSummary"`
	} `json:"nodes"`
}

// runAxe injects axe-core into the page and returns its violations. The
// page's Content-Security-Policy does not apply to DevTools' evaluation.
func runAxe(t *testing.T, ctx context.Context, axe string) []axeViolation {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axe+";\ntrue")); err != nil {
		t.Fatalf("inject axe-core: %v", err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`axe.run(document, {resultTypes: ["violations"]}).then(function (r) { return JSON.stringify(r.violations); })`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		t.Fatalf("axe-core's result: %v", err)
	}
	return vs
}

// TestBrowserAxe runs axe-core on the designer in both colour schemes, the
// exports, the measure page, an embed and an error page, and fails on any serious or
// critical violation, printing each with the elements at fault.
func TestBrowserAxe(t *testing.T) {
	axe := readAxe(t)
	pages := []struct {
		name, path, scheme, ready string
	}{
		{"designer light", "/", "light", chartsThemed("light")},
		{"designer dark", "/", "dark", chartsThemed("dark")},
		{"designer, the largest design", "/?" + largestDesign(), "light", chartsThemed("light")},
		{"exports", "/exports?" + embedDesign, "light", "document.readyState === 'complete'"},
		{"exports dark", "/exports?" + embedDesign, "dark", "document.readyState === 'complete'"},
		{"measure", "/measure", "light", "document.readyState === 'complete'"},
		{"measure dark", "/measure", "dark", "document.readyState === 'complete'"},
		{"embed", "/embed/admitted?" + embedDesign, "light", chartsThemed("light")},
		{"embed dark", "/embed/admitted?" + embedDesign, "dark", chartsThemed("dark")},
		{"reverse", "/reverse?algorithm=token_bucket&rate=2&burst=10", "light", "document.readyState === 'complete'"},
		{"reverse dark", "/reverse?algorithm=token_bucket&rate=2&burst=10", "dark", "document.readyState === 'complete'"},
		{"compare", "/compare?" + url.Values{"a": {embedDesign}, "b": {embedDesign + "&limit.algorithm=gcra"}}.Encode(), "light", chartsThemed("light")},
		{"compare dark", "/compare?" + url.Values{"a": {embedDesign}, "b": {embedDesign + "&limit.algorithm=gcra"}}.Encode(), "dark", chartsThemed("dark")},
		{"not found", "/no/such/page", "light", "document.readyState === 'complete'"},
		{"not found dark", "/no/such/page", "dark", "document.readyState === 'complete'"},
	}
	s := newBrowserSession(t)
	answerFavicon(s)
	s.mu.Lock()
	s.failing = map[string]bool{"/no/such/page": true} // the error page, a 404
	s.mu.Unlock()
	ctx := s.ctx
	for _, p := range pages {
		emulateScheme(t, ctx, p.scheme)
		s.do(t, ctx, "load "+p.path, chromedp.Navigate(s.srv.URL+p.path))
		waitFor(t, ctx, p.name+" ready", p.ready)
		for _, v := range runAxe(t, ctx, axe) {
			if v.Impact != "serious" && v.Impact != "critical" {
				continue
			}
			var where []string
			for _, n := range v.Nodes {
				b, _ := json.Marshal(n.Target)
				where = append(where, string(b)+": "+strings.ReplaceAll(n.FailureSummary, "\n", " "))
			}
			t.Errorf("%s (%s): axe %s %s: %s\n\t%s", p.name, p.path, v.Impact, v.ID, v.Help, strings.Join(where, "\n\t"))
		}
	}
}
