package envoyratelimit

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/envoy"
	"github.com/ratelab/ratelab/export/redis/redistest"
	"github.com/ratelab/ratelab/policy"
)

// client is who sends a request: its address and the identity headers
// the authentication layer set ("" for absent).
type client struct{ ip, apiKey, account string }

// clients are the schedules' senders; the last has no key headers.
var clients = []client{{"10.0.0.1", "key-1", "acct-1"}, {"10.0.0.2", "key-2", "acct-2"}, {"10.0.0.3", "", ""}}

// id is the client's value for key k ("" when it has none).
func (c client) id(k policy.Key) string {
	switch k {
	case policy.KeyIP:
		return c.ip
	case policy.KeyAPIKey:
		return c.apiKey
	case policy.KeyAccount:
		return c.account
	case policy.KeyGlobal:
		return "all"
	}
	return ""
}

// call is one request of a schedule, before it is put in engine or
// Envoy terms.
type call struct {
	at           time.Duration
	client       client
	tier         string // the tier header, "" for absent
	method, path string // path with its query, if any
}

// schedule draws n calls from a seeded generator, gap apart on average
// (uniform in [0, 2·gap)), over every tier name (as written, in upper
// case, absent, unknown), every endpoint (its template's {name}s filled
// in, with and without a query), another path, and every client.
func schedule(p policy.Policy, seed uint64, n int, gap time.Duration) []call {
	r := rand.New(rand.NewPCG(seed, 1))
	tiers := []string{"", "nosuch"}
	for _, t := range p.Tiers {
		tiers = append(tiers, t.Name, strings.ToUpper(t.Name))
	}
	type target struct{ method, path string }
	targets := []target{{"GET", "/other"}}
	for _, e := range p.Endpoints {
		for _, id := range []string{"1", "22", "special"} {
			var segs []string
			for _, s := range strings.Split(e.Match.Path, "/") {
				if policy.IsPlaceholder(s) {
					s = id
				}
				segs = append(segs, s)
			}
			path := strings.Join(segs, "/")
			targets = append(targets, target{e.Match.Method, path}, target{e.Match.Method, path + "?page=2"})
		}
		// The endpoint's path with another method.
		other := "GET"
		if strings.EqualFold(e.Match.Method, "GET") {
			other = "DELETE"
		}
		targets = append(targets, target{other, e.Match.Path})
	}
	var out []call
	var at time.Duration
	for range n {
		at += time.Duration(r.Int64N(int64(2 * gap)))
		tg := targets[r.IntN(len(targets))]
		out = append(out, call{at: at, client: clients[r.IntN(len(clients))], tier: tiers[r.IntN(len(tiers))],
			method: strings.ToUpper(tg.method), path: tg.path})
	}
	return out
}

// engineRequest is the call for the engine: the key is the client's value
// for the key of the limit its tier selects.
func engineRequest(p policy.Policy, eng *engine.Engine, c call) engine.Request {
	path, _, _ := strings.Cut(c.path, "?")
	q := engine.Request{At: c.at, Key: "?", Tier: c.tier, Method: c.method, Path: path}
	k := p.Defaults.Key
	if k == "" {
		k = policy.KeyAPIKey
	}
	if a := eng.Match(q); a.Tier >= 0 && p.Tiers[a.Tier].Key != "" {
		k = p.Tiers[a.Tier].Key
	}
	q.Key = c.client.id(k)
	return q
}

// envoyRequest is the call as Envoy's filter sees it, with the headers of
// the export's default Options and the route named by the matched
// endpoint's cost, as the export's Notes ask.
func envoyRequest(eng *engine.Engine, q engine.Request, c call) request {
	o := export.Options{}.WithDefaults()
	h := map[string]string{":method": c.method, ":path": c.path}
	if c.client.apiKey != "" {
		h[strings.ToLower(o.APIKeyHeader)] = c.client.apiKey
	}
	if c.client.account != "" {
		h[strings.ToLower(o.AccountHeader)] = c.client.account
	}
	if c.tier != "" {
		h[strings.ToLower(o.TierHeader)] = c.tier
	}
	return request{At: c.at, Remote: c.client.ip, Headers: h, Route: strconv.FormatInt(eng.Match(q).Cost, 10)}
}

// windowModel is the service as the export's mappings describe it: each
// limit that applies to a request (by the policy's rule, engine.Match) is
// a counter per client value of the limit's key (a limit whose key the
// request lacks does not apply) and per fixed window of the mapped unit,
// aligned to the epoch; every request adds its cost to each of its
// counters, admitted or not, and is admitted when none exceeds its
// requests_per_unit. In shadow mode every request passes.
type windowModel struct {
	limits []policy.Limit
	win    map[string]window
	count  map[string]int64
	shadow bool
}

// charge is one limit's part in a decision: which limit, the counter's
// client value and the hits.
type charge struct {
	limit int
	key   string
	hits  int64
}

// decide counts q and answers it.
func (m *windowModel) decide(a engine.Applicable, c client, at time.Duration) (bool, []charge) {
	ok := true
	var cs []charge
	for _, i := range a.Limits[:a.N] {
		l := m.limits[i]
		key := c.id(l.Key)
		if key == "" {
			continue
		}
		w := m.win[l.Field]
		k := l.Field + "|" + key + "|" + strconv.FormatInt(int64(at/time.Second)/w.Unit, 10)
		m.count[k] += a.Cost
		if m.count[k] > w.Requests {
			ok = false
		}
		cs = append(cs, charge{i, key, a.Cost})
	}
	return ok || m.shadow, cs
}

// decisionFields are the mappings that decide requests.
func decisive(m export.Mapping) bool {
	return strings.HasSuffix(m.Field, ".limit") || strings.HasSuffix(m.Field, ".cost") ||
		m.Field == "service.enforcement" || m.Field == "defaults.mode"
}

// oneUnitFixed reports whether every limit is a fixed window whose
// window is the unit it is mapped to, so the only difference the export
// states is that the service counts rejected requests too.
func oneUnitFixed(limits []policy.Limit, win map[string]window) bool {
	for _, l := range limits {
		if l.Spec.Algorithm != "fixed_window" || l.Spec.Window != time.Duration(win[l.Field].Unit)*time.Second {
			return false
		}
	}
	return true
}

// cases are the policies proven against the service, each with its
// schedule's size and mean gap.
var cases = []struct {
	name string
	yaml string
	n    int
	gap  time.Duration
}{
	{"fixed-window tiers by header", `
metadata: {name: fixed tiers}
service: {capacity: 100}
defaults: {key: api_key, limit: {algorithm: fixed_window, limit: 4, window: 1s}}
tiers:
  - {name: free, limit: {algorithm: fixed_window, limit: 2, window: 1s}}
  - {name: paid, limit: {algorithm: fixed_window, limit: 30, window: 1m}}
  - {name: anonymous, key: ip, limit: {algorithm: fixed_window, limit: 3, window: 1s}}
  - {name: partner, key: account, limit: {algorithm: fixed_window, limit: 5, window: 1s}}
  - {name: inherits}
endpoints:
  - {match: {method: GET, path: "/v1/items/{id}"}}
`, 400, 30 * time.Millisecond},
	{"fixed-window endpoint limit, templated, after an overlapping endpoint", `
metadata: {name: endpoint only}
service: {capacity: 100}
defaults: {key: api_key}
endpoints:
  - {match: {method: GET, path: /v1/items/special}}
  - {match: {method: GET, path: "/v1/items/{id}"}, limit: {algorithm: fixed_window, limit: 3, window: 1s}}
`, 400, 25 * time.Millisecond},
	{"shadow mode", `
metadata: {name: shadowed}
service: {capacity: 100}
defaults: {key: api_key, mode: shadow, limit: {algorithm: fixed_window, limit: 2, window: 1s}}
`, 200, 80 * time.Millisecond},
	{"fixed windows with endpoint, cost and global", `
metadata: {name: composed}
service: {capacity: 100}
defaults: {key: api_key, limit: {algorithm: fixed_window, limit: 60, window: 1m}}
tiers:
  - {name: paid, limit: {algorithm: fixed_window, limit: 120, window: 1m}}
endpoints:
  - {match: {method: POST, path: "/v1/orders/{id}"}, cost: 3, limit: {algorithm: fixed_window, limit: 3, window: 1s}}
  - {match: {method: GET, path: /v1/reports}, cost: 5}
global: {limit: {algorithm: fixed_window, limit: 300, window: 1m}}
`, 600, 200 * time.Millisecond},
	{"buckets and sliding windows as fixed windows", `
metadata: {name: approximated}
service: {capacity: 100}
defaults: {key: api_key, limit: {algorithm: token_bucket, rate: 1, burst: 60}}
tiers:
  - {name: gcra, limit: {algorithm: gcra, rate: 2, burst: 2}}
  - {name: sliding, limit: {algorithm: sliding_window, limit: 3, window: 1s}}
  - {name: log, key: ip, limit: {algorithm: sliding_log, limit: 20, window: 1m}}
  - {name: leaky, limit: {algorithm: leaky_bucket, rate: 1, queue: 4}}
  - {name: odd, limit: {algorithm: fixed_window, limit: 5, window: 1500ms}}
`, 800, 100 * time.Millisecond},
	{"per-replica limit on a shared counter", `
metadata: {name: replicas}
service: {capacity: 100, replicas: 3, enforcement: local}
defaults: {key: ip, limit: {algorithm: fixed_window, limit: 3, window: 1s}}
`, 200, 80 * time.Millisecond},
}

// TestServiceDecides renders each policy with the envoy-ratelimit export,
// loads the file into the envoyproxy/ratelimit service (its file
// provider, config loader, Redis fixed-window cache on a real
// redis-server and ShouldRateLimit, in virtual time), builds each
// request's descriptors with the rate_limits actions of the export's
// Envoy filter, and checks every decision:
//
//   - always, against the service as the mappings describe it
//     (windowModel: requests_per_unit per unit, every request counted);
//   - when every deciding mapping is Exact, against the engine, decision
//     for decision;
//   - when every limit is a fixed window of one unit (Approximate only
//     because the service counts rejected requests), the service admits
//     no request the engine rejects;
//   - for every limit, the service admits at most requests_per_unit in a
//     window and twice that in any span of one unit (the bound the
//     approximations' reasons state).
func TestServiceDecides(t *testing.T) {
	addr := redistest.Start(t)
	rdb := redistest.Client(t, addr)
	ctx := context.Background()
	total := 0
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := policy.Decode(strings.NewReader("apiVersion: ratelab/v1\nkind: RateLimitPolicy\n" + tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			ex, err := envoy.RateLimitService.Render(p, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			f := readFilter(t, ex)
			var c clock
			c.set(0)
			svc := startService(t, addr, &c, ex)
			eng, err := engine.New(p)
			if err != nil {
				t.Fatal(err)
			}
			match, _ := engine.New(p) // for Match only
			win := windows(t, ex)
			limits := eng.Limits()
			for _, l := range limits {
				if _, ok := win[l.Field]; !ok {
					t.Fatalf("%s has no mapping", l.Field)
				}
			}
			exact := true
			for _, m := range ex.Mappings {
				if decisive(m) && m.Fidelity != export.Exact {
					exact = false
				}
			}
			subset := !exact && oneUnitFixed(limits, win)
			model := &windowModel{limits: limits, win: win, count: map[string]int64{}, shadow: p.Defaults.EffectiveMode() == policy.ModeShadow}
			type admitted struct {
				at   time.Duration
				hits int64
			}
			byCounter := map[[2]string][]admitted{} // limit field, client value
			var passed, rejected, engineRejected int
			for i, cl := range schedule(p, uint64(ci+1), tc.n, tc.gap) {
				q := engineRequest(p, match, cl)
				er := envoyRequest(match, q, cl)
				got, err := ask(ctx, svc, &c, f, er)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				want, charges := model.decide(match.Match(q), cl.client, cl.at)
				d := eng.Decide(q)
				engineOK := d.Allowed || d.Shadow
				if !d.Allowed {
					engineRejected++
				}
				what := func() string {
					return cl.method + " " + cl.path + " at " + cl.at.String() + " from " + cl.client.ip + " key " + strconv.Quote(cl.client.apiKey) + " tier " + strconv.Quote(cl.tier)
				}
				if got != want {
					t.Errorf("request %d (%s): service admits %t, the mapped fixed windows %t", i, what(), got, want)
				}
				if exact && got != engineOK {
					t.Errorf("request %d (%s): service admits %t, the engine %t (every mapping is exact)", i, what(), got, engineOK)
				}
				if subset && got && !engineOK {
					t.Errorf("request %d (%s): the service admits what the engine rejects", i, what())
				}
				if got {
					passed++
					for _, ch := range charges {
						k := [2]string{limits[ch.limit].Field, ch.key}
						byCounter[k] = append(byCounter[k], admitted{cl.at, ch.hits})
					}
				} else {
					rejected++
				}
			}
			total += tc.n
			// The bounds the mappings state, from what the service admitted.
			if !model.shadow {
				for k, as := range byCounter {
					w := win[k[0]]
					unit := time.Duration(w.Unit) * time.Second
					for i := range as {
						var aligned, span int64
						for _, a := range as {
							if a.at/unit == as[i].at/unit {
								aligned += a.hits
							}
							if a.at >= as[i].at && a.at < as[i].at+unit {
								span += a.hits
							}
						}
						if aligned > w.Requests || span > 2*w.Requests {
							t.Errorf("%s, client %s: the service admitted %d in a window and %d in a unit from %v; the mapping says at most %d and %d",
								k[0], k[1], aligned, span, as[i].at, w.Requests, 2*w.Requests)
						}
					}
				}
			}
			t.Logf("%d requests: the service admitted %d, rejected %d; the engine rejected %d; exact=%t", tc.n, passed, rejected, engineRejected, exact)
			// A schedule that never hits a limit proves nothing.
			if engineRejected == 0 || passed == 0 || (!model.shadow && rejected == 0) {
				t.Errorf("the schedule does not exercise the limits: %d admitted, %d rejected by the service, %d by the engine", passed, rejected, engineRejected)
			}
		})
	}
	t.Logf("%d decisions over %d policies", total, len(cases))
}
