package main

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// The design URL. The designer's query string is the whole design, so a
// design can be bookmarked, shared and reloaded exactly:
//
//   - one parameter per calc.Input field, named as in its JSON: capacity,
//     headroom, replicas, enforcement, clients, p50, p95, p99,
//     percentile_unit, margin, peak, peak_seconds, window, max_delay;
//   - nested fields as their JSON path with the index as a segment:
//     tiers.0.name, tiers.0.clients, tiers.0.multiplier;
//     endpoints.0.method, endpoints.0.path, endpoints.0.cost;
//     retry.base, retry.factor, retry.cap, retry.attempts, retry.jitter;
//   - the chart pattern as pattern=<name> (algorithms.Patterns) and its
//     parameters under "pattern.", as algorithms.PatternInfo.Params spells
//     them: pattern.rate, pattern.to, pattern.duration, pattern.count,
//     pattern.idle, pattern.period, pattern.window, pattern.clients,
//     pattern.jitter, pattern.key_by, pattern.cost, pattern.seed.
//     Durations are seconds.
//
// Example: /?capacity=2000&clients=200&p99=5&tiers.0.name=paid&tiers.0.clients=20&tiers.0.multiplier=4&pattern=idle_then_burst&pattern.count=300
//
// An empty value means "not given" and takes the calculator's (or the
// pattern's) default; a tier or endpoint row whose fields are all empty is
// skipped, which is how the form offers blank rows for adding more. Row
// indices need not be contiguous; errors name the row as the URL does.
// Only the first value of a repeated parameter counts, and unknown
// parameters are ignored. A query without any design parameter is the
// example design (exampleDesign), so / shows complete results.
//
// Field errors are keyed by these names: calc's "tiers[1].clients" becomes
// the URL's "tiers.<row>.clients", and a pattern's *algorithms.ParamError
// field "count" becomes "pattern.count".

// Limits of the query format. A row index is at most maxRowIndex, so a
// hostile URL cannot make the form render thousands of rows; a value is at
// most maxValueLen bytes (an endpoint path may have 1024).
const (
	maxRowIndex = 99
	maxValueLen = 2048
)

// exampleDesign is the design of an empty query: 200 clients of a service
// that handles 2000 requests/s, whose clients send 1, 3 and 5 requests/s at
// p50, p95 and p99; the limit comes out at 10 requests/s with a burst of
// 100, and the ramp pattern shows where each algorithm starts to reject.
var exampleDesign = url.Values{
	"capacity": {"2000"},
	"clients":  {"200"},
	"p50":      {"1"},
	"p95":      {"3"},
	"p99":      {"5"},
	"pattern":  {string(defaultPatternName)},
}

// defaultPatternName is the chart pattern when the query names none.
const defaultPatternName = algorithms.PatternRamp

// Scalar parameters of calc.Input, in form order.
var (
	serviceParams = []string{"capacity", "headroom", "replicas", "enforcement"}
	clientParams  = []string{"clients", "p50", "p95", "p99", "percentile_unit", "margin"}
	burstParams   = []string{"peak", "peak_seconds"}
	windowParams  = []string{"window", "max_delay"}
	retryParams   = []string{"retry.base", "retry.factor", "retry.cap", "retry.attempts", "retry.jitter"}
	tierFields    = []string{"name", "clients", "multiplier"}
	endpointFlds  = []string{"method", "path", "cost"}
	// patternParams are every parameter any pattern reads, in form order.
	patternParams = []string{"rate", "to", "duration", "count", "idle", "period", "window", "clients", "jitter", "key_by", "cost", "seed"}
)

// design is a parsed design URL: the values as typed, the calculator's input
// and the chart pattern they give, and every problem found, by parameter.
type design struct {
	// values holds the first non-empty value of each known parameter.
	values map[string]string
	// tierRows and endpointRows are the row indices present in the URL,
	// ascending (blank rows included); tierAt and endpointAt map the
	// calculator's index to the row index.
	tierRows, endpointRows []int
	tierAt, endpointAt     []int
	input                  calc.Input
	pattern                algorithms.Pattern
	// patternOK is false when the pattern could not be built.
	patternOK bool
	problems  []fieldProblem
	// tooManyRows records a section with rows beyond maxRowIndex.
	tooManyRows map[string]bool
}

// problem records msg for param unless param already has one: the first
// message (usually the parse error) is the one that explains the others.
func (d *design) problem(param, msg string) {
	if d.message(param) != "" {
		return
	}
	d.problems = append(d.problems, fieldProblem{Field: param, Message: msg})
}

// message is the problem of param, or "".
func (d *design) message(param string) string {
	for _, p := range d.problems {
		if p.Field == param {
			return p.Message
		}
	}
	return ""
}

// isPatternParam reports whether param belongs to the chart pattern.
func isPatternParam(param string) bool {
	return param == "pattern" || strings.HasPrefix(param, "pattern.")
}

// designProblems are the problems of the calculator's fields.
func (d *design) designProblems() []fieldProblem {
	var out []fieldProblem
	for _, p := range d.problems {
		if !isPatternParam(p.Field) {
			out = append(out, p)
		}
	}
	return out
}

// patternProblems are the problems of the pattern's fields.
func (d *design) patternProblems() []fieldProblem {
	var out []fieldProblem
	for _, p := range d.problems {
		if isPatternParam(p.Field) {
			out = append(out, p)
		}
	}
	return out
}

// rowParam splits "tiers.3.name" into ("tiers", 3, "name"); ok is false for
// anything else, including indices that are not plain decimal numbers.
func rowParam(key string) (section string, index int, field string, ok bool) {
	section, rest, found := strings.Cut(key, ".")
	if !found || (section != "tiers" && section != "endpoints") {
		return "", 0, "", false
	}
	idx, field, found := strings.Cut(rest, ".")
	if !found || idx == "" || len(idx) > 9 || (len(idx) > 1 && idx[0] == '0') {
		return "", 0, "", false
	}
	for _, c := range idx {
		if c < '0' || c > '9' {
			return "", 0, "", false
		}
	}
	fields := tierFields
	if section == "endpoints" {
		fields = endpointFlds
	}
	if !slices.Contains(fields, field) {
		return "", 0, "", false
	}
	index, _ = strconv.Atoi(idx)
	return section, index, field, true
}

// knownScalar reports whether key is a parameter other than a row field.
func knownScalar(key string) bool {
	if key == "pattern" {
		return true
	}
	if name, ok := strings.CutPrefix(key, "pattern."); ok {
		return slices.Contains(patternParams, name)
	}
	for _, list := range [][]string{serviceParams, clientParams, burstParams, windowParams, retryParams} {
		if slices.Contains(list, key) {
			return true
		}
	}
	return false
}

// parseDesignQuery parses a raw query string and reads the design in it.
// A pair that does not decode is dropped (its field then has no value); a
// query net/url refuses as a whole (more than 10000 parameters) is a
// problem of the design.
func parseDesignQuery(raw string) *design {
	q, err := url.ParseQuery(raw)
	d := parseDesign(q)
	if err != nil && len(q) == 0 && strings.TrimSpace(raw) != "" {
		d.problem("", "the address cannot be read as a design: "+err.Error())
	}
	return d
}

// parseDesign reads a design URL's query. It never fails and never panics:
// whatever is wrong becomes a problem on the parameter that caused it.
func parseDesign(q url.Values) *design {
	d := &design{values: map[string]string{}, tooManyRows: map[string]bool{}}
	given := false
	for key, vs := range q {
		if len(vs) == 0 || strings.TrimSpace(vs[0]) == "" {
			continue
		}
		if _, index, _, ok := rowParam(key); (ok && index <= maxRowIndex) || knownScalar(key) {
			given = true
			break
		}
	}
	if !given {
		q = exampleDesign
	}

	rows := map[string]map[int]bool{"tiers": {}, "endpoints": {}}
	for key, vs := range q {
		if len(vs) == 0 {
			continue
		}
		v := vs[0]
		if section, index, _, ok := rowParam(key); ok {
			if index > maxRowIndex {
				if strings.TrimSpace(v) != "" {
					d.tooManyRows[section] = true
				}
				continue
			}
			rows[section][index] = true
		} else if !knownScalar(key) {
			continue
		}
		if strings.TrimSpace(v) != "" {
			d.values[key] = v
		}
	}
	d.tierRows = slices.Sorted(maps.Keys(rows["tiers"]))
	d.endpointRows = slices.Sorted(maps.Keys(rows["endpoints"]))

	d.parseInput()
	d.parsePattern()
	return d
}

// raw returns the trimmed value of param, or "" when it is not given or
// longer than maxValueLen (which is then a problem).
func (d *design) raw(param string) string {
	v := strings.TrimSpace(d.values[param])
	if len(v) > maxValueLen {
		d.problem(param, fmt.Sprintf("%s: the value is %d bytes long; want at most %d", param, len(v), maxValueLen))
		return ""
	}
	return v
}

// quote shows a value in a message, shortened if long.
func quote(v string) string {
	if utf8.RuneCountInString(v) > 40 {
		r := []rune(v)
		v = string(r[:40]) + "…"
	}
	return strconv.Quote(v)
}

// float parses param as a finite number; ok is false when it is absent or
// bad (a problem then says why).
func (d *design) float(param string) (float64, bool) {
	v := d.raw(param)
	if v == "" {
		return 0, false
	}
	x, err := strconv.ParseFloat(v, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		d.problem(param, fmt.Sprintf("%s: %s is out of range; want a number of ordinary size", param, quote(v)))
		return 0, false
	case err != nil:
		d.problem(param, fmt.Sprintf("%s: %s is not a number", param, quote(v)))
		return 0, false
	case math.IsNaN(x) || math.IsInf(x, 0):
		d.problem(param, fmt.Sprintf("%s: %s is not a finite number", param, quote(v)))
		return 0, false
	}
	return x, true
}

// maxWhole bounds whole numbers before the calculator's own ranges apply:
// anything larger is out of every range and might not fit an int.
const maxWhole = 1e15

// whole parses param as a whole number (1000, 1e3 and 1000.0 all count).
func (d *design) whole(param string) (int64, bool) {
	x, ok := d.float(param)
	if !ok {
		return 0, false
	}
	if x != math.Trunc(x) {
		d.problem(param, fmt.Sprintf("%s: %s is not a whole number", param, quote(d.raw(param))))
		return 0, false
	}
	if math.Abs(x) > maxWhole {
		d.problem(param, fmt.Sprintf("%s: %s is out of range; want a whole number up to %g", param, quote(d.raw(param)), maxWhole))
		return 0, false
	}
	return int64(x), true
}

// parseInput fills d.input from the values.
func (d *design) parseInput() {
	in := &d.input
	setFloat := func(param string, dst *float64) {
		if x, ok := d.float(param); ok {
			*dst = x
		}
	}
	setPtr := func(param string, dst **float64) {
		if x, ok := d.float(param); ok {
			*dst = &x
		}
	}
	setInt := func(param string, dst *int) {
		if x, ok := d.whole(param); ok {
			*dst = int(x)
		}
	}
	setFloat("capacity", &in.Capacity)
	setPtr("headroom", &in.Headroom)
	setInt("replicas", &in.Replicas)
	in.Enforcement = calc.Enforcement(d.raw("enforcement"))
	setInt("clients", &in.Clients)
	setFloat("p50", &in.P50)
	setFloat("p95", &in.P95)
	setFloat("p99", &in.P99)
	in.PercentileUnit = calc.PercentileUnit(d.raw("percentile_unit"))
	setFloat("margin", &in.Margin)
	setFloat("peak", &in.Peak)
	setFloat("peak_seconds", &in.PeakSeconds)
	setFloat("window", &in.Window)
	setPtr("max_delay", &in.MaxDelay)
	setFloat("retry.base", &in.Retry.Base)
	setFloat("retry.factor", &in.Retry.Factor)
	setFloat("retry.cap", &in.Retry.Cap)
	setInt("retry.attempts", &in.Retry.Attempts)
	setPtr("retry.jitter", &in.Retry.Jitter)

	blank := func(section string, i int, fields []string) bool {
		for _, f := range fields {
			if d.raw(rowName(section, i, f)) != "" {
				return false
			}
		}
		return true
	}
	for _, i := range d.tierRows {
		if blank("tiers", i, tierFields) {
			continue
		}
		t := calc.TierInput{Name: d.raw(rowName("tiers", i, "name"))}
		setInt(rowName("tiers", i, "clients"), &t.Clients)
		setFloat(rowName("tiers", i, "multiplier"), &t.Multiplier)
		in.Tiers = append(in.Tiers, t)
		d.tierAt = append(d.tierAt, i)
	}
	for _, i := range d.endpointRows {
		if blank("endpoints", i, endpointFlds) {
			continue
		}
		e := calc.Endpoint{Method: d.raw(rowName("endpoints", i, "method")), Path: d.raw(rowName("endpoints", i, "path"))}
		if c, ok := d.whole(rowName("endpoints", i, "cost")); ok {
			e.Cost = c
		}
		in.Endpoints = append(in.Endpoints, e)
		d.endpointAt = append(d.endpointAt, i)
	}
	// The calculator reports too many rows itself; rows past maxRowIndex
	// are never read, so say so here.
	if d.tooManyRows["tiers"] {
		d.problem("tiers", fmt.Sprintf("tiers: rows are numbered 0 to %d; want at most %d tiers", maxRowIndex, calc.MaxTiers))
	}
	if d.tooManyRows["endpoints"] {
		d.problem("endpoints", fmt.Sprintf("endpoints: rows are numbered 0 to %d; want at most %d endpoints", maxRowIndex, calc.MaxEndpoints))
	}
}

// rowName is the parameter of a row's field: "tiers.3.name".
func rowName(section string, i int, field string) string {
	return section + "." + strconv.Itoa(i) + "." + field
}

// queryName translates a calculator field ("tiers[1].clients") into the
// URL's parameter ("tiers.3.clients").
func (d *design) queryName(field string) string {
	for _, s := range []struct {
		section string
		at      []int
	}{{"tiers", d.tierAt}, {"endpoints", d.endpointAt}} {
		rest, ok := strings.CutPrefix(field, s.section+"[")
		if !ok {
			continue
		}
		idx, sub, ok := strings.Cut(rest, "]")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil || i < 0 || i >= len(s.at) {
			return s.section
		}
		return s.section + "." + strconv.Itoa(s.at[i]) + sub
	}
	return field
}

// calcProblems records the calculator's field errors under the URL's names.
func (d *design) calcProblems(err error) {
	var es calc.Errors
	if !errors.As(err, &es) {
		d.problem("", err.Error())
		return
	}
	for _, e := range es {
		name := d.queryName(e.Field)
		d.problem(name, fmt.Sprintf("%s: %s is out of range; want %s", name, e.Value, e.Want))
	}
}

// parsePattern builds d.pattern: the named pattern's defaults with every
// parameter it reads that the URL gives. Each parameter is checked on its
// own, so every bad one gets its message, then the whole.
func (d *design) parsePattern() {
	name := algorithms.PatternName(d.raw("pattern"))
	if name == "" {
		name = defaultPatternName
	}
	info, ok := algorithms.PatternByName(name)
	if !ok {
		names := make([]string, len(algorithms.Patterns))
		for i, p := range algorithms.Patterns {
			names[i] = string(p.Name)
		}
		d.problem("pattern", fmt.Sprintf("pattern: %s is not a pattern; want one of %s", quote(string(name)), strings.Join(names, ", ")))
		return
	}
	p := algorithms.DefaultPattern(name)
	bad := false
	for _, param := range info.Params {
		key := "pattern." + param
		if d.raw(key) == "" {
			continue
		}
		one := algorithms.DefaultPattern(name)
		if !d.setPatternParam(&one, param) || !d.setPatternParam(&p, param) {
			bad = true
			continue
		}
		if err := one.Validate(); err != nil {
			d.patternProblem(err)
			bad = true
		}
	}
	if bad {
		return
	}
	if err := p.Validate(); err != nil {
		d.patternProblem(err)
		return
	}
	d.pattern, d.patternOK = p, true
}

// patternProblem records a pattern's validation error on its parameter.
func (d *design) patternProblem(err error) {
	var pe *algorithms.ParamError
	if !errors.As(err, &pe) {
		d.problem("pattern", "pattern: "+err.Error())
		return
	}
	key := "pattern"
	if pe.Field != "pattern" {
		key = "pattern." + pe.Field
	}
	d.problem(key, fmt.Sprintf("%s: %s is out of range; want %s", key, pe.Value, pe.Want))
}

// maxPatternSeconds bounds a duration before conversion to time.Duration;
// the pattern's own ranges are far tighter.
const maxPatternSeconds = 1e9

// setPatternParam sets the pattern parameter param of p from the URL,
// reporting a value that is not even of the right kind.
func (d *design) setPatternParam(p *algorithms.Pattern, param string) bool {
	key := "pattern." + param
	seconds := func(dst *time.Duration) bool {
		x, ok := d.float(key)
		if !ok {
			return false
		}
		if math.Abs(x) > maxPatternSeconds {
			d.problem(key, fmt.Sprintf("%s: %s seconds is out of range; want at most 86400", key, quote(d.raw(key))))
			return false
		}
		*dst = time.Duration(math.Round(x * 1e9))
		return true
	}
	whole := func(dst *int) bool {
		x, ok := d.whole(key)
		if ok {
			*dst = int(x)
		}
		return ok
	}
	switch param {
	case "rate", "to", "jitter":
		x, ok := d.float(key)
		if !ok {
			return false
		}
		switch param {
		case "rate":
			p.Rate = x
		case "to":
			p.To = x
		default:
			p.Jitter = x
		}
		return true
	case "duration":
		return seconds(&p.Duration)
	case "idle":
		return seconds(&p.Idle)
	case "period":
		return seconds(&p.Period)
	case "window":
		return seconds(&p.Window)
	case "count":
		return whole(&p.Count)
	case "clients":
		return whole(&p.Clients)
	case "cost":
		x, ok := d.whole(key)
		if ok {
			p.Cost = x
		}
		return ok
	case "seed":
		v := d.raw(key)
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			d.problem(key, fmt.Sprintf("%s: %s is out of range; want a whole number in [0, 18446744073709551615]", key, quote(v)))
			return false
		}
		p.Seed = s
		return true
	case "key_by":
		p.KeyBy = d.raw(key)
		return true
	}
	return true
}

// patternValue formats the pattern parameter param of p as the URL spells
// it (durations in seconds).
func patternValue(p algorithms.Pattern, param string) string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	switch param {
	case "rate":
		return f(p.Rate)
	case "to":
		return f(p.To)
	case "jitter":
		return f(p.Jitter)
	case "duration":
		return f(p.Duration.Seconds())
	case "idle":
		return f(p.Idle.Seconds())
	case "period":
		return f(p.Period.Seconds())
	case "window":
		return f(p.Window.Seconds())
	case "count":
		return strconv.Itoa(p.Count)
	case "clients":
		return strconv.Itoa(p.Clients)
	case "cost":
		return strconv.FormatInt(max(p.Cost, 1), 10)
	case "seed":
		return strconv.FormatUint(p.Seed, 10)
	case "key_by":
		return p.KeyBy
	}
	return ""
}

// query is the design's canonical query string: every given parameter in
// form order, rows by index, empty ones left out. Parsing it gives the same
// design.
func (d *design) query() string {
	var b strings.Builder
	add := func(key string) {
		v, ok := d.values[key]
		if !ok {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(key))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(v))
	}
	for _, list := range [][]string{serviceParams, clientParams, burstParams, windowParams} {
		for _, k := range list {
			add(k)
		}
	}
	for _, i := range d.tierRows {
		for _, f := range tierFields {
			add(rowName("tiers", i, f))
		}
	}
	for _, i := range d.endpointRows {
		for _, f := range endpointFlds {
			add(rowName("endpoints", i, f))
		}
	}
	for _, k := range retryParams {
		add(k)
	}
	add("pattern")
	for _, k := range patternParams {
		add("pattern." + k)
	}
	return b.String()
}
