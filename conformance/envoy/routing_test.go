package envoy

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export"
	envoyexport "github.com/ratelab/ratelab/export/envoy"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// fullMatch is Envoy's safe_regex semantics: RE2 (Go's regexp accepts the
// same syntax for what the exports write), matching the whole value.
func fullMatch(t *testing.T, re, s string) bool {
	t.Helper()
	r, err := regexp.Compile(`^(?:` + re + `)$`)
	if err != nil {
		t.Fatalf("regex %q: %v", re, err)
	}
	return r.MatchString(s)
}

// envoyRequest is a request as Envoy's filters see it: lower-case header
// names, with the pseudo-headers :method and :path (the query included).
type envoyRequest struct {
	remote  string
	headers map[string]string
}

// stringMatch is Envoy's StringMatcher on a present value.
func stringMatch(t *testing.T, sm *matcherv3.StringMatcher, v string) bool {
	t.Helper()
	switch m := sm.GetMatchPattern().(type) {
	case *matcherv3.StringMatcher_Exact:
		if sm.GetIgnoreCase() {
			return policy.LowerASCII(v) == policy.LowerASCII(m.Exact)
		}
		return v == m.Exact
	case *matcherv3.StringMatcher_SafeRegex:
		return fullMatch(t, m.SafeRegex.GetRegex(), v)
	}
	t.Fatalf("string matcher %v is not modelled", sm)
	return false
}

// headersMatch is Envoy's HeaderUtility::matchHeaders for every matcher:
// an absent header matches no string matcher, inverted or not.
func headersMatch(t *testing.T, hs []*routev3.HeaderMatcher, q envoyRequest) bool {
	t.Helper()
	for _, h := range hs {
		if h.GetStringMatch() == nil || h.GetTreatMissingHeaderAsEmpty() {
			t.Fatalf("header matcher %v is not modelled", h)
		}
		v, ok := q.headers[strings.ToLower(h.GetName())]
		if !ok {
			return false
		}
		if stringMatch(t, h.GetStringMatch(), v) == h.GetInvertMatch() {
			return false
		}
	}
	return true
}

// requestDescriptors are the descriptors Envoy builds for q from rate_limits,
// by the semantics of each action the exports use: an action that produces
// no entry (a request_headers header absent, a header_value_match whose
// result is not expect_match) drops its whole descriptor. Each comes with
// its hits_addend (1 unless the format %ROUTE_NAME% reads the route name).
func requestDescriptors(t *testing.T, rls []*routev3.RateLimit, q envoyRequest, route string) (ds [][]entry, hits []int64) {
	t.Helper()
next:
	for _, rl := range rls {
		var d []entry
		for _, a := range rl.GetActions() {
			switch {
			case a.GetRequestHeaders() != nil:
				rh := a.GetRequestHeaders()
				v, ok := q.headers[strings.ToLower(rh.GetHeaderName())]
				if !ok {
					continue next
				}
				d = append(d, entry{rh.GetDescriptorKey(), v})
			case a.GetRemoteAddress() != nil:
				d = append(d, entry{"remote_address", q.remote})
			case a.GetGenericKey() != nil:
				d = append(d, entry{a.GetGenericKey().GetDescriptorKey(), a.GetGenericKey().GetDescriptorValue()})
			case a.GetHeaderValueMatch() != nil:
				hv := a.GetHeaderValueMatch()
				expect := hv.GetExpectMatch() == nil || hv.GetExpectMatch().GetValue()
				if headersMatch(t, hv.GetHeaders(), q) != expect {
					continue next
				}
				d = append(d, entry{hv.GetDescriptorKey(), hv.GetDescriptorValue()})
			default:
				t.Fatalf("rate_limits action %v is not modelled", a)
			}
		}
		n := int64(1)
		switch ha := rl.GetHitsAddend(); {
		case ha == nil:
		case ha.GetFormat() == "%ROUTE_NAME%":
			var err error
			if n, err = strconv.ParseInt(route, 10, 64); err != nil {
				t.Fatalf("route name %q is no number", route)
			}
		default:
			t.Fatalf("hits_addend %v is not modelled", ha)
		}
		ds, hits = append(ds, d), append(hits, n)
	}
	return ds, hits
}

// matchesEntries is whether a request descriptor meets a configured one:
// the same keys in order, each configured value equal or empty (any value).
func matchesEntries(req, conf []entry) bool {
	if len(req) != len(conf) {
		return false
	}
	for i := range req {
		if req[i].key != conf[i].key || conf[i].value != "" && conf[i].value != req[i].value {
			return false
		}
	}
	return true
}

// firstRoute is the name of the first route of vh that q matches (Envoy's
// route table is first match): a route's path match is on the path
// without the query string, its headers on the request's.
func firstRoute(t *testing.T, vh *routev3.VirtualHost, q envoyRequest) string {
	t.Helper()
	path, _, _ := strings.Cut(q.headers[":path"], "?")
	for _, r := range vh.GetRoutes() {
		m := r.GetMatch()
		if cs := m.GetCaseSensitive(); cs != nil && !cs.GetValue() {
			t.Fatalf("route %s: case_sensitive false is not modelled", r.GetName())
		}
		var ok bool
		switch pm := m.GetPathSpecifier().(type) {
		case *routev3.RouteMatch_Prefix:
			ok = strings.HasPrefix(path, pm.Prefix)
		case *routev3.RouteMatch_Path:
			ok = path == pm.Path
		case *routev3.RouteMatch_SafeRegex:
			ok = fullMatch(t, pm.SafeRegex.GetRegex(), path)
		default:
			t.Fatalf("route %s: path match %v is not modelled", r.GetName(), m)
		}
		if ok && headersMatch(t, m.GetHeaders(), q) {
			return r.GetName()
		}
	}
	t.Fatalf("%v: no route", q.headers)
	return ""
}

// localRouting is an envoy-local export read back, ready to say which of
// the policy's limits a request meets and at what cost.
type localRouting struct {
	cfg    localConfig
	limits []policy.Limit
	o      export.Options
}

func newLocalRouting(t *testing.T, p policy.Policy) localRouting {
	t.Helper()
	ex, err := envoyexport.Local.Render(p, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := localRouting{cfg: parseLocal(t, ex.Body), limits: p.Limits(), o: export.Options{}.WithDefaults()}
	if len(r.cfg.lrl.GetDescriptors()) != len(r.limits) {
		t.Fatalf("%d descriptors for %d limits", len(r.cfg.lrl.GetDescriptors()), len(r.limits))
	}
	return r
}

// request is the request with that method, path and tier header (none
// when ""), from API key "k" and address 10.0.0.1.
func (r localRouting) request(method, path, tier string) envoyRequest {
	h := map[string]string{":method": method, ":path": path, strings.ToLower(r.o.APIKeyHeader): "k"}
	if tier != "" {
		h[strings.ToLower(r.o.TierHeader)] = tier
	}
	return envoyRequest{remote: "10.0.0.1", headers: h}
}

// decide is the names of the limits whose descriptors q's descriptors meet,
// in rate_limits order, and the tokens each takes (which must agree).
func (r localRouting) decide(t *testing.T, q envoyRequest) (names []string, cost int64) {
	t.Helper()
	vh := r.cfg.hcm.GetRouteConfig().GetVirtualHosts()[0]
	ds, hits := requestDescriptors(t, r.cfg.lrl.GetRateLimits(), q, firstRoute(t, vh, q))
	cost = 1
	var costs []int64
	for i, d := range ds {
		for j, c := range r.cfg.lrl.GetDescriptors() {
			var conf []entry
			for _, e := range c.GetEntries() {
				conf = append(conf, entry{e.GetKey(), e.GetValue()})
			}
			if matchesEntries(d, conf) {
				names, costs = append(names, r.limits[j].Name), append(costs, hits[i])
				break
			}
		}
	}
	if len(costs) > 0 {
		cost = costs[0]
		if slices.Min(costs) != slices.Max(costs) {
			t.Errorf("%v: its descriptors take %v tokens", q.headers, costs)
		}
	}
	return names, cost
}

// engineDecides is the names of the limits the engine applies to the
// request (key "k") and its cost.
func engineDecides(eng *engine.Engine, method, path, tier string) (names []string, cost int64) {
	path, _, _ = strings.Cut(path, "?")
	a := eng.Match(engine.Request{Key: "k", Tier: tier, Method: method, Path: path})
	for _, l := range a.Limits[:a.N] {
		names = append(names, eng.Limits()[l].Name)
	}
	return names, a.Cost
}

// checkLocalRouting checks, for every method, path and tier header of the
// tables, that the descriptors the envoy-local filter would count the
// request under are exactly the limits the engine applies, at the
// engine's cost. It returns how many requests of each answer it saw, so
// a test can check its table reaches what it means to test.
func checkLocalRouting(t *testing.T, p policy.Policy, methods, paths, tiers []string) map[string]int {
	t.Helper()
	eng, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	r := newLocalRouting(t, p)
	seen := map[string]int{}
	for _, method := range methods {
		for _, path := range paths {
			for _, tier := range tiers {
				want, wantCost := engineDecides(eng, method, path, tier)
				got, gotCost := r.decide(t, r.request(method, path, tier))
				if !slices.Equal(got, want) || (len(want) > 0 && gotCost != wantCost) {
					t.Errorf("%s %s tier %q: Envoy counts %v at cost %d, the engine %v at cost %d", method, path, tier, got, gotCost, want, wantCost)
				}
				seen[fmt.Sprintf("%s cost %d", strings.Join(want, " "), wantCost)]++
			}
		}
	}
	return seen
}

// wantSeen fails unless every answer of want was seen.
func wantSeen(t *testing.T, seen map[string]int, want ...string) {
	t.Helper()
	for _, w := range want {
		if seen[w] == 0 {
			t.Errorf("no request of the table gets %q; it reaches %v", w, seen)
		}
	}
}

// decode decodes a policy document and validates it.
func decode(t *testing.T, doc string) policy.Policy {
	t.Helper()
	p, err := policy.Decode(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return p
}

// tierPolicy has tiers spelt with capitals and punctuation, one without a
// limit of its own.
const tierPolicy = `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: tiers}
service: {capacity: 1000}
defaults: {key: api_key, limit: {algorithm: token_bucket, rate: 5, burst: 50}}
tiers:
  - {name: paid, limit: {algorithm: gcra, rate: 50, burst: 500}}
  - {name: Free}
  - {name: PartNer.v2, limit: {algorithm: token_bucket, rate: 20, burst: 100}}
`

var tierSpellings = []string{"", "paid", "PAID", "pAid", "paid ", "xpaid", "free", "FREE", "Free", "partner.v2", "PARTNER.V2",
	"PartNer.v2", "partnerXv2", "gold", "\u212aree"}

// TestLocalTierIgnoresASCIICase: the tier header names a tier ignoring
// ASCII case (only), as the engine matches it; an unknown name gets the
// default limit.
func TestLocalTierIgnoresASCIICase(t *testing.T) {
	seen := checkLocalRouting(t, decode(t, tierPolicy), []string{"GET"}, []string{"/"}, tierSpellings)
	wantSeen(t, seen, "default cost 1", "tier_paid cost 1", "tier_free cost 1", "tier_partner_v2 cost 1")
}

// TestLocalMethodIgnoresASCIICase: an endpoint's method matches the
// request's ignoring ASCII case, for its limit and for its cost.
func TestLocalMethodIgnoresASCIICase(t *testing.T) {
	p := decode(t, `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: methods}
service: {capacity: 1000}
defaults: {key: api_key, limit: {algorithm: token_bucket, rate: 5, burst: 50}}
endpoints:
  - {match: {method: GET, path: /v1/items}, limit: {algorithm: token_bucket, rate: 2, burst: 4}, cost: 3}
  - {match: {method: post, path: /v1/items}, limit: {algorithm: token_bucket, rate: 1, burst: 2}}
`)
	seen := checkLocalRouting(t, p, []string{"GET", "get", "Get", "gEt", "POST", "post", "Post", "PUT", "GETS", "DELETE"},
		[]string{"/v1/items", "/v1/items?x=1", "/v1/other"}, []string{""})
	wantSeen(t, seen, "default endpoint_0 cost 3", "default endpoint_1 cost 1", "default cost 1")
}

// TestLocalPathTemplates renders one endpoint per template, with a limit
// and a cost, and checks for every template and path (with and without a
// query string) that its descriptor and its cost route meet the request
// exactly when the engine's matcher matches it: {name} is one non-empty
// segment, every other character literal.
func TestLocalPathTemplates(t *testing.T) {
	paths := queryPaths()
	for _, tmpl := range exporttest.PathTemplates {
		t.Run(tmpl, func(t *testing.T) {
			p := templatePolicy(t, "ip", tmpl)
			seen := checkLocalRouting(t, p, []string{"GET"}, paths, []string{""})
			wantSeen(t, seen, "default endpoint_0 cost 2", "default cost 1")
		})
	}
}

// TestLocalCostRoutes: a costly endpoint's route names its cost, for a
// templated path too, and a request takes the cost of the first endpoint
// it matches: an earlier endpoint of cost 1 that overlaps a costly one
// keeps its requests at 1.
func TestLocalCostRoutes(t *testing.T) {
	p := decode(t, `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: costs}
service: {capacity: 1000}
defaults: {key: api_key, limit: {algorithm: token_bucket, rate: 5, burst: 50}}
endpoints:
  - {match: {method: GET, path: /v1/items/cheap}}
  - {match: {method: GET, path: "/v1/items/{id}"}, cost: 3}
  - {match: {method: GET, path: "/v1/{kind}/{id}"}, cost: 2}
  - {match: {method: POST, path: "/v1/{kind}/{id}"}, cost: 5}
`)
	seen := checkLocalRouting(t, p, []string{"GET", "POST"},
		[]string{"/v1/items/cheap", "/v1/items/7", "/v1/items/7?x", "/v1/items/", "/v1/orders/7", "/v1/orders/cheap", "/v1/orders/7/x", "/"},
		[]string{""})
	wantSeen(t, seen, "default cost 1", "default cost 3", "default cost 2", "default cost 5")
}

// TestLocalFirstMatch: a request meets the limit of the first endpoint,
// in policy order, it matches, and no later one's.
func TestLocalFirstMatch(t *testing.T) {
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
	seen := checkLocalRouting(t, p, []string{"GET", "POST"},
		[]string{"/v1/items/special", "/v1/items/7", "/v1/orders/special", "/v1/orders/7", "/v1/orders/7?special", "/v1/items/"},
		[]string{""})
	wantSeen(t, seen, "default cost 1", "default endpoint_1 cost 1", "default endpoint_3 cost 1", "default endpoint_4 cost 1")
}

// localRoutingPolicy has everything at once: tiers in mixed case (one
// with the default's limit), overlapping endpoints in lower case, costs
// on templated paths, and a global limit.
const localRoutingPolicy = `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: routing}
service: {capacity: 1000}
defaults: {key: api_key, limit: {algorithm: token_bucket, rate: 5, burst: 50}}
tiers:
  - {name: paid, limit: {algorithm: gcra, rate: 50, burst: 500}}
  - {name: Free}
  - {name: PartNer.v2, limit: {algorithm: token_bucket, rate: 20, burst: 100}}
endpoints:
  - {match: {method: get, path: /v1/items/special}}
  - {match: {method: GET, path: "/v1/items/{id}"}, cost: 3}
  - {match: {method: POST, path: "/v1/items/{id}"}, limit: {algorithm: token_bucket, rate: 2, burst: 4}}
  - {match: {method: GET, path: "/v1/items/{id}/parts/{part}"}, limit: {algorithm: gcra, rate: 1, burst: 5}}
  - {match: {method: GET, path: /v1/other}}
  - {match: {method: GET, path: "/v1/{kind}/special"}, limit: {algorithm: token_bucket, rate: 1, burst: 2}}
  - {match: {method: Get, path: "/v1/{kind}/{id}"}, limit: {algorithm: token_bucket, rate: 3, burst: 6}, cost: 2}
global: {limit: {algorithm: token_bucket, rate: 800, burst: 1600}}
`

// TestLocalRoutingIsTheEngine: every combination of method, path and tier
// header meets exactly the limits the engine applies, at its cost.
func TestLocalRoutingIsTheEngine(t *testing.T) {
	seen := checkLocalRouting(t, decode(t, localRoutingPolicy),
		[]string{"GET", "get", "POST", "Post", "PUT"},
		[]string{"/", "/v1/items/special", "/v1/items/7", "/v1/items/7?x=1", "/v1/items/", "/v1/items/7/parts/9", "/v1/items/7/parts/",
			"/v1/other", "/v1/orders/special", "/v1/orders/7", "/v1/other/x", "/v2/items/7"},
		tierSpellings)
	wantSeen(t, seen, "default global cost 1", "tier_paid global cost 1", "tier_free global cost 3",
		"tier_partner_v2 endpoint_3 global cost 1", "default endpoint_5 global cost 1", "tier_paid endpoint_6 global cost 2",
		"tier_paid endpoint_2 global cost 1")
}

// queryPaths are exporttest.Paths with and without query strings, and a
// few paths whose query holds what a template segment must not take.
func queryPaths() []string {
	var paths []string
	for _, path := range exporttest.Paths {
		paths = append(paths, path, path+"?page=2", path+"?a/b")
	}
	return append(paths, "/v1/items/?x=1", "/v1/items/?", "/v1//x.json?q")
}

// templatePolicy is a policy keyed by key with one GET endpoint of path
// template tmpl, its own limit and cost 2.
func templatePolicy(t *testing.T, key, tmpl string) policy.Policy {
	t.Helper()
	return decode(t, fmt.Sprintf(`apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: paths}
service: {capacity: 100}
defaults: {key: %s, limit: {algorithm: token_bucket, rate: 5, burst: 50}}
endpoints:
  - {match: {method: GET, path: %q}, limit: {algorithm: token_bucket, rate: 2, burst: 4}, cost: 2}
`, key, tmpl))
}
