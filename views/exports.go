package views

import (
	"net/url"
	"strings"
)

// ExportsView is the exports page: every export target for one design,
// with the options the gateways need.
type ExportsView struct {
	// DesignURL links back to the designer with the same design.
	DesignURL string
	// Hidden are the design's parameters, carried by the options form.
	Hidden  []Pair
	Options []ExportOption
	// Error is an option or design text that cannot be exported; with it,
	// Items is empty.
	Error string
	Items []ExportItem
}

// Pair is one query parameter.
type Pair struct{ Name, Value string }

// ExportOption is one field of the options form.
type ExportOption struct {
	Param, Label, Hint, Value string
	// Message is the problem with Value, shown beside the field.
	Message string
}

// ExportItem is one target's export.
type ExportItem struct {
	Name, Title, Group string
	// URL downloads the file.
	URL      string
	Filename string
	// Fidelity is exact, approximate or not_expressible; Error replaces
	// everything else when the target cannot render the design.
	Fidelity string
	Error    string
	Mappings []ExportMapping
	Notes    []string
	Preview  string
}

// ExportMapping is one row of a target's mapping table.
type ExportMapping struct {
	Field, From, To, Fidelity, Why string
}

// exportsURL is the exports page for the design whose policy download is
// policyURL ("/export/policy.yaml?<design>").
func exportsURL(policyURL string) string {
	_, q, _ := strings.Cut(policyURL, "?")
	return "/exports?" + q
}

// measureURL is the measure page for the design whose policy download is
// policyURL, carrying the design.
func measureURL(policyURL string) string {
	_, q, _ := strings.Cut(policyURL, "?")
	return "/measure?design=" + url.QueryEscape(q)
}

// fidelityLabel is how the page words a fidelity.
func fidelityLabel(f string) string {
	switch f {
	case "exact":
		return "exact"
	case "approximate":
		return "approximate"
	case "not_expressible":
		return "not expressible"
	}
	return f
}

// groupTitle is a target group's heading.
func groupTitle(g string) string {
	switch g {
	case "gateways":
		return "Gateways"
	case "libraries":
		return "Libraries"
	case "operations":
		return "Operations"
	case "docs":
		return "Documentation"
	}
	return g
}

// groups splits items into runs of the same group, in order.
func groups(items []ExportItem) [][]ExportItem {
	var out [][]ExportItem
	for _, it := range items {
		if n := len(out); n > 0 && out[n-1][0].Group == it.Group {
			out[n-1] = append(out[n-1], it)
			continue
		}
		out = append(out, []ExportItem{it})
	}
	return out
}
