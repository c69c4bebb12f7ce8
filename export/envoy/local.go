package envoy

import (
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// Local renders the policy as a complete static Envoy bootstrap (envoy -c
// envoy-local.yaml): a listener whose HTTP connection manager runs the
// local_ratelimit filter, then the router to the upstream cluster.
//
// Each limit is one descriptor with its own token bucket, counted in each
// Envoy process: max_tokens = the burst (per replica when a shared limit
// is divided, see [export.PerInstance]), refilled tokens_per_fill every
// fill_interval, the shortest multiple of 50 ms at which the rate refills
// whole tokens; Envoy ≥ 1.31 refills continuously, so a token or GCRA
// limit is exact. The filter's own rate_limits build the request
// descriptors (see the package comment); with endpoint costs each carries
// hits_addend read from the route's name, which is the route's cost. The
// default bucket only sets the refill base (the greatest common divisor of
// the descriptors' intervals): it never runs dry, so requests no
// descriptor matches (no client key) pass.
var Local = export.Target{
	Name:   "envoy-local",
	Title:  "Envoy local_ratelimit",
	Group:  export.Gateways,
	Render: renderLocal,
}

// Type URLs of the filters the bootstrap names.
const (
	typeHCM       = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
	typeLocalRL   = "type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit"
	typeRateLimit = "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit"
	typeRouter    = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"
)

// Shadow header: added upstream to a request the filter would have
// rejected, when the policy is in shadow mode.
const shadowHeader = "x-ratelab-shadow-limited"

// minDynamicDescriptors is the least LRU size per wildcard descriptor:
// Envoy's default of 20 distinct clients would evict (and so refill) a
// busy API's buckets constantly.
const minDynamicDescriptors = 10000

// bucket is one limit's token bucket in Envoy.
type bucket struct {
	plan
	maxTokens int64
	fill      fill
	exact     bool // the fill interval refills the rate exactly
	perWhy    string
	bucketWhy string
}

// buckets sizes every plan's bucket, dividing shared limits over the
// replicas (each Envoy counts alone).
func buckets(p policy.Policy, pls []plan) []bucket {
	var out []bucket
	for _, pl := range pls {
		spec, perWhy := export.PerInstance(p, pl.Spec)
		rate, burst, bwhy := export.Bucket(spec)
		f, exact := fillFor(rate)
		out = append(out, bucket{plan: pl, maxTokens: burst, fill: f, exact: exact, perWhy: perWhy, bucketWhy: bwhy})
	}
	return out
}

// gcd is the greatest common divisor of a and b.
func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// entriesText is a descriptor's entries as the file writes them: "tier=paid, api_key".
func entriesText(es []entry) string {
	var s []string
	for _, e := range es {
		if e.value == "" {
			s = append(s, e.key)
		} else {
			s = append(s, e.key+"="+e.value)
		}
	}
	return strings.Join(s, ", ")
}

// entriesYAML is a descriptor's entries as YAML.
func entriesYAML(es []entry) list {
	var out list
	for _, e := range es {
		o := obj{}.with("key", e.key)
		if e.value != "" {
			o = o.with("value", e.value)
		}
		out = append(out, o)
	}
	return out
}

// rateLimits is the rate_limits entries that build the plans' descriptors,
// each distinct action list once, in plan order; with costs, each carries
// hits_addend taken from the route's name, which is its cost.
func rateLimits(pls []plan, costs bool) list {
	var out list
	seen := map[string]bool{}
	for _, pl := range pls {
		k := strings.Join(lines(pl.actions), "\n")
		if seen[k] {
			continue
		}
		seen[k] = true
		rl := obj{}.with("actions", pl.actions)
		if costs {
			rl = rl.with("hits_addend", obj{}.with("format", "%ROUTE_NAME%"))
		}
		out = append(out, rl)
	}
	return out
}

// routes is the virtual host's routes, first match in order as the
// policy's endpoints are: one per endpoint with a cost (named by the cost,
// which hits_addend reads), each earlier endpoint that overlaps a costly
// one (named "1", so its requests keep its cost), and a catch-all named
// "1". Each matches the endpoint's method ignoring ASCII case and its path
// template (Envoy matches a route's safe_regex on the path without the
// query string).
func routes(p policy.Policy) list {
	to := obj{}.with("cluster", "upstream")
	var out list
	for i, e := range p.Endpoints {
		cost := max(e.Cost, 1)
		if cost == 1 && !slices.ContainsFunc(p.Endpoints[i+1:], func(l policy.Endpoint) bool {
			return l.Cost > 1 && policy.Overlaps(e.Match, l.Match)
		}) {
			continue
		}
		what := fmt.Sprintf("%s %s costs %d tokens: hits_addend reads the route name", e.Match.Method, e.Match.Path, cost)
		if cost == 1 {
			what = fmt.Sprintf("%s %s costs 1 token, though a later costly endpoint also matches some of its requests", e.Match.Method, e.Match.Path)
		}
		m := obj{}.with("safe_regex", obj{}.with("regex", routeRegex(e.Match.Path))).
			with("headers", list{methodMatcher(e.Match.Method)})
		out = append(out, obj{}.note(what, "name", strconv.FormatInt(cost, 10)).with("match", m).with("route", to))
	}
	r := obj{}
	if len(export.Costs(p)) > 0 {
		r = r.note("every other request costs 1 token", "name", "1")
	}
	return append(out, r.with("match", obj{}.with("prefix", "/")).with("route", to))
}

// socket is a host:port (or a bare port) as a socket_address.
func socket(addr, defHost string) (obj, error) {
	host, port := defHost, addr
	if strings.Contains(addr, ":") {
		h, p, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		host, port = h, p
		if host == "" {
			host = defHost
		}
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", port, err)
	}
	return obj{}.with("socket_address", obj{}.with("address", host).with("port_value", uint32(n))), nil
}

// cluster is the upstream cluster: static for an IP, DNS for a name.
func cluster(upstream string) (obj, error) {
	addr, err := socket(upstream, "127.0.0.1")
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(upstream)
	kind := "STATIC"
	if net.ParseIP(host) == nil && host != "" {
		kind = "STRICT_DNS"
	}
	return obj{}.with("name", "upstream").with("type", kind).with("connect_timeout", "1s").
		with("load_assignment", obj{}.with("cluster_name", "upstream").with("endpoints", list{
			obj{}.with("lb_endpoints", list{obj{}.with("endpoint", obj{}.with("address", addr))}),
		})), nil
}

// percent is a runtime fractional percent of HUNDRED.
func percent(runtimeKey string, n uint32) obj {
	return obj{}.with("runtime_key", runtimeKey).
		with("default_value", obj{}.with("numerator", n).with("denominator", "HUNDRED"))
}

// statusCode is the policy's status as Envoy's StatusCode enum name; ok
// is false when Envoy has no name for it (and 429 is used).
func statusCode(p policy.Policy) (name string, ok bool) {
	if n, ok := statusNames[p.Defaults.Response.Code()]; ok {
		return n, true
	}
	return statusNames[429], false
}

// statusNames are the 4xx and 5xx names of Envoy's StatusCode enum
// (envoy.type.v3.StatusCode), kept here so the server does not link the
// protobuf runtime for one table; a test checks them against
// go-control-plane's.
var statusNames = map[int]string{
	400: "BadRequest",
	401: "Unauthorized",
	402: "PaymentRequired",
	403: "Forbidden",
	404: "NotFound",
	405: "MethodNotAllowed",
	406: "NotAcceptable",
	407: "ProxyAuthenticationRequired",
	408: "RequestTimeout",
	409: "Conflict",
	410: "Gone",
	411: "LengthRequired",
	412: "PreconditionFailed",
	413: "PayloadTooLarge",
	414: "URITooLong",
	415: "UnsupportedMediaType",
	416: "RangeNotSatisfiable",
	417: "ExpectationFailed",
	421: "MisdirectedRequest",
	422: "UnprocessableEntity",
	423: "Locked",
	424: "FailedDependency",
	426: "UpgradeRequired",
	428: "PreconditionRequired",
	429: "TooManyRequests",
	431: "RequestHeaderFieldsTooLarge",
	500: "InternalServerError",
	501: "NotImplemented",
	502: "BadGateway",
	503: "ServiceUnavailable",
	504: "GatewayTimeout",
	505: "HTTPVersionNotSupported",
	506: "VariantAlsoNegotiates",
	507: "InsufficientStorage",
	508: "LoopDetected",
	510: "NotExtended",
	511: "NetworkAuthenticationRequired",
}

// dynamicDescriptors sizes the LRU of clients kept per wildcard
// descriptor: twice the clients the design counts, at least 10000.
func dynamicDescriptors(p policy.Policy) uint32 {
	n := p.Sizing.Clients
	for _, t := range p.Tiers {
		n += t.Clients
	}
	return uint32(min(max(minDynamicDescriptors, 2*n), 1_000_000))
}

func renderLocal(p policy.Policy, o export.Options) (export.Export, error) {
	o = o.WithDefaults()
	ex := export.Export{Target: "envoy-local", Filename: "envoy-local.yaml", MediaType: "application/yaml"}
	pls := plans(p, o)
	bs := buckets(p, pls)
	costs := export.Costs(p)
	shadow := p.Defaults.Mode == policy.ModeShadow

	// The default bucket's interval is the greatest common divisor of the
	// descriptors', so each is a multiple of it.
	base := int64(0)
	for _, b := range bs {
		base = gcd(base, b.fill.steps)
	}
	if base == 0 {
		base = 20 // 1s
	}
	baseFill := fill{tokens: math.MaxUint32, steps: base}

	var descs list
	for i, b := range bs {
		d := obj{}.note(fmt.Sprintf("%s: %s\n%s", b.Field, b.Spec, b.who), "entries", entriesYAML(b.entries)).
			with("token_bucket", obj{}.with("max_tokens", b.maxTokens).
				with("tokens_per_fill", b.fill.tokens).
				with("fill_interval", duration(b.fill.interval())))
		descs = append(descs, d)

		to := fmt.Sprintf("descriptors[%d] {%s}: max_tokens=%d tokens_per_fill=%d fill_interval=%s",
			i, entriesText(b.entries), b.maxTokens, b.fill.tokens, duration(b.fill.interval()))
		fid := export.Exact
		var why []string
		if b.bucketWhy != "" {
			fid = export.Approximate
			why = append(why, b.bucketWhy)
		}
		if b.perWhy != "" {
			fid = export.Approximate
			why = append(why, b.perWhy)
		}
		if b.inexact != "" {
			fid = export.Approximate
			why = append(why, b.inexact)
		}
		spec, _ := export.PerInstance(p, b.Spec)
		rate, _, _ := export.Bucket(spec)
		if !b.exact {
			fid = export.Approximate
			why = append(why, fmt.Sprintf("no fill interval of 50 ms steps up to a day refills %s tokens/s in whole tokens; %d per %s is %s/s (%s)",
				num(rate), b.fill.tokens, duration(b.fill.interval()), num(b.fill.rate()), errPct(b.fill.rate(), rate)))
		} else if b.fill.steps > 1 {
			why = append(why, fmt.Sprintf("fill_interval %s is the shortest multiple of 50 ms refilling whole tokens (%s/s × %s = %d)",
				duration(b.fill.interval()), num(rate), duration(b.fill.interval()), b.fill.tokens))
		}
		ex.Add(export.Mapping{Field: b.Field, From: b.Spec.String(), To: to, Fidelity: fid, Why: strings.Join(why, "; ")})
	}

	code, known := statusCode(p)
	xHeaders := len(p.Defaults.Response.Styles()) > 0
	lrl := obj{}.
		with("@type", typeLocalRL).
		with("stat_prefix", "http_local_rate_limiter").
		with("status", obj{}.with("code", code)).
		note("requests no descriptor matches (no client key) are not limited: the default bucket\nnever runs dry and only sets the refill base of the descriptors' intervals",
			"token_bucket", obj{}.with("max_tokens", baseFill.tokens).with("tokens_per_fill", baseFill.tokens).
				with("fill_interval", duration(baseFill.interval()))).
		with("always_consume_default_token_bucket", false).
		with("filter_enabled", percent("ratelab_local_rate_limit_enabled", 100))
	if shadow {
		lrl = lrl.note("shadow mode: count and log, never reject", "filter_enforced", percent("ratelab_local_rate_limit_enforced", 0)).
			with("request_headers_to_add_when_not_enforced", list{obj{}.
				with("append_action", "OVERWRITE_IF_EXISTS_OR_ADD").
				with("header", obj{}.with("key", shadowHeader).with("value", "true"))})
	} else {
		lrl = lrl.with("filter_enforced", percent("ratelab_local_rate_limit_enforced", 100))
	}
	if xHeaders {
		lrl = lrl.with("enable_x_ratelimit_headers", "DRAFT_VERSION_03")
	}
	lrl = lrl.with("enable_retry_after_header", p.Defaults.Response.SendsRetryAfter()).
		note("clients kept per wildcard descriptor (Envoy's default is 20); an evicted client's bucket starts full again",
			"max_dynamic_descriptors", dynamicDescriptors(p)).
		with("rate_limits", rateLimits(pls, len(costs) > 0)).
		with("descriptors", descs)

	hcm := obj{}.
		with("@type", typeHCM).
		with("stat_prefix", "ingress_http").
		note("remote_address is the TCP peer; behind another proxy set xff_num_trusted_hops instead",
			"use_remote_address", true).
		with("route_config", obj{}.with("name", "ratelab").with("virtual_hosts", list{obj{}.
			with("name", "api").with("domains", list{"*"}).with("routes", routes(p))})).
		with("http_filters", list{
			obj{}.with("name", "envoy.filters.http.local_ratelimit").with("typed_config", lrl),
			obj{}.with("name", "envoy.filters.http.router").with("typed_config", obj{}.with("@type", typeRouter)),
		})

	listen, err := socket(o.Listen, "0.0.0.0")
	if err != nil {
		return export.Export{}, &export.Error{Target: "envoy-local", Reason: "listen address: " + err.Error()}
	}
	up, err := cluster(o.Upstream)
	if err != nil {
		return export.Export{}, &export.Error{Target: "envoy-local", Reason: "upstream address: " + err.Error()}
	}
	body := obj{}.
		with("static_resources", obj{}.
			with("listeners", list{obj{}.with("name", "ratelab").with("address", listen).
				with("filter_chains", list{obj{}.with("filters", list{obj{}.
					with("name", "envoy.filters.network.http_connection_manager").
					with("typed_config", hcm)})})}).
			with("clusters", list{up})).
		with("admin", obj{}.with("address", obj{}.with("socket_address", obj{}.
			with("address", "127.0.0.1").with("port_value", uint32(9901)))))
	ex.Body = document(append(header(p, "Envoy bootstrap with the local_ratelimit filter"),
		"Run: envoy -c envoy-local.yaml (check first: envoy --mode validate -c envoy-local.yaml)."), body)

	// Policy-level mappings.
	if shadow {
		ex.Add(export.Mapping{Field: "defaults.mode", From: string(p.Defaults.EffectiveMode()), Fidelity: export.Exact,
			To:  "filter_enforced 0%, request_headers_to_add_when_not_enforced " + shadowHeader + ": true",
			Why: "every limit is checked and counted (stat http_local_rate_limit.rate_limited) but no request is rejected; the would-be rejections reach the upstream marked " + shadowHeader})
	} else {
		ex.Add(export.Mapping{Field: "defaults.mode", From: string(p.Defaults.EffectiveMode()), To: "filter_enabled 100%, filter_enforced 100%", Fidelity: export.Exact})
	}
	for i, e := range p.Endpoints {
		if e.Cost <= 1 {
			continue
		}
		ex.Add(export.Mapping{Field: fmt.Sprintf("endpoints[%d].cost", i), From: fmt.Sprintf("cost=%d", e.Cost),
			To: fmt.Sprintf("route %q (:method %s, safe_regex %s) + rate_limits[].hits_addend {format: %%ROUTE_NAME%%}",
				strconv.FormatInt(e.Cost, 10), methodRegex(e.Match.Method), routeRegex(e.Match.Path)),
			Fidelity: export.Exact,
			Why: fmt.Sprintf("a request whose first matching endpoint is %s %s (method ignoring ASCII case, {name} one path segment) takes %d tokens from every bucket it meets: "+
				"the routes are in policy order, earlier overlapping endpoints first, and the filter's own rate_limits carry hits_addend, read from the matched route's name (hits_addend is honoured there, not in route-level rate_limits)",
				e.Match.Method, e.Match.Path, e.Cost)})
	}
	resp := export.Mapping{Field: "defaults.response", From: responseFrom(p),
		To:       fmt.Sprintf("status {code: %s}, enable_retry_after_header %t", code, p.Defaults.Response.SendsRetryAfter()),
		Fidelity: export.Exact}
	var rwhy []string
	if !known {
		resp.Fidelity = export.Approximate
		rwhy = append(rwhy, fmt.Sprintf("Envoy's StatusCode enum has no %d; 429 is sent", p.Defaults.Response.Code()))
	}
	if xHeaders {
		resp.To += ", enable_x_ratelimit_headers DRAFT_VERSION_03"
		if hasStyle(p, policy.HeadersIETF) || hasStyle(p, policy.HeadersLegacy) {
			resp.Fidelity = export.Approximate
			rwhy = append(rwhy, "Envoy sends only X-RateLimit-Limit/-Remaining/-Reset (draft 03), not RateLimit/RateLimit-Policy or RateLimit-Limit/-Remaining/-Reset")
		}
	}
	resp.Why = strings.Join(rwhy, "; ")
	ex.Add(resp)
	enf := export.Mapping{Field: "service.enforcement", From: enforcement(p), Fidelity: export.Exact,
		To: "per Envoy process (one bucket set per process, shared by its workers)"}
	if p.Service.Replicas > 1 && p.Service.Enforcement != "local" {
		enf.Fidelity = export.Approximate
		enf.To += fmt.Sprintf(", each limit divided by %d", p.Service.Replicas)
		enf.Why = fmt.Sprintf("the policy wants one limit shared by %d replicas; each Envoy enforces 1/%d of it, exact only when the balancer spreads every client evenly (local_cluster_rate_limit can divide by the live endpoint count instead)", p.Service.Replicas, p.Service.Replicas)
	} else if p.Service.Replicas > 1 {
		enf.Why = "the policy's limits are per replica, as each Envoy counts them"
	}
	ex.Add(enf)
	if p.Service.OnStoreFailure != "" {
		ex.Add(export.Mapping{Field: "service.on_store_failure", From: string(p.Service.StoreFailureMode()), To: "no store",
			Fidelity: export.Exact, Why: "the buckets live in each Envoy process: there is no store to fail"})
	}

	ex.Notes = []string{
		"A complete Envoy bootstrap: run envoy -c envoy-local.yaml; validate with envoy --mode validate -c envoy-local.yaml. To reuse only the rate limiting, copy the envoy.filters.http.local_ratelimit entry of http_filters into your HTTP connection manager, before the router.",
		fmt.Sprintf("It listens on %s and forwards to %s (cluster upstream); the admin interface (stats: /stats?filter=local_rate_limit) is on 127.0.0.1:9901.", o.Listen, o.Upstream),
		fmt.Sprintf("Clients are told apart by %s (api_key), %s (account) and the TCP peer address (ip); the tier comes from %s, which the authentication layer in front must set and strip from clients. A request without the key header matches no client limit.",
			o.APIKeyHeader, o.AccountHeader, o.TierHeader),
		"Needs Envoy ≥ 1.31 for the continuous token bucket (older releases refill tokens_per_fill at each interval's end) and a release whose local_ratelimit accepts rate_limits with hits_addend in the filter itself (the go-control-plane v1.40.0 API).",
		"Buckets are per Envoy process: with several replicas each counts alone.",
	}
	return ex, nil
}
