// Package envoy exports a policy to Envoy in three forms:
//
//   - [Local]: a static Envoy bootstrap whose HTTP connection manager runs
//     the local_ratelimit filter — token buckets counted in each Envoy
//     process, refilled continuously (Envoy ≥ 1.31) at tokens_per_fill per
//     fill_interval, holding at most max_tokens;
//   - [RateLimitService]: the configuration of the envoyproxy/ratelimit
//     service that Envoy's ratelimit filter asks — fixed windows of whole
//     units (second … year) counted in Redis, shared by every Envoy;
//   - [Gateway]: an Envoy Gateway BackendTrafficPolicy whose global rules
//     the gateway turns into that same service's configuration.
//
// All three tell clients apart the same way. A limit's requests carry a
// descriptor — a list of (key, value) entries that Envoy's rate_limits
// actions build from the request — and the limit's configuration names
// the same entries, an entry without a value standing for one counter per
// distinct value:
//
//	default   (no_tier=true) when the tier header is absent or names no tier, then the client key
//	tier      (tier=<name>) when the tier header names the tier, then the client key
//	endpoint  (endpoint=endpoint_<i>) when it is the first endpoint whose method and path match, then the client key
//	global    (global=all) for every request
//
// [Local] and [RateLimitService] build them with the same actions (see
// plans), which match as the policy does: tier names and methods ignoring
// ASCII case, a {name} as one path segment, endpoints in policy order.
// where the client key is (remote_address) for ip, (api_key) or (account)
// from the headers of [export.Options]. The designer's Options name the
// headers; the authentication layer in front must set the tier and account
// headers and strip them from clients.
package envoy

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// Descriptor entry keys.
const (
	keyNoTier   = "no_tier"
	keyTier     = "tier"
	keyEndpoint = "endpoint"
	keyGlobal   = "global"
)

// entry is one descriptor entry; an empty value matches any value and
// gives each distinct value its own counter.
type entry struct{ key, value string }

// plan is how one limit's requests are told apart: the descriptor's entries
// and the rate_limits actions that build them from a request.
type plan struct {
	policy.Limit
	entries []entry
	actions list
	// who says in words which requests share a counter.
	who string
	// inexact, when set, is why the actions do not select the limit's
	// requests exactly as the policy does.
	inexact string
}

// keyEntry is the entry and action that identify a client by key k.
func keyEntry(k policy.Key, o export.Options) (entry, obj, string) {
	switch k {
	case policy.KeyIP:
		return entry{key: "remote_address"}, obj{}.with("remote_address", obj{}), "one counter per client address"
	case policy.KeyAccount, policy.KeyAPIKey:
		h := strings.ToLower(o.KeyHeader(k))
		return entry{key: string(k)}, obj{}.with("request_headers", obj{}.
				with("header_name", h).with("descriptor_key", string(k))),
			"one counter per " + h + " value"
	}
	return entry{}, nil, ""
}

// plans places every limit of p, its rate_limits actions matching
// requests as the policy decides them (package engine), for both the
// local_ratelimit and the ratelimit filter:
//
//   - the tier header's value names a tier ignoring ASCII case only (a
//     regex folding each ASCII letter; RE2's (?i) would also fold the
//     Kelvin sign to k), and a request naming no tier gets the default;
//   - an endpoint's method matches ignoring ASCII case, its path template
//     with each {name} as one non-empty segment, every other character
//     literally, before any query string;
//   - a request belongs to the first endpoint, in policy order, it
//     matches: an endpoint's action also requires the path to match none
//     of the earlier endpoints that overlap it (an overlapping endpoint
//     has the same method, so its path decides).
//
// When two tiers' names differ only in case (validation refuses such a
// policy) the tier header is matched case-sensitively and the plans of
// the default and tier limits say so in inexact.
func plans(p policy.Policy, o export.Options) []plan {
	o = o.WithDefaults()
	tierHeader := strings.ToLower(o.TierHeader)
	twins := caseTwins(p)
	tierRE := func(name string) string {
		if twins != "" {
			return regexp.QuoteMeta(name)
		}
		return asciiFold(name)
	}
	var names []string
	for _, t := range p.Tiers {
		names = append(names, tierRE(t.Name))
	}
	tierMatch := func(key, value, re string, expect bool) obj {
		a := obj{}.with("descriptor_key", key).with("descriptor_value", value)
		if !expect {
			a = a.with("expect_match", false)
		}
		return obj{}.with("header_value_match", a.with("headers", list{obj{}.with("name", tierHeader).
			with("string_match", obj{}.with("safe_regex", obj{}.with("regex", re)))}))
	}
	var out []plan
	for _, l := range p.Limits() {
		pl := plan{Limit: l}
		switch l.Scope {
		case policy.ScopeDefault:
			if len(names) > 0 {
				pl.entries = append(pl.entries, entry{keyNoTier, "true"})
				pl.actions = append(pl.actions, tierMatch(keyNoTier, "true", "^("+strings.Join(names, "|")+")$", false))
				pl.who = "requests whose " + tierHeader + " is absent or names no tier (ignoring ASCII case)"
			} else {
				pl.who = "every request"
			}
		case policy.ScopeTier:
			pl.entries = append(pl.entries, entry{keyTier, l.Tier})
			pl.actions = append(pl.actions, tierMatch(keyTier, l.Tier, "^"+tierRE(l.Tier)+"$", true))
			pl.who = fmt.Sprintf("requests with %s: %s (ignoring ASCII case)", tierHeader, l.Tier)
		case policy.ScopeEndpoint:
			var i int
			if _, err := fmt.Sscanf(l.Field, "endpoints[%d].limit", &i); err != nil {
				panic("envoy: endpoint limit field " + l.Field)
			}
			pl.entries = append(pl.entries, entry{keyEndpoint, l.Name})
			pl.actions = append(pl.actions, obj{}.with("header_value_match", obj{}.
				with("descriptor_key", keyEndpoint).with("descriptor_value", l.Name).with("headers", endpointHeaders(p, i))))
			pl.who = "requests to " + strings.TrimSpace(strings.ToUpper(l.Match.Method)+" "+l.Match.Path) + " (their first matching endpoint)"
		case policy.ScopeGlobal:
			pl.entries = append(pl.entries, entry{keyGlobal, "all"})
			pl.actions = append(pl.actions, obj{}.with("generic_key", obj{}.
				with("descriptor_key", keyGlobal).with("descriptor_value", "all")))
			pl.who = "all requests together"
		}
		if twins != "" && (l.Scope == policy.ScopeTier || l.Scope == policy.ScopeDefault && len(names) > 0) {
			pl.inexact = twins + ", so " + tierHeader + " is matched case-sensitively: a value naming a tier in another case gets the default limit, where the policy picks the tier"
		}
		if l.Scope != policy.ScopeGlobal {
			e, a, who := keyEntry(l.Key, o)
			pl.entries = append(pl.entries, e)
			pl.actions = append(pl.actions, a)
			pl.who += ", " + who
		}
		out = append(out, pl)
	}
	return out
}

// endpointHeaders are the header matchers selecting the requests whose
// first matching endpoint is p.Endpoints[i]: its method, its path, and
// none of the paths of the earlier endpoints that overlap it.
func endpointHeaders(p policy.Policy, i int) list {
	e := p.Endpoints[i]
	hs := list{methodMatcher(e.Match.Method), pathMatcher(e.Match.Path, false)}
	for _, prev := range p.Endpoints[:i] {
		if policy.Overlaps(prev.Match, e.Match) {
			hs = append(hs, pathMatcher(prev.Match.Path, true))
		}
	}
	return hs
}

// methodMatcher matches a request's :method to an endpoint's ignoring
// ASCII case.
func methodMatcher(method string) obj {
	return obj{}.with("name", ":method").with("string_match", obj{}.with("safe_regex",
		obj{}.with("regex", methodRegex(method))))
}

// methodRegex matches a method ignoring ASCII case (methods are tokens:
// folding each ASCII letter is all the policy folds).
func methodRegex(method string) string { return "^" + asciiFold(method) + "$" }

// pathMatcher matches a request's :path, which carries the query string,
// against an endpoint's template, or, inverted, every other path. A
// {name} matches no '?' here: "/v1/items/?q" is /v1/items/ with a query.
func pathMatcher(template string, invert bool) obj {
	m := obj{}.with("name", ":path").with("string_match", obj{}.with("safe_regex",
		obj{}.with("regex", "^"+strings.ReplaceAll(export.PathPattern(template), "[^/]+", "[^/?]+")+`(\?.*)?$`)))
	if invert {
		m = m.with("invert_match", true)
	}
	return m
}

// routeRegex matches a route's path, which Envoy takes without the query
// string, against an endpoint's template.
func routeRegex(template string) string { return "^" + export.PathPattern(template) + "$" }

// asciiFold is a regular expression matching s ignoring ASCII case only
// (RE2's (?i) also folds non-ASCII letters, which the policy does not).
func asciiFold(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			fmt.Fprintf(&b, "[%c%c]", r, r-'a'+'A')
		case r >= 'A' && r <= 'Z':
			fmt.Fprintf(&b, "[%c%c]", r-'A'+'a', r)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String()
}

// caseTwins says which two tiers' names differ only in ASCII case, "" when
// none do.
func caseTwins(p policy.Policy) string {
	seen := map[string]int{}
	for i, t := range p.Tiers {
		k := policy.LowerASCII(t.Name)
		if j, ok := seen[k]; ok {
			return fmt.Sprintf("tiers[%d] (%s) and tiers[%d] (%s) differ only in ASCII case", j, p.Tiers[j].Name, i, t.Name)
		}
		seen[k] = i
	}
	return ""
}

// The local_ratelimit filter refills a bucket every fill_interval, which
// must be at least 50 ms; a descriptor's interval must be a multiple of the
// default bucket's.
const (
	minFill = 50 * time.Millisecond
	// maxFillSteps bounds the search for an exact interval: one day of
	// 50 ms steps.
	maxFillSteps = 24 * 3600 * 20
	// maxFillTokens bounds the direct search from the token side.
	maxFillTokens = 1000
)

// fill is a token bucket's refill as Envoy writes it: tokens every
// interval, the interval a multiple of 50 ms.
type fill struct {
	tokens int64
	steps  int64 // interval in 50 ms steps
}

// interval is the fill interval.
func (f fill) interval() time.Duration { return time.Duration(f.steps) * minFill }

// rate is the refill rate in tokens per second.
func (f fill) rate() float64 { return float64(f.tokens) / f.interval().Seconds() }

// fillFor finds the shortest fill interval of at least 50 ms (a multiple of
// 50 ms, at most a day, or tokens/rate for up to 1000 tokens) at which rate
// refills a whole number of tokens; exact is false when there is none and f
// is the candidate whose rate is nearest.
func fillFor(rate float64) (f fill, exact bool) {
	var best fill
	bestErr := math.Inf(1)
	try := func(k int64) bool {
		if k < 1 {
			return false
		}
		t := rate * float64(k) * minFill.Seconds()
		n := math.Round(t)
		if n < 1 || n > math.MaxUint32 {
			return false
		}
		if math.Abs(t-n) <= 1e-13*n {
			if !exact || k < best.steps {
				best, exact = fill{tokens: int64(n), steps: k}, true
			}
			return true
		}
		if e := math.Abs(n-t) / t; !exact && e < bestErr {
			best, bestErr = fill{tokens: int64(n), steps: k}, e
		}
		return false
	}
	for k := int64(1); k <= maxFillSteps; k++ {
		if try(k) {
			break
		}
	}
	for n := int64(1); n <= maxFillTokens; n++ {
		try(int64(math.Round(float64(n) / rate / minFill.Seconds())))
	}
	return best, exact
}

// duration writes d (whole milliseconds) in protobuf JSON form: "1s",
// "0.05s", "86400s".
func duration(d time.Duration) string {
	ms := d.Milliseconds()
	s := fmt.Sprintf("%d", ms/1000)
	if frac := ms % 1000; frac != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%03d", frac), "0")
	}
	return s + "s"
}

// unit is a rate limit unit of the ratelimit service and Envoy Gateway.
type unit struct {
	name    string // as the service spells it: "second"
	seconds int64
}

// units are the service's units with the lengths it counts them in
// (src/utils.UnitToDivider: a month is 30 days, a year 365).
var units = []unit{{"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400},
	{"week", 7 * 86400}, {"month", 30 * 86400}, {"year", 365 * 86400}}

// window is a limit as the service counts it: requests per unit.
type window struct {
	requests int64
	unit     unit
}

// String is "60/minute".
func (w window) String() string { return fmt.Sprintf("%d/%s", w.requests, w.unit.name) }

// perUnit is a limit as whole requests per unit, in fixed windows aligned
// to the epoch. A window of exactly one unit keeps its limit; any other
// limit keeps its long-run rate as well as whole requests allow (see
// unitFor). why says what differs; exact is true only for a fixed window
// of one unit.
func perUnit(l policy.Limit) (w window, exact bool, why string) {
	s := l.Spec
	limit, span, wwhy := export.Window(s)
	var whys []string
	if s.Algorithm == "leaky_bucket" {
		whys = append(whys, "the queue is not expressible: the service rejects the requests a leaky bucket would delay")
	}
	for _, u := range units {
		if float64(u.seconds) != span {
			continue
		}
		w = window{requests: limit, unit: u}
		switch s.Algorithm {
		case "fixed_window":
			return w, true, ""
		case "sliding_log", "sliding_window":
			whys = append(whys, fmt.Sprintf("the service counts fixed windows: %s of %d per %s becomes %s, which admits up to %d across a window's edge", s.Algorithm, s.Limit, s.Window, w, 2*w.requests))
		default:
			whys = append(whys, wwhy)
		}
		return w, false, strings.Join(whys, "; ")
	}
	rate := float64(limit) / span
	u := unitFor(rate, span)
	n := max(1, int64(math.Round(rate*float64(u.seconds))))
	w = window{requests: n, unit: u}
	got := float64(n) / float64(u.seconds)
	whys = append(whys, fmt.Sprintf("%s is %d per %ss, which is no whole unit; the service counts %s in fixed windows: rate %s/s (policy %s/s, %s), at most %d per window and %d across a window's edge (policy burst %d)",
		s, limit, num(span), w, num(got), num(rate), errPct(got, rate), n, 2*n, limit))
	return w, false, strings.Join(whys, "; ")
}

// rateTolerance is the largest relative error of the long-run rate that
// unitFor accepts before it gives up keeping a unit's worth below the burst.
const rateTolerance = 0.01

// unitFor picks the unit for rate (requests per second) of a limit whose
// ideal window is span seconds. The long-run rate comes first: the largest
// unit not longer than span whose whole requests keep the rate within 1%
// (so one window never admits more than the designed burst); else the
// shortest unit longer than span that does; else the unit whose rounding
// errs least.
func unitFor(rate, span float64) unit {
	errAt := func(u unit) float64 {
		n := math.Round(rate * float64(u.seconds))
		if n < 1 {
			return math.Inf(1)
		}
		return math.Abs(n/float64(u.seconds)-rate) / rate
	}
	pick := -1
	for i, u := range units {
		if float64(u.seconds) <= span && errAt(u) <= rateTolerance {
			pick = i
		}
	}
	if pick >= 0 {
		return units[pick]
	}
	for _, u := range units {
		if float64(u.seconds) > span && errAt(u) <= rateTolerance {
			return u
		}
	}
	best := units[len(units)-1]
	for _, u := range units {
		if errAt(u) < errAt(best) {
			best = u
		}
	}
	return best
}

// errPct is the relative error of got against want: "+2.5%", "exact".
func errPct(got, want float64) string {
	if got == want {
		return "exact"
	}
	return fmt.Sprintf("%+.3g%%", (got-want)/want*100)
}

// num formats a float the shortest way that reads back the same.
func num(f float64) string { return fmt.Sprint(f) }

// header is the comment every document starts with.
func header(p policy.Policy, what string) []string {
	h := []string{fmt.Sprintf("%s for policy %q, generated by ratelab.", what, p.Metadata.Name)}
	if p.Metadata.Description != "" {
		h = append(h, p.Metadata.Description)
	}
	return h
}

// hasStyle is whether the policy asks for header style s.
func hasStyle(p policy.Policy, s policy.HeaderStyle) bool {
	for _, h := range p.Defaults.Response.Styles() {
		if h == s {
			return true
		}
	}
	return false
}

// responseFrom is the policy's response as a mapping's From.
func responseFrom(p policy.Policy) string {
	var hs []string
	for _, h := range p.Defaults.Response.Styles() {
		hs = append(hs, string(h))
	}
	return fmt.Sprintf("status=%d headers=[%s] retry_after=%t", p.Defaults.Response.Code(), strings.Join(hs, ","), p.Defaults.Response.SendsRetryAfter())
}

// enforcement is the policy's service.enforcement as a mapping's From.
func enforcement(p policy.Policy) string {
	return fmt.Sprintf("enforcement=%s replicas=%d", p.Service.Enforcing(), max(1, p.Service.Replicas))
}
