package calc

import (
	"slices"
	"testing"

	"github.com/ratelab/ratelab/internal/gosrc"
)

// typedConsts returns the values of the string constants of type typ
// declared in file, in source order.
func typedConsts(t *testing.T, file, typ string) []string {
	t.Helper()
	out, err := gosrc.Typed(file, typ)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// strs is a list of string-typed values as strings.
func strs[S ~string](vs []S) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// TestValueListsHoldEveryConstant: each list of a type's values (which
// the validators and the API document take their enums from) holds every
// constant of that type the source declares, in source order, and
// nothing else.
func TestValueListsHoldEveryConstant(t *testing.T) {
	for _, c := range []struct {
		file, typ string
		list      []string
	}{
		{"checks.go", "Severity", strs(Severities)},
		{"headers.go", "HeaderForm", strs(HeaderForms)},
		{"params.go", "Fidelity", strs(Fidelities)},
		{"value.go", "Unit", strs(Units)},
		{"input.go", "PercentileUnit", strs(PercentileUnits)},
		{"input.go", "Enforcement", strs(Enforcements)},
	} {
		consts := typedConsts(t, c.file, c.typ)
		if len(consts) < 2 {
			t.Fatalf("%s: found %d constants of type %s", c.file, len(consts), c.typ)
		}
		if !slices.Equal(consts, c.list) {
			t.Errorf("%s: the list is %q, the constants %q", c.typ, c.list, consts)
		}
	}
}
