package calc

import (
	"fmt"
	"strings"
)

// FieldError is an input value outside its allowed range. Field is the
// input's name as the JSON API spells it ("p99", "tiers[1].multiplier",
// "retry.cap"), so the API and the UI can show the message next to the field
// that caused it.
type FieldError struct {
	Field string `json:"field"`
	Value string `json:"value"` // the offending value, formatted
	Want  string `json:"want"`  // the allowed range or values
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %s is out of range; want %s", e.Field, e.Value, e.Want)
}

// Errors is every problem found in one input, in the order of the input's
// fields. Size and Reverse return it (never an empty one) so a user sees all
// mistakes at once; errors.As finds each *FieldError through Unwrap.
type Errors []*FieldError

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns the field errors, for errors.As and errors.Is.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// errs collects field errors.
type errs struct{ list Errors }

func (v *errs) add(field, value, want string) {
	v.list = append(v.list, &FieldError{Field: field, Value: value, Want: want})
}

// err returns the collected errors, or nil.
func (v *errs) err() error {
	if len(v.list) == 0 {
		return nil
	}
	return v.list
}

// in checks lo ≤ x ≤ hi (false for NaN) and records an error if not.
func (v *errs) in(field string, x, lo, hi float64, want string) bool {
	if x >= lo && x <= hi {
		return true
	}
	v.add(field, num(x), want)
	return false
}
