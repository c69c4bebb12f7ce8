package design

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/policy"
)

// Resolved is a design worked out: the policy with every limit complete,
// the calculator's result the limits were proposed from, each limit with
// its proposal and pins, and every problem of the design.
type Resolved struct {
	// Policy is the design's policy. With Problems it is incomplete and
	// must not be exported or simulated.
	Policy policy.Policy
	// Sizing is the calculator's result; nil when the design has no
	// clients to size for, or its sizing has problems.
	Sizing *calc.Result
	// Limits are the policy's limits in order: default, tiers, endpoints
	// with a limit, global.
	Limits []Limit
	// Problems are those of the URL, the calculator and the policy, each
	// on its URL parameter.
	Problems Problems
}

// Limit is one limit of a design: what it resolved to, what the
// calculator proposed, and how each parameter came about.
type Limit struct {
	// Name is the URL prefix of its fields: "limit", "tiers.3.limit",
	// "endpoints.0.limit", "global.limit".
	Name string
	// Field is its policy path: "defaults.limit", "tiers[1].limit".
	Field string
	Scope policy.Scope
	// Label says which limit it is: "default limit", "tier paid",
	// "endpoint GET /v1/reports", "global limit".
	Label string
	// Inherits is true for a tier that takes the default limit; the tier
	// then has no Spec and no Params of its own.
	Inherits bool
	// Spec is the limit as resolved (zero for none or inherited).
	Spec algorithms.Spec
	// Proposal is the calculator's proposal for Spec's algorithm; zero
	// when there is none (endpoint limits, designs without clients).
	Proposal algorithms.Spec
	// Params are the algorithm's parameters.
	Params []Param
}

// Param is one parameter of a limit.
type Param struct {
	// Field is its URL parameter: "tiers.3.limit.burst".
	Field string
	// Name is the parameter: rate, burst, queue, limit or window.
	Name string
	// Value is the resolved value as the URL spells it; "" when it could
	// not be resolved (Problems says why).
	Value string
	// Proposal is the calculator's value, "" when there is none.
	Proposal string
	// Pinned is true when the URL gives the value.
	Pinned bool
	// Reason is how the calculator arrived at the proposal.
	Reason string
	// Note says where a pinned value departs from the proposal and what
	// that does to clients or the service: "pinned 40, proposal 20: a
	// burst below the proposal rejects the designed peak".
	Note string
}

// Policy is the design's policy with every limit complete, or the
// problems that keep it from being one.
func (d *Design) Policy() (policy.Policy, error) {
	r := d.Resolve()
	if len(r.Problems) > 0 {
		return r.Policy, r.Problems
	}
	return r.Policy, nil
}

// Resolve works the design out. When the design has clients (directly or
// on its tiers) the calculator sizes it, and each limit is its chosen
// algorithm with the pinned parameters and the rest from the proposal:
// calc's per-client limit for the default, each tier's scaled limit, and
// for the global limit the usable rate with a burst no smaller than any
// per-client limit's (a global bucket smaller than one client's designed
// burst lets only part of the peak through). Without clients there is no
// proposal, and every parameter must be pinned. Endpoint limits never have
// a proposal. The policy is then checked as the policy file is.
func (d *Design) Resolve() *Resolved {
	r := &Resolved{}
	seen := map[string]bool{}
	add := func(field, msg string) {
		if field != "" && seen[field] {
			return
		}
		seen[field] = true
		r.Problems = append(r.Problems, Problem{Field: field, Message: msg})
	}
	for _, p := range d.problems {
		add(p.Field, p.Message)
	}

	p := clonePolicy(d.p)
	noProposal := "no proposal without clients; give the measurements (clients, p99) or pin a value"
	// With nothing pinned, what a limit without a proposal lacks is the
	// design's client count, not a value per parameter.
	lacksClients := !d.sizable() && !d.pinsAny()
	if d.sizable() {
		res, err := calc.Size(p.Design())
		if err != nil {
			var es calc.Errors
			if !errors.As(err, &es) {
				add("", err.Error())
			}
			for _, e := range es {
				name := d.calcName(e.Field)
				if d.values[name] == "" {
					// A blank field is "not given": say what is missing,
					// not that its zero value is out of range.
					add(name, fmt.Sprintf("%s: missing; want %s", name, e.Want))
				} else {
					add(name, fmt.Sprintf("%s: %s is out of range; want %s", name, e.Value, e.Want))
				}
			}
			// The sizing's problems explain every missing proposal.
			noProposal = ""
		} else {
			r.Sizing = &res
		}
	}

	// unresolved are the limits (by URL prefix) with a parameter that has
	// no value; the policy check would only repeat that.
	unresolved := map[string]bool{}
	resolve := func(sc scope, pos, row int, label string, spec *algorithms.Spec, e limitEdit, sizes *calc.Sizes, floor float64) Limit {
		prefix := sc.prefix
		if sc.row != NoRow {
			prefix = string(sc.row) + "." + strconv.Itoa(row) + "." + sc.prefix
		}
		l := Limit{Name: prefix, Field: strings.Replace(sc.path, "[N]", "["+strconv.Itoa(pos)+"]", 1), Label: label}
		edited := *spec
		alg := edited.Algorithm
		if alg == "" {
			l.Inherits = sc.special == InheritLimit
			*spec = algorithms.Spec{}
			return l
		}
		out := algorithms.Spec{Algorithm: alg}
		var prop algorithms.Spec
		if sizes != nil {
			prop = propose(*sizes, alg, edited, e, floor)
			l.Proposal = prop
		}
		for _, param := range usedParams(alg) {
			pr := Param{Field: prefix + "." + param, Name: param, Pinned: e.pinned[param]}
			if sizes != nil {
				pr.Proposal, pr.Reason = specParam(prop, param), reason(*sizes, param, prop, edited, e)
			}
			switch {
			case pr.Pinned:
				copyParam(&out, edited, param)
				pr.Value = specParam(out, param)
			case sizes != nil:
				copyParam(&out, prop, param)
				pr.Value = specParam(out, param)
			case sc.row == EndpointRow:
				add(pr.Field, fmt.Sprintf("%s: missing; an endpoint limit has no proposal: give every parameter of %s (%s)",
					pr.Field, alg, strings.Join(usedParams(alg), ", ")))
			case lacksClients:
				add("clients", "clients: missing; the calculator needs the number of clients to propose the limits (or pin every limit parameter)")
			case noProposal != "":
				add(pr.Field, pr.Field+": "+noProposal)
			}
			if pr.Value == "" {
				unresolved[prefix] = true
			}
			if pr.Pinned && pr.Proposal != "" {
				pr.Note = note(sc, param, pr.Value, pr.Proposal, compare(out, prop, param))
			}
			l.Params = append(l.Params, pr)
		}
		l.Spec, *spec = out, out
		return l
	}

	res := r.Sizing
	var def *calc.Sizes
	if res != nil {
		def = &res.Sizes
	}
	dl := resolve(defaultScope, 0, 0, "default limit", &p.Defaults.Limit, d.defaultEdit, def, 0)
	dl.Scope = policy.ScopeDefault
	r.Limits = append(r.Limits, dl)
	largest := float64(p.Defaults.Limit.Capacity())
	if p.Defaults.Limit.Algorithm == "" {
		largest = 0
	}
	for i := range p.Tiers {
		var sizes *calc.Sizes
		if res != nil && i < len(res.Tiers) {
			sizes = &res.Tiers[i].Sizes
		}
		l := resolve(tierScope, i, d.tierAt[i], "tier "+p.Tiers[i].Name, &p.Tiers[i].Limit, d.tierEdits[i], sizes, 0)
		l.Scope = policy.ScopeTier
		r.Limits = append(r.Limits, l)
		if s := p.Tiers[i].Limit; s.Algorithm != "" {
			largest = math.Max(largest, float64(s.Capacity()))
		}
	}
	for i, e := range p.Endpoints {
		l := resolve(endpointScope, i, d.endpointAt[i], "endpoint "+e.Match.Method+" "+e.Match.Path, &p.Endpoints[i].Limit, d.endpointEdits[i], nil, 0)
		if l.Spec.Algorithm != "" {
			l.Scope = policy.ScopeEndpoint
			r.Limits = append(r.Limits, l)
		}
	}
	var global *calc.Sizes
	if res != nil {
		g := globalSizes(*res, largest)
		global = &g
	}
	floor := 0.0
	if global != nil {
		floor = global.Burst.Value
	}
	gl := resolve(globalScope, 0, 0, "global limit", &p.Global.Limit, d.globalEdit, global, floor)
	gl.Scope = policy.ScopeGlobal
	r.Limits = append(r.Limits, gl)

	for _, e := range validate(p) {
		name := d.policyName(e.Field)
		if prefix, _, ok := cutLast(name); ok && unresolved[prefix] {
			continue
		}
		msg := e.Message
		if e.Hint != "" {
			msg += "; " + e.Hint
		}
		if name == "" {
			add("", msg)
		} else {
			add(name, name+": "+msg)
		}
	}
	r.Policy = p
	return r
}

// validate checks p as the policy file is checked. The design's fields
// hold only values of the right shape and UTF-8 text, so the checks of
// values (policy.Validate) are the ones that remain.
func validate(p policy.Policy) policy.Errors { return policy.Validate(p) }

// sizable reports whether the design is to be sized: its policy has a
// client count, directly or on its tiers, or the URL gives one (a 0 typed
// is then the calculator's to refuse).
func (d *Design) sizable() bool {
	if d.p.Sized() || d.values["clients"] != "" {
		return true
	}
	for _, i := range d.tierAt {
		if d.values[TierRow.param(i, "clients")] != "" {
			return true
		}
	}
	return false
}

// pinsAny reports whether any limit parameter is pinned.
func (d *Design) pinsAny() bool {
	for _, e := range append([]limitEdit{d.defaultEdit, d.globalEdit}, d.tierEdits...) {
		if len(e.pinned) > 0 {
			return true
		}
	}
	return false
}

// clonePolicy copies p so that resolving cannot write through to the
// design's slices.
func clonePolicy(p policy.Policy) policy.Policy {
	p.Tiers = append([]policy.Tier(nil), p.Tiers...)
	p.Endpoints = append([]policy.Endpoint(nil), p.Endpoints...)
	if p.Defaults.Response.Headers != nil {
		p.Defaults.Response.Headers = append([]policy.HeaderStyle{}, p.Defaults.Response.Headers...)
	}
	return p
}

// isWindow reports whether an algorithm counts per window.
func isWindow(name algorithms.Name) bool {
	return name == algorithms.NameFixedWindow || name == algorithms.NameSlidingLog || name == algorithms.NameSlidingWindow
}

// count is a whole number of requests from a float, saturating.
func count(x float64) int64 {
	if x >= 1e18 {
		return 1e18
	}
	return int64(x)
}

// propose is the proposal of sizes for algorithm alg. A pinned window
// changes the proposed limit to ⌈rate × window⌉ (at least floor), so the
// window algorithms keep the proposed rate.
func propose(s calc.Sizes, alg algorithms.Name, edited algorithms.Spec, e limitEdit, floor float64) algorithms.Spec {
	prop := s.Spec(alg)
	if isWindow(alg) && e.pinned["window"] && edited.Window > 0 {
		prop.Limit = count(math.Max(math.Max(1, ceil(s.Rate.Value*edited.Window.Seconds())), floor))
	}
	return prop
}

// reason is why the proposal of param is what it is.
func reason(s calc.Sizes, param string, prop, edited algorithms.Spec, e limitEdit) string {
	switch param {
	case "rate":
		return s.Rate.Reason
	case "burst":
		return s.Burst.Reason
	case "queue":
		return s.Queue.Reason
	case "window":
		return s.Window.Reason
	}
	if isWindow(prop.Algorithm) && e.pinned["window"] && edited.Window > 0 {
		return fmt.Sprintf("limit = ⌈rate × window⌉ = ⌈%s × %s⌉ = %d for the pinned window",
			formatNumber(s.Rate.Value), formatSeconds(edited.Window), prop.Limit)
	}
	return s.Limit.Reason
}

// globalSizes is the proposal of the global limit: the usable rate, and a
// burst of a second of it, raised to the largest per-client burst (or
// capacity) so that the global limit never cuts a client's designed peak.
func globalSizes(res calc.Result, largest float64) calc.Sizes {
	u := res.Usable.Value
	b := math.Max(1, ceil(u))
	bWhy := fmt.Sprintf("burst = ⌈usable⌉ = ⌈%s⌉ = %s: a second of the usable rate", formatNumber(u), formatNumber(b))
	if largest > b {
		bWhy = fmt.Sprintf("burst = max(⌈usable⌉, the largest per-client burst) = max(%s, %s) = %s: a global bucket smaller than one client's designed burst lets only part of its peak through",
			formatNumber(b), formatNumber(largest), formatNumber(largest))
		b = largest
	}
	W := res.Window.Value
	L := math.Max(ceil(u*W), b)
	return calc.Sizes{
		Rate:   calc.Value{Value: u, Unit: calc.UnitPerSecond, Reason: "rate = " + res.Usable.Reason},
		Burst:  calc.Value{Value: b, Unit: calc.UnitRequests, Reason: bWhy},
		Limit:  calc.Value{Value: L, Unit: calc.UnitRequests, Reason: fmt.Sprintf("limit = max(⌈usable × window⌉, burst) = max(⌈%s × %s⌉, %s) = %s", formatNumber(u), formatNumber(W), formatNumber(b), formatNumber(L))},
		Window: res.Window,
		Queue:  calc.Value{Value: b - 1, Unit: calc.UnitRequests, Reason: fmt.Sprintf("queue = burst − 1 = %s: with the one being served, a whole burst is accepted", formatNumber(b-1))},
	}
}

// compare is −1, 0 or +1 as the parameter param of got is below, equal
// to or above that of the proposal.
func compare(got, prop algorithms.Spec, param string) int {
	var a, b float64
	switch param {
	case "rate":
		a, b = got.Rate, prop.Rate
	case "burst":
		a, b = float64(got.Burst), float64(prop.Burst)
	case "queue":
		a, b = float64(got.Queue), float64(prop.Queue)
	case "limit":
		a, b = float64(got.Limit), float64(prop.Limit)
	case "window":
		a, b = float64(got.Window), float64(prop.Window)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// note says what a pinned value does where it departs from the proposal.
func note(sc scope, param, value, proposal string, cmp int) string {
	if cmp == 0 {
		return "pinned, equal to the proposal"
	}
	return fmt.Sprintf("pinned %s, proposal %s: %s", value, proposal, why(sc.path == globalScope.path, param, cmp < 0))
}

// why is what a value below (or above) the proposal does, per parameter.
func why(global bool, param string, below bool) string {
	switch {
	case param == "rate" && global && below:
		return "a global rate below the usable rate rejects traffic the service could take"
	case param == "rate" && global:
		return "a global rate above the usable rate lets more through than the service handles with its headroom"
	case param == "rate" && below:
		return "a rate below the proposal throttles clients that send at p99 × margin"
	case param == "rate":
		return "a rate above the proposal lets each client take more than its share: together the clients overcommit the service's capacity"
	case param == "window" && below:
		return "a shorter window forgets a burst sooner; with the limit pinned it also raises the sustained rate"
	case param == "window":
		return "a longer window holds a burst against the client longer; with the limit pinned it also lowers the sustained rate"
	case global && below:
		return fmt.Sprintf("a global %s below the proposal is smaller than a client's designed burst: it lets only part of the peak through", param)
	case below:
		return fmt.Sprintf("a %s below the proposal rejects the designed peak", param)
	case global:
		return fmt.Sprintf("a global %s above the proposal lets a larger instant burst hit the service", param)
	}
	return fmt.Sprintf("a %s above the proposal lets a larger instant burst hit the service", param)
}

// rowPath matches a policy or calc path inside a row: "tiers[1].limit.burst".
var rowPath = regexp.MustCompile(`^(tiers|endpoints)\[(\d+)\](.*)$`)

// calcName translates a calculator field ("tiers[1].clients") into the
// URL's parameter ("tiers.3.clients"); scalar names are the same in both.
func (d *Design) calcName(field string) string {
	m := rowPath.FindStringSubmatch(field)
	if m == nil {
		return field
	}
	at := d.tierAt
	if m[1] == string(EndpointRow) {
		at = d.endpointAt
	}
	i, err := strconv.Atoi(m[2])
	if err != nil || i < 0 || i >= len(at) {
		return m[1]
	}
	return m[1] + "." + strconv.Itoa(at[i]) + m[3]
}

// byPath indexes Fields by policy path; aliases map the paths policy
// errors name that are not fields to the field that fixes them.
var (
	byPath  = map[string]*Field{}
	aliases = map[string]string{
		"service":            "service.capacity",
		"metadata":           "metadata.name",
		"tiers[N]":           "tiers[N].name",
		"endpoints[N]":       "endpoints[N].match.path",
		"endpoints[N].match": "endpoints[N].match.path",
		"defaults.limit":     "defaults.limit.algorithm",
		"tiers[N].limit":     "tiers[N].limit.algorithm",
		"endpoints[N].limit": "endpoints[N].limit.algorithm",
		"global.limit":       "global.limit.algorithm",
	}
)

func init() {
	for i := range Fields {
		if f := &Fields[i]; f.patternParam == "" {
			byPath[f.Path] = f
		}
	}
}

// policyName translates a policy path ("tiers[1].limit.burst") into the
// URL's parameter ("tiers.3.limit.burst"), or "" when no field holds it.
func (d *Design) policyName(path string) string {
	index := 0
	if m := rowPath.FindStringSubmatch(path); m != nil {
		at := d.tierAt
		if m[1] == string(EndpointRow) {
			at = d.endpointAt
		}
		i, err := strconv.Atoi(m[2])
		if err != nil || i < 0 || i >= len(at) {
			return m[1]
		}
		index, path = at[i], m[1]+"[N]"+m[3]
	}
	for p := path; p != ""; p = parentPath(p) {
		if a, ok := aliases[p]; ok {
			p = a
		}
		if f, ok := byPath[p]; ok {
			return f.Param(index)
		}
	}
	return ""
}

// cutLast splits a URL parameter at its last dot.
func cutLast(name string) (before, after string, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return name, "", false
	}
	return name[:i], name[i+1:], true
}

// parentPath is the path enclosing p: "a.b" for "a.b.c" and for "a.b[0]".
func parentPath(p string) string {
	if i := strings.LastIndexAny(p, ".["); i > 0 {
		return p[:i]
	}
	return ""
}

// ParamOf is the URL parameter of the field at a policy path
// ("tiers[1].match.path" → "tiers.3.path"), for messages about the
// resolved policy (an export's); "" when no field holds it.
func (d *Design) ParamOf(path string) string { return d.policyName(path) }
