package views

// CompareView is the compare page: two designs side by side, their limits
// diffed, and the same traffic charted for both.
type CompareView struct {
	Title string
	// A and B are the designs as given (designer URLs or their queries).
	A, B CompareSide
	// Diff lists every limit either policy has, with both values; empty
	// until both designs are valid.
	Diff []LimitDiff
	// Pattern names the traffic both are charted on (A's pattern).
	Pattern string
}

// CompareSide is one of the two designs.
type CompareSide struct {
	Name  string // "a" or "b", the form field
	Label string // "Design A"
	// Input is the field's value as given; Link opens the design.
	Input, Link string
	// Error says why the design shows no policy ("" when it does).
	Error  string
	Policy *PolicyView
	Charts []Chart
}

// LimitDiff is one limit in both designs: as enforced in A and in B
// ("—" for none), and whether they differ.
type LimitDiff struct {
	Field, Label string
	A, B         string
	Changed      bool
}
