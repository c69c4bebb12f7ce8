package design

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// TestWindowBoundaryFollowsTheDesign: without pattern.window the
// window_boundary pattern straddles the design's window (60 s when the
// design gives none), so the fixed window's 2× flaw shows on the design's
// own limit; pattern.window still wins, and the form's placeholder says
// what a blank field means.
func TestWindowBoundaryFollowsTheDesign(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  time.Duration
	}{
		{"the default window", "capacity=2000&p99=5&pattern=window_boundary", 60 * time.Second},
		{"the design's window", "capacity=2000&p99=5&window=90&pattern=window_boundary", 90 * time.Second},
		{"pattern.window wins", "capacity=2000&p99=5&window=90&pattern=window_boundary&pattern.window=10", 10 * time.Second},
		{"a window longer than the pattern allows", "capacity=2000&p99=5&window=172800&pattern=window_boundary", algorithms.MaxPatternWindow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ParseQuery(tt.query)
			p, ok := d.Pattern()
			if !ok {
				t.Fatalf("no pattern: %v", d.Problems())
			}
			if p.Window != tt.want {
				t.Errorf("pattern window %v, want %v", p.Window, tt.want)
			}
			if d.Value("pattern.window") != "" {
				return
			}
			f, _ := find(d.Form(d.Resolve()), "pattern.window")
			if want := patternValue(p, "window"); f.Placeholder != want || !f.Applies {
				t.Errorf("pattern.window placeholder %q (applies %v), want %q", f.Placeholder, f.Applies, want)
			}
		})
	}
}

// TestWindowBoundaryRoundTrip: a policy charted on window_boundary at its
// own window needs no pattern.window in its URL, and one at another window
// keeps it.
func TestWindowBoundaryRoundTrip(t *testing.T) {
	src := ParseQuery("capacity=2000&p99=5&window=90")
	pol := src.Resolve().Policy
	for _, w := range []time.Duration{90 * time.Second, 10 * time.Second} {
		p := algorithms.DefaultPattern(algorithms.PatternWindowBoundary)
		p.Window = w
		d := FromPolicy(pol, p)
		got, ok := d.Pattern()
		if !ok || got.Window != w {
			t.Errorf("window %v: pattern %+v (ok %v) from %s", w, got, ok, d.Query())
		}
		if given := d.Value("pattern.window") != ""; given != (w != 90*time.Second) {
			t.Errorf("window %v: query %s", w, d.Query())
		}
	}
}
