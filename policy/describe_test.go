package policy

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/internal/gosrc"
)

// TestEveryLintDescribed: every Lint ID constant, as lint.go declares
// them (its own strings or the calculator's IDs), has a one-line
// description, and so has every calculator check, which lint reports too.
func TestEveryLintDescribed(t *testing.T) {
	cs, err := gosrc.Consts("lint.go")
	if err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, c := range cs {
		if !strings.HasPrefix(c.Name, "Lint") || !c.Literal {
			continue // not an ID, or a calculator ID, checked below
		}
		own++
		if d := LintDescription[c.Value]; d == "" || !strings.HasSuffix(d, ".") || strings.Contains(d, "\n") {
			t.Errorf("%s (%q): description %q, want one sentence", c.Name, c.Value, d)
		}
	}
	if own < 8 {
		t.Fatalf("found %d Lint constants of lint's own in lint.go", own)
	}
	for id, d := range calc.CheckDescription {
		if LintDescription[id] != d {
			t.Errorf("calculator check %q: lint describes it %q, calc %q", id, LintDescription[id], d)
		}
	}
	if want := own + len(calc.CheckDescription); len(LintDescription) != want {
		t.Errorf("%d lint descriptions, want %d (lint's own and the calculator's)", len(LintDescription), want)
	}
}
