package envoy

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export"
	envoyexport "github.com/ratelab/ratelab/export/envoy"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// gatewayRouting is an envoy-gateway export read back (decoded strictly
// and validated against the CRD), ready to say which of the policy's
// limits a request meets and at what cost.
type gatewayRouting struct {
	ex    export.Export
	rules []egv1a1.RateLimitRule
	// limit is the name of the limit each rule maps: the rules follow
	// the limits, two (IPv4, IPv6) for an ip-keyed client limit.
	limit []string
	o     export.Options
}

func newGatewayRouting(t *testing.T, p policy.Policy) gatewayRouting {
	t.Helper()
	ex, err := envoyexport.Gateway.Render(p, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	btp, err := checkBTP(t, ex.Body)
	if err != nil {
		t.Fatalf("%v\n%s", err, ex.Body)
	}
	r := gatewayRouting{ex: ex, o: export.Options{}.WithDefaults()}
	if rl := btp.Spec.RateLimit; rl != nil && rl.Global != nil {
		r.rules = rl.Global.Rules
	}
	for _, l := range p.Limits() {
		r.limit = append(r.limit, l.Name)
		if l.Key == policy.KeyIP && l.Scope != policy.ScopeGlobal {
			r.limit = append(r.limit, l.Name)
		}
	}
	if len(r.limit) != len(r.rules) {
		t.Fatalf("%d rules for %d limits\n%s", len(r.rules), len(r.limit), ex.Body)
	}
	return r
}

// gatewayRequest is a request as Envoy sees it: lower-case header names,
// the pseudo-headers :method and :path (the query included), and the
// client address.
type gatewayRequest struct {
	remote  net.IP
	headers map[string]string
}

// request is the request with that method, path, tier header (none when
// "") and API key (none when ""), from address remote.
func (r gatewayRouting) request(method, path, tier, key, remote string) gatewayRequest {
	h := map[string]string{":method": method, ":path": path}
	if key != "" {
		h[strings.ToLower(r.o.APIKeyHeader)] = key
	}
	if tier != "" {
		h[strings.ToLower(r.o.TierHeader)] = tier
	}
	return gatewayRequest{remote: net.ParseIP(remote), headers: h}
}

// egHeader is whether q meets one HeaderMatch as Envoy Gateway translates
// it: Distinct is a request_headers action (no descriptor, so no count,
// when the header is absent); Exact and RegularExpression are a
// header_value_match action whose expect_match is !invert, so an absent
// header fails the match and meets an inverted one.
func egHeader(t *testing.T, h egv1a1.HeaderMatch, q gatewayRequest) bool {
	t.Helper()
	v, ok := q.headers[strings.ToLower(h.Name)]
	typ := egv1a1.HeaderMatchExact
	if h.Type != nil {
		typ = *h.Type
	}
	invert := h.Invert != nil && *h.Invert
	var m bool
	switch typ {
	case egv1a1.HeaderMatchDistinct:
		if h.Value != nil || invert {
			t.Fatalf("header %s: Distinct with a value or invert", h.Name)
		}
		return ok
	case egv1a1.HeaderMatchExact:
		m = ok && h.Value != nil && v == *h.Value
	case egv1a1.HeaderMatchRegularExpression:
		m = ok && h.Value != nil && fullMatch(t, *h.Value, v)
	default:
		t.Fatalf("header match type %s is not modelled", typ)
	}
	return m != invert
}

// egPath is whether q's :path meets a PathMatch as Envoy Gateway
// translates it: a header_value_match on :path, which carries the query
// string — Exact compares it whole, PathPrefix "/" is a prefix and any
// other PathPrefix a path-separated prefix regex, RegularExpression a
// full match.
func egPath(t *testing.T, pm *egv1a1.PathMatch, q gatewayRequest) bool {
	t.Helper()
	path := q.headers[":path"]
	typ := gwapiv1.PathMatchPathPrefix
	if pm.Type != nil {
		typ = *pm.Type
	}
	var m bool
	switch typ {
	case gwapiv1.PathMatchExact:
		m = path == pm.Value
	case gwapiv1.PathMatchPathPrefix:
		if pm.Value == "/" {
			m = strings.HasPrefix(path, "/")
		} else {
			m = fullMatch(t, "^"+regexp.QuoteMeta(strings.TrimSuffix(pm.Value, "/"))+`(/.*|\?.*|#.*|;.*|$)`, path)
		}
	case gwapiv1.PathMatchRegularExpression:
		m = fullMatch(t, pm.Value, path)
	default:
		t.Fatalf("path match type %s is not modelled", typ)
	}
	return m != (pm.Invert != nil && *pm.Invert)
}

// selects is whether rule r counts q, as Envoy Gateway builds the rule's
// rate_limits: the headers of every client selector must all match,
// one of the methods (any method when none is listed), the path (the
// last selector's that sets one) and the source CIDR.
func selects(t *testing.T, r egv1a1.RateLimitRule, q gatewayRequest) bool {
	t.Helper()
	var methods []egv1a1.MethodMatch
	var path *egv1a1.PathMatch
	var cidr *egv1a1.SourceMatch
	for _, c := range r.ClientSelectors {
		if len(c.QueryParams) > 0 {
			t.Fatal("query parameter selectors are not modelled")
		}
		for _, h := range c.Headers {
			if !egHeader(t, h, q) {
				return false
			}
		}
		methods = append(methods, c.Methods...)
		if c.Path != nil {
			path = c.Path
		}
		if c.SourceCIDR != nil {
			cidr = c.SourceCIDR
		}
	}
	if len(methods) > 0 && !slices.ContainsFunc(methods, func(m egv1a1.MethodMatch) bool {
		return (q.headers[":method"] == string(m.Value)) != (m.Invert != nil && *m.Invert)
	}) {
		return false
	}
	if path != nil && !egPath(t, path, q) {
		return false
	}
	if cidr != nil {
		_, n, err := net.ParseCIDR(cidr.Value)
		if err != nil {
			t.Fatalf("sourceCIDR %q: %v", cidr.Value, err)
		}
		if n.Contains(q.remote) == (cidr.Invert != nil && *cidr.Invert) {
			return false
		}
	}
	return true
}

// cost is what rule r takes from its counter for each request it counts.
func (r gatewayRouting) cost(t *testing.T, i int) int64 {
	t.Helper()
	c := r.rules[i].Cost
	if c == nil || c.Request == nil {
		return 1
	}
	if c.Request.From != egv1a1.RateLimitCostFromNumber || c.Request.Number == nil {
		t.Fatalf("rule %d: cost %v is not modelled", i, c.Request)
	}
	return int64(*c.Request.Number)
}

// decide is the names of the limits whose rules count q, in rule order,
// and what each rule takes.
func (r gatewayRouting) decide(t *testing.T, q gatewayRequest) (names []string, costs []int64) {
	t.Helper()
	for i, rule := range r.rules {
		if selects(t, rule, q) {
			names, costs = append(names, r.limit[i]), append(costs, r.cost(t, i))
		}
	}
	return names, costs
}

// fidelity is the fidelity of the export's mapping of field, "" when there
// is none.
func (r gatewayRouting) fidelity(field string) export.Fidelity {
	for _, m := range r.ex.Mappings {
		if m.Field == field {
			return m.Fidelity
		}
	}
	return ""
}

// checkGatewayRouting checks, for every method, path, tier header and key
// of the tables, that the rules counting the request are exactly the
// limits the engine applies, each at the engine's cost — or at 1 where
// the export's mapping of the matched endpoint's cost says it is not
// exact. It returns how many requests of each answer it saw.
func checkGatewayRouting(t *testing.T, p policy.Policy, methods, paths, tiers, keys []string) map[string]int {
	t.Helper()
	eng, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	r := newGatewayRouting(t, p)
	seen := map[string]int{}
	for _, method := range methods {
		for _, path := range paths {
			for _, tier := range tiers {
				for _, key := range keys {
					bare, _, _ := strings.Cut(path, "?")
					a := eng.Match(engine.Request{Key: key, Tier: tier, Method: method, Path: bare})
					var want []string
					for _, l := range a.Limits[:a.N] {
						want = append(want, eng.Limits()[l].Name)
					}
					got, costs := r.decide(t, r.request(method, path, tier, key, "10.0.0.1"))
					what := fmt.Sprintf("%s %s tier %q key %q", method, path, tier, key)
					if !slices.Equal(got, want) {
						t.Errorf("%s: the gateway counts %v, the engine %v", what, got, want)
					}
					for i, c := range costs {
						if c == a.Cost {
							continue
						}
						field := fmt.Sprintf("endpoints[%d].cost", a.Endpoint)
						if a.Endpoint < 0 || r.fidelity(field) == export.Exact || r.fidelity(field) == "" {
							t.Errorf("%s: %s's rule takes %d, the engine %d, and %s is mapped %q", what, got[i], c, a.Cost, field, r.fidelity(field))
						}
					}
					seen[fmt.Sprintf("%s cost %d", strings.Join(want, " "), a.Cost)]++
				}
			}
		}
	}
	return seen
}

// TestGatewayTierIgnoresASCIICase: the tier header names a tier ignoring
// ASCII case (only), as the engine matches it; an unknown name gets the
// default limit.
func TestGatewayTierIgnoresASCIICase(t *testing.T) {
	seen := checkGatewayRouting(t, decode(t, tierPolicy), []string{"GET"}, []string{"/"}, tierSpellings, []string{"k"})
	wantSeen(t, seen, "default cost 1", "tier_paid cost 1", "tier_free cost 1", "tier_partner_v2 cost 1")
}

// TestGatewayMethodIgnoresASCIICase: an endpoint's method matches the
// request's ignoring ASCII case, whatever case the policy writes it in.
func TestGatewayMethodIgnoresASCIICase(t *testing.T) {
	p := decode(t, `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: methods}
service: {capacity: 1000}
defaults: {key: api_key, limit: {algorithm: token_bucket, rate: 5, burst: 50}}
endpoints:
  - {match: {method: GET, path: /v1/items}, limit: {algorithm: token_bucket, rate: 2, burst: 4}, cost: 3}
  - {match: {method: post, path: /v1/items}, limit: {algorithm: token_bucket, rate: 1, burst: 2}}
`)
	seen := checkGatewayRouting(t, p, []string{"GET", "get", "Get", "gEt", "POST", "post", "Post", "PUT", "GETS", "DELETE"},
		[]string{"/v1/items", "/v1/items?x=1", "/v1/other"}, []string{""}, []string{"k"})
	wantSeen(t, seen, "default endpoint_0 cost 3", "default endpoint_1 cost 1", "default cost 1")
}

// TestGatewayPathTemplates renders one endpoint per template, with a limit
// and a cost, and checks for every template and path (with and without a
// query string) that its rule counts the request exactly when the
// engine's matcher matches it: {name} is one non-empty segment, every
// other character literal.
func TestGatewayPathTemplates(t *testing.T) {
	paths := queryPaths()
	for _, tmpl := range exporttest.PathTemplates {
		t.Run(tmpl, func(t *testing.T) {
			p := templatePolicy(t, "api_key", tmpl)
			seen := checkGatewayRouting(t, p, []string{"GET"}, paths, []string{""}, []string{"k"})
			wantSeen(t, seen, "default endpoint_0 cost 2", "default cost 1")
		})
	}
}

// TestGatewayFirstMatch: a request meets the limit of the first endpoint,
// in policy order, it matches, and no later one's.
func TestGatewayFirstMatch(t *testing.T) {
	p := decode(t, `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: first}
service: {capacity: 1000}
defaults: {key: api_key, limit: {algorithm: token_bucket, rate: 5, burst: 50}}
endpoints:
  - {match: {method: GET, path: /v1/items/special}}
  - {match: {method: GET, path: "/v1/items/{id}"}, limit: {algorithm: token_bucket, rate: 2, burst: 4}}
  - {match: {method: POST, path: /v1/items/special}}
  - {match: {method: GET, path: "/v1/{kind}/special"}, limit: {algorithm: token_bucket, rate: 1, burst: 2}}
  - {match: {method: GET, path: "/v1/{kind}/{id}"}, limit: {algorithm: token_bucket, rate: 3, burst: 6}}
`)
	seen := checkGatewayRouting(t, p, []string{"GET", "POST"},
		[]string{"/v1/items/special", "/v1/items/7", "/v1/orders/special", "/v1/orders/7", "/v1/orders/7?special", "/v1/items/"},
		[]string{""}, []string{"k"})
	wantSeen(t, seen, "default cost 1", "default endpoint_1 cost 1", "default endpoint_3 cost 1", "default endpoint_4 cost 1")
}

// TestGatewayRoutingIsTheEngine: every combination of method, path, tier
// header and key (present or absent) meets exactly the limits the engine
// applies; a request's cost weighs only the endpoint's own rule, which
// the endpoint's cost mapping says.
func TestGatewayRoutingIsTheEngine(t *testing.T) {
	seen := checkGatewayRouting(t, decode(t, localRoutingPolicy),
		[]string{"GET", "get", "POST", "Post", "PUT"},
		[]string{"/", "/v1/items/special", "/v1/items/7", "/v1/items/7?x=1", "/v1/items/", "/v1/items/7/parts/9", "/v1/items/7/parts/",
			"/v1/other", "/v1/orders/special", "/v1/orders/7", "/v1/other/x", "/v2/items/7"},
		tierSpellings, []string{"k", ""})
	wantSeen(t, seen, "default global cost 1", "tier_paid global cost 1", "tier_free global cost 3",
		"tier_partner_v2 endpoint_3 global cost 1", "default endpoint_5 global cost 1", "tier_paid endpoint_6 global cost 2",
		"tier_paid endpoint_2 global cost 1", "global cost 1", "global cost 2")
}

// TestGatewayIPKey: an ip-keyed limit's two rules count a request from an
// IPv4 and from an IPv6 address once, under the same selectors.
func TestGatewayIPKey(t *testing.T) {
	p := decode(t, localRoutingPolicy)
	p.Defaults.Key = policy.KeyIP
	eng, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	r := newGatewayRouting(t, p)
	for _, remote := range []string{"10.0.0.1", "2001:db8::1"} {
		for _, tier := range []string{"", "PAID", "free"} {
			for _, path := range []string{"/v1/items/7", "/v1/orders/special", "/v1/items/special"} {
				a := eng.Match(engine.Request{Key: remote, Tier: tier, Method: "get", Path: path})
				var want []string
				for _, l := range a.Limits[:a.N] {
					want = append(want, eng.Limits()[l].Name)
				}
				if got, _ := r.decide(t, r.request("get", path, tier, "", remote)); !slices.Equal(got, want) {
					t.Errorf("get %s tier %q from %s: the gateway counts %v, the engine %v", path, tier, remote, got, want)
				}
			}
		}
	}
}

// TestGatewayCaseTwinTiersSaySo: a policy whose tier names differ only in
// case (validation refuses it, a render does not) matches the tier header
// case-sensitively, and the default and tier mappings say so.
func TestGatewayCaseTwinTiersSaySo(t *testing.T) {
	p := decode(t, tierPolicy)
	p.Tiers = append(p.Tiers, policy.Tier{Name: "PAID"})
	ex, err := envoyexport.Gateway.Render(p, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkBTP(t, ex.Body); err != nil {
		t.Fatalf("%v\n%s", err, ex.Body)
	}
	n := 0
	for _, m := range ex.Mappings {
		if m.Field != "defaults.limit" && !strings.HasPrefix(m.Field, "tiers[") {
			continue
		}
		n++
		if m.Fidelity != export.Approximate || !strings.Contains(m.Why, "tiers[0] (paid) and tiers[3] (PAID) differ only in ASCII case") {
			t.Errorf("%s: %s, %q", m.Field, m.Fidelity, m.Why)
		}
	}
	if n != 5 {
		t.Errorf("%d default and tier mappings, want 5", n)
	}
}
