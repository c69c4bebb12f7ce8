package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/policy"
)

// TestLintShadowedEndpointIsTheEngine: for pairs of endpoints, the lint
// reports the second as shadowed exactly when the engine, given requests
// the second one matches (its template with each {name} filled in with
// the first's literal at that place, "x" or "special"), always decides
// them by the first; the table's want says the same by hand.
func TestLintShadowedEndpointIsTheEngine(t *testing.T) {
	tests := []struct {
		name          string
		first, second policy.Match
		want          bool
		fix           string // in the fix, when shadowed
	}{
		{"template before literal", m("GET", "/v1/items/{id}"), m("GET", "/v1/items/special"), true, "List /v1/items/special first"},
		{"literal before template", m("GET", "/v1/items/special"), m("GET", "/v1/items/{id}"), false, ""},
		{"fewer segments", m("GET", "/v1/{id}"), m("GET", "/v1/items/special"), false, ""},
		{"more segments", m("GET", "/v1/items/{id}/{part}"), m("GET", "/v1/items/special"), false, ""},
		{"other method", m("POST", "/v1/items/{id}"), m("GET", "/v1/items/special"), false, ""},
		{"method case", m("get", "/v1/items/{id}"), m("GET", "/v1/items/special"), true, "List /v1/items/special first"},
		{"{a} vs {b}", m("GET", "/a/{a}/b"), m("GET", "/a/{b}/b"), true, "Merge endpoints[1] into endpoints[0]"},
		{"partial overlap", m("GET", "/v1/items/{id}"), m("GET", "/v1/{kind}/special"), false, ""},
		{"two templates over two literals", m("GET", "/{a}/{b}"), m("GET", "/v1/items"), true, "List /v1/items first"},
		{"template over a template and a literal", m("GET", "/{a}/{b}"), m("GET", "/v1/{id}"), true, "List /v1/{id} first"},
		{"empty segment", m("GET", "/a/{id}"), m("GET", "/a/"), false, ""},
		{"trailing slash on both", m("GET", "/a/{id}/"), m("GET", "/a/b/"), true, "List /a/b/ first"},
		{"root", m("GET", "/{x}"), m("GET", "/"), false, ""},
		{"other literal", m("GET", "/v1/items/{id}"), m("GET", "/v1/orders/special"), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := policy.Decode(strings.NewReader(fmt.Sprintf(`apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: shadow}
service: {capacity: 1000}
defaults: {limit: {algorithm: token_bucket, rate: 5, burst: 50}}
endpoints:
  - {match: {method: %s, path: %q}}
  - {match: {method: %s, path: %q}, cost: 5}
`, tt.first.Method, tt.first.Path, tt.second.Method, tt.second.Path)))
			if err != nil {
				t.Fatal(err)
			}

			// The engine: requests the second endpoint matches on its
			// own, and which endpoint decides them when both are listed.
			alone := p
			alone.Endpoints = p.Endpoints[1:]
			engBoth, err := engine.New(p)
			if err != nil {
				t.Fatal(err)
			}
			engAlone, err := engine.New(alone)
			if err != nil {
				t.Fatal(err)
			}
			matched, byFirst := 0, 0
			for _, path := range fillIn(tt.second.Path, tt.first.Path) {
				q := engine.Request{Key: "k", Method: strings.ToUpper(tt.second.Method), Path: path}
				if engAlone.Match(q).Endpoint != 0 {
					continue
				}
				matched++
				if engBoth.Match(q).Endpoint == 0 {
					byFirst++
				}
			}
			if matched == 0 {
				t.Fatalf("no generated request matches %s", tt.second.Path)
			}
			engineSays := byFirst == matched
			if engineSays != tt.want {
				t.Fatalf("the engine decides %d of %d of the second's requests by the first; the table wants shadowed = %v", byFirst, matched, tt.want)
			}

			var got []policy.Finding
			for _, f := range policy.Lint(p) {
				if f.ID == policy.LintShadowedEndpoint {
					got = append(got, f)
				}
			}
			if !tt.want {
				if len(got) > 0 {
					t.Fatalf("want no %s, got %+v", policy.LintShadowedEndpoint, got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one %s, got %+v", policy.LintShadowedEndpoint, got)
			}
			f := got[0]
			if f.Severity != calc.SeverityWarning || f.Field != "endpoints[1].match" {
				t.Errorf("got %s on %s, want a warning on endpoints[1].match", f.Severity, f.Field)
			}
			for _, w := range []string{tt.first.Path, tt.second.Path, "endpoints[0]", "endpoints[1]"} {
				if !strings.Contains(f.Message, w) {
					t.Errorf("message does not name %q: %s", w, f.Message)
				}
			}
			if !strings.Contains(f.Fix, tt.fix) {
				t.Errorf("fix %q, want it to say %q", f.Fix, tt.fix)
			}
		})
	}
}

func m(method, path string) policy.Match { return policy.Match{Method: method, Path: path} }

// fillIn is the paths of template with each {name} replaced, in every
// combination, by "x", "special", or other's segment at that place when
// that is a literal.
func fillIn(template, other string) []string {
	segs := strings.Split(template, "/")
	oth := strings.Split(other, "/")
	paths := []string{""}
	for i, s := range segs {
		if i == 0 {
			continue
		}
		vals := []string{s}
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			vals = []string{"x", "special"}
			if i < len(oth) && !strings.HasPrefix(oth[i], "{") {
				vals = append(vals, oth[i])
			}
		}
		var next []string
		for _, p := range paths {
			for _, v := range vals {
				next = append(next, p+"/"+v)
			}
		}
		paths = next
	}
	return paths
}
