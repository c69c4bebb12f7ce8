package envoy

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// RateLimitService renders the policy as the configuration of the
// envoyproxy/ratelimit service (one YAML file per domain in
// RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/config/): a tree of descriptors, each
// limit a leaf with requests_per_unit per unit. The service counts fixed
// windows of one unit aligned to the epoch, in Redis, shared by every
// Envoy; it increments a request's counters even when it rejects it. The
// Envoy side — the ratelimit HTTP filter with the same rate_limits actions
// as [Local] — is in the export's Notes.
var RateLimitService = export.Target{
	Name:   "envoy-ratelimit",
	Title:  "envoyproxy/ratelimit service",
	Group:  export.Gateways,
	Render: renderRateLimitService,
}

// rlsNode is one level of the service's descriptor tree.
type rlsNode struct {
	entry
	children []*rlsNode
	leaf     *rlsLimit
}

// rlsLimit is a limit at a leaf of the tree.
type rlsLimit struct {
	plan
	window window
}

// tree nests the limits' descriptors: entries shared by several limits
// (none today, each starts with its own scope entry) share a node.
func tree(ls []rlsLimit) []*rlsNode {
	var roots []*rlsNode
	for i := range ls {
		level := &roots
		for j, e := range ls[i].entries {
			var n *rlsNode
			for _, c := range *level {
				if c.entry == e {
					n = c
				}
			}
			if n == nil {
				n = &rlsNode{entry: e}
				*level = append(*level, n)
			}
			if j == len(ls[i].entries)-1 {
				n.leaf = &ls[i]
			}
			level = &n.children
		}
	}
	return roots
}

// rlsYAML writes the tree.
func rlsYAML(ns []*rlsNode, shadow bool) list {
	var out list
	for _, n := range ns {
		o := obj{}
		if n.leaf != nil {
			o = o.note(fmt.Sprintf("%s: %s\n%s", n.leaf.Field, n.leaf.Spec, n.leaf.who), "key", n.key)
		} else {
			o = o.with("key", n.key)
		}
		if n.value != "" {
			o = o.with("value", n.value)
		}
		if n.leaf != nil {
			o = o.with("rate_limit", obj{}.with("unit", n.leaf.window.unit.name).
				with("requests_per_unit", n.leaf.window.requests))
			if shadow {
				o = o.with("shadow_mode", true)
			}
		}
		if len(n.children) > 0 {
			o = o.with("descriptors", rlsYAML(n.children, shadow))
		}
		out = append(out, o)
	}
	return out
}

// overlapping is whether some request meets more than one of the
// policy's limits (an endpoint's or the global one besides its client's).
func overlapping(ls []policy.Limit) bool {
	if len(ls) < 2 {
		return false
	}
	for _, l := range ls {
		if l.Scope == policy.ScopeEndpoint || l.Scope == policy.ScopeGlobal {
			return true
		}
	}
	return false
}

// domain is the policy's rate limit domain.
func domain(p policy.Policy) string { return policy.Ident(p.Metadata.Name) }

// rateLimitFilter is the Envoy HTTP filter that asks the service, with the
// rate_limits actions that build the descriptors the service's tree names.
func rateLimitFilter(p policy.Policy, o export.Options) obj {
	pls := plans(p, o)
	code, _ := statusCode(p)
	f := obj{}.
		with("@type", typeRateLimit).
		with("domain", domain(p)).
		with("stat_prefix", "ratelab").
		with("timeout", "0.02s").
		note("on_store_failure: "+string(p.Service.StoreFailureMode()), "failure_mode_deny", p.Service.StoreFailureMode() == policy.FailClosed).
		with("rate_limited_status", obj{}.with("code", code))
	if hasStyle(p, policy.HeadersX) || hasStyle(p, policy.HeadersIETF) {
		f = f.with("enable_x_ratelimit_headers", "DRAFT_VERSION_03")
	}
	f = f.with("enable_retry_after_header", p.Defaults.Response.SendsRetryAfter()).
		with("rate_limit_service", obj{}.
			with("grpc_service", obj{}.with("envoy_grpc", obj{}.with("cluster_name", "ratelimit"))).
			with("transport_api_version", "V3")).
		with("rate_limits", rateLimits(pls, len(export.Costs(p)) > 0))
	return obj{}.with("name", "envoy.filters.http.ratelimit").with("typed_config", f)
}

func renderRateLimitService(p policy.Policy, o export.Options) (export.Export, error) {
	o = o.WithDefaults()
	ex := export.Export{Target: "envoy-ratelimit", Filename: domain(p) + ".yaml", MediaType: "application/yaml"}
	pls := plans(p, o)
	shadow := p.Defaults.Mode == policy.ModeShadow
	costs := export.Costs(p)
	limits := p.Limits()
	overlap := overlapping(limits)

	var ls []rlsLimit
	for _, pl := range pls {
		w, exact, why := perUnit(pl.Limit)
		ls = append(ls, rlsLimit{plan: pl, window: w})
		fid := export.Exact
		var whys []string
		if !exact {
			fid = export.Approximate
			whys = append(whys, why)
		}
		if exact && (overlap || len(costs) > 0) {
			fid = export.Approximate
			whys = append(whys, "the service increments every counter of a request, even one it rejects: a request rejected here or by another limit still counts in this window")
		}
		if pl.inexact != "" {
			fid = export.Approximate
			whys = append(whys, pl.inexact)
		}
		if p.Service.Replicas > 1 && p.Service.Enforcement == "local" {
			fid = export.Approximate
			whys = append(whys, fmt.Sprintf("the policy's limit is per replica (enforcement: local), the service counts it once for all %d", p.Service.Replicas))
		}
		ex.Add(export.Mapping{Field: pl.Field, From: pl.Spec.String(),
			To:       fmt.Sprintf("descriptor {%s}: rate_limit {unit: %s, requests_per_unit: %d}", entriesText(pl.entries), w.unit.name, w.requests),
			Fidelity: fid, Why: strings.Join(whys, "; ")})
	}

	body := obj{}.with("domain", domain(p)).with("descriptors", rlsYAML(tree(ls), shadow))
	ex.Body = document(header(p, "envoyproxy/ratelimit service configuration"), body)

	if shadow {
		ex.Add(export.Mapping{Field: "defaults.mode", From: string(p.Defaults.EffectiveMode()), To: "shadow_mode: true on every limit", Fidelity: export.Exact,
			Why: "the service counts and reports over-limit requests (stats shadow_mode) but answers OK"})
	} else {
		ex.Add(export.Mapping{Field: "defaults.mode", From: string(p.Defaults.EffectiveMode()), To: "shadow_mode unset", Fidelity: export.Exact})
	}
	for i, e := range p.Endpoints {
		if e.Cost <= 1 {
			continue
		}
		ex.Add(export.Mapping{Field: fmt.Sprintf("endpoints[%d].cost", i), From: fmt.Sprintf("cost=%d", e.Cost),
			To:       fmt.Sprintf("route %q (%s %s) + rate_limits[].hits_addend {format: %%ROUTE_NAME%%} in Envoy's ratelimit filter", fmt.Sprint(e.Cost), e.Match.Method, e.Match.Path),
			Fidelity: export.Approximate,
			Why:      fmt.Sprintf("each request to %s %s adds %d to its counters, but the service adds it even when it rejects the request, so a rejected costly request uses up the window", e.Match.Method, e.Match.Path, e.Cost)})
	}
	code, known := statusCode(p)
	resp := export.Mapping{Field: "defaults.response", From: responseFrom(p), Fidelity: export.Exact,
		To: fmt.Sprintf("Envoy ratelimit filter: rate_limited_status {code: %s}, enable_retry_after_header %t", code, p.Defaults.Response.SendsRetryAfter())}
	var rwhy []string
	if !known {
		resp.Fidelity = export.Approximate
		rwhy = append(rwhy, fmt.Sprintf("Envoy's StatusCode enum has no %d; 429 is sent", p.Defaults.Response.Code()))
	}
	if hasStyle(p, policy.HeadersX) || hasStyle(p, policy.HeadersIETF) {
		resp.To += ", enable_x_ratelimit_headers DRAFT_VERSION_03"
	}
	if hasStyle(p, policy.HeadersLegacy) {
		resp.To += ", service env LIMIT_RESPONSE_HEADERS_ENABLED=true (RateLimit-Limit/-Remaining/-Reset)"
	}
	if hasStyle(p, policy.HeadersIETF) {
		resp.Fidelity = export.Approximate
		rwhy = append(rwhy, "neither Envoy nor the service sends the IETF RateLimit/RateLimit-Policy fields; X-RateLimit-* (draft 03) is the nearest")
	}
	resp.Why = strings.Join(rwhy, "; ")
	ex.Add(resp)
	enf := export.Mapping{Field: "service.enforcement", From: enforcement(p), Fidelity: export.Exact,
		To: "one Redis counter per descriptor value, shared by every Envoy that asks the service"}
	if p.Service.Replicas > 1 && p.Service.Enforcement == "local" {
		enf.Fidelity = export.Approximate
		enf.Why = fmt.Sprintf("the policy enforces each limit in each of %d replicas; the service enforces it once across them, so a client spread over replicas gets less", p.Service.Replicas)
	}
	ex.Add(enf)
	ex.Add(export.Mapping{Field: "service.on_store_failure", From: string(p.Service.StoreFailureMode()),
		To:       fmt.Sprintf("Envoy ratelimit filter failure_mode_deny: %t", p.Service.StoreFailureMode() == policy.FailClosed),
		Fidelity: export.Exact,
		Why:      "when the service or its Redis does not answer within the timeout, Envoy lets the request through (false) or answers 500 (true, status_on_error)"})

	filter := document(nil, obj{}.with("http_filters", list{rateLimitFilter(p, o)}))
	ex.Notes = []string{
		fmt.Sprintf("Put this file in the service's RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/config/ directory; it defines domain %q. Run the service with REDIS_URL pointing at Redis (it will not start without it).", domain(p)),
		"Envoy asks the service from its ratelimit HTTP filter, placed before the router; the filter's rate_limits build the descriptors this file names (cluster ratelimit must point at the service's gRPC port, 8081 by default, over HTTP/2):\n" + string(filter),
		fmt.Sprintf("Clients are told apart by %s (api_key), %s (account) and the client address (ip); the tier comes from %s, which the authentication layer in front must set and strip from clients.", o.APIKeyHeader, o.AccountHeader, o.TierHeader),
		"Check it: the service logs \"config error\" and refuses a bad file at start-up; GET /rlconfig on its debug port (6070) shows what it loaded.",
	}
	if len(costs) > 0 {
		ex.Notes = append(ex.Notes, "Endpoint costs: hits_addend reads the matched route's name, so name each costly route by its cost and every other route \"1\" (the envoy-local export's route_config does this).")
	}
	if hasStyle(p, policy.HeadersLegacy) {
		ex.Notes = append(ex.Notes, "Set LIMIT_RESPONSE_HEADERS_ENABLED=true in the service's environment for RateLimit-Limit/-Remaining/-Reset.")
	}
	return ex, nil
}
