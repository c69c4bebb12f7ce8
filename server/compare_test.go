package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func comparePage(t *testing.T, a, b string) (*goquery.Document, int) {
	t.Helper()
	q := url.Values{"a": {a}, "b": {b}}
	rec := httptest.NewRecorder()
	newServer(config{pageCache: -1}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, comparePath+"?"+q.Encode(), nil))
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc, rec.Code
}

// TestCompare: two designs that differ only in the paid tier's algorithm
// (and one that pins its burst) are diffed limit by limit — the paid tier
// changed, the rest the same — and both are charted on the same traffic,
// their charts with distinct ids.
func TestCompare(t *testing.T) {
	base := "capacity=2000&p99=5&tiers.0.name=free&tiers.0.clients=180&tiers.1.name=paid&tiers.1.clients=20&tiers.1.multiplier=4&pattern=idle_then_burst"
	doc, code := comparePage(t, "http://localhost:8080/?"+base, base+"&tiers.1.limit.algorithm=gcra&tiers.1.limit.burst=40")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	changed := map[string]bool{}
	doc.Find(`[data-testid="diff-row"]`).Each(func(_ int, s *goquery.Selection) {
		changed[strings.TrimSpace(s.Find("th").Text())] = s.AttrOr("data-changed", "") == "true"
	})
	want := map[string]bool{"default limit": false, "tier free": false, "tier paid": true, "global limit": false}
	for label, w := range want {
		got, ok := changed[label]
		if !ok || got != w {
			t.Errorf("%s: in the diff %v, changed %v; want changed %v", label, ok, got, w)
		}
	}
	paid := doc.Find(`[data-testid="diff-row"][data-changed="true"] td`)
	if !strings.Contains(paid.Eq(0).Text(), "token_bucket") || !strings.Contains(paid.Eq(1).Text(), "gcra(rate=40/s, burst=40)") {
		t.Errorf("the paid tier's row: %q against %q", paid.Eq(0).Text(), paid.Eq(1).Text())
	}
	ids := map[string]bool{}
	doc.Find("[data-chart-option]").Each(func(_ int, s *goquery.Selection) {
		id := s.AttrOr("id", "")
		if ids[id] {
			t.Errorf("chart id %q twice", id)
		}
		ids[id] = true
	})
	if len(ids) < 6 {
		t.Errorf("%d charts, want the policy charts of both designs", len(ids))
	}
}

// TestCompareBadDesign: a design with problems is named beside its field
// with a 422, and nothing is charted.
func TestCompareBadDesign(t *testing.T) {
	doc, code := comparePage(t, "capacity=2000&clients=10&p99=2", "capacity=-5&clients=10")
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422", code)
	}
	if msg := doc.Find(`[data-testid="msg-b"]`).Text(); !strings.Contains(msg, "capacity") {
		t.Errorf("the message beside b: %q", msg)
	}
	if doc.Find("[data-chart-option]").Length() != 0 {
		t.Error("charts for a design with problems")
	}
}

// TestDesignerLinksCompare: the results link the compare page with the
// design as A.
func TestDesignerLinksCompare(t *testing.T) {
	doc, _ := getDoc(t, "/")
	href, _ := testid(doc, "compare-link").Attr("href")
	u, err := url.Parse(href)
	if err != nil || u.Path != comparePath || !strings.HasPrefix(u.Query().Get("a"), "/?capacity=2000") {
		t.Errorf("compare link %q", href)
	}
}
