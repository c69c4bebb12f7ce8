package envoy

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
	envoyexport "github.com/ratelab/ratelab/export/envoy"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// mappingOf is the export's mapping of field.
func mappingOf(t *testing.T, ex export.Export, field string) export.Mapping {
	t.Helper()
	for _, m := range ex.Mappings {
		if m.Field == field {
			return m
		}
	}
	t.Fatalf("%s: no mapping of %s", ex.Target, field)
	return export.Mapping{}
}

// TestLocalNumbers parses envoy-local exports back and checks each bucket
// against numbers worked out by hand, and every exact bucket's refill rate
// against the (per replica) rate of its limit.
func TestLocalNumbers(t *testing.T) {
	type bucketWant struct {
		policy, field string
		maxTokens     uint32
		tokens        uint32
		interval      time.Duration
	}
	tests := []bucketWant{
		// public-api: 3 replicas sharing the limits, so each Envoy gets a third.
		// token_bucket(5, 50): 5/3 r/s → one token per 0.6 s; burst ⌈50/3⌉ = 17.
		{"public-api", "defaults.limit", 17, 1, 600 * time.Millisecond},
		// gcra(50, 500): 50/3 r/s → 5 tokens per 0.3 s; burst ⌈500/3⌉ = 167.
		{"public-api", "tiers[1].limit", 167, 5, 300 * time.Millisecond},
		// token_bucket(1600, 3200): 533.3 r/s → 80 per 0.15 s; ⌈3200/3⌉ = 1067.
		{"public-api", "global.limit", 1067, 80, 150 * time.Millisecond},
		// sliding_window(100/60s) over 3: 34 per minute → 34/60 r/s = 17 per 30 s.
		{"public-api", "endpoints[1].limit", 34, 17, 30 * time.Second},
		// every-algorithm enforces locally: no division.
		// leaky_bucket(2.5, queue 5): capacity 6, one token per 0.4 s.
		{"every-algorithm", "defaults.limit", 6, 1, 400 * time.Millisecond},
		// fixed_window(1000/1h): 1000 tokens, one per 3.6 s.
		{"every-algorithm", "tiers[2].limit", 1000, 1, 3600 * time.Millisecond},
		// token_bucket(800, 1600): 40 per 50 ms.
		{"every-algorithm", "global.limit", 1600, 40, 50 * time.Millisecond},
		// shadow: fixed_window(12000/1m) = 200 r/s, 10 per 50 ms.
		{"shadow", "global.limit", 12000, 10, 50 * time.Millisecond},
		// tiered: 4 replicas; fixed_window(200/1h)/4 = 50 per hour: one token per 72 s.
		{"tiered", "endpoints[1].limit", 50, 1, 72 * time.Second},
	}
	for _, tt := range tests {
		p := exporttest.Named(t, tt.policy)
		ex, err := envoyexport.Local.Render(p, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := parseLocal(t, ex.Body)
		i := slices.IndexFunc(p.Limits(), func(l policy.Limit) bool { return l.Field == tt.field })
		tb := c.lrl.GetDescriptors()[i].GetTokenBucket()
		if tb.GetMaxTokens() != tt.maxTokens || tb.GetTokensPerFill().GetValue() != tt.tokens || tb.GetFillInterval().AsDuration() != tt.interval {
			t.Errorf("%s %s: max_tokens=%d tokens_per_fill=%d fill_interval=%v, want %d, %d, %v", tt.policy, tt.field,
				tb.GetMaxTokens(), tb.GetTokensPerFill().GetValue(), tb.GetFillInterval().AsDuration(), tt.maxTokens, tt.tokens, tt.interval)
		}
	}

	for _, tp := range exporttest.Policies(t) {
		ex, err := envoyexport.Local.Render(tp.Policy, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := parseLocal(t, ex.Body)
		for i, l := range tp.Policy.Limits() {
			spec, _ := export.PerInstance(tp.Policy, l.Spec)
			rate, burst, _ := export.Bucket(spec)
			tb := c.lrl.GetDescriptors()[i].GetTokenBucket()
			if int64(tb.GetMaxTokens()) != burst {
				t.Errorf("%s %s: max_tokens %d, want burst %d", tp.Name, l.Field, tb.GetMaxTokens(), burst)
			}
			got := float64(tb.GetTokensPerFill().GetValue()) / tb.GetFillInterval().AsDuration().Seconds()
			if math.Abs(got-rate) > 1e-9*rate {
				t.Errorf("%s %s: refills %v/s, want %v/s", tp.Name, l.Field, got, rate)
			}
		}
	}
}

// request is what the rate_limits actions read from a request.
type request struct {
	method, path, addr string
	headers            map[string]string // lower-case names
}

// header is a request header, pseudo-headers included.
func (r request) header(name string) (string, bool) {
	switch name {
	case ":method":
		return r.method, true
	case ":path":
		return r.path, true
	}
	v, ok := r.headers[strings.ToLower(name)]
	return v, ok
}

// matches evaluates an Envoy header matcher the way the exports use them
// (exact, full-match safe_regex, present_match, invert_match).
func matches(t *testing.T, m *routev3.HeaderMatcher, r request) bool {
	t.Helper()
	v, ok := r.header(m.GetName())
	res := false
	switch sm := m.GetStringMatch(); {
	case m.GetPresentMatch():
		res = ok
	case !ok:
	case sm.GetExact() != "":
		res = v == sm.GetExact()
	case sm.GetSafeRegex() != nil:
		res = regexp.MustCompile(`^(?:` + sm.GetSafeRegex().GetRegex() + `)$`).MatchString(v)
	default:
		t.Fatalf("matcher %v not simulated", m)
	}
	if m.GetInvertMatch() {
		res = !res
	}
	return res
}

// descriptorsOf runs the rate_limits actions on a request as Envoy does:
// an action that cannot produce its entry drops the whole descriptor.
func descriptorsOf(t *testing.T, rls []*routev3.RateLimit, r request) [][]entry {
	t.Helper()
	var out [][]entry
	for _, rl := range rls {
		var d []entry
		ok := true
		for _, a := range rl.GetActions() {
			switch {
			case a.GetRequestHeaders() != nil:
				v, present := r.header(a.GetRequestHeaders().GetHeaderName())
				ok = ok && present
				d = append(d, entry{a.GetRequestHeaders().GetDescriptorKey(), v})
			case a.GetRemoteAddress() != nil:
				d = append(d, entry{"remote_address", r.addr})
			case a.GetGenericKey() != nil:
				d = append(d, entry{a.GetGenericKey().GetDescriptorKey(), a.GetGenericKey().GetDescriptorValue()})
			case a.GetHeaderValueMatch() != nil:
				h := a.GetHeaderValueMatch()
				all := true
				for _, m := range h.GetHeaders() {
					all = all && matches(t, m, r)
				}
				expect := h.GetExpectMatch() == nil || h.GetExpectMatch().GetValue()
				ok = ok && all == expect
				d = append(d, entry{h.GetDescriptorKey(), h.GetDescriptorValue()})
			default:
				t.Fatalf("action %v not simulated", a)
			}
		}
		if ok {
			out = append(out, d)
		}
	}
	return out
}

// routeName is the name of the first route that matches r.
func routeName(t *testing.T, rs []*routev3.Route, r request) string {
	t.Helper()
	path, _, _ := strings.Cut(r.path, "?")
	for _, rt := range rs {
		m := rt.GetMatch()
		hit := (m.GetPath() != "" && path == m.GetPath()) || (m.GetPrefix() != "" && strings.HasPrefix(path, m.GetPrefix())) ||
			(m.GetSafeRegex() != nil && regexp.MustCompile(`^(?:`+m.GetSafeRegex().GetRegex()+`)$`).MatchString(path))
		for _, h := range m.GetHeaders() {
			hit = hit && matches(t, h, r)
		}
		if hit {
			return rt.GetName()
		}
	}
	t.Fatalf("no route for %s %s", r.method, r.path)
	return ""
}

// TestDescriptorsReachLimits sends requests through a simulation of Envoy's
// rate_limits actions over the exported configuration: the descriptors they
// build must meet exactly the limits worked out by hand, in the local
// filter's descriptors (verbatim match, empty value = any) and in the
// ratelimit service's tree (the service's own lookup), with the route's cost.
func TestDescriptorsReachLimits(t *testing.T) {
	h := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[strings.ToLower(kv[i])] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		policy, name string
		req          request
		want         []string
		hits         int
	}{
		{"public-api", "keyed client in no tier", request{"GET", "/v1/items", "192.0.2.7", h("X-API-Key", "k1")},
			[]string{"defaults.limit", "global.limit"}, 1},
		{"public-api", "anonymous by address", request{"GET", "/v1/items", "192.0.2.7", h("X-Tier", "anonymous")},
			[]string{"tiers[0].limit", "global.limit"}, 1},
		{"public-api", "paid order with a query", request{"POST", "/v1/orders?dry=1", "192.0.2.7", h("X-Tier", "paid", "X-API-Key", "k1")},
			[]string{"tiers[1].limit", "endpoints[1].limit", "global.limit"}, 1},
		{"public-api", "orders read is no order", request{"GET", "/v1/orders", "192.0.2.7", h("X-API-Key", "k1")},
			[]string{"defaults.limit", "global.limit"}, 1},
		{"public-api", "unknown tier gets the default, reports cost 8", request{"GET", "/v1/reports", "192.0.2.7", h("X-Tier", "gold", "X-API-Key", "k1")},
			[]string{"defaults.limit", "global.limit"}, 8},
		{"public-api", "no key: only the global limit", request{"GET", "/v1/items", "192.0.2.7", h()},
			[]string{"global.limit"}, 1},
		{"every-algorithm", "tier name with a space", request{"GET", "/", "192.0.2.7", h("X-Tier", "Paid Plus", "X-API-Key", "k1")},
			[]string{"tiers[4].limit", "global.limit"}, 1},
		{"every-algorithm", "partner by account", request{"GET", "/", "192.0.2.7", h("X-Tier", "partner", "X-Account-ID", "a1", "X-API-Key", "k1")},
			[]string{"tiers[1].limit", "global.limit"}, 1},
		{"every-algorithm", "search costs 2 and has its own limit", request{"GET", "/v1/search", "192.0.2.7", h("X-API-Key", "k1")},
			[]string{"defaults.limit", "endpoints[2].limit", "global.limit"}, 2},
		{"minimal", "no tiers: every keyed request", request{"GET", "/", "192.0.2.7", h("X-API-Key", "k1", "X-Tier", "whatever")},
			[]string{"defaults.limit"}, 1},
		{"shadow", "ip-keyed default", request{"GET", "/", "192.0.2.7", h()},
			[]string{"defaults.limit", "global.limit"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.policy+"/"+tt.name, func(t *testing.T) {
			p := exporttest.Named(t, tt.policy)
			limits := p.Limits()
			ex, err := envoyexport.Local.Render(p, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := parseLocal(t, ex.Body)
			ds := descriptorsOf(t, c.lrl.GetRateLimits(), tt.req)

			var got []string
			for i, cd := range c.lrl.GetDescriptors() {
				for _, d := range ds {
					if len(d) != len(cd.GetEntries()) {
						continue
					}
					same := true
					for j, e := range cd.GetEntries() {
						same = same && e.GetKey() == d[j].key && (e.GetValue() == "" || e.GetValue() == d[j].value)
					}
					if same {
						got = append(got, limits[i].Field)
						break
					}
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("local limits met %v, want %v", got, tt.want)
			}
			hits := 1
			if rls := c.lrl.GetRateLimits(); len(rls) > 0 && rls[0].GetHitsAddend() != nil {
				if f := rls[0].GetHitsAddend().GetFormat(); f != "%ROUTE_NAME%" {
					t.Fatalf("hits_addend format %q", f)
				}
				hits, err = strconv.Atoi(routeName(t, c.hcm.GetRouteConfig().GetVirtualHosts()[0].GetRoutes(), tt.req))
				if err != nil {
					t.Fatal(err)
				}
			}
			if hits != tt.hits {
				t.Errorf("hits %d, want %d", hits, tt.hits)
			}

			// The same descriptors, asked of the service's own lookup.
			rex, err := envoyexport.RateLimitService.Render(p, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := loadRLS(rex.Filename, rex.Body)
			if err != nil {
				t.Fatal(err)
			}
			windows := serviceLimits(t, rex, p)
			var found []string
			for _, d := range ds {
				rl := cfg.GetLimit(context.Background(), domain(p), descriptor(d))
				if rl == nil {
					continue
				}
				for _, l := range limits {
					w := windows[l.Field]
					if int64(rl.Limit.GetRequestsPerUnit()) == w.requests && strings.EqualFold(rl.Limit.GetUnit().String(), w.unit) &&
						slices.Contains(tt.want, l.Field) && !slices.Contains(found, l.Field) {
						found = append(found, l.Field)
						break
					}
				}
			}
			slices.SortFunc(found, func(a, b string) int { return slices.Index(tt.want, a) - slices.Index(tt.want, b) })
			if !slices.Equal(found, tt.want) {
				t.Errorf("service limits met %v, want %v", found, tt.want)
			}
		})
	}
}

// envoyBucket models Envoy's continuous ("atomic") token bucket of the
// local_ratelimit filter (Envoy ≥ 1.31): it starts full, refills at
// tokens_per_fill / fill_interval per second up to max_tokens, and a request
// passes when the bucket holds its hits, which it then takes; a rejected
// request takes nothing.
type envoyBucket struct {
	max, rate, tokens float64
	last              time.Duration
}

func (b *envoyBucket) allow(now time.Duration, hits float64) bool {
	b.tokens = min(b.max, b.tokens+(now-b.last).Seconds()*b.rate)
	b.last = now
	if b.tokens < hits {
		return false
	}
	b.tokens -= hits
	return true
}

// arrivals is a pattern that tells bucket and window limits apart: a burst
// beyond the capacity, a stream at twice the rate, a pause long enough to
// refill, another burst. Times are offset from the rate's grid so no
// request lands exactly on a refill.
func arrivals(rate float64, capacity int64) []time.Duration {
	T := time.Duration(float64(time.Second) / rate)
	var at []time.Duration
	for i := int64(0); i < capacity+3; i++ {
		at = append(at, time.Duration(i)*time.Microsecond)
	}
	start := at[len(at)-1] + T/7
	for i := int64(0); i < 4*capacity+8; i++ {
		at = append(at, start+time.Duration(i)*T/2)
	}
	start = at[len(at)-1] + time.Duration(3*capacity+3)*T + T/3
	for i := int64(0); i < capacity+3; i++ {
		at = append(at, start+time.Duration(i)*time.Microsecond)
	}
	return at
}

// TestLocalBucketsMatchEngine runs every exported descriptor bucket, as
// Envoy's token bucket, against ratelab's own limiter for the policy's
// limit (per replica) on the same arrivals: an exact mapping must decide
// every request alike (and without delay), an approximate one for a window
// or a queue must differ somewhere (else it should have been exact).
func TestLocalBucketsMatchEngine(t *testing.T) {
	for _, tp := range exporttest.Policies(t) {
		ex, err := envoyexport.Local.Render(tp.Policy, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := parseLocal(t, ex.Body)
		for i, l := range tp.Policy.Limits() {
			spec, _ := export.PerInstance(tp.Policy, l.Spec)
			lim, err := algorithms.New(spec)
			if err != nil {
				t.Fatal(err)
			}
			tb := c.lrl.GetDescriptors()[i].GetTokenBucket()
			eb := &envoyBucket{max: float64(tb.GetMaxTokens()), tokens: float64(tb.GetMaxTokens()),
				rate: float64(tb.GetTokensPerFill().GetValue()) / tb.GetFillInterval().AsDuration().Seconds()}
			rate, capacity, _ := export.Bucket(spec)
			differ := 0
			for _, at := range arrivals(rate, capacity) {
				// Envoy never delays: a shaper's delayed request differs too.
				d := lim.Allow("k", at, 1)
				if eb.allow(at, 1) != d.Allowed || d.Delay() > 0 {
					differ++
				}
			}
			m := mappingOf(t, ex, l.Field)
			switch {
			case m.Fidelity == export.Exact && differ > 0:
				t.Errorf("%s %s: exact, but Envoy's bucket decides %d requests otherwise than %s", tp.Name, l.Field, differ, spec)
			case m.Fidelity != export.Exact && spec.Algorithm != "token_bucket" && spec.Algorithm != "gcra" && differ == 0:
				t.Errorf("%s %s: %s, but Envoy's bucket decides every request as %s does", tp.Name, l.Field, m.Fidelity, spec)
			}
		}
	}
}
