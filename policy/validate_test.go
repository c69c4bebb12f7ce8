package policy

import (
	"fmt"
	"strings"
	"testing"
)

// TestTierNamesUniqueIgnoringCase: tier names that differ only in ASCII
// case are rejected, in a document (with positions) and in a policy built
// in code (with field paths), naming the field, its value, the tier it
// collides with and what is allowed. Names that differ in more than ASCII
// case are kept apart.
func TestTierNamesUniqueIgnoringCase(t *testing.T) {
	tests := []struct {
		name  string
		tiers []string
		// want is one error per entry: the field, then parts of its
		// "message; hint" for a document and for a policy built in
		// code. Empty: the names are valid.
		want [][3]string
	}{
		{"distinct", []string{"free", "paid", "enterprise"}, nil},
		{"case only", []string{"Paid", "paid"}, [][3]string{
			{"tiers[1].name", `tier "paid" equals tiers[0].name ("Paid" at 6:6) ignoring ASCII case`,
				`tier "paid" equals tiers[0].name ("Paid") ignoring ASCII case`}}},
		{"later tier", []string{"free", "Paid", "team", "PAID"}, [][3]string{
			{"tiers[3].name", `tier "PAID" equals tiers[1].name ("Paid" at 7:6) ignoring ASCII case; tier names must be unique ignoring ASCII case`,
				`tier "PAID" equals tiers[1].name ("Paid") ignoring ASCII case; tier names must be unique ignoring ASCII case`}}},
		{"three spellings", []string{"paid", "Paid", "PAID"}, [][3]string{
			{"tiers[1].name", `equals tiers[0].name ("paid" at 6:6)`, `equals tiers[0].name ("paid")`},
			{"tiers[2].name", `equals tiers[0].name ("paid" at 6:6)`, `equals tiers[0].name ("paid")`}}},
		{"exact duplicate keeps its message", []string{"paid", "Paid", "paid"}, [][3]string{
			{"tiers[1].name", `equals tiers[0].name`, `equals tiers[0].name`},
			{"tiers[2].name", `tier "paid" is already defined at 6:6`, `tier "paid" is already defined at tiers[0]`}}},
		// Only ASCII letters fold: the engine does not match "É" to "é",
		// so neither does this rule.
		{"non-ASCII letters", []string{"É", "é"}, nil},
		{"digits and punctuation", []string{"tier-1", "tier_1", "TIER-2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc strings.Builder
			doc.WriteString(head + "service: {capacity: 100}\ntiers:\n")
			var p Policy
			p.APIVersion, p.Kind, p.Metadata.Name = APIVersion, Kind, "t"
			p.Service.Capacity = 100
			for _, n := range tt.tiers {
				fmt.Fprintf(&doc, "  - {name: %q}\n", n)
				p.Tiers = append(p.Tiers, Tier{Name: n})
			}

			_, err := Decode(strings.NewReader(doc.String()))
			check(t, "Decode", errorsOf(t, err), tt.want, 1)
			// An exact duplicate is also calc's error on the same
			// field; Decode keeps the first of a field's errors.
			check(t, "Validate", Validate(p).sorted(), tt.want, 2)
		})
	}
}

// errorsOf is err as Errors, nil for a nil err.
func errorsOf(t *testing.T, err error) Errors {
	t.Helper()
	if err == nil {
		return nil
	}
	es, ok := err.(Errors)
	if !ok {
		t.Fatalf("got %v, want Errors", err)
	}
	return es
}

// check compares es with want, using want[i][0] as the field and
// want[i][text] as a part of "message; hint".
func check(t *testing.T, what string, es Errors, want [][3]string, text int) {
	t.Helper()
	if len(es) != len(want) {
		t.Fatalf("%s: got %d errors, want %d:\n%v", what, len(es), len(want), es)
	}
	for i, e := range es {
		if got := e.Message + "; " + e.Hint; e.Field != want[i][0] || !strings.Contains(got, want[i][text]) {
			t.Errorf("%s: error %d: got %s: %q, want %s: %q", what, i, e.Field, got, want[i][0], want[i][text])
		}
	}
}
