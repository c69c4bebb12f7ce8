package views

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestPageNavLinksEverySection: the links after the answer name an
// element of the page each, the form's heading links back to the
// results, and every part of the results below the answer that the
// design shows has its link, with the calculator's numbers (full input:
// tiers, endpoints, replicas, the share) and without them.
func TestPageNavLinksEverySection(t *testing.T) {
	full := sampleView(t, fullInput())
	full.Results.ExportURL = "/export/policy.yaml?capacity=20000"
	bare := sampleView(t, fullInput())
	bare.Results.Result = nil
	for _, tt := range []struct {
		name string
		view DesignerView
		// the sections linked, by the heading each link names
		want []string
	}{
		{"full", full, []string{"design", "charts-heading", "policy-export-heading", "summary-heading", "checks-heading",
			"algorithms-heading", "tiers-heading", "endpoints-heading", "replica-heading", "share-heading", "headers-heading", "backoff-heading"}},
		{"no calculator", bare, []string{"design", "charts-heading"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := render(t, Designer(tt.view))
			nav := byTestID(doc, "page-nav")
			if nav.Length() != 1 {
				t.Fatalf("%d page navs, want 1", nav.Length())
			}
			var got []string
			nav.Find("a").Each(func(_ int, a *goquery.Selection) {
				href, _ := a.Attr("href")
				id, ok := strings.CutPrefix(href, "#")
				if !ok {
					t.Errorf("link %q is not to this page", href)
					return
				}
				got = append(got, id)
				if n := doc.Find(`[id="` + id + `"]`).Length(); n != 1 {
					t.Errorf("link %q (%s): %d elements have that id, want 1", href, a.Text(), n)
				}
			})
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("links to\n %v\nwant\n %v", got, tt.want)
			}
			// Every part of the results after the nav is linked.
			linked := map[string]bool{}
			for _, id := range got {
				linked[id] = true
			}
			doc.Find(`[data-testid="results"] section[aria-labelledby] > h3[id]`).Each(func(_ int, h *goquery.Selection) {
				if id, _ := h.Attr("id"); id != "policy-limits-heading" && !linked[id] {
					t.Errorf("section %q (%s) has no link in the page nav", id, h.Text())
				}
			})
			for _, testid := range []string{"to-results-top", "to-results"} {
				if href, _ := byTestID(doc, testid).Attr("href"); href != "#results" || doc.Find("#results").Length() != 1 {
					t.Errorf("%s: href %q, want #results on a page that has it", testid, href)
				}
			}
		})
	}
}
