package views

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// CompareView is the compare page: two designs side by side, what each
// does with the same traffic, their limits diffed, and each one's charts
// of that traffic in pairs.
type CompareView struct {
	Title string
	// A and B are the designs as given (designer URLs or their queries).
	A, B CompareSide
	// Outcome is what each policy did with the traffic: a row for each
	// class of clients either has, and one for the backend's busiest
	// second. Verdict says which admits more for which clients and how
	// each treats the backend. Both are empty until both designs are
	// valid and charted.
	Outcome []DiffRow
	Verdict string
	// Diff lists every limit either policy has, with both values; empty
	// until both designs are valid.
	Diff []DiffRow
	// Pattern names the traffic both are charted on, and Traffic says
	// what it is.
	Pattern, Traffic string
	// Patterns are the traffic the form offers; Chosen is the one picked
	// ("" for A's own), and PatternError why it cannot be used.
	Patterns             []Option
	Chosen, PatternError string
	// Swap is the page with A and B the other way round.
	Swap string
	// Suggestions are, for a page given A alone, compare pages of A
	// beside itself with another algorithm for its default limit: the
	// page's address (Value) and the algorithm (Label).
	Suggestions []Option
	// Pairs are the two designs' charts of the same kind, A's order
	// first.
	Pairs []ChartPair
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

// DiffRow is one thing in both designs (a limit, a class of clients'
// outcome): its text in A and in B ("—" where a design lacks it), and
// whether they differ. Field is the designer field of a limit, if any.
type DiffRow struct {
	Field, Label string
	A, B         string
	Changed      bool
}

// ShownDiffRows is how many rows a diff shows whole: past it, the rows
// that differ are shown and those the same in both are folded away.
const ShownDiffRows = ShownLimits

// splitDiff is rows as a diff table shows them: every row while there
// are at most ShownDiffRows, else the changed ones, and the rest (the
// same in both) to fold away.
func splitDiff(rows []DiffRow) (shown, same []DiffRow) {
	if len(rows) <= ShownDiffRows {
		return rows, nil
	}
	for _, r := range rows {
		if r.Changed {
			shown = append(shown, r)
		} else {
			same = append(same, r)
		}
	}
	return shown, same
}

// ChartPair is one kind of chart for both designs: A's and B's, nil for a
// design that draws no such chart (a policy that counts no clients has no
// load chart).
type ChartPair struct {
	Kind, Title string
	A, B        *Chart
}

// PairCharts pairs two designs' charts by kind (their ID before the side's
// prefix, kinds[i] for a[i] and b[i]), in A's order, then B's kinds A
// lacks.
func PairCharts(a, b []Chart, kindA, kindB []string) []ChartPair {
	var out []ChartPair
	at := map[string]int{}
	for i := range a {
		at[kindA[i]] = len(out)
		out = append(out, ChartPair{Kind: kindA[i], Title: a[i].Title, A: &a[i]})
	}
	for i := range b {
		if j, ok := at[kindB[i]]; ok {
			out[j].B = &b[i]
			continue
		}
		out = append(out, ChartPair{Kind: kindB[i], Title: b[i].Title, B: &b[i]})
	}
	return out
}

// ShareScale draws charts on one y scale, from 0 to a nice maximum over
// every number their tables hold (the lines', the reference lines'), so
// two designs' charts of the same traffic compare by eye: a design that
// admits twice as much draws twice as high. The maximum is a nice one for
// about five ticks, or for two where any of the charts has lanes (a lane
// has room for two), and each chart ticks as finely as it has room for.
// A chart whose y axis is not a value axis (the timeline's rows of
// classes) keeps its own, as does every chart when one of them has none.
func ShareScale(cs ...*Chart) {
	type drawn struct {
		c      *Chart
		option map[string]any
		ys     []any
	}
	var all []drawn
	top, lanes := 0.0, false
	for _, c := range cs {
		if c == nil || c.Option == "" {
			continue
		}
		var option map[string]any
		if json.NewDecoder(strings.NewReader(c.Option)).Decode(&option) != nil {
			return
		}
		ys, _ := option["yAxis"].([]any)
		for _, y := range ys {
			if m, ok := y.(map[string]any); !ok || m["type"] != "value" {
				return
			}
		}
		if len(ys) == 0 {
			return
		}
		lanes = lanes || len(ys) > 1
		for _, row := range c.Table.Rows {
			for _, cell := range row[min(1, len(row)):] {
				if v, err := strconv.ParseFloat(cell, 64); err == nil {
					top = max(top, v)
				}
			}
		}
		all = append(all, drawn{c, option, ys})
	}
	hi := niceAxis(0, top, 5).hi
	if lanes {
		hi = niceAxis(0, top, 2).hi
	}
	for _, d := range all {
		step := 0.0
		for _, ticks := range []int{5, 2} {
			if s := niceAxis(0, hi, ticks).step; (ticks == 2 || len(d.ys) == 1) && math.Abs(hi/s-math.Round(hi/s)) < 1e-9 {
				step = s
				break
			}
		}
		for _, y := range d.ys {
			m := y.(map[string]any)
			m["min"], m["max"] = 0, hi
			if delete(m, "interval"); step > 0 {
				m["interval"] = step
			}
		}
		d.c.Option = encodeOption(d.option)
	}
}

// sideTitle is a chart's title for one side of a pair ("Design A: …"), or
// the title alone.
func sideTitle(side, title string) string {
	if side == "" {
		return title
	}
	return side + ": " + title
}
