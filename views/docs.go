package views

// DocsChartView is one chart as a standalone HTML page for a docs folder:
// the static SVG inline, its caption and its data table, no script.
type DocsChartView struct {
	Chart Chart
	// SVG is RenderSVG's document for the chart.
	SVG []byte
	// Caption is the one-line caption of the policy and pattern.
	Caption string
}
