package calc_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/ratelab/ratelab/calc"
)

// near reports whether got is within tol of want, relative to want (absolute
// below 1).
func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// checkNear fails the test when got is not within 1e-9 (relative) of want.
func checkNear(t *testing.T, what string, got, want float64) {
	t.Helper()
	if !near(got, want, 1e-9) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func mustSize(t *testing.T, in calc.Input) calc.Result {
	t.Helper()
	res, err := calc.Size(in)
	if err != nil {
		t.Fatalf("Size: %v", err)
	}
	return res
}

// fields lists the fields an error names.
func fields(err error) []string {
	var es calc.Errors
	if !errors.As(err, &es) {
		return nil
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Field)
	}
	return out
}

// checkIDs lists the checks of a result as "id" or "id@subject".
func checkIDs(cs []calc.Check) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID+"@"+c.Subject)
	}
	slices.Sort(out)
	return out
}

func findCheck(cs []calc.Check, id, subject string) (calc.Check, bool) {
	for _, c := range cs {
		if c.ID == id && (subject == "" || c.Subject == subject) {
			return c, true
		}
	}
	return calc.Check{}, false
}
