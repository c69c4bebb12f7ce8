package export_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

func TestWorst(t *testing.T) {
	tests := []struct{ f, g, want export.Fidelity }{
		{export.Exact, export.Exact, export.Exact},
		{export.Exact, export.Approximate, export.Approximate},
		{export.Approximate, export.Exact, export.Approximate},
		{export.Approximate, export.NotExpressible, export.NotExpressible},
		{export.NotExpressible, export.Exact, export.NotExpressible},
	}
	for _, tt := range tests {
		if got := export.Worst(tt.f, tt.g); got != tt.want {
			t.Errorf("Worst(%s, %s) = %s, want %s", tt.f, tt.g, got, tt.want)
		}
	}
}

func TestExportAddLowersFidelity(t *testing.T) {
	var e export.Export
	e.Add(export.Mapping{Field: "a", Fidelity: export.Exact})
	if e.Fidelity != export.Exact {
		t.Fatalf("after an exact mapping: %s, want exact", e.Fidelity)
	}
	e.Add(export.Mapping{Field: "b", Fidelity: export.Approximate})
	e.Add(export.Mapping{Field: "c", Fidelity: export.Exact})
	if e.Fidelity != export.Approximate || len(e.Mappings) != 3 {
		t.Fatalf("after exact, approximate, exact: %s with %d mappings, want approximate with 3", e.Fidelity, len(e.Mappings))
	}
}

// TestLimits checks the flat list of the every-algorithm policy against the
// file, read by hand: the default leaky bucket (key api_key), five tiers
// (anonymous keyed by ip, partner by account, the rest inherit api_key),
// the two endpoints of three that have a limit (indexes 1 and 2), and the
// global limit.
func TestLimits(t *testing.T) {
	p := exporttest.Named(t, "every-algorithm")
	want := []struct {
		field string
		scope policy.Scope
		name  string
		key   policy.Key
		alg   algorithms.Name
	}{
		{"defaults.limit", policy.ScopeDefault, "default", policy.KeyAPIKey, algorithms.NameLeakyBucket},
		{"tiers[0].limit", policy.ScopeTier, "tier_anonymous", policy.KeyIP, algorithms.NameTokenBucket},
		{"tiers[1].limit", policy.ScopeTier, "tier_partner", policy.KeyAccount, algorithms.NameGCRA},
		{"tiers[2].limit", policy.ScopeTier, "tier_batch", policy.KeyAPIKey, algorithms.NameFixedWindow},
		{"tiers[3].limit", policy.ScopeTier, "tier_search", policy.KeyAPIKey, algorithms.NameSlidingLog},
		{"tiers[4].limit", policy.ScopeTier, "tier_paid_plus", policy.KeyAPIKey, algorithms.NameSlidingWindow},
		{"endpoints[1].limit", policy.ScopeEndpoint, "endpoint_1", policy.KeyAPIKey, algorithms.NameSlidingWindow},
		{"endpoints[2].limit", policy.ScopeEndpoint, "endpoint_2", policy.KeyAPIKey, algorithms.NameGCRA},
		{"global.limit", policy.ScopeGlobal, "global", policy.KeyGlobal, algorithms.NameTokenBucket},
	}
	got := p.Limits()
	if len(got) != len(want) {
		t.Fatalf("%d limits, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Field != w.field || g.Scope != w.scope || g.Name != w.name || g.Key != w.key || g.Spec.Algorithm != w.alg || g.Shadow {
			t.Errorf("limit %d = {%s %s %s %s %s shadow=%v}, want {%s %s %s %s %s shadow=false}",
				i, g.Field, g.Scope, g.Name, g.Key, g.Spec.Algorithm, g.Shadow, w.field, w.scope, w.name, w.key, w.alg)
		}
	}
	if got[6].Match != (policy.Match{Method: "POST", Path: "/v1/orders"}) {
		t.Errorf("endpoint_1 match = %+v, want POST /v1/orders", got[6].Match)
	}
	if got[4].Tier != "search" {
		t.Errorf("tier_search's tier = %q, want search", got[4].Tier)
	}
}

// TestLimitsInheritAndShadow: a tier without a limit gets the default
// limit under its own name, and shadow mode marks every limit.
func TestLimitsInheritAndShadow(t *testing.T) {
	def := algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 20, Burst: 40}
	p := policy.Policy{
		Defaults: policy.Defaults{Key: policy.KeyIP, Mode: policy.ModeShadow, Limit: def},
		Tiers:    []policy.Tier{{Name: "free"}},
	}
	got := p.Limits()
	if len(got) != 2 {
		t.Fatalf("%d limits, want default and tier_free", len(got))
	}
	if got[1].Name != "tier_free" || got[1].Spec != def || got[1].Key != policy.KeyIP {
		t.Errorf("inherited tier = %+v, want tier_free with the default spec and key ip", got[1])
	}
	for _, l := range got {
		if !l.Shadow {
			t.Errorf("%s not marked shadow in a shadow policy", l.Field)
		}
	}
}

func TestIdent(t *testing.T) {
	tests := []struct{ in, want string }{
		{"paid", "paid"},
		{"Paid Plus", "paid_plus"},
		{"9lives", "x9lives"},
		{"", "x"},
		{"naïve-tier", "na_ve_tier"},
	}
	for _, tt := range tests {
		if got := policy.Ident(tt.in); got != tt.want {
			t.Errorf("Ident(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBucket(t *testing.T) {
	tests := []struct {
		spec      algorithms.Spec
		rate      float64
		burst     int64
		differs   bool
		whyHolder string
	}{
		{algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 5, Burst: 10}, 5, 10, false, ""},
		{algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 0.5, Burst: 3}, 0.5, 3, false, ""},
		// A queue of 5 holds 5 waiting requests plus the one in service.
		{algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2.5, Queue: 5}, 2.5, 6, true, "rejects them instead of delaying"},
		// 1000 per hour: 1000/3600 s = 0.2777… per second, burst 1000.
		{algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 1000, Window: time.Hour}, 1000.0 / 3600, 1000, true, "continuously"},
		// 30 per 10 s: 3 per second, burst 30.
		{algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 30, Window: 10 * time.Second}, 3, 30, true, "continuously"},
	}
	for _, tt := range tests {
		r, b, why := export.Bucket(tt.spec)
		if r != tt.rate || b != tt.burst || (why != "") != tt.differs || !strings.Contains(why, tt.whyHolder) {
			t.Errorf("Bucket(%s) = %v, %d, %q; want %v, %d, a reason containing %q", tt.spec, r, b, why, tt.rate, tt.burst, tt.whyHolder)
		}
	}
}

func TestWindow(t *testing.T) {
	tests := []struct {
		spec    algorithms.Spec
		limit   int64
		window  float64
		differs bool
	}{
		{algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 600, Window: time.Minute}, 600, 60, false},
		{algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 5, Window: 1500 * time.Millisecond}, 5, 1.5, false},
		// A bucket of 10 at 5/s empties and refills in 10/5 = 2 s.
		{algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 5, Burst: 10}, 10, 2, true},
		// A queue of 3 at 0.5/s: capacity 4, refilled in 4/0.5 = 8 s.
		{algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 0.5, Queue: 3}, 4, 8, true},
	}
	for _, tt := range tests {
		l, w, why := export.Window(tt.spec)
		if l != tt.limit || w != tt.window || (why != "") != tt.differs {
			t.Errorf("Window(%s) = %d per %vs, %q; want %d per %vs, reason given: %v", tt.spec, l, w, why, tt.limit, tt.window, tt.differs)
		}
	}
}

func TestPerInstance(t *testing.T) {
	shared := func(n int) policy.Policy {
		return policy.Policy{Service: policy.Service{Replicas: n, Enforcement: "shared"}}
	}
	tb := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 25}
	fw := algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 2, Window: time.Second}
	lb := algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 3, Queue: 0}
	tests := []struct {
		name string
		p    policy.Policy
		in   algorithms.Spec
		want algorithms.Spec
		why  bool
	}{
		{"one replica", shared(1), tb, tb, false},
		{"local enforcement is already per instance", policy.Policy{Service: policy.Service{Replicas: 4, Enforcement: "local"}}, tb, tb, false},
		// 10/s over 4 = 2.5/s; burst 25/4 = 6.25, rounded up to 7.
		{"bucket over four", shared(4), tb, algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 2.5, Burst: 7}, true},
		// 2 per second over 3 = 0.67, rounded up to 1, never 0.
		{"window never below one", shared(3), fw, algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 1, Window: time.Second}, true},
		// A queue of 0 stays 0 (no waiting), the drain rate divides.
		{"empty queue stays empty", shared(2), lb, algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 1.5, Queue: 0}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := export.PerInstance(tt.p, tt.in)
			if got != tt.want || (why != "") != tt.why {
				t.Errorf("PerInstance = %s, %q; want %s, reason given: %v", got, why, tt.want, tt.why)
			}
			if got.Validate() != nil {
				t.Errorf("per-instance spec %s is invalid: %v", got, got.Validate())
			}
		})
	}
}

func TestOptions(t *testing.T) {
	o := export.Options{TierHeader: "X-Plan"}.WithDefaults()
	if o.TierHeader != "X-Plan" || o.APIKeyHeader != "X-API-Key" || o.Upstream == "" || o.Listen == "" {
		t.Errorf("WithDefaults kept or filled wrongly: %+v", o)
	}
	for k, want := range map[policy.Key]string{
		policy.KeyAPIKey: "X-API-Key", policy.KeyAccount: "X-Account-ID", policy.KeyIP: "", policy.KeyGlobal: "",
	} {
		if got := (export.Options{}).KeyHeader(k); got != want {
			t.Errorf("KeyHeader(%s) = %q, want %q", k, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	ok := exporttest.Named(t, "every-algorithm")
	if err := export.Check(ok, export.Options{}); err != nil {
		t.Fatalf("every-algorithm with default options: %v", err)
	}
	with := func(edit func(*policy.Policy, *export.Options)) (policy.Policy, export.Options) {
		p := exporttest.Named(t, "every-algorithm")
		var o export.Options
		edit(&p, &o)
		return p, o
	}
	tests := []struct {
		name  string
		edit  func(*policy.Policy, *export.Options)
		field string // "" = accepted
	}{
		{"template path", func(p *policy.Policy, _ *export.Options) { p.Endpoints[0].Match.Path = "/v1/orders/{id}/items" }, ""},
		{"escaped path", func(p *policy.Policy, _ *export.Options) { p.Endpoints[0].Match.Path = "/v1/a%20b" }, ""},
		{"ipv6 upstream", func(_ *policy.Policy, o *export.Options) { o.Upstream = "[::1]:9000" }, ""},
		{"host listen", func(_ *policy.Policy, o *export.Options) { o.Listen = "0.0.0.0:80" }, ""},
		{"newline in name", func(p *policy.Policy, _ *export.Options) { p.Metadata.Name = "a\nlocation / {}" }, "metadata.name"},
		{"quote in tier", func(p *policy.Policy, _ *export.Options) { p.Tiers[1].Name = `pa"id` }, "tiers[1].name"},
		{"brace in path", func(p *policy.Policy, _ *export.Options) { p.Endpoints[2].Match.Path = "/v1/x;}" }, "endpoints[2].match.path"},
		{"space in path", func(p *policy.Policy, _ *export.Options) { p.Endpoints[0].Match.Path = "/v1/a b" }, "endpoints[0].match.path"},
		{"half escape", func(p *policy.Policy, _ *export.Options) { p.Endpoints[0].Match.Path = "/v1/%2" }, "endpoints[0].match.path"},
		{"placeholder inside a segment", func(p *policy.Policy, _ *export.Options) { p.Endpoints[0].Match.Path = "/v1/x{id}" }, "endpoints[0].match.path"},
		{"empty placeholder", func(p *policy.Policy, _ *export.Options) { p.Endpoints[0].Match.Path = "/v1/{}" }, "endpoints[0].match.path"},
		{"header with colon", func(_ *policy.Policy, o *export.Options) { o.TierHeader = "X-Tier: x" }, "tier_header"},
		{"upstream without port", func(_ *policy.Policy, o *export.Options) { o.Upstream = "api.internal" }, "upstream"},
		{"port out of range", func(_ *policy.Policy, o *export.Options) { o.Listen = "70000" }, "listen"},
		{"upstream with path", func(_ *policy.Policy, o *export.Options) { o.Upstream = "api/x:80" }, "upstream"},
		{"known gateway", func(_ *policy.Policy, o *export.Options) { o.Gateway = "envoy-gateway" }, ""},
		{"gateway with a newline", func(_ *policy.Policy, o *export.Options) { o.Gateway = "nginx\n- alert: x" }, "gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := export.Check(with(tt.edit))
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.field != "" && (err == nil || !strings.Contains(err.Error(), tt.field+": ")):
				t.Errorf("got %v, want an error naming %s", err, tt.field)
			}
		})
	}
}

func TestPathRegex(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/v1/orders", `^/v1/orders$`},
		{"/v1/orders/{id}", `^/v1/orders/[^/]+$`},
		{"/v1/{a}/x.json/{b}", `^/v1/[^/]+/x\.json/[^/]+$`},
		{"/a+b", `^/a\+b$`},
	}
	for _, tt := range tests {
		if got := policy.PathRegex(tt.path); got != tt.want {
			t.Errorf("PathRegex(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestLimitNamesUnique: tier names that differ only in case or
// punctuation get distinct identifiers, so no config has two zones,
// middlewares or consumers of one name.
func TestLimitNamesUnique(t *testing.T) {
	tb := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 1}
	p := policy.Policy{
		Defaults:  policy.Defaults{Limit: tb},
		Tiers:     []policy.Tier{{Name: "Paid Plus"}, {Name: "paid_plus"}, {Name: "paid-plus"}, {Name: "Global"}},
		Endpoints: []policy.Endpoint{{Match: policy.Match{Method: "GET", Path: "/a"}, Limit: tb}},
		Global:    policy.Global{Limit: tb},
	}
	// "Global" is tier_global, not global; the second and third Paid Plus
	// take their indexes 1 and 2.
	want := []string{"default", "tier_paid_plus", "tier_paid_plus_1", "tier_paid_plus_2", "tier_global", "endpoint_0", "global"}
	got := p.Limits()
	if len(got) != len(want) {
		t.Fatalf("%d limits, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Name != w {
			t.Errorf("limit %d named %q, want %q", i, got[i].Name, w)
		}
	}
}

func TestInstanceEnforcement(t *testing.T) {
	tests := []struct {
		svc      policy.Service
		to, why  string
		fidelity export.Fidelity
	}{
		{policy.Service{Replicas: 3}, "each of 3 gw instances enforces 1/3 of every limit", "shared why", export.Approximate},
		{policy.Service{Replicas: 3, Enforcement: "local"}, "each gw instance enforces the whole limit", "local why", export.Exact},
		{policy.Service{}, "one gw instance enforces the whole limit", "", export.Exact},
	}
	for _, tt := range tests {
		m := export.InstanceEnforcement(policy.Policy{Service: tt.svc}, "gw", "shared why", "local why")
		if m.Field != "service.enforcement" || m.To != tt.to || m.Why != tt.why || m.Fidelity != tt.fidelity {
			t.Errorf("%+v: %+v, want %q %q %s", tt.svc, m, tt.to, tt.why, tt.fidelity)
		}
	}
}

// TestPathRegexUnclosedBrace: a '{' without '}' is literal, not a loop.
func TestPathRegexUnclosedBrace(t *testing.T) {
	if got, want := policy.PathRegex("/a/{id"), `^/a/\{id$`; got != want {
		t.Errorf("PathRegex(/a/{id) = %q, want %q", got, want)
	}
}
