package server

import (
	"testing"

	"github.com/ratelab/ratelab/design"
)

// The designer's header links every preset, each to its design URL.
func TestDesignerLinksPresets(t *testing.T) {
	doc, _ := getDoc(t, "/")
	links := testid(doc, "presets").Find(`[data-testid="preset"]`)
	if links.Length() != len(design.Presets) {
		t.Fatalf("got %d preset links, want %d", links.Length(), len(design.Presets))
	}
	for i, p := range design.Presets {
		l := links.Eq(i)
		if got, want := l.AttrOr("href", ""), "/?"+p.Query; got != want {
			t.Errorf("preset %s: href %q, want %q", p.Name, got, want)
		}
		if got := l.Text(); got != p.Title {
			t.Errorf("preset %s: text %q, want %q", p.Name, got, p.Title)
		}
		// The link opens the preset's design.
		d, _ := getDoc(t, l.AttrOr("href", ""))
		if got := testid(d, "summary").Length(); got != 1 {
			t.Errorf("preset %s: the designer shows %d summaries, want 1", p.Name, got)
		}
	}
}
