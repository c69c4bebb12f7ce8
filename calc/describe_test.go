package calc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// constStrings returns the string constants of file whose names start
// with prefix, by name.
func constStrings(t *testing.T, file, prefix string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, n := range v.Names {
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !strings.HasPrefix(n.Name, prefix) || !ok || lit.Kind != token.STRING {
					continue
				}
				out[n.Name], _ = strconv.Unquote(lit.Value)
			}
		}
	}
	return out
}

// TestEveryCheckDescribed: every Check ID constant, as the source
// declares them, has a one-line description, and nothing else has one.
func TestEveryCheckDescribed(t *testing.T) {
	ids := constStrings(t, "checks.go", "Check")
	if len(ids) < 10 {
		t.Fatalf("found %d Check constants in checks.go", len(ids))
	}
	for name, id := range ids {
		if d := CheckDescription[id]; d == "" || !strings.HasSuffix(d, ".") || strings.Contains(d, "\n") {
			t.Errorf("%s (%q): description %q, want one sentence", name, id, d)
		}
	}
	if len(CheckDescription) != len(ids) {
		t.Errorf("%d descriptions for %d Check IDs", len(CheckDescription), len(ids))
	}
}
