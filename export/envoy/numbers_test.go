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
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// TestFillFor checks the fill interval search against intervals worked out
// by hand: the shortest multiple of 50 ms at which rate × interval is a
// whole number of tokens.
func TestFillFor(t *testing.T) {
	tests := []struct {
		rate      float64
		tokens    int64
		interval  time.Duration
		wantExact bool
	}{
		{800, 40, 50 * time.Millisecond, true}, // 800 × 0.05 = 40
		{7.5, 3, 400 * time.Millisecond, true}, // 7.5 × 0.05k whole first at k = 8
		{2.5, 1, 400 * time.Millisecond, true}, // 2.5 × 0.4 = 1
		{10, 1, 100 * time.Millisecond, true},  // 10 × 0.05 = 0.5, × 0.1 = 1
		{0.5, 1, 2 * time.Second, true},        // one token every 2 s
		{1.0 / 3, 1, 3 * time.Second, true},    // one token every 3 s
		{1e9, 50_000_000, 50 * time.Millisecond, true},
		{1.0 / 86400, 1, 24 * time.Hour, true},     // one a day: the last step searched
		{1e-6, 1, 1_000_000 * time.Second, true},   // found from the token side
		{5.0 / 3, 1, 600 * time.Millisecond, true}, // 5 r/s over 3 replicas
	}
	for _, tt := range tests {
		f, exact := fillFor(tt.rate)
		if exact != tt.wantExact || f.tokens != tt.tokens || f.interval() != tt.interval {
			t.Errorf("fillFor(%v) = %d per %v exact=%t, want %d per %v exact=%t",
				tt.rate, f.tokens, f.interval(), exact, tt.tokens, tt.interval, tt.wantExact)
		}
		if math.Abs(f.rate()-tt.rate) > 1e-9*tt.rate {
			t.Errorf("fillFor(%v) refills %v/s", tt.rate, f.rate())
		}
	}
	// 1.234567 r/s refills whole tokens only every 1234567 × 50 ms steps
	// (1234567 and 20e6 are coprime), more than a day: the nearest
	// interval is close and flagged.
	const odd = 1.234567
	f, exact := fillFor(odd)
	if exact {
		t.Errorf("fillFor(%v) = %d per %v claims to be exact", odd, f.tokens, f.interval())
	}
	if e := math.Abs(f.rate()-odd) / odd; e > 1e-6 {
		t.Errorf("fillFor(%v) = %d per %v errs by %g", odd, f.tokens, f.interval(), e)
	}
	if f.interval() < minFill {
		t.Errorf("fillFor(%v) interval %v below 50 ms", odd, f.interval())
	}
}

// TestPerUnit is the fidelity table of the window targets (the ratelimit
// service and Envoy Gateway) for each algorithm, with the requests per
// unit worked out by hand.
func TestPerUnit(t *testing.T) {
	tests := []struct {
		name  string
		spec  algorithms.Spec
		want  string
		exact bool
	}{
		{"fixed window of an hour", algorithms.Spec{Algorithm: "fixed_window", Limit: 1000, Window: time.Hour}, "1000/hour", true},
		{"fixed window of a minute", algorithms.Spec{Algorithm: "fixed_window", Limit: 12000, Window: time.Minute}, "12000/minute", true},
		{"fixed window of 30 days", algorithms.Spec{Algorithm: "fixed_window", Limit: 30, Window: 30 * 24 * time.Hour}, "30/month", true},
		{"fixed window of 365 days", algorithms.Spec{Algorithm: "fixed_window", Limit: 9, Window: 365 * 24 * time.Hour}, "9/year", true},
		// 5 per 10 s = 0.5/s: 1/second errs by 100%, 30/minute is exact in rate.
		{"fixed window of 10s", algorithms.Spec{Algorithm: "fixed_window", Limit: 5, Window: 10 * time.Second}, "30/minute", false},
		{"sliding window of a minute", algorithms.Spec{Algorithm: "sliding_window", Limit: 600, Window: time.Minute}, "600/minute", false},
		// 30 per 10 s = 3/s, and a second is the largest unit within 10 s.
		{"sliding log of 10s", algorithms.Spec{Algorithm: "sliding_log", Limit: 30, Window: 10 * time.Second}, "3/second", false},
		// 50 per 10 s as a window: 5/s in seconds.
		{"token bucket", algorithms.Spec{Algorithm: "token_bucket", Rate: 5, Burst: 50}, "5/second", false},
		// 0.5/s: 30 per minute.
		{"gcra", algorithms.Spec{Algorithm: "gcra", Rate: 0.5, Burst: 3}, "30/minute", false},
		// 2.5/s with a queue of 5: 150 per minute (3/second would err by 20%).
		{"leaky bucket", algorithms.Spec{Algorithm: "leaky_bucket", Rate: 2.5, Queue: 5}, "150/minute", false},
		// One per minute with burst 1 is a window of one minute, still a bucket.
		{"token bucket of a unit", algorithms.Spec{Algorithm: "token_bucket", Rate: 1.0 / 60, Burst: 1}, "1/minute", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, exact, why := perUnit(policy.Limit{Spec: tt.spec})
			if w.String() != tt.want || exact != tt.exact {
				t.Errorf("perUnit(%s) = %s exact=%t, want %s exact=%t", tt.spec, w, exact, tt.want, tt.exact)
			}
			if !exact && why == "" {
				t.Errorf("perUnit(%s) is approximate without a reason", tt.spec)
			}
		})
	}
}

// TestFidelityByAlgorithm renders a one-limit policy per algorithm with
// each target and checks the limit's fidelity: the local token bucket is
// exact for the buckets; the window targets are exact only for a fixed
// window of one unit.
func TestFidelityByAlgorithm(t *testing.T) {
	tests := []struct {
		spec                   algorithms.Spec
		local, service, egRule export.Fidelity
	}{
		{algorithms.Spec{Algorithm: "token_bucket", Rate: 10, Burst: 100}, export.Exact, export.Approximate, export.Approximate},
		{algorithms.Spec{Algorithm: "gcra", Rate: 10, Burst: 100}, export.Exact, export.Approximate, export.Approximate},
		{algorithms.Spec{Algorithm: "leaky_bucket", Rate: 10, Queue: 20}, export.Approximate, export.Approximate, export.Approximate},
		{algorithms.Spec{Algorithm: "fixed_window", Limit: 600, Window: time.Minute}, export.Approximate, export.Exact, export.Exact},
		{algorithms.Spec{Algorithm: "fixed_window", Limit: 600, Window: 90 * time.Second}, export.Approximate, export.Approximate, export.Approximate},
		{algorithms.Spec{Algorithm: "sliding_log", Limit: 600, Window: time.Minute}, export.Approximate, export.Approximate, export.Approximate},
		{algorithms.Spec{Algorithm: "sliding_window", Limit: 600, Window: time.Minute}, export.Approximate, export.Approximate, export.Approximate},
		// 1/7 r/s has no whole number of tokens in a whole number of 50 ms steps up to a day?
		// It does: one token every 7 s (140 steps).
		{algorithms.Spec{Algorithm: "token_bucket", Rate: 1.0 / 7, Burst: 3}, export.Exact, export.Approximate, export.Approximate},
	}
	for _, tt := range tests {
		t.Run(tt.spec.String(), func(t *testing.T) {
			p := exporttest.Named(t, "minimal")
			p.Defaults.Limit = tt.spec
			for _, c := range []struct {
				target export.Target
				want   export.Fidelity
			}{{Local, tt.local}, {RateLimitService, tt.service}, {Gateway, tt.egRule}} {
				ex, err := c.target.Render(p, export.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if got := mappingOf(t, ex, "defaults.limit").Fidelity; got != c.want {
					t.Errorf("%s: %s, want %s", c.target.Name, got, c.want)
				}
			}
		})
	}
}

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
		ex, err := Local.Render(p, export.Options{})
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
		ex, err := Local.Render(tp.Policy, export.Options{})
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
			ex, err := Local.Render(p, export.Options{})
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
			rex, err := RateLimitService.Render(p, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := loadRLS(rex.Filename, rex.Body)
			if err != nil {
				t.Fatal(err)
			}
			var found []string
			for _, d := range ds {
				rl := cfg.GetLimit(context.Background(), domain(p), descriptor(d))
				if rl == nil {
					continue
				}
				for _, l := range limits {
					w, _, _ := perUnit(l)
					if int64(rl.Limit.GetRequestsPerUnit()) == w.requests && strings.EqualFold(rl.Limit.GetUnit().String(), w.unit.name) &&
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
		ex, err := Local.Render(tp.Policy, export.Options{})
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
