package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestLiveUpdateCarriesTheMeasureLink: a live update swaps the header's
// "Measure an access log first" link out of band with the new design, so
// it never points at an older one.
func TestLiveUpdateCarriesTheMeasureLink(t *testing.T) {
	const q = "capacity=1234&clients=10&p99=2"
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, resultsPath+"?"+q, nil)
	req.Header.Set("HX-Request", "true")
	newServer(config{pageCache: -1}).ServeHTTP(rec, req)
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	link := doc.Find(`#measure-first[hx-swap-oob="true"]`)
	if link.Length() != 1 {
		t.Fatalf("no out-of-band measure link in the update (status %d)", rec.Code)
	}
	u, err := url.Parse(link.AttrOr("href", ""))
	if err != nil || !strings.Contains(u.Query().Get("design"), "capacity=1234") {
		t.Errorf("measure link %q does not carry the design", link.AttrOr("href", ""))
	}
}
