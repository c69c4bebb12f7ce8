package design

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/policy"
)

// Design is one design as the URL gives it: the values as typed, and what
// they say, read into a policy being edited, the pins of its limits and the
// chart pattern, with every problem found on the way.
//
// The policy being edited holds every field of the policy; its limits hold
// only the chosen algorithm (token_bucket when none is chosen, none for an
// endpoint) and the pinned parameters. Resolve fills in the rest from the
// calculator's proposal.
//
// A Design is built by Parse, ParseQuery, FromPolicy or FromInput and is
// not changed afterwards; it is safe for concurrent use by readers.
type Design struct {
	// values holds the trimmed first non-empty value of each known
	// parameter, as typed.
	values map[string]string
	// tierRows and endpointRows are the row indices present in the URL,
	// ascending (blank rows included); tierAt and endpointAt map a
	// position in the policy to its row index.
	tierRows, endpointRows []int
	tierAt, endpointAt     []int

	p                        policy.Policy
	defaultEdit, globalEdit  limitEdit
	tierEdits, endpointEdits []limitEdit

	pattern   algorithms.Pattern
	patternOK bool
	problems  []Problem
}

// limitEdit is what the user chose of one limit: whether the algorithm
// was given, and which parameters are pinned.
type limitEdit struct {
	chosen bool
	pinned map[string]bool
}

func (e *limitEdit) pin(param string) {
	if e.pinned == nil {
		e.pinned = map[string]bool{}
	}
	e.pinned[param] = true
}

// Problem is a field whose value is wrong: Field is the URL parameter
// ("tiers.3.clients"), or "" for the design as a whole; Message says what
// and names the field, the value and the allowed range.
type Problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (p Problem) Error() string { return p.Message }

// Problems is a list of problems as one error.
type Problems []Problem

func (ps Problems) Error() string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Message
	}
	return strings.Join(msgs, "\n")
}

// Example is the design of a URL without any design parameter: 200 clients
// of a service that handles 2000 requests/s, whose clients send 1, 3 and 5
// requests/s at p50, p95 and p99; the limit comes out at 10 requests/s with
// a burst of 100, and the ramp pattern shows where each algorithm starts to
// reject.
var Example = url.Values{
	"capacity": {"2000"},
	"clients":  {"200"},
	"p50":      {"1"},
	"p95":      {"3"},
	"p99":      {"5"},
	"pattern":  {string(DefaultPattern)},
}

// ParseQuery parses a raw query string and reads the design in it. A pair
// that does not decode is dropped (its field then has no value); a query
// net/url refuses as a whole (more than 10000 parameters) is a problem of
// the design.
func ParseQuery(raw string) *Design {
	q, err := url.ParseQuery(raw)
	d := Parse(q)
	if err != nil && len(q) == 0 && strings.TrimSpace(raw) != "" {
		d.problem("", "the address cannot be read as a design: "+err.Error())
	}
	return d
}

// Parse reads a design URL's query. It never fails and never panics:
// whatever is wrong becomes a problem on the parameter that caused it. A
// query without any design parameter is the Example design.
func Parse(q url.Values) *Design {
	return parse(q, true)
}

// scalars and rowFields index Fields by URL name.
var (
	scalars   = map[string]*Field{}
	rowFields = map[Row]map[string]*Field{TierRow: {}, EndpointRow: {}}
)

func init() {
	for i := range Fields {
		f := &Fields[i]
		if f.Row == NoRow {
			scalars[f.Name] = f
		} else {
			rowFields[f.Row][f.Name] = f
		}
	}
}

// rowParam splits "tiers.3.name" into (TierRow, 3, its field); ok is false
// for anything else, including indices that are not plain decimal numbers.
func rowParam(key string) (row Row, index int, f *Field, ok bool) {
	section, rest, found := strings.Cut(key, ".")
	if !found || (section != string(TierRow) && section != string(EndpointRow)) {
		return "", 0, nil, false
	}
	idx, name, found := strings.Cut(rest, ".")
	if !found || idx == "" || len(idx) > 9 || (len(idx) > 1 && idx[0] == '0') || !digits(idx) {
		return "", 0, nil, false
	}
	f, ok = rowFields[Row(section)][name]
	if !ok {
		return "", 0, nil, false
	}
	index, _ = strconv.Atoi(idx)
	return Row(section), index, f, true
}

// Lookup is the field of a URL parameter and, for a row field, its row
// index as the URL numbers it; ok is false for a parameter the design does
// not have.
func Lookup(param string) (f Field, index int, ok bool) {
	if s, ok := scalars[param]; ok {
		return *s, 0, true
	}
	if _, index, rf, ok := rowParam(param); ok {
		return *rf, index, true
	}
	return Field{}, 0, false
}

func parse(q url.Values, example bool) *Design {
	d := &Design{values: map[string]string{}}
	given := false
	for key, vs := range q {
		if len(vs) == 0 || strings.TrimSpace(vs[0]) == "" {
			continue
		}
		if _, index, _, ok := rowParam(key); (ok && index <= MaxRowIndex) || scalars[key] != nil {
			given = true
			break
		}
	}
	if !given && example {
		q = Example
	}

	rows := map[Row]map[int]bool{TierRow: {}, EndpointRow: {}}
	tooMany := map[Row]bool{}
	for key, vs := range q {
		if len(vs) == 0 {
			continue
		}
		v := strings.TrimSpace(vs[0])
		if row, index, _, ok := rowParam(key); ok {
			if index > MaxRowIndex {
				if v != "" {
					tooMany[row] = true
				}
				continue
			}
			rows[row][index] = true
		} else if scalars[key] == nil {
			continue
		}
		if v != "" {
			d.values[key] = v
		}
	}
	d.tierRows = slices.Sorted(maps.Keys(rows[TierRow]))
	d.endpointRows = slices.Sorted(maps.Keys(rows[EndpointRow]))

	d.p = policy.Policy{APIVersion: policy.APIVersion, Kind: policy.Kind, Metadata: policy.Metadata{Name: defaultName}}
	d.p.Defaults.Limit.Algorithm = defaultScope.absent
	d.p.Global.Limit.Algorithm = globalScope.absent
	for _, f := range Fields {
		if f.Row == NoRow && f.patternParam == "" {
			d.read(f, 0, f.Name)
		}
	}
	for _, i := range d.tierRows {
		if d.blank(TierRow, i) {
			continue
		}
		d.p.Tiers = append(d.p.Tiers, policy.Tier{Limit: algorithms.Spec{Algorithm: tierScope.absent}})
		d.tierEdits = append(d.tierEdits, limitEdit{})
		d.tierAt = append(d.tierAt, i)
	}
	for _, i := range d.endpointRows {
		if d.blank(EndpointRow, i) {
			continue
		}
		d.p.Endpoints = append(d.p.Endpoints, policy.Endpoint{})
		d.endpointEdits = append(d.endpointEdits, limitEdit{})
		d.endpointAt = append(d.endpointAt, i)
	}
	for _, f := range Fields {
		switch f.Row {
		case TierRow:
			for pos, i := range d.tierAt {
				d.read(f, pos, f.Param(i))
			}
		case EndpointRow:
			for pos, i := range d.endpointAt {
				d.read(f, pos, f.Param(i))
			}
		}
	}
	// The calculator and the policy report too many rows themselves; rows
	// past MaxRowIndex are never read, so say so here.
	if tooMany[TierRow] {
		d.problem("tiers", fmt.Sprintf("tiers: rows are numbered 0 to %d; want at most %d tiers", MaxRowIndex, calc.MaxTiers))
	}
	if tooMany[EndpointRow] {
		d.problem("endpoints", fmt.Sprintf("endpoints: rows are numbered 0 to %d; want at most %d endpoints", MaxRowIndex, calc.MaxEndpoints))
	}
	d.parsePattern()
	return d
}

// blank reports whether every field of a row is empty.
func (d *Design) blank(row Row, index int) bool {
	for _, f := range rowFields[row] {
		if d.values[f.Param(index)] != "" {
			return false
		}
	}
	return true
}

// raw returns the value of param, or "" when it is not given or longer
// than the field allows (which is then a problem).
func (d *Design) raw(f Field, param string) string {
	v := d.values[param]
	if len(v) > f.max() {
		d.problem(param, fmt.Sprintf("%s: the value is %d bytes long; want at most %d", param, len(v), f.max()))
		return ""
	}
	return v
}

// read sets field f of the row at policy position pos from the URL's
// parameter param.
func (d *Design) read(f Field, pos int, param string) {
	v := d.raw(f, param)
	if v == "" {
		return
	}
	if err := f.set(d, pos, v); err != nil {
		d.problem(param, param+": "+err.Error())
	}
}

// problem records msg for param unless param already has one: the first
// message (usually the parse error) is the one that explains the others.
func (d *Design) problem(param, msg string) {
	if d.message(param) != "" {
		return
	}
	d.problems = append(d.problems, Problem{Field: param, Message: msg})
}

// message is the problem of param, or "".
func (d *Design) message(param string) string {
	for _, p := range d.problems {
		if p.Field == param {
			return p.Message
		}
	}
	return ""
}

// Problems are the problems found reading the URL, in the order found.
// Resolve adds those of the calculator, the limits and the policy check.
func (d *Design) Problems() Problems { return slices.Clone(d.problems) }

// Value is the value of a URL parameter as typed (trimmed), or "".
func (d *Design) Value(param string) string { return d.values[param] }

// Pattern is the chart traffic; ok is false when the URL's pattern could
// not be built (Problems says why).
func (d *Design) Pattern() (p algorithms.Pattern, ok bool) { return d.pattern, d.patternOK }

// Input is the calculator input of the design: its sizing.
func (d *Design) Input() calc.Input { return d.p.Design() }

// parsePattern builds d.pattern: the named pattern's defaults with every
// parameter it reads that the URL gives. Each parameter is checked on its
// own, so every bad one gets its message, then the whole.
func (d *Design) parsePattern() {
	name := algorithms.PatternName(d.values["pattern"])
	if name == "" {
		name = DefaultPattern
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
	p := d.patternDefaults(name)
	bad := false
	for _, param := range info.Params {
		key := "pattern." + param
		v := d.raw(*scalars[key], key)
		if v == "" {
			continue
		}
		one := d.patternDefaults(name)
		if err := setPatternParam(&one, param, v); err != nil {
			d.problem(key, key+": "+err.Error())
			bad = true
			continue
		}
		_ = setPatternParam(&p, param, v)
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

// patternDefaults is the pattern called name with the parameters it has
// when the URL gives none: algorithms.DefaultPattern's, except that
// window_boundary straddles the edge of the design's window (window, 60 s
// when not given), brought within the pattern's [10ms, 24h], so the fixed
// window's 2× flaw shows on the design's own limit.
func (d *Design) patternDefaults(name algorithms.PatternName) algorithms.Pattern {
	p := algorithms.DefaultPattern(name)
	if name == algorithms.PatternWindowBoundary {
		w := d.p.Sizing.Window
		if w <= 0 {
			w = secondsDuration(calc.DefaultWindow)
		}
		p.Window = min(max(w, algorithms.MinPatternWindow), algorithms.MaxPatternWindow)
	}
	return p
}

// patternProblem records a pattern's validation error on its parameter.
func (d *Design) patternProblem(err error) {
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

// Query is the design's canonical query string: every given parameter in
// the order of Fields, rows by index, empty ones left out. Parsing it
// gives the same design.
func (d *Design) Query() string { return encodePairs(d.pairs()) }

// encodePairs is pairs as a query string, in their order.
func encodePairs(pairs [][2]string) string {
	var b strings.Builder
	for _, kv := range pairs {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(kv[0]))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(kv[1]))
	}
	return b.String()
}

// Unpinned is the canonical query of the design with none of its limits'
// numbers pinned: every rate, burst, queue, limit and window the design
// gives the default, tier and global limits is left out, so the calculator
// proposes them, and everything else stays: the service, the clients, the
// traffic, each limit's algorithm (the user's choice of model rather than
// a number) and the endpoints' limits (which the calculator never
// proposes). pinned reports whether the design pinned any such number.
func (d *Design) Unpinned() (query string, pinned bool) {
	pairs := d.pairs()
	kept := pairs[:0]
	for _, kv := range pairs {
		if f, _, ok := Lookup(kv[0]); ok && f.Row != EndpointRow && f.limitParam != "" && f.limitParam != "algorithm" {
			pinned = true
			continue
		}
		kept = append(kept, kv)
	}
	return encodePairs(kept), pinned
}

// WithDefaultAlgorithm is the design with alg as its default limit's
// algorithm and none of that limit's numbers pinned (numbers pinned for
// one algorithm do not carry over to another), so the calculator proposes
// them; everything else stays.
func (d *Design) WithDefaultAlgorithm(alg algorithms.Name) *Design {
	return d.with(func(v url.Values) {
		for _, p := range limitParams {
			v.Del(defaultScope.prefix + "." + p)
		}
		v.Set(defaultScope.prefix+".algorithm", string(alg))
	})
}

// WithPattern is the design with the pattern called name, at its
// defaults, as its chart traffic instead of its own.
func (d *Design) WithPattern(name algorithms.PatternName) *Design {
	return d.with(func(v url.Values) {
		for k := range v {
			if IsPatternParam(k) {
				delete(v, k)
			}
		}
		v.Set("pattern", string(name))
	})
}

// with is the design whose parameters edit changes, read again.
func (d *Design) with(edit func(url.Values)) *Design {
	v := d.Values()
	edit(v)
	return Parse(v)
}

// IsPatternParam reports whether param belongs to the chart traffic
// ("pattern", "pattern.count", …).
func IsPatternParam(param string) bool {
	return param == "pattern" || strings.HasPrefix(param, "pattern.")
}

// Values is the design's parameters, for a caller that adds its own; its
// Encode orders them by name rather than as Query does.
func (d *Design) Values() url.Values {
	v := url.Values{}
	for _, kv := range d.pairs() {
		v.Set(kv[0], kv[1])
	}
	return v
}

// pairs are the given parameters in canonical order.
func (d *Design) pairs() [][2]string {
	var out [][2]string
	add := func(param string) {
		if v, ok := d.values[param]; ok {
			out = append(out, [2]string{param, v})
		}
	}
	for n := 0; n < len(Fields); {
		f := Fields[n]
		if f.Row == NoRow {
			add(f.Name)
			n++
			continue
		}
		end := n
		for end < len(Fields) && Fields[end].Row == f.Row {
			end++
		}
		indices := d.tierRows
		if f.Row == EndpointRow {
			indices = d.endpointRows
		}
		for _, i := range indices {
			for _, rf := range Fields[n:end] {
				add(rf.Param(i))
			}
		}
		n = end
	}
	return out
}

// FromPolicy is the design of a policy, with pattern as the chart traffic
// (a zero pattern: the default one). Every field of the policy is in the
// design; a limit parameter equal to the calculator's proposal for the
// policy's sizing is left unpinned, so that it follows the inputs when they
// change, and every other one is pinned. Resolve gives the policy back.
//
// Strings are trimmed and a value that is only spaces counts as not
// given, as in every URL; a policy whose names or paths start or end with
// spaces is the one thing the design cannot hold as it is.
func FromPolicy(p policy.Policy, pattern algorithms.Pattern) *Design {
	src := &Design{p: p,
		tierEdits: make([]limitEdit, len(p.Tiers)), endpointEdits: make([]limitEdit, len(p.Endpoints))}
	pinAll := func(s algorithms.Spec, e *limitEdit, sc scope) {
		e.chosen = sc.row != EndpointRow || s.Algorithm != ""
		for _, param := range usedParams(s.Algorithm) {
			e.pin(param)
		}
	}
	pinAll(p.Defaults.Limit, &src.defaultEdit, defaultScope)
	pinAll(p.Global.Limit, &src.globalEdit, globalScope)
	for i, t := range p.Tiers {
		pinAll(t.Limit, &src.tierEdits[i], tierScope)
	}
	for i, e := range p.Endpoints {
		pinAll(e.Limit, &src.endpointEdits[i], endpointScope)
	}
	q := src.encode()
	if pattern.Name != "" {
		src.pattern = pattern
		def := src.patternDefaults(pattern.Name)
		if pattern.Name != DefaultPattern {
			q.Set("pattern", string(pattern.Name))
		}
		if info, ok := algorithms.PatternByName(pattern.Name); ok {
			for _, param := range info.Params {
				if v := patternValue(pattern, param); v != patternValue(def, param) {
					q.Set("pattern."+param, v)
				}
			}
		}
	}

	// Unpin what the proposal gives anyway.
	d := parse(q, false)
	for _, l := range d.Resolve().Limits {
		for _, pr := range l.Params {
			if pr.Pinned && pr.Proposal != "" && pr.Proposal == pr.Value {
				q.Del(pr.Field)
			}
		}
	}
	return parse(q, false)
}

// encode is the URL of the design's typed state, rows numbered from 0,
// values equal to the implicit one left out.
func (d *Design) encode() url.Values {
	q := url.Values{}
	put := func(f Field, pos int, param string) {
		if v := strings.TrimSpace(f.get(d, pos)); v != "" && v != f.implicit {
			q.Set(param, v)
		}
	}
	for _, f := range Fields {
		switch {
		case f.patternParam != "":
		case f.Row == NoRow:
			put(f, 0, f.Name)
		case f.Row == TierRow:
			for i := range d.p.Tiers {
				put(f, i, f.Param(i))
			}
		case f.Row == EndpointRow:
			for i := range d.p.Endpoints {
				put(f, i, f.Param(i))
			}
		}
	}
	return q
}

// FromInput is the design of a calculator input alone: its sizing, every
// limit the calculator's proposal, the default pattern. It is how a
// measurement becomes a design URL.
func FromInput(in calc.Input) *Design {
	p := policy.Policy{
		Service: policy.Service{Capacity: in.Capacity, Headroom: in.Headroom, Replicas: in.Replicas, Enforcement: in.Enforcement},
		Sizing: policy.Sizing{
			Clients: in.Clients, P50: in.P50, P95: in.P95, P99: in.P99, PercentileUnit: in.PercentileUnit,
			Margin: in.Margin, Peak: in.Peak, PeakSeconds: in.PeakSeconds, Window: secondsDuration(in.Window),
			Retry: policy.Retry{Base: secondsDuration(in.Retry.Base), Factor: in.Retry.Factor, Cap: secondsDuration(in.Retry.Cap),
				Attempts: in.Retry.Attempts, Jitter: in.Retry.Jitter, JitterMode: in.Retry.JitterMode},
		},
	}
	if in.MaxDelay != nil {
		p.Sizing.MaxDelay = new(secondsDuration(*in.MaxDelay))
	}
	for _, t := range in.Tiers {
		p.Tiers = append(p.Tiers, policy.Tier{Name: t.Name, Clients: t.Clients, Multiplier: t.Multiplier})
	}
	for _, e := range in.Endpoints {
		p.Endpoints = append(p.Endpoints, policy.Endpoint{Match: policy.Match{Method: e.Method, Path: e.Path}, Cost: e.Cost})
	}
	src := &Design{p: p, tierEdits: make([]limitEdit, len(p.Tiers)), endpointEdits: make([]limitEdit, len(p.Endpoints))}
	return parse(src.encode(), false)
}

// PathOf is the policy path of a URL parameter ("tiers.3.limit.burst" →
// "tiers[1].limit.burst", counting only the rows that are given), for
// messages that name both; "" for a parameter outside the policy (the
// chart pattern), a blank row or an unknown one.
func (d *Design) PathOf(param string) string {
	f, index, ok := Lookup(param)
	if !ok || f.patternParam != "" {
		return ""
	}
	if f.Row == NoRow {
		return f.Path
	}
	at := d.tierAt
	if f.Row == EndpointRow {
		at = d.endpointAt
	}
	pos := slices.Index(at, index)
	if pos < 0 {
		return ""
	}
	return f.PolicyPath(pos)
}

// PatternDefaults is the pattern called name as a design of p charts it
// when its URL gives no parameter of it (window_boundary at p's window),
// for callers outside the designer that chart a policy, so that their
// charts are the designer's.
func PatternDefaults(p policy.Policy, name algorithms.PatternName) algorithms.Pattern {
	return (&Design{p: p}).patternDefaults(name)
}
