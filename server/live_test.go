package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestResultsWithProblems: with htmx a design with problems answers only
// the field messages and the stale note, out of band, and tells htmx to
// keep the results and the address; the page without JavaScript still
// lists the problems in the results.
func TestResultsWithProblems(t *testing.T) {
	h := newServer(testConfig(t))
	get := func(path string, hx bool) (*httptest.ResponseRecorder, *goquery.Document) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if hx {
			req.Header.Set("HX-Request", "true")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: status %d", path, rec.Code)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String()))
		if err != nil {
			t.Fatal(err)
		}
		return rec, doc
	}
	const bad = "?capacity=-1&clients=200&p50=1&p95=3&p99=5"

	rec, doc := get(resultsPath+bad, true)
	if got := rec.Header().Get("HX-Reswap"); got != "none" {
		t.Errorf("HX-Reswap %q; want none, keeping the last valid results", got)
	}
	if got := rec.Header().Get("HX-Push-Url"); got != "false" {
		t.Errorf("HX-Push-Url %q; want false, keeping the last valid design's address", got)
	}
	if n := doc.Find(`[data-testid="results"]`).Length(); n != 0 {
		t.Errorf("the fragment carries %d results sections; want none", n)
	}
	note := doc.Find(`#results-stale[hx-swap-oob="true"][data-stale]`)
	if note.Length() != 1 || !strings.Contains(note.Text(), "Results for the last valid design") {
		t.Fatalf("stale note %q; want one, out of band, saying the results are the last valid design's", note.Text())
	}
	if f, _ := note.Find(`[data-testid="problem"]`).Attr("data-field"); f != "capacity" {
		t.Errorf("stale note's problem on %q; want capacity", f)
	}
	if msg := doc.Find(`#field-messages[hx-swap-oob="true"] [data-msg-for="msg-capacity"]`).Text(); !strings.HasPrefix(strings.TrimSpace(msg), "capacity") {
		t.Errorf("capacity message %q; want the capacity's problem, out of band", msg)
	}

	rec, doc = get(designerPath+bad, false)
	if rec.Header().Get("HX-Reswap") != "" {
		t.Error("the page sets HX-Reswap")
	}
	if n := doc.Find(`[data-testid="results"] [data-testid="problems"] [data-field="capacity"]`).Length(); n != 1 {
		t.Errorf("the page without JavaScript lists %d capacity problems in the results; want 1", n)
	}
	if s := doc.Find(`#results-stale`); s.Length() != 1 || strings.TrimSpace(s.Text()) != "" {
		t.Errorf("the page's stale note %q; want it there and empty", s.Text())
	}

	rec, doc = get(resultsPath+"?capacity=3000&clients=200&p50=1&p95=3&p99=5", true)
	if rec.Header().Get("HX-Reswap") != "" || doc.Find(`[data-testid="results"] [data-testid="policy-limits"]`).Length() != 1 {
		t.Error("a valid design's fragment: want the results and no HX-Reswap")
	}
}
