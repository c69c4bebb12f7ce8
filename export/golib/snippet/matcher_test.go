package snippet_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export/golib/snippet"
	"github.com/ratelab/ratelab/export/redis/redistest"
	"github.com/ratelab/ratelab/policy"
)

// matcherPolicy has a tier named in lower case, a mixed-case one without
// its own limit (it has the default's), overlapping and templated
// endpoints with and without limits, and a global limit.
const matcherPolicy = `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: matcher}
service: {capacity: 100}
defaults:
  key: api_key
  limit: {algorithm: token_bucket, rate: 1, burst: 5}
tiers:
  - {name: paid, limit: {algorithm: token_bucket, rate: 3, burst: 10}}
  - {name: Gold Plus}
endpoints:
  - {match: {method: GET, path: "/v1/items/{id}"}, cost: 2, limit: {algorithm: gcra, rate: 1, burst: 4}}
  - {match: {method: GET, path: /v1/items/special}, cost: 4, limit: {algorithm: gcra, rate: 1, burst: 8}}
  - {match: {method: POST, path: /v1/items/special}, cost: 3}
  - {match: {method: delete, path: "/v1/users/{user}/keys/{key}"}, cost: 5, limit: {algorithm: gcra, rate: 1, burst: 9}}
  - {match: {method: GET, path: /}, cost: 6}
  - {match: {method: GET, path: /v1/items}, cost: 7}
global: {limit: {algorithm: token_bucket, rate: 100, burst: 100}}
`

// matcherCases are requests and what the generated route must return for
// them, by hand: the names of their limits, in order, and their cost. Each
// is also checked against the engine (TestMatcherCasesAreTheEngine).
var matcherCases = []struct {
	tier, method, path string
	limits             []string
	cost               int64
}{
	// No tier header, an unknown tier: the default limit.
	{"", "GET", "/other", []string{"default", "global"}, 1},
	{"bronze", "GET", "/other", []string{"default", "global"}, 1},
	// The tier whose name equals the header ignoring ASCII case.
	{"Paid", "GET", "/other", []string{"tier_paid", "global"}, 1},
	{"paid", "GET", "/other", []string{"tier_paid", "global"}, 1},
	{"PAID", "GET", "/other", []string{"tier_paid", "global"}, 1},
	{"pAiD", "GET", "/other", []string{"tier_paid", "global"}, 1},
	// Case only for ASCII letters; spaces count.
	{"GOLD PLUS", "GET", "/other", []string{"tier_gold_plus", "global"}, 1},
	{"goldplus", "GET", "/other", []string{"default", "global"}, 1},
	{" Paid", "GET", "/other", []string{"default", "global"}, 1},
	// {id} is one non-empty segment; the first endpoint in policy order
	// wins over the later literal one.
	{"", "GET", "/v1/items/42", []string{"default", "endpoint_0", "global"}, 2},
	{"", "GET", "/v1/items/special", []string{"default", "endpoint_0", "global"}, 2},
	{"PAID", "get", "/v1/items/special", []string{"tier_paid", "endpoint_0", "global"}, 2},
	{"Paid", "get", "/v1/items/special", []string{"tier_paid", "endpoint_0", "global"}, 2},
	{"", "POST", "/v1/items/special", []string{"default", "global"}, 3},
	{"", "post", "/v1/items/special", []string{"default", "global"}, 3},
	{"", "PUT", "/v1/items/special", []string{"default", "global"}, 1},
	{"", "HEAD", "/v1/items/42", []string{"default", "global"}, 1},
	// Trailing slashes, empty and extra segments.
	{"", "GET", "/v1/items/", []string{"default", "global"}, 1},
	{"", "GET", "/v1/items/42/", []string{"default", "global"}, 1},
	{"", "GET", "/v1/items//", []string{"default", "global"}, 1},
	{"", "GET", "/v1/items/4/2", []string{"default", "global"}, 1},
	{"", "GET", "/v1//42", []string{"default", "global"}, 1},
	{"", "GET", "/v1/items", []string{"default", "global"}, 7},
	{"", "GET", "//v1/items/42", []string{"default", "global"}, 1},
	{"", "GET", "/V1/items/42", []string{"default", "global"}, 1},
	// "/" is one empty segment.
	{"", "GET", "/", []string{"default", "global"}, 6},
	// A lower-case method in the policy; two placeholders.
	{"paid", "DELETE", "/v1/users/u1/keys/k-9", []string{"tier_paid", "endpoint_3", "global"}, 5},
	{"", "Delete", "/v1/users/u1/keys/k-9", []string{"default", "endpoint_3", "global"}, 5},
	{"", "DELETE", "/v1/users//keys/k", []string{"default", "global"}, 1},
	{"", "DELETE", "/v1/users/u1/keys/k/", []string{"default", "global"}, 1},
	// Placeholders match any characters of a decoded segment.
	{"", "GET", "/v1/items/a b%", []string{"default", "endpoint_0", "global"}, 2},
}

func decodeMatcherPolicy(t *testing.T) policy.Policy {
	t.Helper()
	p, err := policy.Decode(strings.NewReader(matcherPolicy))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMatcherCasesAreTheEngine: the hand-written cases are what
// engine.Match decides.
func TestMatcherCasesAreTheEngine(t *testing.T) {
	p := decodeMatcherPolicy(t)
	e, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range matcherCases {
		a := e.Match(engine.Request{Key: "k", Tier: c.tier, Method: c.method, Path: c.path})
		var names []string
		for _, i := range a.Limits[:a.N] {
			names = append(names, e.Limits()[i].Name)
		}
		if !slices.Equal(names, c.limits) || a.Cost != c.cost {
			t.Errorf("tier %q, %s %s: engine %v cost %d; the case wants %v cost %d", c.tier, c.method, c.path, names, a.Cost, c.limits, c.cost)
		}
	}
}

// TestGeneratedMatcher compiles the generated file (with a stub Limiter)
// and runs the cases through its route, and its matchPath, tierIndex and
// equalFoldASCII directly.
func TestGeneratedMatcher(t *testing.T) {
	f := snippet.File{Policy: decodeMatcherPolicy(t), Target: "test", Doc: "Model.",
		Body: "type Limiter struct{}\n\nfunc (lim *Limiter) check(ctx context.Context, ls []*limit, keys []string, cost int64) ([]decision, error) { return nil, nil }"}
	src, err := f.Render()
	if err != nil {
		t.Fatal(err)
	}
	var rows strings.Builder
	for _, c := range matcherCases {
		fmt.Fprintf(&rows, "\t\t{%q, %q, %q, %#v, %d},\n", c.tier, c.method, c.path, c.limits, c.cost)
	}
	test := `package ratelimit

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

func TestRoute(t *testing.T) {
	cases := []struct {
		tier, method, path string
		limits             []string
		cost               int64
	}{
` + rows.String() + `	}
	for _, c := range cases {
		r := &http.Request{Method: c.method, URL: &url.URL{Path: c.path}, Header: http.Header{}, RemoteAddr: "192.0.2.1:1234"}
		r.Header.Set("X-API-Key", "k")
		if c.tier != "" {
			r.Header.Set(tierHeader, c.tier)
		}
		ls, keys, cost := route(r)
		var names []string
		for _, l := range ls {
			names = append(names, l.name)
		}
		if !slices.Equal(names, c.limits) || cost != c.cost || len(keys) != len(ls) {
			t.Errorf("tier %q, %s %s: route %v cost %d keys %v; want %v cost %d", c.tier, c.method, c.path, names, cost, keys, c.limits, c.cost)
		}
	}
}

func TestMatchPath(t *testing.T) {
	cases := []struct {
		template, path string
		want           bool
	}{
		{"/a/{x}", "/a/b", true},
		{"/a/{x}", "/a/", false},
		{"/a/{x}", "/a", false},
		{"/a/{x}", "/a/b/", false},
		{"/a/{x}/c", "/a/b/c", true},
		{"/a/{x}/c", "/a//c", false},
		{"/{x}", "/", false},
		{"/", "/", true},
		{"/", "", false},
		{"/a", "a", false},
		{"/a", "/a/", false},
		{"/a/", "/a/", true},
		{"/a//b", "/a//b", true},
		{"/{x}/{y}", "/1/2", true},
		{"/{x}/{y}", "/1", false},
		{"/{x", "/{x", true},
		{"/{x", "/y", false},
		{"/{}", "/y", true},
		{"/a%20b", "/a b", false},
		{"/a%20b", "/a%20b", true},
	}
	for _, c := range cases {
		if got := matchPath(c.template, c.path); got != c.want {
			t.Errorf("matchPath(%q, %q) = %t, want %t", c.template, c.path, got, c.want)
		}
	}
}

func TestFold(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"GET", "get", true},
		{"GET", "GeT", true},
		{"GET", "GETS", false},
		{"Z@", "z` + "`" + `", false},
		{"Stra\u00dfe", "STRA\u00dfE", true},
		{"\u212a", "k", false},
		{"\u00c9", "\u00e9", false},
	}
	for _, c := range cases {
		if got := equalFoldASCII(c.a, c.b); got != c.want {
			t.Errorf("equalFoldASCII(%q, %q) = %t, want %t", c.a, c.b, got, c.want)
		}
	}
	for name, want := range map[string]int{"": -1, "paid": 0, "Paid": 0, "PAID": 0, "PaiD": 0, "gold plus": 1, "GOLD PLUS": 1, "gold-plus": -1} {
		if got := tierIndex(name); got != want {
			t.Errorf("tierIndex(%q) = %d, want %d", name, got, want)
		}
	}
}
`
	dir := redistest.Compile(t, map[string]string{"matcher/ratelimit.go": string(src), "matcher/ratelimit_test.go": test})
	out := redistest.Go(t, dir, nil, "test", "-count=1", "./matcher")
	if !strings.Contains(out, "ok  \tratelabexport/matcher") {
		t.Errorf("the generated matcher's test did not pass: %s", out)
	}
}
