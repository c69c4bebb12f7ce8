package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/policy"
)

// specs has one limit of every algorithm, small enough that random traffic
// hits them.
var specs = []algorithms.Spec{
	{Algorithm: algorithms.NameTokenBucket, Rate: 3, Burst: 4},
	{Algorithm: algorithms.NameGCRA, Rate: 2.5, Burst: 3},
	{Algorithm: algorithms.NameLeakyBucket, Rate: 4, Queue: 2},
	{Algorithm: algorithms.NameFixedWindow, Limit: 5, Window: 2 * time.Second},
	{Algorithm: algorithms.NameSlidingLog, Limit: 4, Window: 1500 * time.Millisecond},
	{Algorithm: algorithms.NameSlidingWindow, Limit: 6, Window: time.Second},
}

// TestPeekIsExact: what Decide relies on. For every algorithm, a request
// of cost c is admitted exactly when Allow at cost 0 reports at least c
// remaining, and asking at cost 0 changes no later decision.
func TestPeekIsExact(t *testing.T) {
	for _, s := range specs {
		t.Run(string(s.Algorithm), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(s.Algorithm))))
			peeked, plain := mustNew(t, s), mustNew(t, s)
			now := time.Duration(0)
			for step := range 20000 {
				now += time.Duration(r.ExpFloat64() * float64(100*time.Millisecond))
				key := fmt.Sprint(r.IntN(3))
				cost := int64(1 + r.IntN(3))
				if r.IntN(10) == 0 {
					cost = s.Capacity() + 1
				}
				p := peeked.Allow(key, now, 0)
				got := peeked.Allow(key, now, cost)
				want := plain.Allow(key, now, cost)
				if got != want {
					t.Fatalf("step %d: after a look at cost 0, got %+v, want %+v", step, got, want)
				}
				if (p.Remaining >= cost) != got.Allowed {
					t.Fatalf("step %d: cost %d with %d remaining: allowed %v", step, cost, p.Remaining, got.Allowed)
				}
			}
		})
	}
}

func mustNew(t *testing.T, s algorithms.Spec) algorithms.Limiter {
	t.Helper()
	l, err := algorithms.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestGlobalCutsDesignedPeak: one client designed to send 300 r/s for 2 s
// (a per-client bucket of rate 100, burst 401) behind a global bucket of
// rate 100, burst 100. The global bucket holds 100 tokens and gains 100/s,
// so by the last of the 600 arrivals (at 599/300 s) it has let through
// ⌊100 + 100·599/300⌋ = 299; the rest are the global limit's.
func TestGlobalCutsDesignedPeak(t *testing.T) {
	p := basePolicy()
	p.Defaults.Limit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 100, Burst: 401}
	p.Global.Limit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 100, Burst: 100}
	e := mustEngine(t, p)
	admitted := 0
	for k := range 600 {
		d := e.Decide(Request{At: time.Duration(k) * time.Second / 300, Key: "c"})
		if d.Allowed {
			admitted++
			continue
		}
		if got := e.Limits()[d.Rejected].Name; got != "global" {
			t.Fatalf("request %d rejected by %q, want global", k, got)
		}
	}
	if want := int(math.Floor(100 + 100*599.0/300)); admitted != want {
		t.Errorf("admitted %d of 600, want %d", admitted, want)
	}
}

// TestRejectedChargesNothing: a request the endpoint limit rejects leaves
// the client's limit as it was.
func TestRejectedChargesNothing(t *testing.T) {
	p := basePolicy()
	p.Defaults.Limit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1e-6, Burst: 2}
	p.Endpoints = []policy.Endpoint{{Match: policy.Match{Method: "GET", Path: "/a"},
		Limit: algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 1, Window: time.Hour}}}
	e := mustEngine(t, p)
	steps := []struct {
		path   string
		allow  bool
		reject string
	}{
		{"/a", true, ""},
		{"/a", false, "endpoint_0"}, // the default limit still has 1
		{"/b", true, ""},
		{"/b", false, "default"},
	}
	for i, s := range steps {
		d := e.Decide(Request{At: time.Duration(i) * time.Millisecond, Key: "k", Method: "GET", Path: s.path})
		got := ""
		if d.Rejected >= 0 {
			got = e.Limits()[d.Rejected].Name
		}
		if d.Allowed != s.allow || got != s.reject {
			t.Errorf("step %d: got allowed %v by %q, want %v by %q", i, d.Allowed, got, s.allow, s.reject)
		}
	}
}

// TestMatch: tier names ignore ASCII case, the first matching endpoint
// wins and gives the cost, {name} is one non-empty segment, a keyless
// request meets only the global limit.
func TestMatch(t *testing.T) {
	p := basePolicy()
	p.Defaults.Limit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 10}
	p.Tiers = []policy.Tier{
		{Name: "Paid", Limit: algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 5, Burst: 50}},
		{Name: "free"}, // inherits the default limit
	}
	p.Endpoints = []policy.Endpoint{
		{Match: policy.Match{Method: "GET", Path: "/v1/items/{id}"}, Cost: 5},
		{Match: policy.Match{Method: "GET", Path: "/v1/items/7"}, Cost: 2,
			Limit: algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 3, Window: time.Second}},
		{Match: policy.Match{Method: "post", Path: "/v1/orders"},
			Limit: algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 3, Window: time.Second}},
	}
	p.Global.Limit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 100, Burst: 100}
	e := mustEngine(t, p)
	names := func(a Applicable) string {
		var out []string
		for _, i := range a.Limits[:a.N] {
			out = append(out, e.Limits()[i].Name)
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name           string
		q              Request
		tier, endpoint int
		cost           int64
		limits         string
	}{
		{"default", Request{Key: "k", Method: "GET", Path: "/"}, -1, -1, 1, "default,global"},
		{"tier exact", Request{Key: "k", Tier: "Paid"}, 0, -1, 1, "tier_paid,global"},
		{"tier lower", Request{Key: "k", Tier: "paid"}, 0, -1, 1, "tier_paid,global"},
		{"tier upper", Request{Key: "k", Tier: "PAID"}, 0, -1, 1, "tier_paid,global"},
		{"tier inherits", Request{Key: "k", Tier: "FREE"}, 1, -1, 1, "tier_free,global"},
		{"unknown tier", Request{Key: "k", Tier: "gold"}, -1, -1, 1, "default,global"},
		{"template first", Request{Key: "k", Method: "get", Path: "/v1/items/7"}, -1, 0, 5, "default,global"},
		{"template other", Request{Key: "k", Method: "GET", Path: "/v1/items/abc"}, -1, 0, 5, "default,global"},
		{"empty segment", Request{Key: "k", Method: "GET", Path: "/v1/items/"}, -1, -1, 1, "default,global"},
		{"deeper path", Request{Key: "k", Method: "GET", Path: "/v1/items/7/x"}, -1, -1, 1, "default,global"},
		{"other method", Request{Key: "k", Method: "DELETE", Path: "/v1/items/7"}, -1, -1, 1, "default,global"},
		{"endpoint limit", Request{Key: "k", Method: "POST", Path: "/v1/orders"}, -1, 2, 1, "default,endpoint_2,global"},
		{"keyless", Request{Method: "POST", Path: "/v1/orders", Tier: "paid"}, 0, 2, 1, "global"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := e.Match(tt.q)
			if a.Tier != tt.tier || a.Endpoint != tt.endpoint || a.Cost != tt.cost || names(a) != tt.limits {
				t.Errorf("got tier %d endpoint %d cost %d limits %s, want %d %d %d %s",
					a.Tier, a.Endpoint, a.Cost, names(a), tt.tier, tt.endpoint, tt.cost, tt.limits)
			}
		})
	}
}

// TestDecideMatchesModel compares Decide with a model written from the
// rule alone, on random policies and traffic: the limits that apply are
// found with regular expressions and Unicode-free case folding, and
// whether a limit admits a request is found by replaying every request it
// admitted so far, then this one, on a new limiter. The model knows
// nothing of looking at cost 0.
func TestDecideMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	dropped := 0
	for n := range 40 {
		p := randomPolicy(r)
		e := mustEngine(t, p)
		// ec is decided by DecideClient, its ids kept as a caller keeps
		// them: taken again when Epoch has changed.
		ec := mustEngine(t, p)
		type kept struct {
			id    int32
			epoch uint64
		}
		ids := map[string]kept{}
		m := newModel(t, p)
		now := time.Duration(0)
		for step := range 300 {
			now += time.Duration(r.ExpFloat64() * float64(80*time.Millisecond))
			q := randomRequest(r, now)
			got, want := e.Decide(q), m.decide(q)
			if got != want {
				t.Fatalf("policy %d step %d: %+v\n got %+v\nwant %+v", n, step, q, got, want)
			}
			k, ok := ids[q.Key]
			if q.Key != "" && (!ok || k.epoch != ec.Epoch()) {
				k = kept{ec.Client(q.Key), ec.Epoch()}
				ids[q.Key] = k
			}
			if got := ec.DecideClient(k.id, q); got != want {
				t.Fatalf("policy %d step %d: %+v\nDecideClient %+v\n        want %+v", n, step, q, got, want)
			}
			// Reclaiming drops only rested clients, which decide as new
			// ones: the model, which never forgets, must still agree.
			if r.IntN(8) == 0 {
				dropped += e.Reclaim(now)
				ec.Reclaim(now)
			}
		}
		// Long after the last request every client is rested.
		e.Reclaim(now + 24*time.Hour)
		if k := e.Keys(); k != 0 {
			t.Fatalf("policy %d: %d clients hold state a day after the last request", n, k)
		}
	}
	if dropped == 0 {
		t.Fatal("no Reclaim dropped a client: the test did not exercise reclaiming")
	}
}

var (
	tierNames = []string{"free", "Paid", "batch"}
	paths     = []string{"/v1/items/1", "/v1/items/2", "/v1/items/", "/v1/orders", "/v1/reports/9/pdf", "/health"}
	templates = []string{"/v1/items/{id}", "/v1/items/1", "/v1/orders", "/v1/reports/{id}/{format}", "/v1/{any}"}
)

func randomSpec(r *rand.Rand) algorithms.Spec { return specs[r.IntN(len(specs))] }

func randomPolicy(r *rand.Rand) policy.Policy {
	p := basePolicy()
	if r.IntN(4) > 0 {
		p.Defaults.Limit = randomSpec(r)
	}
	for _, name := range tierNames[:r.IntN(len(tierNames)+1)] {
		t := policy.Tier{Name: name}
		if r.IntN(3) > 0 {
			t.Limit = randomSpec(r)
		}
		p.Tiers = append(p.Tiers, t)
	}
	for range r.IntN(4) {
		ep := policy.Endpoint{Match: policy.Match{Method: []string{"GET", "post"}[r.IntN(2)], Path: templates[r.IntN(len(templates))]}}
		if r.IntN(2) == 0 {
			ep.Cost = int64(1 + r.IntN(3))
		}
		if r.IntN(2) == 0 {
			ep.Limit = randomSpec(r)
		}
		p.Endpoints = append(p.Endpoints, ep)
	}
	if r.IntN(3) > 0 {
		s := randomSpec(r)
		// The global limit is shared by every key: give it more room.
		s.Rate *= 3
		s.Burst *= 3
		s.Queue *= 3
		s.Limit *= 3
		p.Global.Limit = s
	}
	if r.IntN(5) == 0 {
		p.Defaults.Mode = policy.ModeShadow
	}
	return p
}

func randomRequest(r *rand.Rand, at time.Duration) Request {
	q := Request{At: at, Key: fmt.Sprint("k", r.IntN(4)), Method: []string{"GET", "POST", "get"}[r.IntN(3)], Path: paths[r.IntN(len(paths))]}
	if r.IntN(8) == 0 {
		q.Key = ""
	}
	switch r.IntN(4) {
	case 0:
	case 1:
		q.Tier = "gold"
	default:
		q.Tier = tierNames[r.IntN(len(tierNames))]
		if r.IntN(2) == 0 {
			q.Tier = strings.ToUpper(q.Tier)
		}
	}
	return q
}

// model decides by the rule, the slow way.
type model struct {
	t        *testing.T
	p        policy.Policy
	limits   []policy.Limit
	regexps  []*regexp.Regexp
	admitted [][]event // per limit
}

type event struct {
	key  string
	at   time.Duration
	cost int64
}

func newModel(t *testing.T, p policy.Policy) *model {
	m := &model{t: t, p: p, limits: p.Limits()}
	m.admitted = make([][]event, len(m.limits))
	for _, ep := range p.Endpoints {
		m.regexps = append(m.regexps, regexp.MustCompile(policy.PathRegex(ep.Match.Path)))
	}
	return m
}

func (m *model) index(field string) int {
	for i, l := range m.limits {
		if l.Field == field {
			return i
		}
	}
	return -1
}

func (m *model) decide(q Request) Decision {
	d := Decision{Rejected: -1, Applicable: Applicable{Tier: -1, Endpoint: -1, Cost: 1}, Shadow: m.p.Defaults.Mode == policy.ModeShadow}
	client := m.index("defaults.limit")
	for i, t := range m.p.Tiers {
		if q.Tier != "" && strings.EqualFold(t.Name, q.Tier) {
			d.Tier, client = i, m.index(fmt.Sprintf("tiers[%d].limit", i))
			break
		}
	}
	endpointLimit := -1
	for i, ep := range m.p.Endpoints {
		if strings.EqualFold(ep.Match.Method, q.Method) && m.regexps[i].MatchString(q.Path) {
			d.Endpoint = i
			if ep.Cost > 0 {
				d.Cost = ep.Cost
			}
			endpointLimit = m.index(fmt.Sprintf("endpoints[%d].limit", i))
			break
		}
	}
	var apply []int
	if q.Key != "" {
		for _, i := range []int{client, endpointLimit} {
			if i >= 0 {
				apply = append(apply, i)
			}
		}
	}
	if g := m.index("global.limit"); g >= 0 {
		apply = append(apply, g)
	}
	d.N = copy(d.Limits[:], apply)
	keyOf := func(i int) string {
		if m.limits[i].Scope == policy.ScopeGlobal {
			return ""
		}
		return q.Key
	}
	// What each limit decides, replaying what it admitted so far.
	decisions := make([]algorithms.Decision, len(apply))
	for j, i := range apply {
		decisions[j] = m.replay(i).Allow(keyOf(i), q.At, d.Cost)
	}
	d.Allowed = true
	d.Remaining = noLimit
	for j, i := range apply {
		if !decisions[j].Allowed {
			d.Allowed = false
			if d.Rejected < 0 {
				d.Rejected = i
			}
			d.RetryAfter = max(d.RetryAfter, decisions[j].RetryAfter())
		}
	}
	for j, i := range apply {
		ld := decisions[j]
		if d.Allowed {
			m.admitted[i] = append(m.admitted[i], event{keyOf(i), q.At, d.Cost})
			d.Delay = max(d.Delay, ld.Delay())
		} else if ld.Allowed {
			// Not charged after all: report the state as it is (cost 0
			// only reports).
			ld = m.replay(i).Allow(keyOf(i), q.At, 0)
		}
		d.Remaining = min(d.Remaining, ld.Remaining)
		d.Reset = max(d.Reset, ld.Reset)
	}
	return d
}

// replay is limit i with every request it admitted so far.
func (m *model) replay(i int) algorithms.Limiter {
	l := mustNew(m.t, m.limits[i].Spec)
	for _, ev := range m.admitted[i] {
		l.Allow(ev.key, ev.at, ev.cost)
	}
	return l
}

func basePolicy() policy.Policy {
	return policy.Policy{APIVersion: policy.APIVersion, Kind: policy.Kind, Metadata: policy.Metadata{Name: "test"},
		Service: policy.Service{Capacity: 1000}}
}

func mustEngine(t *testing.T, p policy.Policy) *Engine {
	t.Helper()
	e, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestTierAnyCase matches tier names ignoring ASCII case, the first of
// the policy's names equal but for case winning, both with a few tiers
// (compared in turn) and with more than scanTiers (looked up in a map),
// and with names longer than the lookup's stack buffer.
func TestTierAnyCase(t *testing.T) {
	long := strings.Repeat("Enterprise", 8) // 80 bytes
	for _, n := range []int{3, scanTiers, scanTiers + 1, 20} {
		p := basePolicy()
		var names []string
		for i := range n {
			name := fmt.Sprintf("Tier%d", i)
			if i == 1 {
				name = long
			}
			names = append(names, name)
			p.Tiers = append(p.Tiers, policy.Tier{Name: name})
		}
		e := mustEngine(t, p)
		want := func(tier string) int {
			for i, name := range names {
				if strings.EqualFold(name, tier) {
					return i
				}
			}
			return -1
		}
		asked := []string{"", "tier0", "TIER0", "Tier0", "tIeR2", "tier", "tier00", long, strings.ToLower(long), strings.ToUpper(long), "Ünterprise"}
		for i := range n {
			asked = append(asked, fmt.Sprintf("TIER%d", i), fmt.Sprintf("tier%d", i))
		}
		for _, tier := range asked {
			if got := e.Match(Request{Key: "k", Tier: tier, Method: "GET", Path: "/"}).Tier; got != want(tier) {
				t.Errorf("%d tiers: tier %q matched %d, want %d", n, tier, got, want(tier))
			}
		}
	}
}

// TestEndpointMatchesAsRegex: every template (valid endpoint paths)
// against every path, each endpoint matching exactly when the template's regular expression (each
// {name} one non-empty segment, [^/]+, as the gateway exports write it)
// matches. The paths cut each template short, carry it on, double its
// slashes and empty its placeholders, so a matcher that lets a {name}
// match nothing or cross a '/', or a literal run match a prefix of a
// longer segment, fails.
func TestEndpointMatchesAsRegex(t *testing.T) {
	templates := []string{"/", "/v1", "/v1/", "/v1/items", "/v1/items/{id}", "/v1/items/{id}/", "/v1/items/{id}/parts",
		"/{a}", "/{a}/{b}", "/{a}/x/{b}", "/v1//items", "/v1/itemsx/{id}"}
	var paths []string
	for _, tp := range templates {
		for _, fill := range []string{"7", "abc", "", "a/b"} {
			p := strings.NewReplacer("{id}", fill, "{a}", fill, "{b}", fill).Replace(tp)
			paths = append(paths, p, p+"/", p+"x", strings.TrimSuffix(p, "/"), strings.ReplaceAll(p, "/", "//"), p[:len(p)/2])
		}
	}
	paths = append(paths, "", "v1/items/7", "/v1/items/7?x=1")
	matches := 0
	for _, tp := range templates {
		if !policy.ValidPath(tp) {
			t.Fatalf("template %q: not a valid endpoint path", tp)
		}
		ep := endpoint{method: "GET", parts: template(tp)}
		re := regexp.MustCompile(policy.PathRegex(tp))
		for _, p := range paths {
			want := re.MatchString(p)
			if got := ep.matches("get", p); got != want {
				t.Errorf("template %q, path %q: matches %v, want %v", tp, p, got, want)
			}
			if want {
				matches++
			}
			if ep.matches("POST", p) {
				t.Errorf("template %q, path %q: matches another method", tp, p)
			}
		}
	}
	if matches < len(templates) {
		t.Fatalf("only %d matches: the paths do not exercise the templates", matches)
	}
}

// FuzzEndpointMatchesAsRegex: for any valid endpoint path (a template
// policy validation accepts) and any request path, the engine's matcher
// agrees with the template's regular expression, the form the gateway
// exports write; a method other than the endpoint's never matches.
func FuzzEndpointMatchesAsRegex(f *testing.F) {
	for _, s := range [][2]string{
		{"/v1/items/{id}", "/v1/items/7"}, {"/v1/items/{id}", "/v1/items/"}, {"/v1/items/{id}", "/v1/items/7/x"},
		{"/{a}/x/{b}", "/p/x/q"}, {"/{a}/x/{b}", "/p/xq"}, {"/", "/"}, {"/", ""}, {"/v1//items", "/v1//items"},
		{"/v1/", "/v1"}, {"/a/{b}/", "/a/b/"}, {"/a/{b}/", "/a//"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, tp, path string) {
		if !policy.ValidPath(tp) || len(tp) > 256 || len(path) > 256 {
			return
		}
		ep := endpoint{method: "GET", parts: template(tp)}
		want := regexp.MustCompile(policy.PathRegex(tp)).MatchString(path)
		if got := ep.matches("get", path); got != want {
			t.Fatalf("template %q, path %q: matches %v, want %v", tp, path, got, want)
		}
		if ep.matches("POST", path) {
			t.Fatalf("template %q, path %q: matches another method", tp, path)
		}
	})
}

// TestRoutesFindTheFirstMatch: with more endpoints than are tried in
// turn, a request is still to the first endpoint, in policy order, whose
// method (ignoring ASCII case) and path template match it, the template
// read as a regular expression (policy.PathRegex), over random policies
// whose templates share segments and random paths that meet them.
func TestRoutesFindTheFirstMatch(t *testing.T) {
	segs := []string{"a", "b", "v1", "{x}", "{id}", ""}
	reqSegs := []string{"a", "b", "v1", "c", "", "{x}"}
	methods := []string{"GET", "POST", "get", "Post", "DELETE"}
	r := rand.New(rand.NewPCG(7, 11))
	pick := func(from []string, n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = from[r.IntN(len(from))]
		}
		return "/" + strings.Join(parts, "/")
	}
	for trial := range 300 {
		n := scanEndpoints + 1 + r.IntN(40)
		p := basePolicy()
		p.Defaults.Limit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 1}
		res := make([]*regexp.Regexp, n)
		for i := range n {
			m := policy.Match{Method: methods[r.IntN(2)], Path: pick(segs, 1+r.IntN(4))}
			p.Endpoints = append(p.Endpoints, policy.Endpoint{Match: m, Cost: int64(i + 1)})
			res[i] = regexp.MustCompile(policy.PathRegex(m.Path))
		}
		e := mustEngine(t, p)
		if e.routes.nodes == nil {
			t.Fatalf("%d endpoints are tried in turn, not through the tree", n)
		}
		for range 200 {
			method, path := methods[r.IntN(len(methods))], pick(reqSegs, 1+r.IntN(5))
			switch r.IntN(20) {
			case 0:
				path = path[1:]
			case 1:
				path = ""
			}
			want := -1
			for i, ep := range p.Endpoints {
				if strings.EqualFold(ep.Match.Method, method) && res[i].MatchString(path) {
					want = i
					break
				}
			}
			a := e.Match(Request{Key: "k", Method: method, Path: path})
			if a.Endpoint != want {
				t.Fatalf("trial %d: %s %q: endpoint %d, want %d (%+v)", trial, method, path, a.Endpoint, want, p.Endpoints)
			}
			if want >= 0 && a.Cost != int64(want+1) {
				t.Fatalf("trial %d: %s %q: cost %d, want %d", trial, method, path, a.Cost, want+1)
			}
		}
	}
}

// TestRouteMemoWalksOncePerString: in a Simulate, a request whose method
// and path are strings seen before (the same bytes at the same address)
// gets the endpoint found for them without a walk of the tree; the same
// bytes elsewhere, a shorter string at the same address, or another
// method are found afresh, and every answer is the one without the memo.
func TestRouteMemoWalksOncePerString(t *testing.T) {
	var eps []endpoint
	var templates []string
	for i := range 20 {
		tp := fmt.Sprintf("/v1/r%d/{id}", i/2)
		eps = append(eps, endpoint{method: []string{"GET", "POST"}[i%2], parts: template(tp)})
		templates = append(templates, tp)
	}
	plain, memo := newRoutes(eps, templates), newRoutes(eps, templates)
	memo.memo = routeMemo{}
	paths := []string{"/v1/r3/7", "/v1/r9/x", "/v1/none/1", "/v1/r3/77"}
	type req struct{ method, path string }
	var reqs []req
	for range 50 {
		for _, p := range paths {
			reqs = append(reqs, req{"GET", p}, req{"post", p})
		}
	}
	// The same bytes at another address, and a prefix at the same one.
	reqs = append(reqs, req{"GET", strings.Clone(paths[0])}, req{"GET", paths[3][:len(paths[0])]}, req{"GET", paths[3][:7]})
	for i, q := range reqs {
		if got, want := memo.find(q.method, q.path), plain.find(q.method, q.path); got != want {
			t.Fatalf("request %d, %s %s: endpoint %d, want %d", i, q.method, q.path, got, want)
		}
	}
	if want := 2*len(paths) + 3; memo.walks != want {
		t.Errorf("%d walks for %d requests of %d strings, want %d", memo.walks, len(reqs), want, want)
	}
	// Past maxMemo strings of their own, requests walk without it.
	for i := range maxMemo {
		memo.find("GET", fmt.Sprint("/v1/r", i%10, "/", i))
	}
	if memo.memo != nil {
		t.Errorf("the memo holds %d strings, past its bound of %d", len(memo.memo), maxMemo)
	}
}

// TestSimulateManyEndpointsIsDecide: Simulate, which remembers each
// method and path's endpoint, decides a policy of many endpoints as
// Decide does, for requests whose strings are shared and for requests
// whose strings are each their own.
func TestSimulateManyEndpointsIsDecide(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 10 {
		p := randomPolicy(r)
		p.Endpoints = nil
		for i := range scanEndpoints + 1 + r.IntN(10) {
			ep := policy.Endpoint{Match: policy.Match{Method: []string{"GET", "post"}[r.IntN(2)], Path: templates[r.IntN(len(templates))]}, Cost: int64(1 + i%3)}
			if r.IntN(2) == 0 {
				ep.Limit = randomSpec(r)
			}
			p.Endpoints = append(p.Endpoints, ep)
		}
		var reqs []Request
		for i := range 2000 {
			q := randomRequest(r, time.Duration(i)*time.Millisecond)
			if n%2 == 1 {
				q.Method, q.Path = strings.Clone(q.Method), strings.Clone(q.Path)
			}
			reqs = append(reqs, q)
		}
		res, err := Simulate(p, Simulation{Requests: reqs, Decisions: true})
		if err != nil {
			t.Fatal(err)
		}
		e := mustEngine(t, p)
		if e.routes.nodes == nil {
			t.Fatal("the policy's endpoints are tried in turn, not through the tree")
		}
		for i, q := range reqs {
			if got, want := res.Decisions[i], e.Decide(q); got != want {
				t.Fatalf("policy %d request %d: got %+v, want %+v", n, i, got, want)
			}
		}
	}
}
