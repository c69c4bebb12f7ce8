package policy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/calc"
)

// TestEveryLintDescribed: every Lint ID constant, as lint.go declares
// them (its own strings or the calculator's IDs), has a one-line
// description, and so has every calculator check, which lint reports too.
func TestEveryLintDescribed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "lint.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, n := range v.Names {
				if !strings.HasPrefix(n.Name, "Lint") {
					continue
				}
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok {
					continue // a calculator ID, checked below
				}
				own++
				id, _ := strconv.Unquote(lit.Value)
				if d := LintDescription[id]; d == "" || !strings.HasSuffix(d, ".") || strings.Contains(d, "\n") {
					t.Errorf("%s (%q): description %q, want one sentence", n.Name, id, d)
				}
			}
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
