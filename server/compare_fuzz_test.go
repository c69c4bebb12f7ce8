package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// FuzzCompare holds the compare page to its promises on any two designs
// and any traffic: never a panic or a 500; a 422 says why beside a field;
// a 200 with both designs given has the answer (a row for each class of
// clients or the backend, and every limit of both diffed).
func FuzzCompare(f *testing.F) {
	for _, s := range [][3]string{
		{"", "", ""},
		{embedDesign, embedDesign + "&limit.algorithm=gcra", ""},
		{"http://localhost:8080/?" + embedDesign, embedDesign + "&limit.burst=3", "retry_storm"},
		{embedDesign, "capacity=-5", "steady"},
		{embedDesign, embedDesign, "tsunami"},
		{"capacity=20000&clients=10&p99=5&pattern=steady&pattern.rate=1000&pattern.duration=100", "capacity=2000&tiers.0.name=a&tiers.0.clients=3&tiers.1.name=b&tiers.1.clients=4", ""},
		{"?capacity=%zz", "/?;=1", "window_boundary"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	srv := newServer(config{pageCache: -1})
	f.Fuzz(func(t *testing.T, a, b, pattern string) {
		q := url.Values{"a": {a}, "b": {b}}
		if pattern != "" {
			q.Set("pattern", pattern)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, comparePath+"?"+q.Encode(), nil))
		doc, err := goquery.NewDocumentFromReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		messages := strings.TrimSpace(doc.Find(".compare-form .field-msg").Text())
		switch rec.Code {
		case http.StatusOK:
			if messages != "" {
				t.Errorf("a 200 with a message beside a field: %q", messages)
			}
			if strings.TrimSpace(a) != "" && strings.TrimSpace(b) != "" &&
				(doc.Find(`[data-testid="outcome-row"], [data-testid="outcome-same-row"]`).Length() == 0 ||
					doc.Find(`[data-testid="diff-row"], [data-testid="diff-same-row"]`).Length() == 0) {
				t.Errorf("a 200 for two designs without the outcome or the limits")
			}
		case http.StatusUnprocessableEntity:
			if messages == "" {
				t.Errorf("a 422 without a message beside a field")
			}
		default:
			t.Fatalf("status %d for a=%q b=%q pattern=%q", rec.Code, a, b, pattern)
		}
	})
}
