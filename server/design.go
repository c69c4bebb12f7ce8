package server

import (
	"strings"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/design"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/views"
)

// designPage is one design URL worked out for the handlers: the design
// (package design owns the URL, its field table and the resolution of its
// limits) and what the page adds while charting it (a pattern too large to
// simulate). Every page, download and embed of a design goes through it.
type designPage struct {
	d *design.Design
	r *design.Resolved
	// extra are problems found after resolving, on the chart pattern.
	extra design.Problems
}

// parseDesignQuery reads a design URL's raw query and resolves it.
func parseDesignQuery(raw string) *designPage {
	return newDesignPage(design.ParseQuery(raw))
}

// newDesignPage resolves a parsed design.
func newDesignPage(d *design.Design) *designPage {
	return &designPage{d: d, r: d.Resolve()}
}

// query is the design's canonical query string.
func (p *designPage) query() string { return p.d.Query() }

// problems are every problem of the design and its pattern.
func (p *designPage) problems() design.Problems {
	return append(append(design.Problems{}, p.r.Problems...), p.extra...)
}

// problem records msg on param unless param has one already.
func (p *designPage) problem(param, msg string) {
	if p.message(param) == "" {
		p.extra = append(p.extra, design.Problem{Field: param, Message: msg})
	}
}

// message is the problem of param, or "".
func (p *designPage) message(param string) string {
	for _, pr := range p.problems() {
		if pr.Field == param {
			return pr.Message
		}
	}
	return ""
}

// designProblems are the problems of the policy and its sizing: with any,
// there is no policy to show, export or simulate.
func (p *designPage) designProblems() []FieldProblem {
	var out []FieldProblem
	for _, pr := range p.problems() {
		if !design.IsPatternParam(pr.Field) {
			out = append(out, FieldProblem{Field: pr.Field, Path: p.d.PathOf(pr.Field), Message: pr.Message})
		}
	}
	return out
}

// patternProblems are the problems of the chart pattern.
func (p *designPage) patternProblems() []FieldProblem {
	var out []FieldProblem
	for _, pr := range p.problems() {
		if design.IsPatternParam(pr.Field) {
			out = append(out, FieldProblem{Field: pr.Field, Message: pr.Message})
		}
	}
	return out
}

// policy is the design's policy, or the problems that keep it from being
// one (named by the URL's parameters). The chart pattern is not part of a
// policy, so its problems do not count.
func (p *designPage) policy() (policy.Policy, []FieldProblem) {
	if probs := p.designProblems(); len(probs) > 0 {
		return policy.Policy{}, probs
	}
	return p.r.Policy, nil
}

// pattern is the chart traffic, ok false when the URL's pattern has
// problems.
func (p *designPage) pattern() (algorithms.Pattern, bool) { return p.d.Pattern() }

// form is the design form's view model, drawn from the design's field
// table: every field with its value as typed, its problem, and for a
// limit parameter the calculator's proposal as its placeholder and the
// note where a pinned value departs from it.
func (p *designPage) form() views.FormView {
	f := views.FormView{Action: designerPath, ResultsURL: resultsPath}
	extra := map[string]string{}
	for _, pr := range p.extra {
		extra[pr.Field] = pr.Message
	}
	field := func(ff design.FormField) views.Field {
		v := views.Field{
			Name: ff.Name, ID: fieldID(ff.Name), Label: ff.Label, Value: ff.Value, Help: fieldHelp(ff),
			Error: ff.Error, Note: ff.Note, Numeric: ff.Kind.Numeric(), Placeholder: ff.Placeholder,
		}
		if v.Error == "" {
			v.Error = extra[ff.Name]
		}
		for _, o := range ff.Options {
			v.Options = append(v.Options, views.Option{Value: o.Value, Label: o.Label})
		}
		if ff.Kind == design.KindBool && len(v.Options) == 0 {
			v.Options = []views.Option{{Value: "true", Label: "true"}, {Value: "false", Label: "false"}}
		}
		if len(v.Options) > 0 && ff.Kind != design.KindList {
			// A select shows its default when nothing is chosen.
			v.Options = append([]views.Option{{Value: "", Label: blankLabel(ff.Placeholder)}}, v.Options...)
		}
		if ff.Kind == design.KindList {
			v.Options = nil // typed as a comma list
		}
		if param := ff.LimitParam; param != "" {
			v.LimitParam = param
			if param == "algorithm" {
				v.Reload = true
				for i := range v.Options {
					v.Options[i].Means = v.Options[i].Value
					if v.Options[i].Value == "" {
						v.Options[i].Means = ff.Placeholder
					}
				}
			}
		}
		if ff.Name == "pattern" {
			v.Reload = true           // the placeholders follow the pattern
			v.Options = v.Options[1:] // the pattern always has a value
			if v.Value == "" {
				v.Value = string(design.DefaultPattern)
			}
		}
		return v
	}
	for _, s := range p.d.Form(p.r) {
		vs := views.Section{ID: s.ID, Legend: s.Title, Help: s.Help}
		for _, ff := range s.Fields {
			vs.Fields = append(vs.Fields, field(ff))
		}
		if s.Row != design.NoRow {
			vs.Message = views.Field{Name: string(s.Row), ID: "f-" + string(s.Row), Error: s.Error}
			for _, r := range s.Rows {
				row := views.Row{Label: r.Label, Added: r.Added}
				for _, ff := range r.Fields {
					row.Fields = append(row.Fields, field(ff))
				}
				vs.Rows = append(vs.Rows, row)
			}
		}
		f.Sections = append(f.Sections, vs)
	}
	return f
}

// fieldHelp is a field's help with its unit.
func fieldHelp(ff design.FormField) string {
	switch {
	case ff.Unit == "":
		return ff.Help
	case ff.Help == "":
		return ff.Unit
	}
	return ff.Unit + "; " + ff.Help
}

// blankLabel is how a select labels leaving the field blank: its default.
func blankLabel(placeholder string) string {
	if placeholder == "" {
		return "default"
	}
	return "default (" + placeholder + ")"
}

// anchor is the link to param's input, or "" when the form has none.
func anchor(param string) string {
	if param == "" {
		return ""
	}
	if param == "tiers" || param == "endpoints" {
		return "#sec-" + param
	}
	return "#" + fieldID(param)
}

// fieldID is the id of param's input: "f-tiers-0-name".
func fieldID(param string) string { return "f-" + idReplacer.Replace(param) }

// idReplacer is built once: building a Replacer costs more than using it.
var idReplacer = strings.NewReplacer(".", "-", "[", "-", "]", "")
