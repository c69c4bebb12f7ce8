package algorithms_test

import (
	"slices"
	"testing"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/internal/gosrc"
)

// constsOf returns the values of the string constants of type typ that
// file declares, in source order.
func constsOf(t *testing.T, file, typ string) []string {
	t.Helper()
	out, err := gosrc.Typed(file, typ)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestValueListsHoldEveryConstant: the lists of values the validators
// check against and the API document takes its enums from (Names,
// Balances, the names in Patterns) hold every constant of their type the
// source declares, and nothing else.
func TestValueListsHoldEveryConstant(t *testing.T) {
	var patterns []string
	for _, p := range algorithms.Patterns {
		patterns = append(patterns, string(p.Name))
	}
	var names, balances []string
	for _, n := range algorithms.Names {
		names = append(names, string(n))
	}
	for _, b := range algorithms.Balances {
		balances = append(balances, string(b))
	}
	for _, c := range []struct {
		file, typ string
		list      []string
		ordered   bool // the list is in source order (Patterns is in the UI's)
	}{
		{"spec.go", "Name", names, true},
		{"replicas.go", "Balance", balances, true},
		{"patterns.go", "PatternName", patterns, false},
	} {
		consts := constsOf(t, c.file, c.typ)
		if len(consts) < 2 {
			t.Fatalf("%s: found %d constants of type %s", c.file, len(consts), c.typ)
		}
		got, want := slices.Clone(c.list), slices.Clone(consts)
		if !c.ordered {
			slices.Sort(got)
			slices.Sort(want)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the list is %q, the constants %q", c.typ, c.list, consts)
		}
	}
}
