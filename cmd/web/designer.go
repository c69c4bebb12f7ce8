package main

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/chartset"
	"github.com/ratelab/ratelab/design"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/targets"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/views"
)

// Paths of the designer. The page is a GET form that submits to itself;
// htmx fetches the results fragment from resultsPath with the same query.
const (
	designerPath = "/"
	resultsPath  = "/designer/results"
)

// handleDesigner answers GET /: the form filled in from the design URL and
// every result, rendered on the server so the page works without
// JavaScript.
func handleDesigner(c echo.Context) error {
	v := designerView(c.Request().URL.RawQuery)
	v.Results.Base = baseURL(c)
	if c.Request().Header.Get("HX-Request") == "true" {
		// A form htmx brought back (a new algorithm): the address is the
		// design's canonical URL, not the form's every blank field.
		c.Response().Header().Set("HX-Push-Url", designerPath+"?"+v.Results.Query)
	}
	return render(c, http.StatusOK, views.Designer(v))
}

// baseURL is the server's absolute URL as the request reached it, for the
// documentation snippets: scheme (X-Forwarded-Proto behind a proxy) and
// Host.
func baseURL(c echo.Context) string {
	return c.Scheme() + "://" + c.Request().Host
}

// handleDesignerResults answers GET /designer/results: the same results
// component as the page, plus each field's message out of band, for htmx
// to swap in. HX-Push-Url puts the design's canonical URL (the page, not
// this fragment) in the address bar.
func handleDesignerResults(c echo.Context) error {
	v := designerView(c.Request().URL.RawQuery)
	v.Results.Base = baseURL(c)
	c.Response().Header().Set("HX-Push-Url", designerPath+"?"+v.Results.Query)
	return render(c, http.StatusOK, views.ResultsUpdate(v))
}

// designerView parses a design URL's raw query and builds the page's view
// model. It never fails: bad input becomes messages next to the fields.
func designerView(rawQuery string) views.DesignerView {
	d := parseDesignQuery(rawQuery)
	results := d.results()
	return views.DesignerView{
		Title: "ratelab: rate-limit designer", Form: d.form(), Results: results,
		Import: views.ImportView{Action: importPath},
	}
}

// results works the design out for the page: its policy with every limit
// and where it departs from the calculator's proposal, the policy's lint,
// the calculator's numbers when the design has measurements, and the
// charts: the policy's own limits on the pattern, then the calculator's
// algorithms side by side.
func (d *designPage) results() views.ResultsView {
	rv := views.ResultsView{Query: d.query()}
	p, probs := d.policy()
	if len(probs) > 0 {
		for _, pr := range probs {
			rv.Problems = append(rv.Problems, views.Problem{Field: pr.Field, Anchor: anchor(pr.Field), Message: pr.Message})
		}
		return rv
	}
	rv.Policy = policyView(p, d.r)
	rv.Result = d.r.Sizing
	rv.ExportURL = exportPath + "?" + rv.Query
	rv.Docs = docsSnippets(p, rv.Query)
	pattern, ok := d.pattern()
	if !ok {
		rv.Pattern = d.patternView(0, "")
		rv.ChartsError = d.patternError()
		return rv
	}
	charts, info, err := chartset.Policy(p, pattern)
	if d.chartProblem(err) {
		rv.Pattern = d.patternView(0, "")
		rv.ChartsError = d.patternError()
		return rv
	}
	if err != nil {
		rv.ChartsError = err.Error()
		return rv
	}
	rv.Pattern = d.patternView(info.Arrivals, info.Focus)
	if d.r.Sizing != nil {
		more, _, err := chartset.Build(*d.r.Sizing, pattern)
		if d.chartProblem(err) {
			rv.ChartsError = d.patternError()
			return rv
		}
		if err != nil {
			rv.ChartsError = err.Error()
			return rv
		}
		charts = append(charts, more...)
	}
	rv.Charts = charts
	return rv
}

// chartProblem records a pattern the charts cannot show on its field and
// reports whether err was one.
func (d *designPage) chartProblem(err error) bool {
	pe := (*chartset.PatternError)(nil)
	if !errors.As(err, &pe) {
		return false
	}
	field := pe.Param
	if field == "" {
		field = "pattern"
	}
	d.problem(field, pe.Message)
	return true
}

// policyView is the design's policy as the page shows it: each limit as
// resolved with the calculator's proposal and pin notes, and the lint.
func policyView(p policy.Policy, r *design.Resolved) *views.PolicyView {
	v := &views.PolicyView{Name: p.Metadata.Name, Mode: string(p.Defaults.EffectiveMode())}
	for _, l := range r.Limits {
		lv := views.LimitView{Label: l.Label, Field: l.Field, Inherits: l.Inherits}
		if l.Spec.Algorithm != "" {
			lv.Spec = l.Spec.String()
		}
		if l.Proposal.Algorithm != "" {
			lv.Proposal = l.Proposal.String()
		}
		for _, pr := range l.Params {
			lv.Params = append(lv.Params, views.LimitParamView{Name: pr.Name, Value: pr.Value, Proposal: pr.Proposal,
				Pinned: pr.Pinned, Note: pr.Note, Reason: pr.Reason, Field: pr.Field})
		}
		v.Limits = append(v.Limits, lv)
	}
	findings := policy.Lint
	if r.Sizing != nil {
		sizing := *r.Sizing
		findings = func(p policy.Policy) []policy.Finding { return policy.LintSized(p, sizing) }
	}
	for _, f := range findings(p) {
		v.Findings = append(v.Findings, views.Finding{Severity: string(f.Severity), ID: f.ID, Field: f.Field, Message: f.Message, Fix: f.Fix})
	}
	return v
}

// patternError joins the pattern's problems.
func (d *designPage) patternError() string {
	var msgs []string
	for _, p := range d.patternProblems() {
		msgs = append(msgs, p.Message)
	}
	if len(msgs) == 0 {
		return "The pattern is not valid."
	}
	return "No charts until the pattern is fixed: " + strings.Join(msgs, "; ")
}

// docsTargets are the exports the results offer for API documentation.
var docsTargets = []struct{ name, label string }{
	{"markdown", "Rate limits section (Markdown) for your API docs"},
	{"openapi", "OpenAPI 3.1 fragment: the 429 response and its headers"},
}

// docsSnippets are the policy's consumer-facing Markdown section and
// OpenAPI fragment, as the exports render them (export.Check leaves out
// what a tier name or path keeps from export).
func docsSnippets(p policy.Policy, query string) []views.DocSnippet {
	var out []views.DocSnippet
	for _, t := range docsTargets {
		e, err := targets.Render(t.name, p, export.Options{})
		if err != nil {
			continue // text Check refuses (a tier name): the exports page says why
		}
		out = append(out, views.DocSnippet{ID: "docs-" + t.name, Label: t.label, Text: string(e.Body),
			URL: "/export/" + t.name + "?" + query, Filename: e.Filename})
	}
	return out
}

// patternView describes the pattern in effect.
func (d *designPage) patternView(arrivals int, focus string) views.PatternView {
	name := algorithms.PatternName(d.d.Value("pattern"))
	if name == "" {
		name = design.DefaultPattern
	}
	pv := views.PatternView{Name: string(name), Arrivals: arrivals, Focus: focus}
	info, ok := algorithms.PatternByName(name)
	if !ok {
		return pv
	}
	pv.Shape, pv.Shows = info.Shape, info.Shows
	if p, ok := d.pattern(); ok {
		for _, param := range info.Params {
			pv.Params = append(pv.Params, views.ParamValue{Name: param, Value: design.PatternValue(p, param)})
		}
	}
	return pv
}
