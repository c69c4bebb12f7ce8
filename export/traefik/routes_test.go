package traefik

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// decode decodes a policy document and validates it.
func decode(t *testing.T, doc string) policy.Policy {
	t.Helper()
	p, err := policy.Decode(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return p
}

// winner is the router Traefik picks for req among c's: the matching one
// of highest priority. Two matching routers of one priority are an error
// (Traefik's order between them is unspecified).
func winner(t *testing.T, c *Configuration, req *request) string {
	t.Helper()
	best, bestPrio, ties := "", -1, 0
	for _, name := range sortedKeys(c.HTTP.Routers) {
		r := c.HTTP.Routers[name]
		if r.Priority <= 0 {
			t.Fatalf("router %s: priority %d (0 is Traefik's rule-length default)", name, r.Priority)
		}
		ok, err := matchRule(r.Rule, req)
		if err != nil {
			t.Fatalf("router %s: %v", name, err)
		}
		switch {
		case ok && r.Priority > bestPrio:
			best, bestPrio, ties = name, r.Priority, 0
		case ok && r.Priority == bestPrio:
			ties++
		}
	}
	if ties > 0 {
		t.Fatalf("%s %s %v: %d routers tie at priority %d", req.Method, req.Path, req.Header, ties+1, bestPrio)
	}
	return best
}

// TestPathRegexpIsTheEngine renders one endpoint per template and checks,
// for every template and path, that the emitted rule (its PathRegexp
// compiled with Go's regexp package, as Traefik does) selects the request
// exactly when the engine's matcher matches it.
func TestPathRegexpIsTheEngine(t *testing.T) {
	templates, paths := exporttest.PathTemplates, exporttest.Paths
	for _, tmpl := range templates {
		t.Run(tmpl, func(t *testing.T) {
			p := decode(t, fmt.Sprintf(`apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: paths}
service: {capacity: 100}
defaults: {key: ip, limit: {algorithm: token_bucket, rate: 5, burst: 50}}
endpoints:
  - {match: {method: GET, path: %q}, cost: 2}
`, tmpl))
			eng, err := engine.New(p)
			if err != nil {
				t.Fatal(err)
			}
			e, err := Dynamic.Render(p, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := Validate(e.Body)
			if err != nil {
				t.Fatal(err)
			}
			r := c.HTTP.Routers["default-endpoint_0"]
			if r == nil {
				t.Fatalf("no router for the endpoint:\n%s", e.Body)
			}
			matched := 0
			for _, path := range paths {
				want := eng.Match(engine.Request{Key: "k", Method: "GET", Path: path}).Endpoint == 0
				got, err := matchRule(r.Rule, &request{Method: "GET", Path: path, Header: http.Header{}})
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s on %s: Traefik %v, engine %v", r.Rule, path, got, want)
				}
				if want {
					matched++
				}
			}
			if matched == 0 || matched == len(paths) {
				t.Errorf("%d of %d paths match: the table does not exercise %s", matched, len(paths), tmpl)
			}
		})
	}
}

// routingPolicy has overlapping endpoints (a literal before the template
// that also matches it, with neither limit nor cost of its own), tiers
// with their own limit and one with the default's (its own bucket of the
// default limit), spelt with capitals, and a global limit.
const routingPolicy = `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: routing}
service: {capacity: 1000}
defaults: {key: api_key, limit: {algorithm: token_bucket, rate: 5, burst: 50}}
tiers:
  - {name: paid, limit: {algorithm: gcra, rate: 50, burst: 500}}
  - {name: Free}
  - {name: PartNer.v2, limit: {algorithm: token_bucket, rate: 20, burst: 100}}
endpoints:
  - {match: {method: GET, path: /v1/items/special}}
  - {match: {method: GET, path: "/v1/items/{id}"}, cost: 3}
  - {match: {method: POST, path: "/v1/items/{id}"}, limit: {algorithm: token_bucket, rate: 2, burst: 4}}
  - {match: {method: GET, path: "/v1/items/{id}/parts/{part}"}, limit: {algorithm: gcra, rate: 1, burst: 5}}
  - {match: {method: GET, path: /v1/other}}
  - {match: {method: GET, path: "/v1/{kind}/special"}, limit: {algorithm: token_bucket, rate: 1, burst: 2}}
  - {match: {method: GET, path: "/v1/{kind}/{id}"}, limit: {algorithm: token_bucket, rate: 3, burst: 6}, cost: 2}
global: {limit: {algorithm: token_bucket, rate: 800, burst: 1600}}
`

// TestRoutingIsTheEngine evaluates the routers of both files for requests
// of every combination of method, path and tier header, and checks that
// the router Traefik picks chains exactly the limits the engine applies:
// the client's (tier or default), the matched endpoint's cost and limit,
// and the global limit.
func TestRoutingIsTheEngine(t *testing.T) {
	p := decode(t, routingPolicy)
	eng, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Dynamic.Render(p, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Validate(e.Body)
	if err != nil {
		t.Fatalf("%v\n%s", err, e.Body)
	}
	crd, err := CRD.Render(p, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ValidateCRD(crd.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.IngressRoutes) != 1 {
		t.Fatalf("%d IngressRoutes, want 1", len(res.IngressRoutes))
	}
	var routes []CRDRoute
	for _, r := range res.IngressRoutes {
		routes = r.Routes
	}
	if len(routes) != len(c.HTTP.Routers) {
		t.Fatalf("%d IngressRoute routes, %d file routers", len(routes), len(c.HTTP.Routers))
	}
	// The CRD's routes are the file's routers, rule for rule.
	byRule := map[string]*Router{}
	for _, r := range c.HTTP.Routers {
		byRule[r.Rule] = r
	}
	for _, r := range routes {
		if f := byRule[r.Match]; f == nil || f.Priority != r.Priority || len(f.Middlewares) != len(r.Middlewares) {
			t.Errorf("IngressRoute route %q (priority %d) is not a file router", r.Match, r.Priority)
		}
	}

	methods := []string{"GET", "POST", "PUT"}
	paths := []string{"/", "/v1/items/special", "/v1/items/7", "/v1/items/", "/v1/items/7/parts/9", "/v1/items/7/parts/",
		"/v1/other", "/v1/orders/special", "/v1/orders/7", "/v1/other/x", "/v2/items/7"}
	tiers := []string{"", "paid", "PAID", "pAid", "paid ", "xpaid", "free", "FREE", "partner.v2", "PARTNER.V2", "partnerXv2", "gold"}
	seen := map[string]bool{}
	for _, method := range methods {
		for _, path := range paths {
			for _, tier := range tiers {
				a := eng.Match(engine.Request{Key: "k", Tier: tier, Method: method, Path: path})
				var want []string
				if a.N == 0 || eng.Limits()[a.Limits[0]].Scope == policy.ScopeGlobal {
					t.Fatalf("%s %s tier %q: no client limit applies", method, path, tier)
				}
				client := eng.Limits()[a.Limits[0]].Name
				want = append(want, client)
				if a.Cost > 1 {
					want = append(want, fmt.Sprintf("%s_cost_%d", client, a.Endpoint))
				}
				for _, l := range a.Limits[1:a.N] {
					if name := eng.Limits()[l].Name; name == "global" {
						want = append(want, "global_key", name)
					} else {
						want = append(want, name)
					}
				}
				req := &request{Method: method, Path: path, Header: http.Header{}}
				if tier != "" {
					req.Header.Set("X-Tier", tier)
				}
				name := winner(t, c, req)
				if name == "" {
					t.Errorf("%s %s tier %q: no router", method, path, tier)
					continue
				}
				seen[strings.Join(want, " ")] = true
				if got := c.HTTP.Routers[name].Middlewares; !slices.Equal(got, want) {
					t.Errorf("%s %s tier %q: router %s chains %v, the engine applies %v", method, path, tier, name, got, want)
				}
			}
		}
	}
	// The table reaches every client, endpoint limit and cost.
	for _, w := range []string{
		"default global_key global", "tier_paid global_key global", "tier_partner_v2 global_key global", "tier_free global_key global",
		"default default_cost_1 global_key global", "tier_paid endpoint_2 global_key global",
		"tier_partner_v2 endpoint_3 global_key global", "default endpoint_5 global_key global",
		"tier_paid tier_paid_cost_6 endpoint_6 global_key global",
	} {
		if !seen[w] {
			t.Errorf("no request of the table gets %s; it reaches %v", w, slices.Sorted(maps.Keys(seen)))
		}
	}
}

// TestRuleText checks the rules as written: the tier by a HeaderRegexp
// folding ASCII letters only, endpoints by Method and an anchored
// PathRegexp with the literal parts quoted, a router for an endpoint
// without limit or cost only when it comes before one it overlaps, and
// priorities in policy order.
func TestRuleText(t *testing.T) {
	e, err := Dynamic.Render(decode(t, routingPolicy), export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Validate(e.Body)
	if err != nil {
		t.Fatal(err)
	}
	paid := "HeaderRegexp(`X-Tier`, `^[pP][aA][iI][dD]$`)"
	tests := []struct {
		router, rule string // rule "" = no such router
	}{
		{"default", "PathPrefix(`/`)"},
		{"tier_paid", paid},
		{"tier_partner_v2", "HeaderRegexp(`X-Tier`, `^[pP][aA][rR][tT][nN][eE][rR]\\.[vV]2$`)"},
		{"tier_free", "HeaderRegexp(`X-Tier`, `^[fF][rR][eE][eE]$`)"},
		{"default-endpoint_0", "Method(`GET`) && PathRegexp(`^/v1/items/special$`)"},
		{"default-endpoint_1", "Method(`GET`) && PathRegexp(`^/v1/items/[^/]+$`)"},
		{"tier_paid-endpoint_1", paid + " && Method(`GET`) && PathRegexp(`^/v1/items/[^/]+$`)"},
		{"default-endpoint_3", "Method(`GET`) && PathRegexp(`^/v1/items/[^/]+/parts/[^/]+$`)"},
		{"default-endpoint_4", ""},
		{"default-endpoint_5", "Method(`GET`) && PathRegexp(`^/v1/[^/]+/special$`)"},
	}
	for _, tt := range tests {
		r := c.HTTP.Routers[tt.router]
		switch {
		case tt.rule == "" && r != nil:
			t.Errorf("router %s exists (%s)", tt.router, r.Rule)
		case tt.rule != "" && r == nil:
			t.Errorf("no router %s", tt.router)
		case r != nil && r.Rule != tt.rule:
			t.Errorf("router %s: rule\n%s\nwant\n%s", tt.router, r.Rule, tt.rule)
		}
	}
	// Priorities: tiers (in policy order) above the default; in each
	// class the endpoints in policy order above the catch-all.
	order := []string{"tier_paid", "tier_free", "tier_partner_v2", "default"}
	var prev int
	for i, class := range order {
		for j, ep := range []string{"-endpoint_0", "-endpoint_1", "-endpoint_2", "-endpoint_3", "-endpoint_5", "-endpoint_6", ""} {
			r := c.HTTP.Routers[class+ep]
			if r == nil {
				t.Fatalf("no router %s", class+ep)
			}
			if (i > 0 || j > 0) && r.Priority >= prev {
				t.Errorf("router %s: priority %d, not below the previous one's %d", class+ep, r.Priority, prev)
			}
			prev = r.Priority
		}
	}
	if prev < 1 {
		t.Errorf("lowest priority %d; Traefik reads 0 as its default", prev)
	}
	// The mappings say how tiers and endpoints are selected.
	for _, tt := range []struct{ field, to string }{
		{"tiers[0].name", paid},
		{"endpoints[0].match", "PathRegexp(`^/v1/items/special$`)"},
		{"endpoints[1].match", "PathRegexp(`^/v1/items/[^/]+$`)"},
	} {
		i := slices.IndexFunc(e.Mappings, func(m export.Mapping) bool { return m.Field == tt.field })
		if i < 0 {
			t.Errorf("no mapping for %s", tt.field)
			continue
		}
		if m := e.Mappings[i]; !strings.Contains(m.To, tt.to) || m.Fidelity != export.Exact || m.Why == "" {
			t.Errorf("%s: %+v, want %s, exact, with a reason", tt.field, m, tt.to)
		}
	}
}

// TestFoldASCII: the tier regexp folds ASCII letters only, as
// policy.LowerASCII does; (?i) would also match the Kelvin sign for k and
// the long s for s.
func TestFoldASCII(t *testing.T) {
	tests := []struct {
		name, value string
	}{
		{"kiosk", "KIOSK"}, {"kiosk", "\u212aiosk"}, {"kiosk", "kio\u017fk"}, {"kiosk", "kiosk"}, {"kiosk", "kios"},
		{"a.b", "A.B"}, {"a.b", "aXb"}, {"Ünï", "ÜNÏ"}, {"Ünï", "Ünï"}, {"Ünï", "üNÏ"}, {"x+y", "X+Y"}, {"x+y", "xxy"},
	}
	for _, tt := range tests {
		want := policy.LowerASCII(tt.value) == policy.LowerASCII(tt.name)
		ok, err := matchRule(tierRule("X-Tier", tt.name), &request{Header: http.Header{"X-Tier": {tt.value}}})
		if err != nil {
			t.Fatal(err)
		}
		if ok != want {
			t.Errorf("tier %q, header %q: Traefik %v, policy %v", tt.name, tt.value, ok, want)
		}
	}
}
