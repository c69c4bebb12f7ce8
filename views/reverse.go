package views

import "github.com/ratelab/ratelab/calc"

// ReverseView is the reverse page: a limit someone already has, and what it
// does to their clients (calc.Reverse).
type ReverseView struct {
	Title string
	// Fields are the limit's inputs: algorithm, rate, burst, queue, limit,
	// window (seconds), each with its value as typed and its message.
	Fields []Field
	// Result is nil until a valid limit is given.
	Result *calc.ReverseResult
	// DesignerURL opens the designer with this limit pinned as the
	// default limit.
	DesignerURL string
}
