package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a-h/templ"
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

// pages is what the heavy page handlers share: the gate on heavy
// requests and their deadline, the cache of deterministic renders and the
// public URL for absolute links.
type pages struct {
	gate      *heavyGate
	timeout   time.Duration
	cache     *pageCache
	publicURL string
}

// maxEchoedURL bounds a URL the server echoes in a response header
// (HX-Push-Url, /import's Location). nginx's default proxy buffer (4 KiB
// on most platforms) must hold every response header, and ratelab's own
// (the security policy, rate-limit headers) take about 1 KiB; a longer
// design URL is left out of the header (HX-Push-Url) or answered without
// one (/import renders the page).
const maxEchoedURL = 2048

// pushURL is the HX-Push-Url value of a design's canonical query, or ""
// when it is longer than maxEchoedURL: htmx then leaves the address bar as
// it is, which is better than a 502 from the proxy.
func pushURL(query string) string {
	u := designerPath + "?" + query
	if len(u) > maxEchoedURL {
		return ""
	}
	return u
}

// designerKey is the cache key of a designer page or results fragment:
// only for a query that is already canonical (the form then shows exactly
// what the design holds, so the same key is the same bytes), with the
// base URL its snippets use and whether htmx asked.
func designerKey(kind, raw, canonical, base string, hx bool) (string, bool) {
	if raw != "" && raw != canonical {
		return "", false
	}
	return fmt.Sprintf("%s\x00%t\x00%s\x00%s", kind, hx, base, raw), true
}

// handleDesigner answers GET /: the form filled in from the design URL and
// every result, rendered on the server so the page works without
// JavaScript. A form htmx brought back (a new algorithm) carries the
// design's canonical URL in HX-Push-Url, not the form's every blank field.
func (pg *pages) handleDesigner(c echo.Context) error {
	hx := c.Request().Header.Get("HX-Request") == "true"
	return pg.designerPage(c, "designer", hx, func(v views.DesignerView) templ.Component { return views.Designer(v) })
}

// handleDesignerResults answers GET /designer/results: the same results
// component as the page, plus each field's message out of band, for htmx
// to swap in. HX-Push-Url puts the design's canonical URL (the page, not
// this fragment) in the address bar.
//
// A design with problems (often a value half typed) keeps the last valid
// design's results on the page: the answer is the messages and the stale
// note out of band, with HX-Reswap: none so htmx leaves the results as
// they are, and HX-Push-Url: false so the address stays the design they
// show. Without JavaScript the page itself lists the problems.
func (pg *pages) handleDesignerResults(c echo.Context) error {
	return pg.designerPage(c, "results", true, func(v views.DesignerView) templ.Component { return views.ResultsUpdate(v) })
}

// designerPage answers a designer page or fragment from the cache, or
// works it out within the heavy budget (stopping when the request's
// context ends) and keeps it.
func (pg *pages) designerPage(c echo.Context, kind string, push bool, comp func(views.DesignerView) templ.Component) error {
	raw := c.Request().URL.RawQuery
	base := pg.baseURL(c)
	d := design.ParseQuery(raw)
	key, cacheable := designerKey(kind, raw, d.Query(), base, push)
	if !cacheable {
		key = ""
	}
	if r, ok := pg.cache.get(key); cacheable && ok {
		return serveRendered(c, pg.cache, key, r)
	}
	w, err := enterHeavy(c, pg.gate, pg.timeout)
	if err != nil {
		return err
	}
	defer w.leave()
	ctx := c.Request().Context()
	v, err := designerViewOf(ctx, newDesignPage(d))
	if err != nil {
		return err
	}
	v.Results.Base = base
	// Only script swaps in the results fragment, so its tables can wait
	// until their panels open and its far blocks until they are near.
	v.Results.Live = kind == "results"
	r := rendered{contentType: echo.MIMETextHTMLCharsetUTF8}
	if push {
		r.pushURL = pushURL(v.Results.Query)
	}
	if kind == "results" && len(v.Results.Problems) > 0 {
		// Not cached: a design with problems is not simulated, so
		// its answer is cheap, and the cache keeps no headers but
		// HX-Push-Url.
		c.Response().Header().Set("HX-Reswap", "none")
		c.Response().Header().Set("HX-Push-Url", "false")
		if r.body, err = renderBytes(c, comp(v)); err != nil {
			return err
		}
		return c.Blob(http.StatusOK, r.contentType, r.body)
	}
	if r.body, err = renderBytes(c, comp(v)); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.etag = strongETag(r.body)
	if cacheable {
		pg.cache.put(key, r)
	}
	return serveRendered(c, pg.cache, key, r)
}

// baseURL is the server's absolute URL for the documentation snippets:
// -public-url when set, else as the request reached it: scheme
// (X-Forwarded-Proto behind a trusted proxy) and Host.
func (pg *pages) baseURL(c echo.Context) string {
	if pg.publicURL != "" {
		return pg.publicURL
	}
	return c.Scheme() + "://" + c.Request().Host
}

// designerView parses a design URL's raw query and builds the page's view
// model. It never fails: bad input becomes messages next to the fields.
func designerView(rawQuery string) views.DesignerView {
	v, _ := designerViewOf(context.Background(), parseDesignQuery(rawQuery))
	return v
}

// designerViewOf builds the page's view model of d; it fails only when ctx
// ends first (ctx.Err()).
func designerViewOf(ctx context.Context, d *designPage) (views.DesignerView, error) {
	results, err := d.resultsOf(ctx)
	if err != nil {
		return views.DesignerView{}, err
	}
	return views.DesignerView{
		Title: "ratelab: rate-limit designer", Form: d.form(), Results: results,
		Import: views.ImportView{Action: importPath},
	}, nil
}

// results works the design out (see resultsOf) with no deadline.
func (d *designPage) results() views.ResultsView {
	rv, _ := d.resultsOf(context.Background())
	return rv
}

// resultsOf works the design out for the page: its policy with every limit
// and where it departs from the calculator's proposal, the policy's lint,
// the calculator's numbers when the design has measurements, and the
// charts: the policy's own limits on the pattern, then the calculator's
// algorithms side by side. Between the expensive steps it checks ctx, and
// returns ctx.Err() once ctx has ended (the client left, the deadline
// passed): the simulations themselves take no context.
func (d *designPage) resultsOf(ctx context.Context) (views.ResultsView, error) {
	rv := views.ResultsView{Query: d.query()}
	p, probs := d.policy()
	if len(probs) > 0 {
		for _, pr := range probs {
			rv.Problems = append(rv.Problems, views.Problem{Field: pr.Field, Anchor: anchor(pr.Field), Message: pr.Message})
		}
		return rv, nil
	}
	rv.Policy = policyView(p, d.r)
	rv.Result = d.r.Sizing
	rv.ExportURL = exportPath + "?" + rv.Query
	rv.HasDefault = p.Defaults.Limit.Algorithm != ""
	if q, pinned := d.d.Unpinned(); pinned && d.r.Sizing != nil {
		rv.ProposalQuery = q
	}
	if err := ctx.Err(); err != nil {
		return rv, err
	}
	pattern, ok := d.pattern()
	if !ok {
		rv.Pattern = d.patternView(0, "")
		rv.ChartsError = d.patternError()
		return rv, nil
	}
	charts, info, err := chartset.Policy(p, pattern)
	if d.chartProblem(err) {
		rv.Pattern = d.patternView(0, "")
		rv.ChartsError = d.patternError()
		return rv, nil
	}
	if err != nil {
		rv.ChartsError = err.Error()
		return rv, nil
	}
	rv.Pattern = d.patternView(info.Arrivals, info.Focus)
	if err := ctx.Err(); err != nil {
		return rv, err
	}
	if d.r.Sizing != nil {
		more, _, err := chartset.Build(*d.r.Sizing, pattern)
		if d.chartProblem(err) {
			rv.ChartsError = d.patternError()
			return rv, nil
		}
		if err != nil {
			rv.ChartsError = err.Error()
			return rv, nil
		}
		charts = append(charts, more...)
	}
	rv.Charts = charts
	return rv, ctx.Err()
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
			lv.Spec = views.SpecLabel(l.Spec)
		}
		if l.Proposal.Algorithm != "" {
			lv.Proposal = views.SpecLabel(l.Proposal)
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

// handleDesignerDocs answers GET /designer/docs/<panel>?<design>: the
// content of a panel the designer fetches when it opens (its page holds
// only the summary and a link here, so a page does not render a dozen
// closed panels nobody reads), as a page of its own that also serves
// readers without JavaScript. The panel is "docs-panel", the API docs
// texts (the design's policy only), "<chart id>-snippets", the embed
// snippets of one chart, or "<chart id>-data", its data table (an update
// leaves the tables out; the charts are worked out within the heavy
// budget to know the chart). Renders are cached like the page.
func (pg *pages) handleDesignerDocs(c echo.Context) error {
	panel := c.Param("panel")
	raw := c.Request().URL.RawQuery
	base := pg.baseURL(c)
	d := design.ParseQuery(raw)
	key, cacheable := designerKey("docs\x00"+panel, raw, d.Query(), base, false)
	if !cacheable {
		key = ""
	}
	if r, ok := pg.cache.get(key); cacheable && ok {
		return serveRendered(c, pg.cache, key, r)
	}
	dp := newDesignPage(d)
	query := dp.query()
	p, probs := dp.policy()
	if len(probs) > 0 {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "this design has problems; the designer lists them at "+designerPath+"?"+query)
	}
	var title string
	var body templ.Component
	snippetsOf, dataOf := chartPanel(panel, "-snippets"), chartPanel(panel, "-data")
	switch {
	case panel == "docs-panel":
		title = "Use in API docs"
		body = views.DocsPanelBody(docsSnippets(p, query), exportsPath+"?"+query)
	case snippetsOf != "" || dataOf != "":
		w, err := enterHeavy(c, pg.gate, pg.timeout)
		if err != nil {
			return err
		}
		defer w.leave()
		rv, err := dp.resultsOf(c.Request().Context())
		if err != nil {
			return err
		}
		id := snippetsOf + dataOf // one of them is empty
		i := slices.IndexFunc(rv.Charts, func(ch views.Chart) bool { return ch.ID == id })
		if i < 0 {
			return echo.NewHTTPError(http.StatusNotFound, "this design has no chart "+id)
		}
		if dataOf != "" {
			title = "Data table: " + rv.Charts[i].Title
			body = views.ChartTableBody(rv.Charts[i])
		} else {
			title = "Use in docs: " + rv.Charts[i].Title
			body = views.ChartSnippetsBody(rv.Charts[i], views.EmbedSnippets(base, query, rv.Charts[i]))
		}
	default:
		return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("no panel %q", panel))
	}
	r := rendered{contentType: echo.MIMETextHTMLCharsetUTF8}
	var err error
	if r.body, err = renderBytes(c, views.DocsPanelPage(title, designerPath+"?"+query, body)); err != nil {
		return err
	}
	r.etag = strongETag(r.body)
	if cacheable {
		pg.cache.put(key, r)
	}
	return serveRendered(c, pg.cache, key, r)
}

// chartPanel is the chart id of a panel named "<chart id><suffix>", or ""
// when panel cannot be one: a chart's snippets exist for the charts that
// embed (views.ChartSlugs), its data table for every chart the designer
// draws (each id "chart-" and at most 40 lower-case letters and dashes;
// whether the design has it is known once its charts are worked out).
func chartPanel(panel, suffix string) string {
	id, ok := strings.CutSuffix(panel, suffix)
	if !ok {
		return ""
	}
	if suffix == "-snippets" {
		if !slices.Contains(views.ChartSlugs, views.ChartSlug(id)) {
			return ""
		}
		return id
	}
	name, ok := strings.CutPrefix(id, "chart-")
	if !ok || name == "" || len(name) > 40 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz-") != "" {
		return ""
	}
	return id
}
