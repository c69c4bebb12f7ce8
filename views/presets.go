package views

import "github.com/ratelab/ratelab/design"

// PresetLink is one design to start from, as the designer header links it.
type PresetLink struct {
	Title       string
	Description string
	Href        string // the designer with the preset's design: "/?" + query
}

// PresetLinks are design.Presets as links to the designer.
func PresetLinks() []PresetLink {
	out := make([]PresetLink, len(design.Presets))
	for i, p := range design.Presets {
		out[i] = PresetLink{Title: p.Title, Description: p.Description, Href: "/?" + p.Query}
	}
	return out
}
