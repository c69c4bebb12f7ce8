package server

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/targets"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/views"
)

// Paths of the exports: one target's file, and the page that lists every
// target with its fidelity and mappings.
const (
	exportTargetPath = "/export/:target"
	exportsPath      = "/exports"
)

// exportOptionParams are the URL parameters of export.Options, prefixed so
// they never collide with a design's.
var exportOptionParams = []struct {
	param, label, hint string
	field              func(*export.Options) *string
}{
	{"export.api_key_header", "API key header", "carries the client's API key", func(o *export.Options) *string { return &o.APIKeyHeader }},
	{"export.account_header", "Account header", "carries the account id, set by authentication", func(o *export.Options) *string { return &o.AccountHeader }},
	{"export.tier_header", "Tier header", "carries the tier name, set by authentication", func(o *export.Options) *string { return &o.TierHeader }},
	{"export.upstream", "Upstream", "the protected service, host:port", func(o *export.Options) *string { return &o.Upstream }},
	{"export.listen", "Listen", "where the gateway listens: port or host:port", func(o *export.Options) *string { return &o.Listen }},
	{"export.gateway", "Gateway (for alerts)", "whose metrics the Prometheus rules watch", func(o *export.Options) *string { return &o.Gateway }},
}

// exportOptions reads export.Options from a query; absent or empty
// parameters take the defaults.
func exportOptions(q url.Values) export.Options {
	var o export.Options
	for _, p := range exportOptionParams {
		*p.field(&o) = strings.TrimSpace(q.Get(p.param))
	}
	return o.WithDefaults()
}

// exportDesign parses the design in the request's query as the designer
// does, and its export options; a design the page would refuse is an
// invalidRequest naming the URL's parameters.
func exportDesign(c echo.Context) (*designPage, policy.Policy, export.Options, error) {
	raw := c.Request().URL.RawQuery
	d := parseDesignQuery(raw)
	p, probs := d.policy()
	if len(probs) > 0 {
		return nil, policy.Policy{}, export.Options{}, &invalidRequest{problems: probs}
	}
	q, _ := url.ParseQuery(raw)
	return d, p, exportOptions(q), nil
}

// exportFailure turns an *export.Error into a 422 on the URL parameter it
// names: a tier name or path on the design's row, an option on its
// export.* parameter.
func exportFailure(d *designPage, err error) error {
	var xe *export.Error
	if !errors.As(err, &xe) {
		return err
	}
	field := xe.Field
	switch {
	case strings.HasPrefix(field, "tiers[") || strings.HasPrefix(field, "endpoints["):
		if name := d.d.ParamOf(field); name != "" {
			field = name
		}
	case field != "":
		field = "export." + field
	}
	return &invalidRequest{problems: []FieldProblem{{Field: field, Message: xe.Error()}}}
}

// handleExportTarget answers GET /export/{target}?<design>&export.…: the
// design exported for one target, as a download, with its fidelity in
// the X-Ratelab-Fidelity header. An unknown target is a 404 listing the
// targets; a design the designer refuses, or text that cannot go into a
// config file, a 422 naming the parameter.
func handleExportTarget(c echo.Context) error {
	name := c.Param("target")
	if _, ok := targets.Find(name); !ok {
		return echo.NewHTTPError(http.StatusNotFound,
			fmt.Sprintf("no export target %q; the targets are %s", name, strings.Join(targets.Names(), ", ")))
	}
	d, p, o, err := exportDesign(c)
	if err != nil {
		return err
	}
	e, err := targets.Render(name, p, o)
	if err != nil {
		return exportFailure(d, err)
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentDisposition, fmt.Sprintf("attachment; filename=%q", e.Filename))
	h.Set("X-Ratelab-Fidelity", string(e.Fidelity))
	return c.Blob(http.StatusOK, e.MediaType, e.Body)
}

// handleExports answers GET /exports?<design>&export.…: every target for
// the design, grouped, each with its fidelity, its mappings, its notes, a
// preview and a download link, and a form for the export options.
func handleExports(c echo.Context) error {
	d, p, o, err := exportDesign(c)
	if inv := (*invalidRequest)(nil); errors.As(err, &inv) {
		// A page, not an API: the problems in the page, with the way back
		// and the options as given.
		v := views.ExportsView{
			DesignURL: "/?" + c.Request().URL.RawQuery,
			Error:     "The design has problems; fix them in the designer first: " + inv.Error(),
		}
		q := c.QueryParams()
		v.Hidden = designFields(q)
		given := exportOptions(q)
		for _, op := range exportOptionParams {
			v.Options = append(v.Options, views.ExportOption{Param: op.param, Label: op.label, Hint: op.hint, Value: *op.field(&given)})
		}
		return render(c, http.StatusUnprocessableEntity, views.ExportsPage(v))
	}
	if err != nil {
		return err
	}
	v := views.ExportsView{DesignURL: "/?" + d.query()}
	base := d.query()
	var optQuery url.Values = url.Values{}
	for _, op := range exportOptionParams {
		val := *op.field(&o)
		v.Options = append(v.Options, views.ExportOption{Param: op.param, Label: op.label, Hint: op.hint, Value: val})
		if val != *op.field(&export.DefaultOptions) {
			optQuery.Set(op.param, val)
		}
	}
	v.Hidden = designFields(mustParse(base))
	if err := export.Check(p, o); err != nil {
		var xe *export.Error
		if errors.As(err, &xe) {
			v.Error = xe.Error()
			for i := range v.Options {
				if v.Options[i].Param == "export."+xe.Field {
					v.Options[i].Message = xe.Error()
				}
			}
			return render(c, http.StatusUnprocessableEntity, views.ExportsPage(v))
		}
		return err
	}
	query := base
	if len(optQuery) > 0 {
		query += "&" + optQuery.Encode()
	}
	for _, t := range targets.All {
		item := views.ExportItem{Name: t.Name, Title: t.Title, Group: string(t.Group),
			URL: "/export/" + t.Name + "?" + query}
		e, err := targets.Render(t.Name, p, o)
		if err != nil {
			item.Error = err.Error()
		} else {
			item.Filename = e.Filename
			item.Fidelity = string(e.Fidelity)
			item.Notes = e.Notes
			item.Preview = string(e.Body)
			for _, m := range e.Mappings {
				item.Mappings = append(item.Mappings, views.ExportMapping{
					Field: m.Field, From: m.From, To: m.To, Fidelity: string(m.Fidelity), Why: m.Why})
			}
		}
		v.Items = append(v.Items, item)
	}
	return render(c, http.StatusOK, views.ExportsPage(v))
}

// designFields are a query's design parameters (not export.*) as the
// options form's hidden fields, in name order, so the page is the same
// for the same design.
func designFields(q url.Values) []views.Pair {
	var out []views.Pair
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if strings.HasPrefix(k, "export.") {
			continue
		}
		for _, val := range q[k] {
			out = append(out, views.Pair{Name: k, Value: val})
		}
	}
	return out
}

// mustParse parses a query the server itself built.
func mustParse(q string) url.Values {
	v, _ := url.ParseQuery(q)
	return v
}
