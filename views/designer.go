package views

import (
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/calc"
)

// DesignerView is the designer page: the design as a GET form, and what the
// calculator and the simulations make of it.
type DesignerView struct {
	Title   string
	Form    FormView
	Results ResultsView
	Import  ImportView
}

// ImportView is the policy file import form: where it posts, the YAML
// pasted last time and the errors of a policy that did not decode.
type ImportView struct {
	Action string
	YAML   string
	Errors []ImportError
}

// ImportError is one decoding error of an imported policy: where (Line and
// Column 1-based, 0 when unknown; Field, the path in the file), what, and
// a hint when one is known.
type ImportError struct {
	Line, Column int
	Field        string
	Message      string
	Hint         string
}

// FormView is the design form. Its fields' names are the query parameters
// of the design URL; the handler owns that format.
type FormView struct {
	// Action is where the form submits without JavaScript (the page
	// itself); ResultsURL is where htmx fetches the results fragment.
	Action     string
	ResultsURL string
	Sections   []Section
}

// Fields lists every field of the form in order, rows included.
func (f FormView) Fields() []Field {
	var out []Field
	for _, s := range f.Sections {
		out = append(out, s.Fields...)
		for _, r := range s.Rows {
			out = append(out, r.Fields...)
		}
	}
	return out
}

// Section is one fieldset of the form: plain fields, or rows of fields
// (tiers, endpoints) of which the last ones are blank for adding more.
type Section struct {
	ID     string // "service", "tiers", …; the data-testid is "section-"+ID
	Legend string
	Help   string
	Fields []Field
	Rows   []Row
	// Message, when its Name is set, carries a message about the section
	// as a whole ("tiers": at most 16), shown under its legend; it has no
	// input.
	Message Field
}

// Row is one repeated group of fields, such as one tier.
type Row struct {
	Label  string
	Fields []Field
	// Added marks a blank row the form offers beyond those in the URL:
	// the page it updates has no such row yet.
	Added bool
}

// Field is one input of the form.
type Field struct {
	Name        string // the query parameter: "capacity", "tiers.0.name"
	ID          string // the input's id: "f-capacity"
	Label       string
	Value       string // exactly as the user typed it
	Placeholder string
	Help        string // unit and default, shown under the input
	Error       string // the message when the value is not acceptable
	Options     []Option
	// Numeric asks for a decimal keyboard; inputs stay type="text" so any
	// typed value survives the round trip and gets its message.
	Numeric bool
	// Note says where a pinned limit parameter departs from the
	// calculator's proposal; shown where Error would be, when there is
	// no error.
	Note string
	// LimitParam is the limit parameter the field sets ("algorithm",
	// "rate", "burst", "queue", "limit", "window"), "" for other fields;
	// the style sheet shows only the parameters of the chosen algorithm.
	LimitParam string
	// Reload asks for the whole form again when the value changes (an
	// algorithm: the parameters and their proposals change with it).
	Reload bool
}

// Messages lists every element that shows a message, fields and
// sections, for the htmx fragment to update them all; rows the form adds
// are left out, since the page being updated does not have them.
func (f FormView) Messages() []Field {
	var out []Field
	for _, s := range f.Sections {
		if s.Message.Name != "" {
			out = append(out, s.Message)
		}
		out = append(out, s.Fields...)
		for _, r := range s.Rows {
			if !r.Added {
				out = append(out, r.Fields...)
			}
		}
	}
	return out
}

// MessageText is the field's message: its error, else its note.
func (f Field) MessageText() string {
	if f.Error != "" {
		return f.Error
	}
	return f.Note
}

// messageClass is the class of the field's message element: a note
// (not an error) is styled apart.
func (f Field) messageClass() string {
	if f.Error == "" && f.Note != "" {
		return "field-msg field-note"
	}
	return "field-msg"
}

// MessageID is the id of the element that shows the field's message.
func (f Field) MessageID() string { return "msg-" + strings.TrimPrefix(f.ID, "f-") }

// HelpID is the id of the field's help text.
func (f Field) HelpID() string { return "help-" + strings.TrimPrefix(f.ID, "f-") }

// DescribedBy is the input's aria-describedby: its help and its message.
func (f Field) DescribedBy() string {
	if f.Help != "" {
		return f.HelpID() + " " + f.MessageID()
	}
	return f.MessageID()
}

// Option is one choice of a select field. Means, for an algorithm, is the
// algorithm it stands for (a blank option's is the default one), for the
// style sheet to show that algorithm's parameters.
type Option struct {
	Value, Label string
	Means        string
}

// Problem is one thing wrong with the design, by query parameter, with a
// link target when the field is on the form.
type Problem struct {
	Field   string // query parameter name, "" for the design as a whole
	Anchor  string // "#f-capacity", or ""
	Message string
}

// ResultsView is everything below the form; the page and the htmx fragment
// render it with the same component.
type ResultsView struct {
	// Problems lists every bad field; with any, Policy and Result are nil
	// and no numbers are shown.
	Problems []Problem
	// Policy is the design's policy, limit by limit.
	Policy *PolicyView
	// Result is the calculator's sizing; nil for a design without
	// measurements (an imported policy without sizing).
	Result  *calc.Result
	Pattern PatternView
	// ChartsError says why there are no charts (a bad pattern) when the
	// design itself is fine.
	ChartsError string
	Charts      []Chart
	// Query is the design's canonical query string, for links.
	Query string
	// ExportURL downloads the design as a policy file; "" when the design
	// has problems.
	ExportURL string
	// HasDefault reports whether the policy has a default limit, whose
	// algorithm the compare page offers to change.
	HasDefault bool
	// ProposalQuery is the design with none of its limits' numbers
	// pinned, so that the compare page can set the user's numbers beside
	// the calculator's; "" when nothing is pinned or there is no sizing
	// to propose from.
	ProposalQuery string
	// Base is the server's absolute URL ("https://host"), for the
	// documentation snippets; "" leaves the snippets out.
	Base string
	// Live marks the results htmx swaps in on an update, never a page's:
	// their data tables are left out, to be fetched when their panel
	// opens, and their blocks far from the viewport are laid out only when
	// they come near it (the page's first results are laid out whole, so
	// each block's height is known when the first update replaces it).
	Live bool
}

// DocSnippet is one text for API documentation, copyable and
// downloadable.
type DocSnippet struct {
	ID, Label, Text string
	// URL downloads it as Filename.
	URL, Filename string
}

// PatternView describes the chart pattern in effect.
type PatternView struct {
	Name   string
	Shape  string
	Shows  string
	Params []ParamValue // the parameters the pattern reads, with their values
	// Arrivals is how many requests the pattern generates (retries not
	// counted); Focus is the key charts of quota follow.
	Arrivals int
	Focus    string
}

// ParamValue is one pattern parameter in effect.
type ParamValue struct {
	Name, Value string
}

// valueRow is one labelled value of a result; ID names it for tests.
type valueRow struct {
	ID    string
	Label string
	Value calc.Value
}

// summaryRows are the per-client sizes and what they mean.
func summaryRows(r *calc.Result) []valueRow {
	return []valueRow{
		{"usable", "usable capacity", r.Usable},
		{"fair_share", "fair share", r.FairShare},
		{"rate", "rate", r.Rate},
		{"burst", "burst", r.Burst},
		{"limit", "limit per window", r.Limit},
		{"window", "window", r.Window},
		{"queue", "leaky bucket queue", r.Queue},
		{"pace", "safe pace", r.Pace},
		{"min_interval", "min interval", r.MinInterval},
	}
}

// algorithmRows lists the parameters and consequences of p that are set,
// in reading order.
func algorithmRows(p calc.Params) []valueRow {
	var rows []valueRow
	add := func(id, label string, v *calc.Value) {
		if v != nil {
			rows = append(rows, valueRow{id, label, *v})
		}
	}
	add("rate", "rate", p.Rate)
	add("burst", "burst", p.Burst)
	add("interval", "interval T", p.Interval)
	add("tolerance", "tolerance τ", p.Tolerance)
	add("queue", "queue", p.Queue)
	add("max_delay", "worst delay", p.MaxDelay)
	add("limit", "limit", p.Limit)
	add("window", "window", p.Window)
	add("pace", "pace", &p.Pace)
	add("min_interval", "min interval", &p.MinInterval)
	add("largest_burst", "largest burst", &p.LargestBurst)
	add("retry_after", "Retry-After", &p.RetryAfter)
	return rows
}

// responseText is a response as a client sees it: status line and
// header fields.
func responseText(r calc.Response) string {
	var b strings.Builder
	b.WriteString("HTTP/1.1 " + strconv.Itoa(r.Status) + " " + http.StatusText(r.Status))
	for _, h := range r.Headers {
		b.WriteString("\n" + h.Name + ": " + h.Value)
	}
	return b.String()
}

// Num formats a number for reading: whole numbers exactly, others to four
// significant digits without trailing zeros.
func Num(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return strconv.FormatFloat(x, 'g', -1, 64)
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case math.Abs(x) < 1e-4 || math.Abs(x) >= 1e15:
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	decimals := max(0, min(3-int(math.Floor(math.Log10(math.Abs(x)))), 8))
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// valueText is a value with its unit: "100 requests/s", "2.5 s", "20 %".
func valueText(v calc.Value) string {
	switch v.Unit {
	case calc.UnitFraction:
		return Num(100*v.Value) + " %"
	case calc.UnitSeconds:
		return seconds(v.Value)
	case "":
		return Num(v.Value)
	}
	return Num(v.Value) + " " + string(v.Unit)
}

// percent formats a fraction as a percentage.
func percent(f float64) string { return Num(100*f) + " %" }

// clientCount says how many clients an expected count stands for, in
// words a reader takes at face value: "fewer than one" below one, else
// the count rounded to a whole client ("about 12").
func clientCount(x float64) string {
	if x < 0.5 {
		return "fewer than one"
	}
	return "about " + Num(math.Round(x))
}

// seconds formats seconds.
func seconds(s float64) string { return SecondsText(s) }

// numberNames lists a check's numbers in name order: "ratio = 1.25".
func numberNames(n map[string]float64) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(n)) {
		out = append(out, k+" = "+Num(n[k]))
	}
	return out
}

// PolicyView is the design's own policy: each limit as it will be
// enforced, with the calculator's proposal and where a pinned parameter
// departs from it, and what the policy's lint finds.
type PolicyView struct {
	Name     string
	Mode     string
	Limits   []LimitView
	Findings []Finding
}

// ShownLimits is how many of the policy's limits its table shows before
// a reader asks for the rest: a policy of 16 tiers and 100 endpoints has
// 117, which on a phone would put the checks and the charts 17 000
// pixels down.
const ShownLimits = 8

// MoreLimits is how many of the policy's limits the table hides until
// asked.
func (p PolicyView) MoreLimits() int { return max(len(p.Limits)-ShownLimits, 0) }

// LimitView is one limit of the policy. Spec is the limit as resolved
// ("gcra(rate=20/s, burst=200)"), "" for a tier that inherits the default
// limit (Inherits) and a limit left out; Proposal the calculator's, "" when
// there is none.
type LimitView struct {
	Label, Field   string
	Spec, Proposal string
	Inherits       bool
	Params         []LimitParamView
}

// Pinned reports whether any parameter of the limit is pinned.
func (l LimitView) Pinned() bool {
	for _, p := range l.Params {
		if p.Pinned {
			return true
		}
	}
	return false
}

// LimitParamView is one parameter of a limit: its value, the proposal,
// whether the user pinned it, and the note when a pin departs from the
// proposal. Field is its URL parameter, whose input the page links to.
type LimitParamView struct {
	Name, Value, Proposal string
	Pinned                bool
	Note, Reason, Field   string
}

// Finding is one lint finding of the policy.
type Finding struct {
	Severity, ID, Field, Message, Fix string
}

// DocsPanelPath is the path of the lazily fetched panels: the docs panel
// ("docs-panel"), each chart's snippets ("<chart id>-snippets") and each
// chart's data table in an update ("<chart id>-data") under it, the
// design's query after it.
const DocsPanelPath = "/designer/docs/"

// DocsPanelURL is the URL of a panel's content for the design with
// canonical query.
func DocsPanelURL(panel, query string) string {
	return DocsPanelPath + panel + "?" + query
}

// CompareURL is the compare page with design a beside design b (either ""
// to leave its field empty), each a designer query.
func CompareURL(a, b string) string {
	q := url.Values{}
	for name, d := range map[string]string{"a": a, "b": b} {
		if d != "" {
			q.Set(name, "/?"+d)
		}
	}
	return "/compare?" + q.Encode()
}
