package design_test

import (
	"testing"

	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/design"
	"github.com/ratelab/ratelab/policy"
)

func TestPresets(t *testing.T) {
	if len(design.Presets) != 5 {
		t.Fatalf("got %d presets, want 5", len(design.Presets))
	}
	seen := map[string]bool{}
	for _, p := range design.Presets {
		t.Run(p.Name, func(t *testing.T) {
			if p.Name == "" || p.Title == "" || p.Description == "" || p.Query == "" {
				t.Fatalf("preset %+v: want name, title, description and query", p)
			}
			if seen[p.Name] {
				t.Fatalf("name %q used twice", p.Name)
			}
			seen[p.Name] = true
			d := design.ParseQuery(p.Query)
			if ps := d.Problems(); len(ps) > 0 {
				t.Fatalf("problems: %v", ps)
			}
			if got := d.Query(); got != p.Query {
				t.Errorf("not canonical:\n got %s\nwant %s", got, p.Query)
			}
			pol, err := d.Policy()
			if err != nil {
				t.Fatalf("policy: %v", err)
			}
			for _, f := range policy.Lint(pol) {
				if f.Severity == calc.SeverityError {
					t.Errorf("lint error %s at %s: %s", f.ID, f.Field, f.Message)
				} else {
					t.Logf("lint %s %s at %s: %s", f.Severity, f.ID, f.Field, f.Message)
				}
			}
		})
	}
}
