package main

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/chartset"
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

// results sizes the design and simulates it for the charts.
func (d *design) results() views.ResultsView {
	rv := views.ResultsView{Query: d.query()}
	res, err := calc.Size(d.input)
	if err != nil {
		d.calcProblems(err)
	}
	if probs := d.designProblems(); len(probs) > 0 {
		for _, p := range probs {
			rv.Problems = append(rv.Problems, views.Problem{Field: p.Field, Anchor: d.anchor(p.Field), Message: p.Message})
		}
		return rv
	}
	rv.Result = &res
	rv.ExportURL = exportPath + "?" + rv.Query
	rv.Docs = docsSnippets(d, res, rv.Query)
	if !d.patternOK {
		rv.Pattern = d.patternView(0, "")
		rv.ChartsError = d.patternError()
		return rv
	}
	charts, pv, err := d.charts(res)
	rv.Pattern = pv
	if err != nil {
		rv.ChartsError = err.Error()
		return rv
	}
	// The policy's own limits first: every tier, the endpoint and the
	// global limits on the same traffic; then the calculator's algorithms
	// side by side.
	own, _, err := chartset.Policy(policy.FromSized(d.input, res), d.pattern)
	if err != nil {
		rv.ChartsError = err.Error()
		return rv
	}
	rv.Charts = append(own, charts...)
	return rv
}

// patternError joins the pattern's problems.
func (d *design) patternError() string {
	var msgs []string
	for _, p := range d.patternProblems() {
		msgs = append(msgs, p.Message)
	}
	if len(msgs) == 0 {
		return "The pattern is not valid."
	}
	return "No charts until the pattern is fixed: " + strings.Join(msgs, "; ")
}

// anchor is the link to param's input, or "" when the form has none.
func (d *design) anchor(param string) string {
	if param == "" {
		return ""
	}
	if param == "tiers" || param == "endpoints" {
		return "#sec-" + param
	}
	return "#" + fieldID(param)
}

// fieldID is the id of param's input: "f-tiers-0-name".
func fieldID(param string) string {
	return "f-" + strings.NewReplacer(".", "-", "[", "-", "]", "").Replace(param)
}

// docsTargets are the exports the results offer for API documentation.
var docsTargets = []struct{ name, label string }{
	{"markdown", "Rate limits section (Markdown) for your API docs"},
	{"openapi", "OpenAPI 3.1 fragment: the 429 response and its headers"},
}

// docsSnippets are the design's consumer-facing Markdown section and
// OpenAPI fragment, as the exports render them (export.Check leaves out
// what a tier name or path keeps from export). d must have no problems,
// and res is its sizing.
func docsSnippets(d *design, res calc.Result, query string) []views.DocSnippet {
	p := policy.FromSized(d.input, res)
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

// charts simulates the design on the pattern and builds every chart
// (package chartset, the same code as the embeds and the docs command). A
// pattern the charts cannot show is a problem on its field.
func (d *design) charts(res calc.Result) ([]views.Chart, views.PatternView, error) {
	charts, info, err := chartset.Build(res, d.pattern)
	if pe := (*chartset.PatternError)(nil); errors.As(err, &pe) {
		switch {
		case pe.Param != "":
			d.problem(pe.Param, pe.Message)
		case pe.Err != nil:
			d.patternProblem(pe.Err)
		default:
			return nil, d.patternView(0, ""), errors.New(pe.Message)
		}
		return nil, d.patternView(pe.Arrivals, ""), errors.New(d.patternError())
	}
	pv := d.patternView(info.Arrivals, info.Focus)
	if err != nil {
		return nil, pv, err
	}
	return charts, pv, nil
}

// patternView describes the pattern in effect.
func (d *design) patternView(arrivals int, focus string) views.PatternView {
	name := algorithms.PatternName(d.raw("pattern"))
	if name == "" {
		name = defaultPatternName
	}
	pv := views.PatternView{Name: string(name), Arrivals: arrivals, Focus: focus}
	info, ok := algorithms.PatternByName(name)
	if !ok {
		return pv
	}
	pv.Shape, pv.Shows = info.Shape, info.Shows
	if d.patternOK {
		for _, param := range info.Params {
			pv.Params = append(pv.Params, views.ParamValue{Name: param, Value: patternValue(d.pattern, param)})
		}
	}
	return pv
}

// Form: labels and help of every parameter, in form order.

type fieldSpec struct {
	param, label, help string
	numeric            bool
	options            []views.Option
}

var formSections = []struct {
	id, legend, help string
	fields           []fieldSpec
}{
	{"service", "Service", "What the whole service handles, and where the limit is enforced.", []fieldSpec{
		{"capacity", "Capacity", "requests/s at which latency starts to degrade (measured)", true, nil},
		{"headroom", "Headroom", "fraction kept free; blank: 0.2", true, nil},
		{"replicas", "Replicas", "instances that enforce the limit; blank: 1", true, nil},
		{"enforcement", "Enforcement", "where the counts live", false, []views.Option{
			{Value: "shared", Label: "shared (one store, e.g. Redis)"}, {Value: "local", Label: "local (each replica)"}}},
	}},
	{"clients", "Clients and percentiles", "Per-client request rates, as measured (0 or blank: not measured).", []fieldSpec{
		{"clients", "Clients", "active at once (with tiers: blank or their total)", true, nil},
		{"p50", "p50", "per-client rate, median", true, nil},
		{"p95", "p95", "per-client rate", true, nil},
		{"p99", "p99", "per-client rate; rate = p99 × margin", true, nil},
		{"percentile_unit", "Percentile unit", "unit of p50, p95 and p99", false, []views.Option{
			{Value: "second", Label: "requests per second"}, {Value: "minute", Label: "requests per minute"}}},
		{"margin", "Margin", "multiplier of p99; blank: 2", true, nil},
	}},
	{"burst", "Burst", "A client must be able to send peak requests/s for peak_seconds (both or neither).", []fieldSpec{
		{"peak", "Peak", "requests/s", true, nil},
		{"peak_seconds", "Peak seconds", "how long the peak lasts, s", true, nil},
	}},
	{"windows", "Windows and delay", "", []fieldSpec{
		{"window", "Window", "of the window algorithms, s; blank: 60", true, nil},
		{"max_delay", "Max delay", "longest wait in the leaky bucket's queue, s; blank: a whole burst", true, nil},
	}},
	{"tiers", "Tiers", "Classes of clients with their own counts and a multiplier of the per-client rate. Leave a row blank to skip it; Update adds rows.", nil},
	{"endpoints", "Endpoints", "Routes whose requests cost more than one token. Leave a row blank to skip it.", nil},
	{"retry", "Client retries", "How clients back off after a 429; blanks take the defaults 1, 2, 30, 5 and 0.5.", []fieldSpec{
		{"retry.base", "Base", "first wait, s", true, nil},
		{"retry.factor", "Factor", "each wait × factor", true, nil},
		{"retry.cap", "Cap", "longest wait, s", true, nil},
		{"retry.attempts", "Attempts", "retries before giving up", true, nil},
		{"retry.jitter", "Jitter", "fraction added at random to each wait", true, nil},
	}},
	{"pattern", "Chart traffic", "The traffic the charts simulate. Blank parameters take the pattern's default; a pattern reads only its own.", nil},
}

// tierSpecs and endpointSpecs are the fields of one row.
var (
	tierSpecs = []fieldSpec{
		{"name", "Name", "", false, nil},
		{"clients", "Clients", "", true, nil},
		{"multiplier", "Multiplier", "blank: 1", true, nil},
	}
	endpointSpecs = []fieldSpec{
		{"method", "Method", "", false, nil},
		{"path", "Path", "", false, nil},
		{"cost", "Cost", "tokens; blank: 1", true, nil},
	}
)

// patternHelp says which patterns read a parameter and in what unit.
func patternHelp(param string) string {
	units := map[string]string{
		"rate": "requests/s per client", "to": "requests/s at the end", "duration": "s", "count": "requests",
		"idle": "s", "period": "s", "window": "s", "clients": "clients", "jitter": "fraction",
		"key_by": "", "cost": "tokens per request", "seed": "of the random choices",
	}
	var users []string
	for _, p := range algorithms.Patterns {
		if slices.Contains(p.Params, param) {
			users = append(users, string(p.Name))
		}
	}
	h := units[param]
	if h != "" {
		h += "; "
	}
	return h + "read by " + strings.Join(users, ", ")
}

// placeholders show the calculator's defaults in blank fields, by
// parameter (rows by their field).
var placeholders = map[string]string{
	"headroom": views.Num(calc.DefaultHeadroom), "replicas": "1", "margin": views.Num(calc.DefaultMargin),
	"window": views.Num(calc.DefaultWindow), "retry.base": views.Num(calc.DefaultRetryBase),
	"retry.factor": views.Num(calc.DefaultRetryFactor), "retry.cap": views.Num(calc.DefaultRetryCap),
	"retry.attempts": strconv.Itoa(calc.DefaultRetryAttempts), "retry.jitter": views.Num(calc.DefaultRetryJitter),
	"multiplier": "1", "cost": "1", "method": "GET", "path": "/v1/reports",
}

// blankRows is how many blank rows the form adds after the given ones, and
// minRows the fewest rows it shows.
const (
	blankRows = 1
	minRows   = 2
)

// form builds the form's view model: every field with its value as typed
// and its message.
func (d *design) form() views.FormView {
	f := views.FormView{Action: designerPath, ResultsURL: resultsPath}
	field := func(s fieldSpec, param string) views.Field {
		fl := views.Field{
			Name: param, ID: fieldID(param), Label: s.label, Value: d.values[param], Help: s.help,
			Error: d.message(param), Numeric: s.numeric, Options: s.options,
			Placeholder: placeholders[s.param],
		}
		if len(s.options) > 0 && fl.Value != "" && !slices.ContainsFunc(s.options, func(o views.Option) bool { return o.Value == fl.Value }) {
			fl.Options = append(slices.Clone(s.options), views.Option{Value: fl.Value, Label: fl.Value + " (not valid)"})
		}
		return fl
	}
	for _, sec := range formSections {
		s := views.Section{ID: sec.id, Legend: sec.legend, Help: sec.help}
		for _, fs := range sec.fields {
			s.Fields = append(s.Fields, field(fs, fs.param))
		}
		switch sec.id {
		case "tiers", "endpoints":
			s.Message = views.Field{Name: sec.id, ID: "f-" + sec.id, Error: d.message(sec.id)}
			specs, present := tierSpecs, d.tierRows
			if sec.id == "endpoints" {
				specs, present = endpointSpecs, d.endpointRows
			}
			for n, i := range rowIndices(present) {
				r := views.Row{Label: fmt.Sprintf("%s %d", strings.TrimSuffix(sec.legend, "s"), n+1), Added: !slices.Contains(present, i)}
				for _, fs := range specs {
					r.Fields = append(r.Fields, field(fs, rowName(sec.id, i, fs.param)))
				}
				s.Rows = append(s.Rows, r)
			}
		case "pattern":
			s.Fields = append(s.Fields, d.patternFields(field)...)
		}
		f.Sections = append(f.Sections, s)
	}
	return f
}

// rowIndices are the rows the form shows: those in the URL, then blank ones
// numbered after the last.
func rowIndices(present []int) []int {
	rows := slices.Clone(present)
	next := 0
	if len(rows) > 0 {
		next = rows[len(rows)-1] + 1
	}
	for added := 0; (added < blankRows || len(rows) < minRows) && next <= maxRowIndex; added++ {
		rows = append(rows, next)
		next++
	}
	return rows
}

// patternFields are the pattern select and every pattern parameter, with
// the chosen pattern's defaults as placeholders.
func (d *design) patternFields(field func(fieldSpec, string) views.Field) []views.Field {
	var opts []views.Option
	for _, p := range algorithms.Patterns {
		opts = append(opts, views.Option{Value: string(p.Name), Label: string(p.Name) + ": " + p.Shape})
	}
	sel := field(fieldSpec{"pattern", "Pattern", "", false, opts}, "pattern")
	if sel.Value == "" {
		sel.Value = string(defaultPatternName)
	}
	out := []views.Field{sel}
	defaults := algorithms.DefaultPattern(defaultPatternName)
	if name := algorithms.PatternName(strings.TrimSpace(sel.Value)); name != "" {
		if _, ok := algorithms.PatternByName(name); ok {
			defaults = algorithms.DefaultPattern(name)
		}
	}
	for _, param := range patternParams {
		spec := fieldSpec{param: param, label: patternLabel(param), help: patternHelp(param), numeric: param != "key_by"}
		if param == "key_by" {
			spec.options = []views.Option{
				{Value: "", Label: "default (ip)"},
				{Value: "ip", Label: "ip (one key for the office)"},
				{Value: "api_key", Label: "api_key (one per user)"},
			}
		}
		fl := field(spec, "pattern."+param)
		if param != "key_by" {
			fl.Placeholder = patternValue(defaults, param)
		}
		out = append(out, fl)
	}
	return out
}

func patternLabel(param string) string {
	s := strings.ReplaceAll(param, "_", " ")
	return strings.ToUpper(s[:1]) + s[1:]
}
