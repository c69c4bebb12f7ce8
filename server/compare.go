package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/chartset"
	"github.com/ratelab/ratelab/views"
)

// comparePath is the page that sets two designs side by side.
const comparePath = "/compare"

// maxCompareInput bounds each design address the compare page reads.
const maxCompareInput = 16 << 10

// handleCompare answers GET /compare?a=<design>&b=<design>, each a designer
// URL or its query: both designs' limits with every difference marked, and
// the policy's own charts of each on the same traffic (A's pattern). A
// design with problems says so beside its field (422) and is not charted.
func handleCompare(c echo.Context) error {
	q := c.QueryParams()
	v := views.CompareView{Title: "ratelab: compare two designs",
		A: views.CompareSide{Name: "a", Label: "Design A", Input: q.Get("a")},
		B: views.CompareSide{Name: "b", Label: "Design B", Input: q.Get("b")}}
	if strings.TrimSpace(v.A.Input) == "" || strings.TrimSpace(v.B.Input) == "" {
		return render(c, http.StatusOK, views.ComparePage(v))
	}
	pages := [2]*designPage{}
	status := http.StatusOK
	for i, s := range []*views.CompareSide{&v.A, &v.B} {
		if len(s.Input) > maxCompareInput {
			s.Error = s.Name + ": the address is longer than 16 KiB"
			status = http.StatusUnprocessableEntity
			continue
		}
		d := parseDesignQuery(designQueryOf(s.Input))
		s.Link = designerPath + "?" + d.query()
		p, probs := d.policy()
		if len(probs) > 0 {
			s.Error = s.Name + ": the design has problems: " + (&invalidRequest{problems: probs}).Error()
			status = http.StatusUnprocessableEntity
			continue
		}
		s.Policy = policyView(p, d.r)
		pages[i] = d
	}
	if status != http.StatusOK {
		return render(c, status, views.ComparePage(v))
	}
	pattern, ok := pages[0].pattern()
	if !ok {
		v.A.Error = "a: " + pages[0].patternError()
		return render(c, http.StatusUnprocessableEntity, views.ComparePage(v))
	}
	v.Pattern = string(pattern.Name)
	for i, s := range []*views.CompareSide{&v.A, &v.B} {
		if err := c.Request().Context().Err(); err != nil {
			return err
		}
		p, _ := pages[i].policy()
		charts, _, err := chartset.Policy(p, pattern)
		if err != nil {
			s.Error = s.Name + ": " + err.Error()
			continue
		}
		for j := range charts {
			charts[j].ID = s.Name + "-" + charts[j].ID // one page, two sets
		}
		s.Charts = charts
	}
	v.Diff = diffLimits(v.A.Policy, v.B.Policy)
	return render(c, http.StatusOK, views.ComparePage(v))
}

// designQueryOf is the query of a designer URL, or s itself when it is
// one already.
func designQueryOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '?'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// diffLimits pairs the limits of two policies by what they limit (the
// default, a tier by name, an endpoint by route, the global limit), A's
// order first.
func diffLimits(a, b *views.PolicyView) []views.LimitDiff {
	text := func(l views.LimitView) string {
		switch {
		case l.Inherits:
			return "the default limit"
		case l.Spec == "":
			return "none"
		}
		return l.Spec
	}
	var out []views.LimitDiff
	index := map[string]int{}
	for _, l := range a.Limits {
		index[l.Label] = len(out)
		out = append(out, views.LimitDiff{Field: l.Field, Label: l.Label, A: text(l), B: "—"})
	}
	for _, l := range b.Limits {
		if i, ok := index[l.Label]; ok {
			out[i].B = text(l)
			continue
		}
		out = append(out, views.LimitDiff{Field: l.Field, Label: l.Label, A: "—", B: text(l)})
	}
	for i := range out {
		out[i].Changed = out[i].A != out[i].B
	}
	return out
}
