package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Error is one problem in a policy document: where (Line and Column,
// 1-based, 0 when unknown; Field, the path of the field as in
// "tiers[1].limit.burst"), what (Message), and, when a likely fix is
// known, a Hint ("did you mean `burst`?").
type Error struct {
	// 1-based; absent (0) when unknown.
	Line int `json:"line,omitempty"`
	// 1-based; absent (0) when unknown.
	Column int `json:"column,omitempty"`
	// The path of the field, as in tiers[1].limit.burst.
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	// A likely fix, such as: did you mean `burst`?
	Hint string `json:"hint,omitempty"`
}

// Error formats e as "3:5: tiers[1].limit.brust: unknown field `brust`; did you mean `burst`?".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:%d: ", e.Line, e.Column)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Message)
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// Errors is every problem Decode found, in the order of the document.
// Decode returns it (never an empty one); errors.As finds each *Error
// through Unwrap.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the errors, for errors.As and errors.Is.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sorted orders es by position, those without one last, keeping the order
// of equal positions, and drops repeats of a field's error after the first.
func (es Errors) sorted() Errors {
	seen := map[string]bool{}
	var out Errors
	for _, e := range es {
		if e.Field != "" && seen[e.Field] {
			continue
		}
		seen[e.Field] = true
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b *Error) int {
		ka, kb := a.Line, b.Line
		if ka == 0 {
			ka = 1 << 62
		}
		if kb == 0 {
			kb = 1 << 62
		}
		if ka != kb {
			return ka - kb
		}
		return a.Column - b.Column
	})
	return out
}

// suggest is a hint naming the allowed word closest to got, if one is
// close enough to be a typo: at most two edits, or a third of its letters
// for long words.
func suggest(got string, allowed []string) string {
	best, bestD := "", 1<<30
	for _, a := range allowed {
		if d := levenshtein(strings.ToLower(got), a); d < bestD {
			best, bestD = a, d
		}
	}
	if best == "" || bestD > max(2, len(best)/3) || bestD >= len(best) {
		return ""
	}
	return fmt.Sprintf("did you mean `%s`?", best)
}

// levenshtein is the edit distance between a and b, by runes, counting a
// swap of two neighbours as one edit ("brust" is one from "burst").
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 30 // no typo is that long; keeps hostile keys cheap
	}
	// rows i−2, i−1 and i of the table.
	before := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(rb)]
}
