package views

import "strings"

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
var ChartSlugs = []string{"admitted", "rejected", "quota", "cumulative", "replicas", "retry-storm"}

// ChartSlug is a chart's name in embed URLs: its ID without "chart-".
func ChartSlug(id string) string { return strings.TrimPrefix(id, "chart-") }
