package kong

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

func decode(t *testing.T, doc string) policy.Policy {
	t.Helper()
	p, err := policy.Decode(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return p
}

// pathMatches evaluates a Kong route path: a regex path (~…) anchored at
// the start as Kong anchors it, else a prefix.
func pathMatches(t *testing.T, kongPath, path string) bool {
	t.Helper()
	if re, ok := strings.CutPrefix(kongPath, "~"); ok {
		return regexp.MustCompile("^(?:" + re + ")").MatchString(path)
	}
	return strings.HasPrefix(path, kongPath)
}

// TestPathRegexIsTheEngine renders one endpoint per template and checks,
// for every template and path, that its route's regex path selects the
// request exactly when the engine's matcher matches it.
func TestPathRegexIsTheEngine(t *testing.T) {
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
			e, err := Target.Render(p, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := Validate(e.Body)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(f.Services[0].Routes, func(r *Route) bool { return r.Name == "paths-endpoint-0" })
			if i < 0 {
				t.Fatalf("no route for the endpoint:\n%s", e.Body)
			}
			r := f.Services[0].Routes[i]
			matched := 0
			for _, path := range paths {
				want := eng.Match(engine.Request{Key: "k", Method: "GET", Path: path}).Endpoint == 0
				if got := pathMatches(t, r.Paths[0], path); got != want {
					t.Errorf("%s on %s: Kong %v, engine %v", r.Paths[0], path, got, want)
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

// TestRoutingIsTheEngine picks, for requests of every method and path,
// the route Kong would: an endpoint route (method and regex path) before
// the catch-all, the highest regex_priority among them; and checks that
// it is the route of the endpoint the engine matches when that endpoint
// has a limit or a cost, else a route without plugins.
func TestRoutingIsTheEngine(t *testing.T) {
	p := decode(t, `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: routing}
service: {capacity: 1000}
defaults: {key: api_key, limit: {algorithm: token_bucket, rate: 5, burst: 50}}
endpoints:
  - {match: {method: GET, path: /v1/items/special}}
  - {match: {method: GET, path: "/v1/items/{id}"}, cost: 3}
  - {match: {method: POST, path: "/v1/items/{id}"}, limit: {algorithm: token_bucket, rate: 2, burst: 4}}
  - {match: {method: GET, path: "/v1/items/{id}/parts/{part}"}, limit: {algorithm: gcra, rate: 1, burst: 5}}
  - {match: {method: GET, path: /v1/other}}
  - {match: {method: GET, path: "/v1/{kind}/special"}, limit: {algorithm: token_bucket, rate: 1, burst: 2}}
  - {match: {method: GET, path: "/v1/{kind}/{id}"}, limit: {algorithm: token_bucket, rate: 3, burst: 6}, cost: 2}
`)
	eng, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Target.Render(p, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Validate(e.Body)
	if err != nil {
		t.Fatalf("%v\n%s", err, e.Body)
	}
	routes := f.Services[0].Routes
	if slices.ContainsFunc(routes, func(r *Route) bool { return r.Name == "routing-endpoint-4" }) {
		t.Error("a route for GET /v1/other, which overlaps no endpoint with a limit or cost")
	}
	reached := map[int]bool{}
	for _, method := range []string{"GET", "POST", "PUT"} {
		for _, path := range []string{"/", "/v1/items/special", "/v1/items/7", "/v1/items/", "/v1/items/7/parts/9",
			"/v1/items/7/parts/", "/v1/other", "/v1/orders/special", "/v1/orders/7", "/v1/other/x", "/v2/items/7"} {
			var best *Route
			prio, ties := -1, 0
			for _, r := range routes {
				if len(r.Methods) == 0 || !slices.Contains(r.Methods, method) || !pathMatches(t, r.Paths[0], path) {
					continue
				}
				rp := 0
				if r.RegexPriority != nil {
					rp = *r.RegexPriority
				}
				switch {
				case rp > prio:
					best, prio, ties = r, rp, 0
				case rp == prio:
					ties++
				}
			}
			if ties > 0 {
				t.Fatalf("%s %s: %d endpoint routes tie at regex_priority %d", method, path, ties+1, prio)
			}
			a := eng.Match(engine.Request{Key: "k", Method: method, Path: path})
			ownRoute := a.Endpoint >= 0 && (p.Endpoints[a.Endpoint].Cost > 1 || p.Endpoints[a.Endpoint].Limit.Algorithm != "")
			switch {
			case ownRoute && (best == nil || best.Name != fmt.Sprintf("routing-endpoint-%d", a.Endpoint)):
				t.Errorf("%s %s: Kong takes route %v, the engine endpoints[%d]", method, path, name(best), a.Endpoint)
			case !ownRoute && best != nil && len(best.Plugins) > 0:
				t.Errorf("%s %s: Kong takes route %s with its plugins, the engine no endpoint limit or cost (endpoint %d)", method, path, best.Name, a.Endpoint)
			}
			reached[a.Endpoint] = true
		}
	}
	for i := -1; i < len(p.Endpoints); i++ {
		if !reached[i] {
			t.Errorf("no request of the table reaches endpoint %d", i)
		}
	}
	// The mapping says how the routes select the endpoint.
	i := slices.IndexFunc(e.Mappings, func(m export.Mapping) bool { return m.Field == "endpoints[1].match" })
	if i < 0 || !strings.Contains(e.Mappings[i].To, "~/v1/items/[^/]+$") || e.Mappings[i].Why == "" {
		t.Errorf("endpoints[1].match mapping: %+v", e.Mappings)
	}
}

func name(r *Route) string {
	if r == nil {
		return "(catch-all)"
	}
	return r.Name
}
