package traefik

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/traefik/paerser/file"
	"github.com/traefik/traefik/v3/pkg/config/dynamic"
	"github.com/traefik/traefik/v3/pkg/middlewares/headers"
	"github.com/traefik/traefik/v3/pkg/middlewares/ratelimiter"
	httpmuxer "github.com/traefik/traefik/v3/pkg/muxer/http"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	rltraefik "github.com/ratelab/ratelab/export/traefik"
	"github.com/ratelab/ratelab/policy"
)

// decodeFile decodes a rendered dynamic configuration as Traefik's file
// provider does (provider/file decodeConfiguration): paerser's
// file.DecodeContent of the YAML into a dynamic.Configuration whose maps
// are made beforehand.
func decodeFile(body []byte) (*dynamic.Configuration, error) {
	c := &dynamic.Configuration{HTTP: &dynamic.HTTPConfiguration{
		Routers:           map[string]*dynamic.Router{},
		Middlewares:       map[string]*dynamic.Middleware{},
		Services:          map[string]*dynamic.Service{},
		ServersTransports: map[string]*dynamic.ServersTransport{},
	}}
	if err := file.DecodeContent(string(body), ".yaml", c); err != nil {
		return nil, err
	}
	return c, nil
}

// render renders p with the traefik (file provider) target and decodes it.
func render(t *testing.T, p policy.Policy) (export.Export, *dynamic.Configuration) {
	t.Helper()
	e, err := rltraefik.Dynamic.Render(p, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeFile(e.Body)
	if err != nil {
		t.Fatalf("Traefik's file decoder: %v\n%s", err, e.Body)
	}
	if len(c.HTTP.Routers) == 0 {
		t.Fatalf("no routers decoded\n%s", e.Body)
	}
	return e, c
}

// decode decodes a policy document.
func decode(t *testing.T, doc string) policy.Policy {
	t.Helper()
	p, err := policy.Decode(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return p
}

// The policies of the suite: exporttest's shared ones and these, which
// have tiers named in mixed case, a tier without its own limit, {id}
// templates, overlapping endpoints in policy order, costs, a global limit
// and every algorithm, at rates a schedule of a few seconds exhausts.
const (
	chainPolicy = `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: chain}
service: {capacity: 100}
defaults: {key: api_key, limit: {algorithm: token_bucket, rate: 4, burst: 3}}
tiers:
  - {name: Paid, limit: {algorithm: token_bucket, rate: 8, burst: 4}}
  - {name: free}
endpoints:
  - {match: {method: GET, path: /orders/export}}
  - {match: {method: GET, path: "/orders/{id}"}, limit: {algorithm: token_bucket, rate: 2, burst: 2}}
  - {match: {method: POST, path: "/orders/{id}"}, cost: 2}
  - {match: {method: GET, path: "/{a}/{b}/items"}, limit: {algorithm: gcra, rate: 3, burst: 1}}
global: {limit: {algorithm: token_bucket, rate: 12, burst: 6}}
`
	algorithmsPolicy = `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: algorithms}
service: {capacity: 100}
defaults: {key: api_key, limit: {algorithm: fixed_window, limit: 5, window: 2s}}
tiers:
  - {name: Gold, limit: {algorithm: gcra, rate: 3, burst: 2}}
  - {name: slide, limit: {algorithm: sliding_window, limit: 4, window: 1s}}
  - {name: LOG, key: account, limit: {algorithm: sliding_log, limit: 3, window: 1s}}
endpoints:
  - {match: {method: GET, path: "/jobs/{id}"}, limit: {algorithm: leaky_bucket, rate: 5, queue: 1}}
`
	idlePolicy = `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: idle}
service: {capacity: 100}
defaults: {key: ip, limit: {algorithm: token_bucket, rate: 1, burst: 5}}
`
)

// routingPolicies are the policies whose routing is checked.
func routingPolicies(t *testing.T) []policy.Policy {
	var ps []policy.Policy
	for _, np := range exporttest.Policies(t) {
		ps = append(ps, np.Policy)
	}
	for _, doc := range []string{chainPolicy, algorithmsPolicy, idlePolicy} {
		ps = append(ps, decode(t, doc))
	}
	return ps
}

// routerHeader is the response header naming the router that served a
// request in the routing check.
const routerHeader = "X-Conformance-Router"

// muxer is Traefik's HTTP muxer with a route per router of c, its rule and
// priority as decoded, each served by handler(router name, router).
func muxer(t *testing.T, c *dynamic.Configuration, handler func(string, *dynamic.Router) http.Handler) http.Handler {
	t.Helper()
	parser, err := httpmuxer.NewSyntaxParser()
	if err != nil {
		t.Fatal(err)
	}
	mux := httpmuxer.NewMuxer(parser)
	for name, r := range c.HTTP.Routers {
		if r.Priority <= 0 {
			t.Fatalf("router %s: priority %d (Traefik would take the rule's length)", name, r.Priority)
		}
		if err := mux.AddRoute(r.Rule, r.RuleSyntax, r.Priority, handler(name, r)); err != nil {
			t.Fatalf("router %s: %v", name, err)
		}
	}
	return mux
}

// wantMiddlewares is the middleware chain the export's names give to the
// limits the engine applies to q: the client's limit, its cost limit
// (<client>_cost_<endpoint>, standing in for the endpoint's cost), the
// endpoint's limit, then global_key and the global limit. A method not in
// upper case selects no endpoint: Traefik compares methods exactly, as
// the endpoints' match mappings state.
func wantMiddlewares(p policy.Policy, eng *engine.Engine, q engine.Request) []string {
	if q.Method != strings.ToUpper(q.Method) {
		q.Method = "\x00"
	}
	a := eng.Match(q)
	lims := eng.Limits()
	var out []string
	for _, i := range a.Limits[:a.N] {
		l := lims[i]
		switch l.Scope {
		case policy.ScopeGlobal:
			out = append(out, "global_key", l.Name)
		case policy.ScopeEndpoint:
			out = append(out, l.Name)
		default:
			out = append(out, l.Name)
			if a.Endpoint >= 0 && p.Endpoints[a.Endpoint].Cost > 1 {
				out = append(out, fmt.Sprintf("%s_cost_%d", l.Name, a.Endpoint))
			}
		}
	}
	return out
}

// tierSpellings are header values for a policy's tiers: absent, each name
// as written, in lower and upper case and with its case swapped, names it
// is not (with a space, a Kelvin sign for k, a prefix), and an unknown one.
func tierSpellings(p policy.Policy) []string {
	out := []string{"", "nobody", "PAID ", " "}
	for _, tr := range p.Tiers {
		n := tr.Name
		swap := strings.Map(func(r rune) rune {
			switch {
			case 'a' <= r && r <= 'z':
				return r - 'a' + 'A'
			case 'A' <= r && r <= 'Z':
				return r - 'A' + 'a'
			}
			return r
		}, n)
		out = append(out, n, strings.ToLower(n), strings.ToUpper(n), swap, n+" ", "x"+n,
			strings.ReplaceAll(strings.ToLower(n), "k", "\u212a"))
	}
	return out
}

// requestPaths are the paths tried: exporttest's, the policy's templates
// with their {name} segments filled, emptied and extended, and some others.
// Paths Traefik's entry point would rewrite before routing (an empty or dot
// segment, a percent-escape: sanitizePath and the routing path's
// decoding) are left out, as the muxer alone sees them raw, and so are
// those that are not a request target (a space, a query, a fragment).
func requestPaths(p policy.Policy) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if seen[s] || strings.Contains(s, "//") || strings.Contains(s, "/./") || strings.Contains(s, "/../") || strings.Contains(s, "%") || strings.ContainsAny(s, " ?#") {
			return
		}
		seen[s] = true
		out = append(out, s)
	}
	for _, s := range exporttest.Paths {
		add(s)
	}
	for _, s := range []string{"/", "/x", "/orders", "/orders/", "/orders/1", "/orders/export", "/orders/export/", "/orders/1/2", "/jobs/9", "/a/b/items", "/a/b/items/"} {
		add(s)
	}
	for _, ep := range p.Endpoints {
		tmpl := ep.Match.Path
		fill := func(v string) string {
			segs := strings.Split(tmpl, "/")
			for i, s := range segs {
				if policy.IsPlaceholder(s) {
					segs[i] = v
				}
			}
			return strings.Join(segs, "/")
		}
		add(tmpl)
		add(fill("42"))
		add(fill("a.b"))
		add(fill(""))
		add(fill("42") + "/")
		add(fill("42") + "/more")
		add("/prefix" + fill("42"))
	}
	return out
}

// TestRoutingIsTheEngine checks the mappings labelled exact that route a
// request: for every policy and every method, path and tier-header
// spelling tried, the router Traefik's muxer picks (the decoded rules and
// priorities) chains exactly the middlewares of the limits engine.Match
// applies, under the export's names.
func TestRoutingIsTheEngine(t *testing.T) {
	o := export.Options{}.WithDefaults()
	methods := []string{"GET", "POST", "DELETE", "get", "Post"}
	for _, p := range routingPolicies(t) {
		t.Run(p.Metadata.Name, func(t *testing.T) {
			_, c := render(t, p)
			eng, err := engine.New(p)
			if err != nil {
				t.Fatal(err)
			}
			mux := muxer(t, c, func(name string, _ *dynamic.Router) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Header().Set(routerHeader, name) })
			})
			checked, endpointHits := 0, 0
			for _, method := range methods {
				for _, path := range requestPaths(p) {
					for _, tier := range tierSpellings(p) {
						req := httptest.NewRequest(method, "http://api.test"+path, nil)
						req.Header.Set(o.APIKeyHeader, "key-1")
						req.Header.Set(o.AccountHeader, "acct-1")
						if tier != "" {
							req.Header.Set(o.TierHeader, tier)
						}
						rec := httptest.NewRecorder()
						mux.ServeHTTP(rec, req)
						name := rec.Header().Get(routerHeader)
						if name == "" {
							t.Fatalf("%s %s tier %q: no router (status %d)", method, path, tier, rec.Code)
						}
						q := engine.Request{Key: "key-1", Tier: tier, Method: method, Path: req.URL.Path}
						want := wantMiddlewares(p, eng, q)
						got := c.HTTP.Routers[name].Middlewares
						if !slices.Equal(got, want) {
							t.Errorf("%s %s tier %q: Traefik picks router %s with %v; the engine applies %v", method, path, tier, name, got, want)
						}
						if strings.Contains(name, "endpoint_") {
							endpointHits++
						}
						checked++
					}
				}
			}
			if endpointHits == 0 && len(p.Endpoints) > 0 {
				t.Errorf("none of %d requests reached an endpoint router", checked)
			}
			t.Logf("%d requests over %d routers agree with engine.Match (%d on endpoint routers)", checked, len(c.HTTP.Routers), endpointHits)
		})
	}
}

// stageEvent is a request reaching one middleware of its router's chain
// (stage i of n; stage n is the upstream), at wall-clock time at, with the
// source key the middleware's sourceCriterion reads.
type stageEvent struct {
	id, stage int
	router    string
	name      string // middleware name, "" for the upstream
	at        time.Time
	key       string
}

// recorder collects the stage events and final statuses of a run.
type recorder struct {
	mu     sync.Mutex
	events []stageEvent
	status map[int]int
}

const idHeader = "X-Conformance-Id"

func (rc *recorder) add(ev stageEvent) {
	rc.mu.Lock()
	rc.events = append(rc.events, ev)
	rc.mu.Unlock()
}

// sourceKey is the value Traefik's sourceCriterion extracts from req, for
// the two criteria the export writes (a request header; ipStrategy of
// depth 0, the connection's address).
func sourceKey(rl *dynamic.RateLimit, req *http.Request) string {
	if sc := rl.SourceCriterion; sc != nil && sc.RequestHeaderName != "" {
		return req.Header.Get(sc.RequestHeaderName)
	}
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		return req.RemoteAddr
	}
	return host
}

// gateway is Traefik's muxer with each router's middlewares chained as the
// router names them, each built by Traefik's own constructor per router,
// as Traefik's middleware builder does (which is why each router has its
// own in-memory buckets), and an upstream answering 200. Every middleware
// and the upstream record when a request reaches them.
func gateway(t *testing.T, c *dynamic.Configuration, rc *recorder) http.Handler {
	ctx := context.Background()
	return muxer(t, c, func(name string, r *dynamic.Router) http.Handler {
		n := len(r.Middlewares)
		var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			var id int
			fmt.Sscan(req.Header.Get(idHeader), &id)
			rc.add(stageEvent{id: id, stage: n, router: name, at: time.Now()})
		})
		for i := n - 1; i >= 0; i-- {
			mw := r.Middlewares[i]
			m := c.HTTP.Middlewares[mw]
			if m == nil {
				t.Fatalf("router %s names middleware %s, which is not defined", name, mw)
			}
			var next http.Handler
			var err error
			switch {
			case m.RateLimit != nil:
				next, err = ratelimiter.New(ctx, h, *m.RateLimit, mw)
			case m.Headers != nil:
				next, err = headers.New(ctx, h, *m.Headers, mw)
			default:
				t.Fatalf("middleware %s: a kind the suite does not build", mw)
			}
			if err != nil {
				t.Fatalf("middleware %s: %v", mw, err)
			}
			stage := i
			h = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				var id int
				fmt.Sscan(req.Header.Get(idHeader), &id)
				ev := stageEvent{id: id, stage: stage, router: name, name: mw, at: time.Now()}
				if m.RateLimit != nil {
					ev.key = sourceKey(m.RateLimit, req)
				}
				rc.add(ev)
				next.ServeHTTP(w, req)
			})
		}
		return h
	})
}

// client is one stream of a schedule: who sends what.
type client struct {
	Key, Account, Tier, IP string
	Method, Path           string
}

// arrival is one request of a schedule, at offset At from the start.
type arrival struct {
	At time.Duration
	client
}

// randomSchedule is n requests of the clients, picked at random with a
// fixed seed, 12 to 60 ms apart (about 36 ms on average): irregular
// enough to hit full, empty and almost refilled buckets, and far enough
// apart that concurrent requests reach a middleware in their order.
func randomSchedule(seed uint64, n int, clients []client) []arrival {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out []arrival
	at := time.Duration(0)
	for range n {
		at += time.Duration(12+r.IntN(49)) * time.Millisecond
		out = append(out, arrival{At: at, client: clients[r.IntN(len(clients))]})
	}
	return out
}

// run sends the schedule to a fresh gateway of c in real time, each request
// in its own goroutine (a held request blocks its sender), and returns the
// recorder.
func run(t *testing.T, c *dynamic.Configuration, sched []arrival) *recorder {
	o := export.Options{}.WithDefaults()
	rc := &recorder{status: map[int]int{}}
	gw := gateway(t, c, rc)
	start := time.Now()
	var wg sync.WaitGroup
	for id, a := range sched {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(start.Add(a.At)))
			req := httptest.NewRequest(a.Method, "http://api.test"+a.Path, nil)
			req.Header.Set(idHeader, fmt.Sprint(id))
			for h, v := range map[string]string{o.APIKeyHeader: a.Key, o.AccountHeader: a.Account, o.TierHeader: a.Tier} {
				if v != "" {
					req.Header.Set(h, v)
				}
			}
			if a.IP != "" {
				req.RemoteAddr = a.IP + ":40000"
			}
			w := httptest.NewRecorder()
			gw.ServeHTTP(w, req)
			rc.mu.Lock()
			rc.status[id] = w.Code
			rc.mu.Unlock()
		}()
	}
	wg.Wait()
	return rc
}

// bucketModel is what the export's labels say one rateLimit middleware
// does, per router and source: the policy's own limiter for its limit
// (token_bucket and gcra as they are; the other algorithms as the token
// bucket of export.Bucket, rate/s and burst; a cost limit as its client's
// bucket with rate and burst divided by the cost), deciding when the
// request reaches the middleware; a request the limiter rejects but that
// would be admitted within maxDelay is held that long and then takes its
// token (and, while it is held, every later request there is rejected: it
// would wait longer than maxDelay); a source without a request for ttl
// whole clock seconds is forgotten and comes back full. Units: times from
// the run's start, maxDelay as Traefik computes it from average/period,
// ttl in seconds.
type bucketModel struct {
	name, field string
	spec        algorithms.Spec
	maxDelay    time.Duration
	ttl         int64
	why         string // the Why of the mapping the middleware comes from
}

// models are the bucket models of c's rateLimit middlewares, from the
// policy (not from the file: a rate or burst the file gets wrong shows as
// a disagreement). It fails when a middleware has no mapping.
func models(t *testing.T, p policy.Policy, e export.Export, c *dynamic.Configuration) map[string]*bucketModel {
	t.Helper()
	whys := map[string]string{}
	for _, m := range e.Mappings {
		whys[m.Field] = m.Why
	}
	out := map[string]*bucketModel{}
	byName := map[string]policy.Limit{}
	for _, l := range p.Limits() {
		byName[l.Name] = l
	}
	for name, m := range c.HTTP.Middlewares {
		if m.RateLimit == nil {
			continue
		}
		base, cost := name, int64(1)
		var ep int
		if i := strings.LastIndex(name, "_cost_"); i >= 0 {
			base = name[:i]
			fmt.Sscan(name[i+len("_cost_"):], &ep)
			cost = p.Endpoints[ep].Cost
		}
		l, ok := byName[base]
		if !ok {
			t.Fatalf("middleware %s: no limit of the policy has this name", name)
		}
		bm := &bucketModel{name: name, field: l.Field, spec: l.Spec}
		if cost > 1 || (l.Spec.Algorithm != algorithms.NameTokenBucket && l.Spec.Algorithm != algorithms.NameGCRA) {
			r, b, _ := export.Bucket(l.Spec)
			bm.spec = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: r / float64(cost), Burst: max(1, max(1, b)/cost)}
		}
		if cost > 1 {
			bm.field = fmt.Sprintf("endpoints[%d].cost", ep)
		}
		why, ok := whys[bm.field]
		if !ok {
			t.Fatalf("middleware %s: no mapping for %s", name, bm.field)
		}
		bm.why = why
		// Traefik's maxDelay and bucket ttl for this rate (ratelimiter.New).
		r := bm.spec.Rate
		bm.maxDelay, bm.ttl = 500*time.Millisecond, 1
		if r >= 1 {
			bm.maxDelay, bm.ttl = time.Second/(time.Duration(r)*2), 2
		} else {
			bm.ttl += int64(1 / r)
		}
		out[name] = bm
	}
	return out
}

// outcome is what one middleware did with one request.
type outcome int

const (
	admitted outcome = iota // passed on at once
	held                    // passed on after a wait
	rejected
)

func (o outcome) String() string { return [...]string{"admitted", "held", "rejected"}[o] }

// decision is one rateLimit middleware's decision on one request, seen and
// predicted.
type decision struct {
	ev       stageEvent
	model    *bucketModel
	got      outcome
	gotDelay time.Duration
	// set by predict:
	want      outcome
	wantDelay time.Duration
	forgot    bool // the source's bucket had been forgotten with tokens missing
	spent     bool // a later middleware rejected the request after this one charged it
}

// source is the state of one model bucket: router, middleware and key.
type source struct {
	lim      algorithms.Limiter
	lastSec  int64
	holdEnds time.Duration
	holding  bool
	last     time.Duration
}

// predict runs the models over the decisions in the order they happened
// and sets each one's prediction; shift moves decision i's time (to test
// how close to a boundary it is).
func predict(ds []decision, start time.Time, shiftAt int, shift time.Duration) {
	states := map[string]*source{}
	for i := range ds {
		d := &ds[i]
		at := d.ev.at.Add(0)
		if i == shiftAt {
			at = at.Add(shift)
		}
		now := at.Sub(start)
		k := d.ev.router + "\x00" + d.ev.name + "\x00" + d.ev.key
		st := states[k]
		if st != nil && st.holding && st.holdEnds <= now {
			st.lim.Allow(d.ev.key, st.holdEnds, 1)
			st.holding = false
		}
		d.forgot = false
		if st != nil && at.Unix() >= st.lastSec+d.model.ttl {
			// Forgotten: whether it matters is whether the policy's
			// bucket would not be full yet.
			if rem := st.lim.Allow(d.ev.key, now, 0).Remaining; rem < d.model.spec.Burst {
				d.forgot = true
			}
			st = nil
		}
		if st == nil {
			lim, _ := algorithms.New(d.model.spec)
			st = &source{lim: lim}
			states[k] = st
		}
		st.lastSec, st.last = at.Unix(), now
		d.wantDelay = 0
		switch ld := st.lim.Allow(d.ev.key, now, 1); {
		case st.holding:
			d.want = rejected
		case ld.Allowed:
			d.want = admitted
		case ld.RetryAfter() <= d.model.maxDelay:
			d.want, d.wantDelay = held, ld.RetryAfter()
			st.holding, st.holdEnds = true, now+ld.RetryAfter()
		default:
			d.want = rejected
		}
	}
}

// slack is how much later than predicted a request may be passed on (the
// goroutine that sleeps in Traefik's middleware wakes late on a busy
// machine), and tolerance how close to a refill boundary (or a clock
// second, for the ttl) a decision may be to count a disagreement as
// timing.
const (
	slack     = 40 * time.Millisecond
	tolerance = 5 * time.Millisecond
)

// agrees reports whether d's outcome is its prediction: the same outcome,
// a held request passed on no earlier than predicted (less a millisecond)
// and no later than slack after, an admitted one within slack.
func agrees(d decision) bool {
	same := d.got == d.want || (d.got == admitted && d.want == held && d.wantDelay < slack) || (d.got == held && d.want == admitted)
	if !same {
		return false
	}
	if d.want == rejected {
		return true
	}
	return d.gotDelay >= d.wantDelay-time.Millisecond && d.gotDelay <= d.wantDelay+slack
}

// decisions turns a run into the rateLimit middlewares' decisions, in the
// order they happened: one per request reaching one, passed on (with the
// wait until the next stage) or rejected (the request went no further and
// got 429).
func decisions(t *testing.T, rc *recorder, ms map[string]*bucketModel) []decision {
	t.Helper()
	type k struct{ id, stage int }
	byStage := map[k]stageEvent{}
	for _, ev := range rc.events {
		byStage[k{ev.id, ev.stage}] = ev
	}
	var ds []decision
	for _, ev := range rc.events {
		m := ms[ev.name]
		if m == nil {
			continue
		}
		d := decision{ev: ev, model: m, got: rejected}
		if next, ok := byStage[k{ev.id, ev.stage + 1}]; ok {
			d.gotDelay = next.at.Sub(ev.at)
			d.got = admitted
			if d.gotDelay > time.Millisecond {
				d.got = held
			}
		} else if s := rc.status[ev.id]; s != http.StatusTooManyRequests {
			t.Fatalf("request %d stopped at %s with status %d, not 429", ev.id, ev.name, s)
		}
		ds = append(ds, d)
	}
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].ev.at.Before(ds[j].ev.at) })
	// A request rejected at a later stage has spent the earlier ones'
	// tokens (each middleware charges on its own).
	rejectedAt := map[int]int{}
	for _, d := range ds {
		if d.got == rejected {
			rejectedAt[d.ev.id] = d.ev.stage
		}
	}
	for i := range ds {
		if s, ok := rejectedAt[ds[i].ev.id]; ok && s > ds[i].ev.stage {
			ds[i].spent = true
		}
	}
	return ds
}

// limitCase is one limiting check: a policy and its schedule.
type limitCase struct {
	name   string
	policy string
	sched  []arrival
	// need are the model's mechanisms the schedule must exercise, so that
	// a case cannot pass by never reaching a limit.
	need []string
}

// TestLimitingAsLabelled sends each case's schedule through Traefik's
// muxer and rateLimit middlewares in real time and checks every
// middleware's decision against bucketModel, the prediction the export's
// mappings make (all of them approximate: the limits, the costs): each
// mechanism by which the model departs from the policy's own limiter must
// be stated in the Why of the mapping of the middleware it happened in
// (held within maxDelay; budget per router; a token spent on a request a
// later middleware rejected; a forgotten bucket). A disagreement within
// tolerance of a boundary is timing and reruns the case, at most 3
// attempts; any other fails at once.
func TestLimitingAsLabelled(t *testing.T) {
	chainClients := []client{
		{Key: "a", Method: "GET", Path: "/orders/1"},
		{Key: "a", Method: "GET", Path: "/"},
		{Key: "a", Method: "POST", Path: "/orders/9"},
		{Key: "b", Tier: "PAID", Method: "GET", Path: "/orders/7"},
		{Key: "b", Tier: "paid", Method: "GET", Path: "/x/y/items"},
		{Key: "c", Tier: "Free", Method: "POST", Path: "/orders/3"},
		{Key: "c", Tier: "FREE", Method: "GET", Path: "/orders/export"},
		{Key: "d", Method: "GET", Path: "/orders/2"},
	}
	algClients := []client{
		{Key: "a", Method: "GET", Path: "/"},
		{Key: "b", Tier: "gold", Method: "GET", Path: "/"},
		{Key: "c", Tier: "SLIDE", Method: "GET", Path: "/"},
		{Key: "d", Account: "acct", Tier: "log", Method: "GET", Path: "/"},
		{Key: "e", Method: "GET", Path: "/jobs/1"},
	}
	// idle: two clients by address drain their buckets, pause 2.1 s (more
	// than Traefik's 2 s ttl at 1/s) and come back.
	var idle []arrival
	for i := range 7 {
		idle = append(idle, arrival{At: time.Duration(i) * 20 * time.Millisecond, client: client{IP: "192.0.2.1", Method: "GET", Path: "/"}})
		idle = append(idle, arrival{At: time.Duration(i)*20*time.Millisecond + 10*time.Millisecond, client: client{IP: "192.0.2.2", Method: "GET", Path: "/"}})
	}
	for i := range 6 {
		idle = append(idle, arrival{At: 2240*time.Millisecond + time.Duration(i)*20*time.Millisecond, client: client{IP: "192.0.2.1", Method: "GET", Path: "/"}})
	}
	cases := []limitCase{
		{name: "chain", policy: chainPolicy, sched: randomSchedule(1, 70, chainClients), need: []string{"admitted", "rejected", "spent", "router"}},
		{name: "algorithms", policy: algorithmsPolicy, sched: randomSchedule(2, 70, algClients), need: []string{"admitted", "rejected"}},
		{name: "idle", policy: idlePolicy, sched: idle, need: []string{"admitted", "rejected", "forgot"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := decode(t, tc.policy)
			e, c := render(t, p)
			ms := models(t, p, e, c)
			routersOf := map[string]int{}
			for _, r := range c.HTTP.Routers {
				for _, m := range r.Middlewares {
					routersOf[m]++
				}
			}
			for attempt := 1; ; attempt++ {
				rc := run(t, c, tc.sched)
				var start time.Time
				for _, ev := range rc.events {
					if start.IsZero() || ev.at.Before(start) {
						start = ev.at
					}
				}
				ds := decisions(t, rc, ms)
				predict(ds, start, -1, 0)
				seen := map[string]int{}
				timing := 0
				for i, d := range ds {
					seen[d.got.String()]++
					if d.want == held {
						seen["held"]++
					}
					if !agrees(d) {
						near := false
						for _, s := range []time.Duration{-tolerance, tolerance} {
							alt := slices.Clone(ds)
							predict(alt, start, i, s)
							if agrees(alt[i]) {
								near = true
							}
						}
						if !near {
							t.Fatalf("request %d (%s %s at %s) at %s on router %s, key %q: Traefik %s (after %s), the labels predict %s (after %s)\n%s",
								d.ev.id, tc.sched[d.ev.id].Method, tc.sched[d.ev.id].Path, d.ev.at.Sub(start).Round(time.Millisecond), d.ev.name, d.ev.router, d.ev.key,
								d.got, d.gotDelay.Round(time.Millisecond), d.want, d.wantDelay.Round(time.Millisecond), e.Body)
						}
						timing++
						continue
					}
					// Each departure from the policy's limiter that this
					// decision shows must be in the mapping's Why.
					for _, st := range []struct {
						on     bool
						what   string
						phrase string
					}{
						{d.want == held, "held", "maxDelay"},
						{d.forgot, "forgot", "forgets"},
						{d.spent, "spent", "spent"},
						{routersOf[d.ev.name] > 1, "router", "routers use this middleware"},
					} {
						if !st.on {
							continue
						}
						seen[st.what]++
						if !strings.Contains(d.model.why, st.phrase) {
							t.Errorf("middleware %s (%s): Traefik's decision shows it %s, which its mapping's Why does not state (%q): %s",
								d.ev.name, d.model.field, st.what, st.phrase, d.model.why)
						}
					}
				}
				if timing > 0 {
					t.Logf("attempt %d: %d of %d decisions within %s of a boundary disagree (timing)", attempt, timing, len(ds), tolerance)
					if attempt < 3 {
						continue
					}
					t.Fatalf("timing disagreements in %d attempts", attempt)
				}
				for _, w := range tc.need {
					if seen[w] == 0 {
						t.Errorf("the schedule never shows %s (seen %v)", w, seen)
					}
				}
				t.Logf("%d requests, %d middleware decisions agree with the labels: %v", len(tc.sched), len(ds), seen)
				return
			}
		})
	}
}
