package design

import (
	"fmt"
	"slices"

	"github.com/ratelab/ratelab/algorithms"
)

// Section is one part of the design form: its fields, or for tiers and
// endpoints its rows.
type Section struct {
	// ID is the section's name: policy, service, clients, burst,
	// windows, limit, tiers, endpoints, global, response, retry, pattern.
	ID, Title, Help string
	Row             Row
	// Fields are the section's fields (none in a row section).
	Fields []FormField
	// Rows are the URL's rows, then blank ones for adding more.
	Rows []FormRow
	// Error is a problem of the section as a whole (too many rows).
	Error string
}

// FormRow is one tier or endpoint of the form.
type FormRow struct {
	// Index is the row's index as the URL numbers it.
	Index int
	// Label names the row: "Tier 1", "Endpoint 2".
	Label string
	// Added is true for a blank row offered for adding one.
	Added  bool
	Fields []FormField
}

// FormField is one field of the form with its value as typed and its
// problem.
type FormField struct {
	// Name is the URL parameter; Path is the policy path.
	Name, Path        string
	Label, Help, Unit string
	Kind              Kind
	// Options are an enum's or a list's values; a value given that is
	// not one of them is added, labelled "(not valid)", so the form
	// shows what was typed.
	Options []Option
	// Placeholder is what leaving the field blank means: the default, or
	// for a limit parameter the calculator's proposal.
	Placeholder string
	Value       string
	Error       string
	// Applies is false for a limit parameter its algorithm does not use
	// and a pattern parameter the pattern does not read: the form may
	// hide or dim it.
	Applies bool
	// Note says, for a pinned limit parameter, how it departs from the
	// proposal.
	Note string
	// LimitParam is, for a field of a limit, "algorithm" or the parameter
	// it sets ("rate", "burst", "queue", "limit", "window"); "" otherwise.
	LimitParam string
}

// sectionWords are the sections' titles and help, by ID.
var sectionWords = map[string][2]string{
	"policy":    {"Policy", "The policy's name and what it is for."},
	"service":   {"Service", "What the whole service handles, and where the limits are enforced."},
	"clients":   {"Clients and percentiles", "Per-client request rates, as measured (0 or blank: not measured)."},
	"burst":     {"Burst", "A client must be able to send peak requests/s for peak_seconds (both or neither)."},
	"windows":   {"Windows and delay", ""},
	"limit":     {"Default limit", "The per-client limit of clients in no tier. Blank parameters take the calculator's proposal; a number given is pinned and kept when the inputs change. Algorithm none leaves the default limit out."},
	"tiers":     {"Tiers", "Classes of clients with their own counts, a multiplier of the per-client rate, and their own key and limit (algorithm default: the default limit). Leave a row blank to skip it."},
	"endpoints": {"Endpoints", "Routes whose requests cost more than one token, or that have their own limit (then every parameter is required). Leave a row blank to skip it."},
	"global":    {"Global limit", "One limit on the whole service, all clients together; the proposal is the usable rate, with a burst no smaller than any client's. Algorithm none leaves it out."},
	"response":  {"Keys, mode and response", "Who counts as one client, whether limits are enforced, and what a rejected client receives."},
	"retry":     {"Client retries", "How clients back off after a 429."},
	"pattern":   {"Chart traffic", "The traffic the charts simulate. Blank parameters take the pattern's default; a pattern reads only its own."},
}

// Blank rows the form adds after the given ones, and the fewest rows it
// shows.
const (
	blankRows = 1
	minRows   = 2
)

// Form is the design's form, section by section in Fields order: every
// field with its value as typed, its problem and, with r (the design's
// Resolve; nil leaves them out), each limit parameter's proposal as its
// placeholder and its pin note.
func (d *Design) Form(r *Resolved) []Section {
	problems := d.problems
	params := map[string]Param{}
	algs := map[string]algorithms.Name{} // limit prefix → resolved algorithm
	if r != nil {
		problems = r.Problems
		for _, l := range r.Limits {
			algs[l.Name] = l.Spec.Algorithm
			for _, p := range l.Params {
				params[p.Field] = p
			}
		}
	}
	message := func(param string) string {
		for _, p := range problems {
			if p.Field == param {
				return p.Message
			}
		}
		return ""
	}
	pattern := algorithms.PatternName(d.values["pattern"])
	if pattern == "" {
		pattern = DefaultPattern
	}
	info, known := algorithms.PatternByName(pattern)
	defaults := d.patternDefaults(pattern)

	field := func(f Field, index int) FormField {
		name := f.Param(index)
		ff := FormField{Name: name, Path: f.Path, Label: f.Label, Help: f.Help, Unit: f.Unit, Kind: f.Kind,
			Options: f.Options, Placeholder: f.Placeholder, Value: d.values[name], Error: message(name), Applies: true,
			LimitParam: f.limitParam}
		if f.Kind == KindEnum && ff.Value != "" && !slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == ff.Value }) {
			ff.Options = append(slices.Clone(f.Options), Option{ff.Value, ff.Value + " (not valid)"})
		}
		switch {
		case f.limitParam != "" && f.limitParam != "algorithm":
			prefix, _, _ := cutLast(name)
			if p, ok := params[name]; ok {
				ff.Placeholder, ff.Note = p.Proposal, p.Note
			}
			alg, resolved := algs[prefix]
			if !resolved {
				// A blank row, or a design not resolved: the algorithm as
				// typed, or what it is when left out.
				v := d.values[prefix+".algorithm"]
				if v == "" {
					af, _, _ := Lookup(prefix + ".algorithm")
					v = af.implicit
				}
				alg = algorithms.Name(v)
			}
			ff.Applies = slices.Contains(usedParams(alg), f.limitParam)
		case f.patternParam != "" && f.patternParam != "pattern":
			ff.Applies = known && slices.Contains(info.Params, f.patternParam)
			if known && f.Kind != KindEnum {
				ff.Placeholder = patternValue(defaults, f.patternParam)
			} else if f.Kind == KindEnum {
				ff.Placeholder = defaults.KeyBy
			}
		}
		return ff
	}

	var out []Section
	for n := 0; n < len(Fields); {
		f := Fields[n]
		end := n
		for end < len(Fields) && Fields[end].Section == f.Section {
			end++
		}
		words := sectionWords[f.Section]
		s := Section{ID: f.Section, Title: words[0], Help: words[1], Row: f.Row}
		if f.Row == NoRow {
			for _, sf := range Fields[n:end] {
				s.Fields = append(s.Fields, field(sf, 0))
			}
		} else {
			s.Error = message(string(f.Row))
			present := d.tierRows
			label := "Tier"
			if f.Row == EndpointRow {
				present, label = d.endpointRows, "Endpoint"
			}
			for k, i := range rowIndices(present) {
				row := FormRow{Index: i, Label: fmt.Sprintf("%s %d", label, k+1), Added: !slices.Contains(present, i)}
				for _, rf := range Fields[n:end] {
					if rf.Row == f.Row {
						row.Fields = append(row.Fields, field(rf, i))
					}
				}
				s.Rows = append(s.Rows, row)
			}
		}
		out = append(out, s)
		n = end
	}
	return out
}

// rowIndices are the rows the form shows: those in the URL, then blank ones
// numbered after the last.
func rowIndices(present []int) []int {
	rows := slices.Clone(present)
	next := 0
	if len(rows) > 0 {
		next = rows[len(rows)-1] + 1
	}
	for added := 0; (added < blankRows || len(rows) < minRows) && next <= MaxRowIndex; added++ {
		rows = append(rows, next)
		next++
	}
	return rows
}
