// Package exporttest holds the policies every export's tests render: the
// policy package's examples and policies that use every algorithm, key,
// endpoint cost, shadow mode and replica setting.
package exporttest

import (
	"bytes"
	"embed"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

//go:embed policies/*.yaml
var files embed.FS

// Policy is one test policy with its file name (without .yaml).
type Policy struct {
	Name   string
	Policy policy.Policy
}

// Policies decodes every test policy, sorted by name; a policy that does
// not decode fails the test.
func Policies(t testing.TB) []Policy {
	t.Helper()
	entries, err := files.ReadDir("policies")
	if err != nil {
		t.Fatal(err)
	}
	var out []Policy
	for _, e := range entries {
		data, err := files.ReadFile(path.Join("policies", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		out = append(out, Policy{Name: strings.TrimSuffix(e.Name(), ".yaml"), Policy: p})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Named is the test policy called name; an unknown name fails the test.
func Named(t testing.TB, name string) policy.Policy {
	t.Helper()
	for _, p := range Policies(t) {
		if p.Name == name {
			return p.Policy
		}
	}
	t.Fatalf("no test policy %q", name)
	return policy.Policy{}
}

// HostileText is every character export.Check lets through that a config
// format reads as syntax: quotes and backslashes, comment and string ends
// of Go and Lua, template and variable syntax, YAML markers, nginx's and
// HAProxy's separators, HTML.
const HostileText = "\"'\\`*/ /* ]] --[[ ${HOME} $host {{.}} %{x} --- ... &a *a !!str ? - : # ; { } | > <script>alert(1)</script> --->"

// Hostile is the test policy tiered with HostileText as its name and
// description, a tier name and endpoint paths of every character those
// allow that a format might read ('.', ' ', "$", "'", "(", "+", %XX
// escapes of '$', '"', ';' and '{'), and methods in mixed case: what a
// gateway's own parser must accept as one policy (nginx -t, haproxy -c).
func Hostile(t testing.TB) policy.Policy {
	t.Helper()
	p := Named(t, "tiered")
	p.Metadata.Name, p.Metadata.Description = HostileText, HostileText
	p.Tiers = append([]policy.Tier(nil), p.Tiers...)
	p.Tiers[1].Name = "pa id. x-y_z"
	p.Endpoints = append([]policy.Endpoint(nil), p.Endpoints...)
	p.Endpoints[0].Match = policy.Match{Method: "gEt", Path: "/v1/it's(x)+$y/{id}/z%20w%24%22%3B%7B"}
	p.Endpoints[1].Match = policy.Match{Method: "PoSt", Path: "/v1/a$b/{id}/@:!*,=~&'c"}
	if err := export.Check(p, export.Options{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// PathTemplates and Paths are the routing tables of the gateways' path
// tests: endpoint templates with {name} segments, empty segments and
// characters special in regular expressions, and request paths around
// them, for checking a gateway's route against the engine's matcher for
// every pair.
var (
	PathTemplates = []string{
		"/v1/items/{id}", "/v1/items/special", "/", "/a/", "/a/{x}/b", "/{a}/{b}", "/a//b",
		"/v1/a.b", "/v1/a+b", "/v1/(x)", "/v1/a%20b", "/v1/$x", "/v1/a*", "/v1/{id}/x.json",
	}
	Paths = []string{
		"/v1/items/7", "/v1/items/special", "/v1/items/", "/v1/items", "/v1/items/7/", "/v1/items/7/x",
		"/v1/itemsX7", "/V1/items/7", "/x/v1/items/7", "/", "//", "/a", "/a/", "/a/x/b", "/a//b", "/a/x/b/",
		"/a/b", "/v1/a.b", "/v1/aXb", "/v1/a+b", "/v1/aab", "/v1/(x)", "/v1/x", "/v1/a%20b", "/v1/a b",
		"/v1/$x", "/v1/a*", "/v1/a", "/v1/aaa", "/v1/7/x.json", "/v1/7/xxjson", "/v1//x.json",
	}
)
