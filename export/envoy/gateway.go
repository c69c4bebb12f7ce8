package envoy

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// Gateway renders the policy as an Envoy Gateway (v1.9) BackendTrafficPolicy
// for the HTTPRoute named after the policy: one global rule per limit —
// client selectors for its tier, endpoint and client key, a limit of
// requests per unit — which the gateway hands to its envoyproxy/ratelimit
// service. So the rules count fixed windows of one unit in Redis, shared
// by every gateway replica, as [RateLimitService] does. The selectors
// choose each limit's requests as the policy does (see gatewaySelector);
// only an endpoint's cost cannot weigh the client's and global rules.
var Gateway = export.Target{
	Name:   "envoy-gateway",
	Title:  "Envoy Gateway BackendTrafficPolicy",
	Group:  export.Gateways,
	Render: renderGateway,
}

// Envoy Gateway's bounds (api/v1alpha1 v1.9.1): global rules per policy and
// client selectors per rule.
const (
	maxGlobalRules  = 256
	maxRuleSelector = 8
)

// egUnit is the unit as Envoy Gateway spells it: "Second".
func egUnit(u unit) string { return strings.ToUpper(u.name[:1]) + u.name[1:] }

// dnsLabel is s as a Kubernetes name: lower-case letters, digits and '-',
// starting and ending with a letter or digit, at most 63 characters.
func dnsLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 63-len("-ratelimit") {
		out = strings.Trim(out[:63-len("-ratelimit")], "-")
	}
	if out == "" {
		out = "api"
	}
	return out
}

// Envoy Gateway's bounds on one client selector (api/v1alpha1 v1.9.1):
// header matches, and the length of a header's or a path's value.
const (
	maxSelectorHeaders = 128
	maxMatchValue      = 1024
)

// gatewaySelector is the client selector choosing limit l's requests as
// the policy decides them (package engine), nil for the global limit:
//
//   - the tier header names the tier, or for the default limit no tier, in
//     a RegularExpression folding each ASCII letter (as [plans] does; one
//     inverted match per tier for the default, so that a request without
//     the header gets the default too);
//   - an endpoint's limit takes the header matchers [endpointHeaders]
//     builds for Envoy's ratelimit filter: its method as a
//     RegularExpression on :method (a selector's methods are Gateway API
//     method names, upper case and compared exactly), its path template as
//     a RegularExpression path (which Envoy Gateway matches against :path,
//     query string included), and each earlier endpoint that overlaps it
//     as an inverted RegularExpression on :path (a selector has one path).
//     Envoy Gateway turns a header match into a header_value_match action
//     on the header as named, pseudo-headers included, and an inverted one
//     into expect_match: false, which for :path, never absent, is Envoy's
//     invert_match;
//   - the client key is a Distinct header (no rule but the global one
//     counts a request without it, as the engine applies only the global
//     limit to it) or, for ip, sourceCIDR.
//
// When two tiers' names differ only in case the tier header is matched
// case-sensitively; inexact then says so.
func gatewaySelector(p policy.Policy, l policy.Limit, o export.Options) (sel obj, inexact string, err error) {
	twins := caseTwins(p)
	tierRE := func(name string) string {
		if twins != "" {
			return "^" + regexp.QuoteMeta(name) + "$"
		}
		return "^" + asciiFold(name) + "$"
	}
	regex := func(name, value string, invert bool) obj {
		h := obj{}.with("name", name).with("type", "RegularExpression").with("value", value)
		if invert {
			h = h.with("invert", true)
		}
		return h
	}
	var headers list
	var path obj
	switch l.Scope {
	case policy.ScopeGlobal:
		return nil, "", nil
	case policy.ScopeDefault:
		for _, t := range p.Tiers {
			headers = append(headers, regex(o.TierHeader, tierRE(t.Name), true))
		}
	case policy.ScopeTier:
		headers = append(headers, regex(o.TierHeader, tierRE(l.Tier), false))
	case policy.ScopeEndpoint:
		var i int
		if _, err := fmt.Sscanf(l.Field, "endpoints[%d].limit", &i); err != nil {
			panic("envoy: endpoint limit field " + l.Field)
		}
		for _, m := range endpointHeaders(p, i) {
			name, _ := lookup(m, "name").(string)
			re, ok := lookup(m, "string_match", "safe_regex", "regex").(string)
			if !ok {
				panic("envoy: endpoint header matcher without a safe_regex")
			}
			invert := lookup(m, "invert_match") == true
			if name == ":path" && !invert && path == nil {
				path = obj{}.with("type", "RegularExpression").with("value", re)
				continue
			}
			headers = append(headers, regex(name, re, invert))
		}
	}
	if twins != "" && (l.Scope == policy.ScopeTier || l.Scope == policy.ScopeDefault && len(p.Tiers) > 0) {
		inexact = twins + ", so " + o.TierHeader + " is matched case-sensitively: a value naming a tier in another case gets the default limit, where the policy picks the tier"
	}
	if h := o.KeyHeader(l.Key); h != "" {
		headers = append(headers, obj{}.with("name", h).with("type", "Distinct"))
	}
	if len(headers) > maxSelectorHeaders {
		return nil, "", &export.Error{Target: "envoy-gateway",
			Reason: fmt.Sprintf("%s needs %d header matches in its client selector; Envoy Gateway allows at most %d", l.Field, len(headers), maxSelectorHeaders)}
	}
	for _, v := range append(list{path}, headers...) {
		if s, _ := lookup(v, "value").(string); len(s) > maxMatchValue {
			return nil, "", &export.Error{Target: "envoy-gateway",
				Reason: fmt.Sprintf("%s needs a match value of %d characters; Envoy Gateway allows at most %d", l.Field, len(s), maxMatchValue)}
		}
	}
	if len(headers) > 0 {
		sel = sel.with("headers", headers)
	}
	if path != nil {
		sel = sel.with("path", path)
	}
	return sel, inexact, nil
}

// lookup is the value at keys in nested objs, nil when there is none.
func lookup(v any, keys ...string) any {
	for _, k := range keys {
		o, _ := v.(obj)
		v = nil
		for _, f := range o {
			if f.key == k {
				v = f.val
				break
			}
		}
	}
	return v
}

// gatewayRules is a limit's rules: one, or two for an ip key (one counter
// per IPv4 and per IPv6 address), selecting with sel.
func gatewayRules(l policy.Limit, sel obj, w window, cost int64, shadow bool) []obj {
	rule := func(c obj) obj {
		r := obj{}
		if len(c) > 0 {
			r = r.with("clientSelectors", list{c})
		}
		r = r.with("limit", obj{}.with("requests", w.requests).with("unit", egUnit(w.unit)))
		if cost > 1 {
			r = r.with("cost", obj{}.with("request", obj{}.with("from", "Number").with("number", cost)))
		}
		if shadow {
			r = r.with("shadowMode", true)
		}
		return r
	}
	if l.Key == policy.KeyIP && l.Scope != policy.ScopeGlobal {
		var rs []obj
		for _, cidr := range []string{"0.0.0.0/0", "::/0"} {
			c := append(append(obj{}, sel...), field{key: "sourceCIDR", val: obj{}.with("type", "Distinct").with("value", cidr)})
			rs = append(rs, rule(c))
		}
		return rs
	}
	return []obj{rule(sel)}
}

func renderGateway(p policy.Policy, o export.Options) (export.Export, error) {
	o = o.WithDefaults()
	name := dnsLabel(p.Metadata.Name)
	ex := export.Export{Target: "envoy-gateway", Filename: name + "-ratelimit.yaml", MediaType: "application/yaml"}
	shadow := p.Defaults.Mode == policy.ModeShadow
	limits := p.Limits()
	overlap := overlapping(limits)
	endpointCost := map[string]int64{}
	for i, e := range p.Endpoints {
		endpointCost[fmt.Sprintf("endpoints[%d].limit", i)] = e.Cost
	}

	var rules list
	for _, l := range limits {
		w, exact, why := perUnit(l)
		cost := endpointCost[l.Field]
		sel, inexact, err := gatewaySelector(p, l, o)
		if err != nil {
			return export.Export{}, err
		}
		rs := gatewayRules(l, sel, w, cost, shadow)
		for i, r := range rs {
			if i == 0 {
				r = append(obj{{key: r[0].key, val: r[0].val, comment: fmt.Sprintf("%s: %s", l.Field, l.Spec)}}, r[1:]...)
			}
			rules = append(rules, r)
		}
		fid := export.Exact
		var whys []string
		if !exact {
			fid = export.Approximate
			whys = append(whys, why)
		}
		if exact && (overlap || len(export.Costs(p)) > 0) {
			fid = export.Approximate
			whys = append(whys, "the rate limit service increments every matching rule's counter, even for a request it rejects: a request rejected here or by another rule still counts in this window")
		}
		if inexact != "" {
			fid = export.Approximate
			whys = append(whys, inexact)
		}
		if p.Service.Replicas > 1 && p.Service.Enforcement == "local" {
			fid = export.Approximate
			whys = append(whys, fmt.Sprintf("the policy's limit is per replica (enforcement: local), the gateway counts it once for all %d", p.Service.Replicas))
		}
		to := fmt.Sprintf("rule {%s}: limit {requests: %d, unit: %s}", selectorText(l, o, len(p.Tiers) > 0), w.requests, egUnit(w.unit))
		if len(rs) > 1 {
			to = fmt.Sprintf("%d rules (IPv4 and IPv6 sourceCIDR Distinct) ", len(rs)) + to
		}
		if cost > 1 {
			to += fmt.Sprintf(", cost {request: {from: Number, number: %d}}", cost)
		}
		ex.Add(export.Mapping{Field: l.Field, From: l.Spec.String(), To: to, Fidelity: fid, Why: strings.Join(whys, "; ")})
	}
	if len(rules) > maxGlobalRules {
		return export.Export{}, &export.Error{Target: "envoy-gateway",
			Reason: fmt.Sprintf("the policy needs %d global rules; a BackendTrafficPolicy holds at most %d", len(rules), maxGlobalRules)}
	}

	spec := obj{}.
		with("targetRefs", list{obj{}.with("group", "gateway.networking.k8s.io").with("kind", "HTTPRoute").with("name", name)})
	if len(rules) > 0 {
		spec = spec.with("rateLimit", obj{}.with("global", obj{}.with("rules", rules)))
	}
	body := obj{}.
		with("apiVersion", "gateway.envoyproxy.io/v1alpha1").
		with("kind", "BackendTrafficPolicy").
		with("metadata", obj{}.with("name", name+"-ratelimit").with("namespace", "default")).
		with("spec", spec)
	ex.Body = document(append(header(p, "Envoy Gateway BackendTrafficPolicy"),
		"Apply: kubectl apply -f "+ex.Filename+" (needs global rate limiting enabled in the EnvoyGateway config)."), body)

	if shadow {
		ex.Add(export.Mapping{Field: "defaults.mode", From: string(p.Defaults.EffectiveMode()), To: "shadowMode: true on every rule", Fidelity: export.Exact,
			Why: "the rate limit service counts and reports over-limit requests but lets them through"})
	} else {
		ex.Add(export.Mapping{Field: "defaults.mode", From: string(p.Defaults.EffectiveMode()), To: "shadowMode unset", Fidelity: export.Exact})
	}
	for i, e := range p.Endpoints {
		if e.Cost <= 1 {
			continue
		}
		m := export.Mapping{Field: fmt.Sprintf("endpoints[%d].cost", i), From: fmt.Sprintf("cost=%d", e.Cost)}
		if e.Limit.Algorithm != "" {
			m.To = fmt.Sprintf("cost {request: {from: Number, number: %d}} on the endpoint's rule", e.Cost)
			m.Fidelity = export.Approximate
			m.Why = fmt.Sprintf("the endpoint's own rule counts %d per request whose first matching endpoint is %s %s; the client's and global rules count such a request as 1, not %d (a rule's cost weights every request that rule selects, and a second rule would be a second counter), so they admit up to %d times as many of these requests as the policy does",
				e.Cost, e.Match.Method, e.Match.Path, e.Cost, e.Cost)
		} else {
			m.To = "none"
			m.Fidelity = export.NotExpressible
			m.Why = fmt.Sprintf("a rule's cost applies to every request it selects; weighting only the requests whose first matching endpoint is %s %s would need a rule selecting them, which has its own counter, so they count 1, not %d, against the client's and global rules, which admit up to %d times as many of them as the policy does",
				e.Match.Method, e.Match.Path, e.Cost, e.Cost)
		}
		ex.Add(m)
	}
	resp := export.Mapping{Field: "defaults.response", From: responseFrom(p), To: "429 with X-RateLimit-Limit/-Remaining/-Reset (draft 03)", Fidelity: export.Exact}
	var rwhy []string
	if p.Defaults.Response.Code() != 429 {
		rwhy = append(rwhy, fmt.Sprintf("a BackendTrafficPolicy's rate limit always answers 429, not %d", p.Defaults.Response.Code()))
	}
	if hasStyle(p, policy.HeadersIETF) || hasStyle(p, policy.HeadersLegacy) {
		rwhy = append(rwhy, "the gateway sends only X-RateLimit-* (draft 03) headers")
	}
	if p.Defaults.Response.SendsRetryAfter() {
		rwhy = append(rwhy, "a BackendTrafficPolicy has no Retry-After setting")
	}
	if len(rwhy) > 0 {
		resp.Fidelity = export.Approximate
		resp.Why = strings.Join(rwhy, "; ")
	}
	ex.Add(resp)
	enf := export.Mapping{Field: "service.enforcement", From: enforcement(p), Fidelity: export.Exact,
		To: "global rules: one counter per selector value in the gateway's rate limit service, shared by every gateway replica"}
	if p.Service.Replicas > 1 && p.Service.Enforcement == "local" {
		enf.Fidelity = export.Approximate
		enf.Why = fmt.Sprintf("the policy enforces each limit in each of %d replicas; global rules enforce it once across them (local rules would count per replica, but always with burst = one unit's worth and at most 16 rules)", p.Service.Replicas)
	}
	ex.Add(enf)
	failClosed := p.Service.StoreFailureMode() == policy.FailClosed
	ex.Add(export.Mapping{Field: "service.on_store_failure", From: string(p.Service.StoreFailureMode()),
		To: fmt.Sprintf("EnvoyGateway config rateLimit.failClosed: %t", failClosed), Fidelity: export.Exact,
		Why: "set in the EnvoyGateway configuration, not in the BackendTrafficPolicy (see Notes)"})

	eg := document(nil, obj{}.
		with("apiVersion", "gateway.envoyproxy.io/v1alpha1").
		with("kind", "EnvoyGateway").
		with("rateLimit", obj{}.
			with("backend", obj{}.with("type", "Redis").with("redis", obj{}.with("url", "redis.redis-system.svc.cluster.local:6379"))).
			note("on_store_failure: "+string(p.Service.StoreFailureMode()), "failClosed", failClosed)))
	var emptySegment []string
	for _, e := range p.Endpoints {
		if strings.Contains(e.Match.Path, "//") {
			emptySegment = append(emptySegment, e.Match.Path)
		}
	}
	ex.Notes = []string{
		fmt.Sprintf("Applies to the HTTPRoute %q in namespace default: edit targetRefs and metadata.namespace to match your route.", name),
		"Global rate limiting must be enabled in the EnvoyGateway configuration (the envoy-gateway-config ConfigMap), with a Redis backend; on_store_failure maps to failClosed there:\n" + string(eg),
		fmt.Sprintf("Clients are told apart by %s (api_key), %s (account) and the client address (ip, one rule for IPv4 and one for IPv6); the tier comes from %s, which the authentication layer in front must set and strip from clients (or use a SecurityPolicy with claimToHeaders).",
			o.APIKeyHeader, o.AccountHeader, o.TierHeader),
		"Check it: kubectl apply --dry-run=server -f " + ex.Filename + " validates against the installed CRD; kubectl get backendtrafficpolicy -o yaml shows whether the gateway accepted it (status.ancestors[].conditions).",
	}
	if len(emptySegment) > 0 {
		ex.Notes = append(ex.Notes, fmt.Sprintf("Envoy Gateway merges repeated slashes in the path before rate limiting unless a ClientTrafficPolicy sets path.disableMergeSlashes: true; without it no request reaches the empty segment of %s, so its rule never counts one.",
			strings.Join(emptySegment, ", ")))
	}
	return ex, nil
}

// selectorText is a limit's selectors in words for a mapping's To.
func selectorText(l policy.Limit, o export.Options, tiers bool) string {
	var s []string
	switch l.Scope {
	case policy.ScopeDefault:
		if tiers {
			s = append(s, o.TierHeader+" absent or naming no tier (ignoring ASCII case)")
		}
	case policy.ScopeTier:
		s = append(s, o.TierHeader+"="+l.Tier+" (ignoring ASCII case)")
	case policy.ScopeEndpoint:
		s = append(s, fmt.Sprintf(":method %s (ignoring ASCII case), path %s ({name} one segment, any query), not an earlier overlapping endpoint's path",
			l.Match.Method, l.Match.Path))
	case policy.ScopeGlobal:
		return "all traffic"
	}
	if h := o.KeyHeader(l.Key); h != "" {
		s = append(s, h+" Distinct")
	} else {
		s = append(s, "sourceCIDR Distinct")
	}
	return strings.Join(s, ", ")
}
