package server

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
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

// TestBrowserMeasureResultsFitAPhone measures a log on a phone's screen
// (390 px): the page never scrolls sideways (a results table wider than
// the phone scrolls within its own region, which takes the keyboard's
// focus), the warehouse form's checkbox sits on its label's line, and
// axe-core finds no serious or critical violation in the results.
func TestBrowserMeasureResultsFitAPhone(t *testing.T) {
	axe := readAxe(t)
	s := newBrowserSession(t)
	answerFavicon(s)
	ctx := s.ctx
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: 390, Height: 844, DeviceScaleFactor: 1, Mobile: true}); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(log, []byte(measureLog()), 0o644); err != nil {
		t.Fatal(err)
	}
	s.do(t, ctx, "open the measure page", chromedp.Navigate(s.srv.URL+"/measure?design="+url.QueryEscape(measureDesign)))
	waitFor(t, ctx, "the measure page", `!!document.querySelector('[data-testid="measure-form"]')`)
	s.do(t, ctx, "choose the log", chromedp.SetUploadFiles(chromedp.CSS(`#m-log`), []string{log}))
	s.do(t, ctx, "submit", chromedp.Click(chromedp.CSS(`[data-testid="measure-submit"]`)))
	waitFor(t, ctx, "the shadow chart", `!!document.querySelector('#chart-shadow[data-chart-drawn] canvas')`)
	type fit struct {
		Page, View float64
		Wide       []string // tables wider than the viewport
		Box, Text  float64  // the checkbox's and its label text's tops
	}
	got := eval[fit](t, ctx, `(function () {
  var wide = Array.from(document.querySelectorAll("table"), function (t) { return t; })
    .filter(function (t) { return t.getBoundingClientRect().width > document.documentElement.clientWidth; })
    .map(function (t) { return t.getAttribute("data-testid") || t.className; });
  var box = document.getElementById("sql-epoch").getBoundingClientRect();
  var range = document.createRange();
  range.selectNodeContents(document.querySelector('label[for="sql-epoch"]'));
  var text = range.getClientRects();
  return { Page: document.documentElement.scrollWidth, View: document.documentElement.clientWidth, Wide: wide,
    Box: box.top, Text: text.length ? text[text.length - 1].top : -1 };
})()`)
	if got.Page > got.View {
		t.Errorf("the page is %.0f px wide on a %.0f px screen: it scrolls sideways", got.Page, got.View)
	}
	// The check must be able to fail: some table is wider than the phone.
	if len(got.Wide) == 0 {
		t.Error("no results table is wider than the phone; the check proves nothing")
	}
	if d := got.Text - got.Box; d > 12 || d < -12 {
		t.Errorf("the checkbox's top is at %.0f px, its label's text at %.0f: not on one line", got.Box, got.Text)
	}
	for _, v := range runAxe(t, ctx, axe) {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("axe %s %s: %s (%d elements)", v.Impact, v.ID, v.Help, len(v.Nodes))
		}
	}
}
