package views

import (
	"slices"
	"strconv"
	"strings"
)

// EmbedView is one chart alone, for an iframe in API documentation.
type EmbedView struct {
	Chart Chart
	// Theme is light, dark or auto (the reader's prefers-color-scheme).
	Theme string
	// Policy is the one-line caption of the design's limit and pattern.
	Policy string
	// DesignURL opens the same design in the designer.
	DesignURL string
}

// ChartSlugs are the charts an embed URL can name, in the designer's
// order: the chart ID without "chart-".
var ChartSlugs = slices.Concat(PolicyChartSlugs, AlgorithmChartSlugs)

// PolicyChartSlugs are the charts of the policy's own limits
// (PolicyCharts), by embed name.
var PolicyChartSlugs = []string{"policy-load", "policy-admitted", "policy-rejected", "policy-cumulative"}

// AlgorithmChartSlugs are the charts comparing the calculator's
// algorithms (PatternCharts, ReplicaChart, RetryStormChart).
var AlgorithmChartSlugs = []string{"admitted", "rejected", "quota", "cumulative", "replicas", "retry-storm"}

// Embeddable reports whether c can be embedded (an iframe or an SVG at
// /embed/): the charts in ChartSlugs, not the request timeline.
func (c Chart) Embeddable() bool { return slices.Contains(ChartSlugs, ChartSlug(c.ID)) }

// ChartSlug is a chart's name in embed URLs: its ID without "chart-".
func ChartSlug(id string) string { return strings.TrimPrefix(id, "chart-") }

// Snippets are the ways to put one chart of a design into documentation:
// an iframe of the interactive embed, a Markdown image of the static SVG,
// and HTML that shows the SVG and links to the design. Every URL is
// absolute and carries the whole design.
type Snippets struct {
	IFrame, Markdown, HTML string
}

// EmbedSnippets are the snippets of chart c for the design whose canonical
// query is query, served from base ("https://ratelab.example.com").
func EmbedSnippets(base, query string, c Chart) Snippets {
	slug := ChartSlug(c.ID)
	page := base + "/embed/" + slug + "?" + query
	svg := base + "/embed/" + slug + ".svg?" + query
	design := base + "/?" + query
	alt := c.Title
	return Snippets{
		IFrame:   `<iframe src="` + htmlAttr(page) + `" title="` + htmlAttr(alt) + `" width="100%" height="` + strconv.Itoa(EmbedHeight(c)) + `" loading="lazy" style="border:0"></iframe>`,
		Markdown: "[![" + markdownText(alt) + "](" + markdownURL(svg) + ")](" + markdownURL(design) + ")",
		HTML: `<a href="` + htmlAttr(design) + `"><img src="` + htmlAttr(svg) + `" alt="` + htmlAttr(alt) +
			`" width="` + strconv.Itoa(DefaultSVGWidth) + `" height="` + strconv.Itoa(SVGDefaultHeight(c, embedSVGOptions)) + `"></a>`,
	}
}

// embedSVGOptions are the options /embed/<chart>.svg draws with, as far
// as they set the image's size: the default width, and a caption line
// (the design's limit and pattern).
var embedSVGOptions = SVGOptions{Subtitle: "the design's limit and pattern"}

// EmbedHeight is the height in pixels of an iframe that shows chart c at
// the height its lanes are laid out for, with the embed's title, caption
// and source line.
func EmbedHeight(c Chart) int { return max(c.Height, LanesHeight(1)) + 84 }

// The escapers of the snippets, built once: a strings.Replacer builds its
// lookup tables on first use, which per call cost more than the escaping.
var (
	htmlAttrReplacer     = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;")
	markdownTextReplacer = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`)
	markdownURLReplacer  = strings.NewReplacer("(", "%28", ")", "%29", " ", "%20")
)

// htmlAttr escapes s for a double-quoted HTML attribute.
func htmlAttr(s string) string { return htmlAttrReplacer.Replace(s) }

// markdownText escapes the characters that end or open Markdown link text.
func markdownText(s string) string { return markdownTextReplacer.Replace(s) }

// markdownURL keeps a URL inside Markdown's (…): parentheses and spaces
// are percent-encoded.
func markdownURL(s string) string { return markdownURLReplacer.Replace(s) }
