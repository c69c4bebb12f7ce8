package server

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ratelab/ratelab/views"
)

// embedDesign is a small design whose charts the embed tests frame.
const embedDesign = "capacity=500&clients=20&p99=3&pattern=idle_then_burst"

func getEmbed(t *testing.T, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(rec, req)
	return rec
}

// TestEmbedEveryChart: each chart's embed page is framable by any site,
// still under the strict script policy, loads nothing from another origin,
// has no inline script or style, and carries the same option and table as
// the designer's chart for the same design.
func TestEmbedEveryChart(t *testing.T) {
	var charts []views.Chart
	for _, c := range designerView(embedDesign).Results.Charts {
		if c.Embeddable() {
			charts = append(charts, c)
		} else if c.ID != views.ChartPolicyTimeline {
			t.Errorf("the designer's chart %s has no embed", c.ID)
		}
	}
	if len(charts) != len(views.ChartSlugs) {
		t.Fatalf("designer makes %d embeddable charts, embeds name %d", len(charts), len(views.ChartSlugs))
	}
	for _, want := range charts {
		slug := views.ChartSlug(want.ID)
		t.Run(slug, func(t *testing.T) {
			rec := getEmbed(t, "/embed/"+slug+"?"+embedDesign)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			h := rec.Header()
			csp := h.Get("Content-Security-Policy")
			for _, d := range []string{"frame-ancestors *", "script-src 'self'", "style-src 'self'", "default-src 'self'", "object-src 'none'"} {
				if !strings.Contains(csp, d) {
					t.Errorf("CSP %q lacks %q", csp, d)
				}
			}
			if xfo := h.Get("X-Frame-Options"); xfo != "" {
				t.Errorf("X-Frame-Options %q forbids framing", xfo)
			}
			doc, err := goquery.NewDocumentFromReader(bytes.NewReader(rec.Body.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			checkSelfContained(t, doc)
			el := doc.Find("[data-chart-option]")
			if el.Length() != 1 {
				t.Fatalf("%d charts in the embed, want 1", el.Length())
			}
			if opt, _ := el.Attr("data-chart-option"); opt != want.Option {
				t.Errorf("option differs from the designer's %s", want.ID)
			}
			rows := doc.Find("table tbody tr")
			if rows.Length() != len(want.Table.Rows) {
				t.Errorf("table has %d rows, designer's %d", rows.Length(), len(want.Table.Rows))
			}
			if theme, _ := el.Attr("data-chart-theme"); theme != "auto" {
				t.Errorf("default theme %q, want auto", theme)
			}
			if !strings.Contains(doc.Find(`[data-testid="embed-policy"]`).Text(), "token_bucket(rate=") {
				t.Errorf("caption %q does not name the limit", doc.Find(`[data-testid="embed-policy"]`).Text())
			}
		})
	}
}

// checkSelfContained fails on anything in an HTML document that loads from
// another origin or runs inline: every src and href is a path on this
// origin, and there is no inline script, style element or style attribute.
func checkSelfContained(t *testing.T, doc *goquery.Document) {
	t.Helper()
	doc.Find("[src], [href]").Each(func(_ int, s *goquery.Selection) {
		for _, attr := range []string{"src", "href"} {
			v, ok := s.Attr(attr)
			if ok && (!strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//")) {
				t.Errorf("%s=%q is not a path on this origin", attr, v)
			}
		}
	})
	doc.Find("script").Each(func(_ int, s *goquery.Selection) {
		if _, ok := s.Attr("src"); !ok || strings.TrimSpace(s.Text()) != "" {
			t.Errorf("inline script: %q", s.Text())
		}
	})
	if n := doc.Find("style, [style]").Length(); n > 0 {
		t.Errorf("%d inline styles", n)
	}
}

// TestEmbedThemes: the theme reaches the chart; an unknown one is a 422.
func TestEmbedThemes(t *testing.T) {
	for _, theme := range embedThemes {
		rec := getEmbed(t, "/embed/admitted?"+embedDesign+"&theme="+theme)
		doc, _ := goquery.NewDocumentFromReader(rec.Body)
		if got, _ := doc.Find("[data-chart-option]").Attr("data-chart-theme"); got != theme {
			t.Errorf("theme %s: chart theme %q", theme, got)
		}
		if !doc.Find("body").HasClass("theme-" + theme) {
			t.Errorf("theme %s: body lacks class theme-%s", theme, theme)
		}
	}
	rec := getEmbed(t, "/embed/admitted?"+embedDesign+"&theme=neon")
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `theme: "neon"`) {
		t.Errorf("theme neon: %d %s, want a 422 naming it", rec.Code, rec.Body)
	}
}

func TestEmbedRefusals(t *testing.T) {
	tests := []struct {
		target string
		status int
		msg    string
	}{
		{"/embed/pie?" + embedDesign, http.StatusNotFound, "the charts are policy-load, policy-admitted, policy-rejected"},
		{"/embed/policy-timeline?" + embedDesign, http.StatusNotFound, "the charts are policy-load"},
		{"/embed/admitted?capacity=-5&clients=3", http.StatusUnprocessableEntity, "capacity"},
		{"/embed/admitted?capacity=500&clients=20&pattern=steady&pattern.rate=-1", http.StatusUnprocessableEntity, "pattern.rate"},
	}
	for _, tt := range tests {
		rec := getEmbed(t, tt.target)
		if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.msg) {
			t.Errorf("%s: %d %q, want %d mentioning %q", tt.target, rec.Code, rec.Body, tt.status, tt.msg)
		}
	}
}

// TestEmbedCaching: the same URL gives the same bytes with a strong ETag,
// a conditional request gets a 304, and the gzipped representation has
// its own ETag and decompresses to the same bytes.
func TestEmbedCaching(t *testing.T) {
	target := "/embed/cumulative?" + embedDesign
	a, b := getEmbed(t, target), getEmbed(t, target)
	if !bytes.Equal(a.Body.Bytes(), b.Body.Bytes()) {
		t.Fatal("two requests for the same embed differ")
	}
	etag := a.Header().Get("ETag")
	if !strings.HasPrefix(etag, `"`) || etag != b.Header().Get("ETag") {
		t.Fatalf("ETag %q / %q, want the same strong tag", etag, b.Header().Get("ETag"))
	}
	if cc := a.Header().Get("Cache-Control"); cc != embedCache {
		t.Errorf("Cache-Control %q, want %q", cc, embedCache)
	}
	if rec := getEmbed(t, target, "If-None-Match", `"other", `+etag); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match with the tag: %d with %d bytes, want an empty 304", rec.Code, rec.Body.Len())
	}
	gz := getEmbed(t, target, "Accept-Encoding", "gzip")
	if gz.Header().Get("Content-Encoding") != "gzip" || gz.Header().Get("ETag") == etag {
		t.Fatalf("gzip: encoding %q, ETag %q (identity's %q), want gzip under its own tag",
			gz.Header().Get("Content-Encoding"), gz.Header().Get("ETag"), etag)
	}
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(plain, a.Body.Bytes()) {
		t.Errorf("gzip body does not decompress to the identity body (err %v)", err)
	}
	if rec := getEmbed(t, target, "Accept-Encoding", "gzip", "If-None-Match", gz.Header().Get("ETag")); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match with the gzip tag: %d, want 304", rec.Code)
	}
}

// TestFrameProtectionElsewhere: only /embed/ may be framed.
func TestFrameProtectionElsewhere(t *testing.T) {
	for _, target := range []string{"/", "/exports?" + embedDesign, "/healthz"} {
		rec := getEmbed(t, target)
		if !strings.Contains(rec.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") || rec.Header().Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: CSP %q, X-Frame-Options %q; want framing forbidden", target,
				rec.Header().Get("Content-Security-Policy"), rec.Header().Get("X-Frame-Options"))
		}
	}
}

// TestDesignerDocsSnippets: under each chart the designer offers an
// iframe, a Markdown image and HTML with absolute URLs on the host the
// page was reached at, carrying the design; the iframe's page answers.
func TestDesignerDocsSnippets(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/?"+embedDesign, nil)
	req.Host = "docs.example:8080"
	rec := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(rec, req)
	designer, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	query := designerView(embedDesign).Results.Query
	for _, slug := range views.ChartSlugs {
		id := "chart-" + slug
		doc := lazyPanel(t, newServer(config{}), designer, id+"-snippets", "docs.example:8080")
		iframe := doc.Find(`[data-testid="` + id + `-iframe"]`).Text()
		md := doc.Find(`[data-testid="` + id + `-markdown"]`).Text()
		html := doc.Find(`[data-testid="` + id + `-html"]`).Text()
		page := "http://docs.example:8080/embed/" + slug + "?" + query
		svg := "http://docs.example:8080/embed/" + slug + ".svg?" + query
		if !strings.Contains(iframe, `src="`+strings.ReplaceAll(page, "&", "&amp;")+`"`) {
			t.Errorf("%s iframe snippet %q lacks src %s", slug, iframe, page)
		}
		if !strings.Contains(md, "]("+svg+")") || !strings.HasSuffix(md, "](http://docs.example:8080/?"+query+")") {
			t.Errorf("%s Markdown snippet %q, want the SVG %s linking to the design", slug, md, svg)
		}
		if !strings.Contains(html, `<img src="`+strings.ReplaceAll(svg, "&", "&amp;")+`"`) {
			t.Errorf("%s HTML snippet %q lacks the SVG", slug, html)
		}
		if doc.Find(`button[data-copy="`+id+`-markdown"]`).Length() != 1 {
			t.Errorf("%s: no copy button for the Markdown snippet", slug)
		}
		if r := getEmbed(t, strings.TrimPrefix(page, "http://docs.example:8080")); r.Code != http.StatusOK {
			t.Errorf("%s: the iframe's page answers %d", slug, r.Code)
		}
		r := getEmbed(t, strings.TrimPrefix(svg, "http://docs.example:8080"))
		if r.Code != http.StatusOK || r.Header().Get("Content-Type") != "image/svg+xml" {
			t.Errorf("%s: the image answers %d %s", slug, r.Code, r.Header().Get("Content-Type"))
		}
		// The <img> is sized as the image is drawn, so a chart with
		// lanes is not squeezed into 720×400.
		var size struct {
			Width  string `xml:"width,attr"`
			Height string `xml:"height,attr"`
		}
		if err := xml.Unmarshal(r.Body.Bytes(), &size); err != nil {
			t.Fatalf("%s: %v", slug, err)
		}
		if want := `width="` + size.Width + `" height="` + size.Height + `"`; !strings.Contains(html, want) {
			t.Errorf("%s HTML snippet %q; want the image's size, %s", slug, html, want)
		}
	}
}

// TestEmbedSVG: every chart as SVG is the image views.RenderSVG draws for
// the designer's chart, light by default and dark on request, cached like
// the embed pages, and self-contained.
func TestEmbedSVG(t *testing.T) {
	charts := designerView(embedDesign).Results.Charts
	for _, c := range charts {
		if !c.Embeddable() {
			continue
		}
		slug := views.ChartSlug(c.ID)
		for _, theme := range []string{"", "light", "dark", "auto"} {
			target := "/embed/" + slug + ".svg?" + embedDesign
			if theme != "" {
				target += "&theme=" + theme
			}
			rec := getEmbed(t, target)
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/svg+xml" {
				t.Fatalf("%s: %d %s", target, rec.Code, rec.Header().Get("Content-Type"))
			}
			want := views.ThemeLight
			if theme == "dark" {
				want = views.ThemeDark
			}
			svg, err := views.RenderSVG(c, views.SVGOptions{Theme: want, Subtitle: doc(t, "/embed/"+slug+"?"+embedDesign).Find(`[data-testid="embed-policy"]`).Text()})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(rec.Body.Bytes(), svg) {
				t.Errorf("%s: not the designer's chart as RenderSVG draws it in the %s theme", target, want)
			}
			if !strings.HasPrefix(rec.Header().Get("ETag"), `"`) || rec.Header().Get("Cache-Control") != embedCache {
				t.Errorf("%s: ETag %q, Cache-Control %q", target, rec.Header().Get("ETag"), rec.Header().Get("Cache-Control"))
			}
			if strings.Contains(rec.Body.String(), "<script") || strings.Contains(rec.Body.String(), "href=\"http") {
				t.Errorf("%s: the SVG scripts or links out", target)
			}
		}
	}
}

// doc fetches and parses an HTML page.
func doc(t *testing.T, target string) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(getEmbed(t, target).Body)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
