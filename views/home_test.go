package views

import (
	"bytes"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func renderDoc(t *testing.T, v HomeView) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := Home(v).Render(t.Context(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatalf("parse HTML: %v", err)
	}
	return doc
}

func TestHome(t *testing.T) {
	doc := renderDoc(t, HomeView{Title: "ratelab test"})

	for _, id := range []string{"layout", "home", "home-title", "home-description", "designer-placeholder"} {
		if n := doc.Find(`[data-testid="` + id + `"]`).Length(); n != 1 {
			t.Errorf(`[data-testid=%q]: got %d elements, want 1`, id, n)
		}
	}
	if got := doc.Find("title").Text(); got != "ratelab test" {
		t.Errorf("title: got %q, want the view's title", got)
	}
	if got := doc.Find(`[data-testid="home-title"]`).Text(); got != "ratelab test" {
		t.Errorf("heading: got %q, want the view's title", got)
	}
	if got := doc.Find(`[data-testid="designer-placeholder"]`).Text(); !strings.Contains(got, "designer is coming") {
		t.Errorf("placeholder: got %q, want it to say the designer is coming", got)
	}
}

func TestHomeEscapesTitle(t *testing.T) {
	doc := renderDoc(t, HomeView{Title: `<script>alert(1)</script>`})
	if n := doc.Find("script").Length(); n != 0 {
		t.Errorf("title was not escaped: found %d script elements", n)
	}
}

// TestLayoutLoadsOnlyLocalAssets holds the house rule: no inline script or
// style and no CDN, so a strict Content-Security-Policy can hold.
func TestLayoutLoadsOnlyLocalAssets(t *testing.T) {
	doc := renderDoc(t, HomeView{Title: "ratelab"})
	if n := doc.Find("script, style, [style]").Length(); n != 0 {
		t.Errorf("found %d inline script or style elements or attributes, want 0", n)
	}
	if got := doc.Find(`meta[charset]`).AttrOr("charset", ""); !strings.EqualFold(got, "utf-8") {
		t.Errorf("meta charset: got %q, want utf-8", got)
	}
	if doc.Find(`meta[name="viewport"]`).Length() != 1 {
		t.Error("missing meta viewport")
	}
	links := doc.Find(`link[rel="stylesheet"]`)
	if links.Length() != 1 {
		t.Fatalf("stylesheets: got %d, want 1", links.Length())
	}
	links.Each(func(_ int, s *goquery.Selection) {
		if href := s.AttrOr("href", ""); !strings.HasPrefix(href, "/static/css/app.css?v=") {
			t.Errorf("stylesheet href: got %q, want /static/css/app.css with a content version", href)
		}
	})
}
