package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/design"
)

// TestReversePage: a token bucket of 2/s with a burst of 10 paces a
// client at 2/s, one request every 0.5 s, and lets 10 through at once;
// the page says so, and its designer link pins exactly that limit.
func TestReversePage(t *testing.T) {
	doc, code := reversePage(t, "algorithm=token_bucket&rate=2&burst=10&capacity=500")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if got := testid(doc, "reverse-pace").Text(); got != "2 requests/s" {
		t.Errorf("pace %q, want 2 requests/s", got)
	}
	if got := testid(doc, "reverse-min_interval").Text(); got != "500 ms" {
		t.Errorf("min interval %q, want 500 ms (1/2 s)", got)
	}
	if n := doc.Find(`[data-testid^="equiv-"]`).Length(); n != 5 {
		t.Errorf("%d equivalents, want the other five algorithms", n)
	}
	href, _ := testid(doc, "reverse-designer").Attr("href")
	u, err := url.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	p, err := design.ParseQuery(u.RawQuery).Policy()
	if err != nil {
		t.Fatalf("the designer link %s: %v", href, err)
	}
	want := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 2, Burst: 10}
	if p.Defaults.Limit != want || p.Service.Capacity != 500 || p.Global.Limit.Algorithm != "" {
		t.Errorf("the designer link's policy: default %v, capacity %g, global %v; want %v, 500, none", p.Defaults.Limit, p.Service.Capacity, p.Global.Limit, want)
	}
}

// TestReversePageBadValues: a value out of range or not a number is a 422
// with the message beside its field, never a 500.
func TestReversePageBadValues(t *testing.T) {
	tests := []struct{ query, field, part string }{
		{"algorithm=token_bucket&rate=0&burst=10", "rate", "out of range"},
		{"algorithm=gcra&rate=abc&burst=10", "rate", "not a number"},
		{"algorithm=fixed_window&limit=10&window=1e12", "window", "window"},
		{"algorithm=sliding_log&limit=1.5&window=60", "limit", "whole number"},
		{"algorithm=nope&rate=1", "algorithm", "algorithm"},
	}
	for _, tt := range tests {
		doc, code := reversePage(t, tt.query)
		if code != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422", tt.query, code)
			continue
		}
		if msg := testid(doc, "msg-"+tt.field).Text(); !strings.Contains(msg, tt.part) {
			t.Errorf("%s: message beside %s is %q, want it to mention %q", tt.query, tt.field, msg, tt.part)
		}
		if testid(doc, "reverse-result").Length() != 0 {
			t.Errorf("%s: a result for a bad limit", tt.query)
		}
	}
}

// reversePage gets the reverse page for a query from the real server.
func reversePage(t *testing.T, query string) (*goquery.Document, int) {
	t.Helper()
	rec := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, reversePath+"?"+query, nil))
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc, rec.Code
}
