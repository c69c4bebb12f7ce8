package calc

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/internal/gosrc"
)

// constStrings returns the string constants of file whose names start
// with prefix, by name.
func constStrings(t *testing.T, file, prefix string) map[string]string {
	t.Helper()
	cs, err := gosrc.Consts(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range cs {
		if strings.HasPrefix(c.Name, prefix) && c.Literal {
			out[c.Name] = c.Value
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
