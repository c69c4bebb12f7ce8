package server

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/chartset"
	"github.com/ratelab/ratelab/views"
)

// comparePath is the page that sets two designs side by side.
const comparePath = "/compare"

// maxCompareInput bounds each design address the compare page reads: the
// largest design (every tier and endpoint, each with its limit) takes
// about 18 KiB, with room for long names and paths.
const maxCompareInput = 64 << 10

// handleCompare answers GET /compare?a=<design>&b=<design>[&pattern=<name>],
// each design a designer URL or its query: what each policy does with the
// same traffic, both designs' limits with every difference marked, and the
// policy's own charts of each on that traffic: A's pattern, or the pattern
// named (at its defaults, for A's design). A design with problems says so
// beside its field (422) and is not charted; so does a pattern that is not
// one.
func handleCompare(c echo.Context) error {
	q := c.QueryParams()
	v := views.CompareView{Title: "ratelab: compare two designs",
		A:      views.CompareSide{Name: "a", Label: "Design A", Input: q.Get("a")},
		B:      views.CompareSide{Name: "b", Label: "Design B", Input: q.Get("b")},
		Chosen: strings.TrimSpace(q.Get("pattern"))}
	for _, p := range algorithms.Patterns {
		v.Patterns = append(v.Patterns, views.Option{Value: string(p.Name), Label: string(p.Name) + ": " + p.Shape})
	}
	if v.Chosen != "" {
		if _, ok := algorithms.PatternByName(algorithms.PatternName(v.Chosen)); !ok {
			v.PatternError = "pattern: " + clipQuote(v.Chosen) + " is not a pattern; want one of the nine listed"
			return render(c, http.StatusUnprocessableEntity, views.ComparePage(v))
		}
	}
	if strings.TrimSpace(v.A.Input) == "" || strings.TrimSpace(v.B.Input) == "" {
		v.Suggestions = suggestions(v.A.Input)
		return render(c, http.StatusOK, views.ComparePage(v))
	}
	pages := [2]*designPage{}
	status := http.StatusOK
	for i, s := range []*views.CompareSide{&v.A, &v.B} {
		if len(s.Input) > maxCompareInput {
			s.Error = s.Name + ": the address is longer than 64 KiB"
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
	// Two designs charted: the work, and the memory, of two designer
	// pages.
	if err := workOf(c).hold(2); err != nil {
		return err
	}
	traffic := pages[0]
	if v.Chosen != "" {
		// A's design with the chosen pattern at its defaults; the links
		// open each design on it too.
		traffic = withPattern(pages[0], v.Chosen)
		v.A.Link = designerPath + "?" + traffic.query()
		v.B.Link = designerPath + "?" + withPattern(pages[1], v.Chosen).query()
	}
	swap := url.Values{"a": {v.B.Input}, "b": {v.A.Input}}
	if v.Chosen != "" {
		swap.Set("pattern", v.Chosen)
	}
	v.Swap = comparePath + "?" + swap.Encode()
	pattern, ok := traffic.pattern()
	if !ok {
		if v.Chosen != "" {
			v.PatternError = "pattern: " + traffic.patternError()
		} else {
			v.A.Error = "a: " + traffic.patternError()
		}
		return render(c, http.StatusUnprocessableEntity, views.ComparePage(v))
	}
	shape := ""
	if info, ok := algorithms.PatternByName(pattern.Name); ok {
		shape = " (" + info.Shape + ")"
	}
	v.Pattern = string(pattern.Name)
	var infos [2]chartset.Info
	var kinds [2][]string // each chart's kind: its id before the side's prefix
	for i, s := range []*views.CompareSide{&v.A, &v.B} {
		if err := c.Request().Context().Err(); err != nil {
			return err
		}
		p, _ := pages[i].policy()
		charts, info, err := chartset.Policy(p, pattern)
		if err != nil {
			s.Error = s.Name + ": " + err.Error()
			continue
		}
		kinds[i] = make([]string, len(charts))
		for j := range charts {
			kinds[i][j] = charts[j].ID
			charts[j].ID = s.Name + "-" + charts[j].ID // one page, two sets
		}
		s.Charts, infos[i] = charts, info
	}
	v.Diff = diffLimits(v.A.Policy, v.B.Policy)
	if v.A.Error != "" || v.B.Error != "" {
		// The traffic is too much for a design's charts: it says so
		// beside its field, beside the limits of both.
		return render(c, http.StatusUnprocessableEntity, views.ComparePage(v))
	}
	v.Traffic = fmt.Sprintf("Pattern %s%s: %d requests, sent by each class of clients in a run of its own; for the backend's load, by every client at once.", pattern.Name, shape, infos[0].Arrivals)
	v.Outcome = diffOutcomes(infos[0], infos[1])
	v.Verdict = strings.TrimSpace(clientsVerdict(infos[0].Outcomes, infos[1].Outcomes) + " " + verdict(infos[0].Load, infos[1].Load))
	v.Pairs = views.PairCharts(v.A.Charts, v.B.Charts, kinds[0], kinds[1])
	for _, p := range v.Pairs {
		views.ShareScale(p.A, p.B)
	}
	return render(c, http.StatusOK, views.ComparePage(v))
}

// withPattern is d with the pattern called name at its defaults for the
// traffic instead of its own.
func withPattern(d *designPage, name string) *designPage {
	return newDesignPage(d.d.WithPattern(algorithms.PatternName(name)))
}

// suggestions are the compare pages of design a beside itself with each
// other algorithm for its default limit (at the calculator's numbers), for
// a page given A alone; none when a is not a valid design with a default
// limit.
func suggestions(a string) []views.Option {
	if strings.TrimSpace(a) == "" || len(a) > maxCompareInput {
		return nil
	}
	d := parseDesignQuery(designQueryOf(a))
	p, probs := d.policy()
	if len(probs) > 0 || p.Defaults.Limit.Algorithm == "" {
		return nil
	}
	var out []views.Option
	for _, alg := range algorithms.Names {
		if alg != p.Defaults.Limit.Algorithm {
			out = append(out, views.Option{Value: views.CompareURL(d.query(), d.d.WithDefaultAlgorithm(alg).Query()), Label: string(alg)})
		}
	}
	return out
}

// diffOutcomes pairs what two policies did with the same traffic: a row for
// each class of clients either has (by who they are, A's order first),
// then the backend's load.
func diffOutcomes(a, b chartset.Info) []views.DiffRow {
	rows := func(info chartset.Info) []views.DiffRow {
		out := make([]views.DiffRow, len(info.Outcomes))
		for i, o := range info.Outcomes {
			out[i] = views.DiffRow{Label: o.Class.Who, A: outcomeText(o)}
		}
		return out
	}
	out := pairRows(rows(a), rows(b))
	if a.Load != nil || b.Load != nil {
		la, lb := loadText(a.Load), loadText(b.Load)
		out = append(out, views.DiffRow{Label: "the backend's busiest second", A: la, B: lb, Changed: la != lb})
	}
	return out
}

// pairRows pairs one design's rows with the other's by label, A's order
// first, then B's labels A lacks: each row's A is a's text and B is b's
// ("—" where a design lacks the row), changed where they differ. Both
// sides' rows come with their text in A.
func pairRows(a, b []views.DiffRow) []views.DiffRow {
	out := make([]views.DiffRow, 0, len(a)+len(b))
	index := map[string]int{}
	for _, r := range a {
		index[r.Label] = len(out)
		r.B = "—"
		out = append(out, r)
	}
	for _, r := range b {
		if i, ok := index[r.Label]; ok {
			out[i].B = r.A
			continue
		}
		r.A, r.B = "—", r.A
		out = append(out, r)
	}
	for i := range out {
		out[i].Changed = out[i].A != out[i].B
	}
	return out
}

// outcomeText is a class's outcome in a few words: "all 300 admitted", or
// "180 of 300 admitted (60 %), 40 of them delayed up to 1.5 s; the first
// rejected at 1.2 s".
func outcomeText(o chartset.Outcome) string {
	s := fmt.Sprintf("all %d admitted", o.Admitted)
	if o.Rejected > 0 {
		s = fmt.Sprintf("%d of %d admitted (%s %%)", o.Admitted, o.Offered, percent(o.Admitted, o.Offered))
	}
	if o.Delayed > 0 {
		s += fmt.Sprintf(", %d of them delayed up to %s", o.Delayed, views.Duration(o.MaxDelay))
	}
	if o.Rejected > 0 && o.FirstRejection >= 0 {
		s += "; the first rejected at " + views.Duration(o.FirstRejection)
	}
	return s
}

// percent is 100·part/whole, whole percents except within one of 0 or
// 100, which keep a decimal (floored near 100, so it never reads 100
// while some were rejected; ceiled near 0, so it never reads 0 while
// some passed).
func percent(part, whole int64) string {
	if whole <= 0 {
		return "0"
	}
	p := 100 * float64(part) / float64(whole)
	switch {
	case p > 99 && p < 100:
		return views.Num(math.Floor(p*10) / 10)
	case p > 0 && p < 1:
		return views.Num(math.Ceil(p*10) / 10)
	}
	return views.Num(math.Round(p))
}

// loadText is the backend's busiest second against its usable capacity.
func loadText(l *chartset.Load) string {
	if l == nil {
		return "—"
	}
	if l.Peak <= l.Usable {
		return fmt.Sprintf("%s/s, within the usable %s/s", views.Num(math.Round(l.Peak)), views.Num(l.Usable))
	}
	return fmt.Sprintf("%s/s: %s × the usable %s/s, above it for %s", views.Num(math.Round(l.Peak)), ratio(l), views.Num(l.Usable), views.Duration(l.Over))
}

// ratio is the busiest second's load over the usable capacity, to two
// decimals.
func ratio(l *chartset.Load) string {
	return strconv.FormatFloat(l.Peak/l.Usable, 'f', 2, 64)
}

// clientsVerdict says in a sentence which policy admits more of each class
// of clients both have ("B admits more for default and tier free; A for
// none."), naming at most three classes each, or "" when the two admit
// the same of every class.
func clientsVerdict(a, b []chartset.Outcome) string {
	admitted := map[string]int64{}
	for _, o := range a {
		admitted[o.Class.Who] = o.Admitted
	}
	var moreA, moreB []string
	for _, o := range b {
		n, ok := admitted[o.Class.Who]
		switch {
		case !ok:
		case n > o.Admitted:
			moreA = append(moreA, o.Class.Who)
		case n < o.Admitted:
			moreB = append(moreB, o.Class.Who)
		}
	}
	if len(moreA) == 0 && len(moreB) == 0 {
		return ""
	}
	list := func(whos []string) string {
		switch n := len(whos); {
		case n == 0:
			return "none"
		case n > 3:
			return strings.Join(whos[:3], ", ") + fmt.Sprintf(" and %d more", n-3)
		case n > 1:
			return strings.Join(whos[:n-1], ", ") + " and " + whos[n-1]
		}
		return whos[0]
	}
	if len(moreA) >= len(moreB) {
		return fmt.Sprintf("A admits more for %s; B for %s.", list(moreA), list(moreB))
	}
	return fmt.Sprintf("B admits more for %s; A for %s.", list(moreB), list(moreA))
}

// verdict says in a sentence how the two policies treat the backend, or
// "" when either draws no load.
func verdict(a, b *chartset.Load) string {
	if a == nil || b == nil {
		return ""
	}
	over := func(l *chartset.Load) bool { return l.Peak > l.Usable }
	switch {
	case !over(a) && !over(b):
		return "Both keep the backend within its usable capacity."
	case over(a) && over(b):
		return fmt.Sprintf("Both let the backend's load past its usable capacity: A to %s × for %s, B to %s × for %s.",
			ratio(a), views.Duration(a.Over), ratio(b), views.Duration(b.Over))
	case over(a):
		return fmt.Sprintf("A lets the backend's load past its usable capacity (%s × for %s); B keeps it within.", ratio(a), views.Duration(a.Over))
	}
	return fmt.Sprintf("B lets the backend's load past its usable capacity (%s × for %s); A keeps it within.", ratio(b), views.Duration(b.Over))
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
func diffLimits(a, b *views.PolicyView) []views.DiffRow {
	rows := func(p *views.PolicyView) []views.DiffRow {
		out := make([]views.DiffRow, len(p.Limits))
		for i, l := range p.Limits {
			text := l.Spec
			switch {
			case l.Inherits:
				text = "the default limit"
			case l.Spec == "":
				text = "none"
			}
			out[i] = views.DiffRow{Field: l.Field, Label: l.Label, A: text}
		}
		return out
	}
	return pairRows(rows(a), rows(b))
}
