// Package traefik exports a policy to Traefik v3's rateLimit middleware,
// as a file-provider dynamic configuration ([Dynamic]) or as Kubernetes
// Middleware and IngressRoute resources ([CRD]).
//
// Model. Traefik's rateLimit is golang.org/x/time/rate per source: a token
// bucket refilled at average/period requests per second (period any
// duration, so fractional rates are exact) holding burst tokens. A request
// that finds no token but would get one within maxDelay — 1/(2·⌊r⌋) s, or
// 500 ms when r < 1/s — is held and then forwarded; one that would wait
// longer gets 429 with Retry-After. The source is one of: the client IP
// (ipStrategy), one request header (requestHeaderName), or the Host
// (requestHost). Traefik has no dry run, no cost weights and no RateLimit
// headers; buckets live in memory unless the middleware names a Redis
// (v3.4+), and in memory each router referencing a middleware gets its
// own bucket set (traefik/traefik#13706).
//
// Layout of the export: one rateLimit middleware per limit of the policy
// (per-client limits keyed by the key's header or the IP; the global limit
// keyed by a header that a headers middleware sets to one constant, so all
// clients share one bucket), one router per client class (each tier, by a
// HeaderRegexp on Options.TierHeader matching the tier's name ignoring
// ASCII case, and the default) and per endpoint that has a limit or a cost
// (and per earlier endpoint that overlaps one), each chaining the class's,
// the endpoint's and the global middlewares, and one service to
// Options.Upstream. An endpoint's rule is its Method and a PathRegexp of
// its template, {name} as one non-empty segment ([^/]+), the rest quoted
// and the whole anchored: Traefik's Path() would take the template
// literally. Routers get explicit priorities (Traefik's default is the
// rule's length), distinct and at least 1: the tiers in policy order above
// the default, and in each class the endpoints in policy order above the
// catch-all, so the router Traefik picks is the policy's first match.
package traefik

import (
	"fmt"
	"math"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// Dynamic is the file-provider target: one YAML file of dynamic
// configuration (http.middlewares, http.routers, http.services).
var Dynamic = export.Target{
	Name:   "traefik",
	Title:  "Traefik rateLimit (file provider)",
	Group:  export.Gateways,
	Render: renderDynamic,
}

// CRD is the Kubernetes target: traefik.io/v1alpha1 Middleware documents,
// one per limit, and an IngressRoute with the routes.
var CRD = export.Target{
	Name:   "traefik-crd",
	Title:  "Traefik Middleware CRD (Kubernetes)",
	Group:  export.Gateways,
	Render: renderCRD,
}

// GlobalHeader is the request header the export sets to a constant before
// the global limit, so that the global rateLimit keys every request the same.
const GlobalHeader = "X-Ratelab-Global"

// criterion is how a rateLimit middleware tells sources apart.
type criterion struct {
	// IP keys by the client address (ipStrategy); else Header names the
	// request header that does.
	IP     bool
	Header string
}

func (c criterion) String() string {
	if c.IP {
		return "sourceCriterion.ipStrategy (client address)"
	}
	return "sourceCriterion.requestHeaderName=" + c.Header
}

// limiter is one rateLimit middleware.
type limiter struct {
	Name    string // Traefik name: "default", "tier_paid", "endpoint_1", "global", "default_cost_0"
	Field   string // policy path of the limit
	Spec    algorithms.Spec
	Average int64
	Period  int64 // seconds
	Burst   int64
	Rate    float64 // requests/s the middleware enforces: Average/Period
	Exact   bool    // Average/Period is Rate to the last bit
	By      criterion
	// Shared are the undivided numbers a Redis-backed middleware would use
	// (set when the policy shares one limit over several replicas).
	Shared *limiter
	// Cost marks the scaled limit standing in for an endpoint's cost.
	Cost bool
	why  []string // what differs from the policy's limit
}

// router is one HTTP router.
type router struct {
	Name        string
	Rule        string
	Priority    int
	Middlewares []string
}

// plan is everything both targets render.
type plan struct {
	p           policy.Policy
	o           export.Options
	limiters    []*limiter
	routers     []router
	globalKey   bool // the headers middleware that sets GlobalHeader
	sharedRedis bool // the policy shares limits over replicas: offer Redis
	uses        map[string]int
	routed      []int // endpoints with routers, in policy order
	exp         export.Export
}

// class is a client class: the default clients or one tier.
type class struct {
	name  string // "default" or "tier_<ident>"
	tier  string // tier name, "" for default
	limit *limiter
}

// average finds a whole average per whole-second period whose quotient,
// computed as Traefik does (average·10⁹ / period in ns, in float64), is r:
// the continued-fraction convergents of r, first exact one. ok is false
// when no convergent with average and period·10⁹ inside int64 is exact;
// the closest one is returned then.
func average(r float64) (avg, period int64, ok bool) {
	const maxWhole = math.MaxInt64 / int64(time.Second)
	// Convergents h/k of r's continued fraction.
	hPrev, h := int64(1), int64(math.Floor(r))
	kPrev, k := int64(0), int64(1)
	x := r - math.Floor(r)
	bestA, bestP := max(h, 1), int64(1)
	for range 64 {
		if h >= 1 && h <= maxWhole && k <= maxWhole {
			bestA, bestP = h, k
			if traefikRate(h, k) == r {
				return h, k, true
			}
		}
		if x == 0 || h > maxWhole || k > maxWhole {
			break
		}
		x = 1 / x
		a := math.Floor(x)
		x -= a
		if a > float64(maxWhole) {
			break
		}
		ai := int64(a)
		hPrev, h = h, ai*h+hPrev
		kPrev, k = k, ai*k+kPrev
	}
	return bestA, bestP, false
}

// traefikRate is the rate Traefik computes from average and a period of
// the given seconds.
func traefikRate(avg, periodSeconds int64) float64 {
	return float64(avg*int64(time.Second)) / float64(time.Duration(periodSeconds)*time.Second)
}

// maxDelay is how long Traefik holds a request rather than reject it.
func maxDelay(r float64) time.Duration {
	if r < 1 {
		return 500 * time.Millisecond
	}
	return time.Second / (time.Duration(r) * 2)
}

// newLimiter is the middleware for spec s, keyed by, after dividing it
// over the policy's replicas.
func (pl *plan) newLimiter(name, field string, s algorithms.Spec, by criterion) *limiter {
	l := &limiter{Name: name, Field: field, Spec: s, By: by}
	per, why := export.PerInstance(pl.p, s)
	if why != "" {
		l.why = append(l.why, why)
		sh := pl.bucket(&limiter{Name: name, Field: field, Spec: s, By: by}, s)
		l.Shared = sh
	}
	pl.bucket(l, per)
	return l
}

// bucket fills l's numbers from s.
func (pl *plan) bucket(l *limiter, s algorithms.Spec) *limiter {
	r, b, why := export.Bucket(s)
	if why != "" {
		l.why = append(l.why, why)
	}
	l.Average, l.Period, l.Exact = average(r)
	l.Rate = traefikRate(l.Average, l.Period)
	l.Burst = max(1, b)
	if !l.Exact {
		l.why = append(l.why, fmt.Sprintf("no whole average per whole-second period gives %s/s exactly; %d per %ds is %s/s", num(r), l.Average, l.Period, num(l.Rate)))
	}
	return l
}

// keyCriterion is how a per-client limit keyed by k tells clients apart.
func keyCriterion(o export.Options, k policy.Key) criterion {
	if k == policy.KeyIP {
		return criterion{IP: true}
	}
	return criterion{Header: o.KeyHeader(k)}
}

// build plans the middlewares and routers of p.
func build(p policy.Policy, o export.Options, target string) *plan {
	o = o.WithDefaults()
	pl := &plan{p: p, o: o, uses: map[string]int{}}
	pl.sharedRedis = p.Service.Replicas > 1 && p.Service.Enforcement != calc.Local
	pl.exp = export.Export{Target: target, Fidelity: export.Exact}

	limits := p.Limits()
	classes := []class{{name: "default"}}
	var global *limiter
	endpointLimit := map[int]*limiter{}
	for _, l := range limits {
		switch l.Scope {
		case policy.ScopeDefault:
			classes[0].limit = pl.newLimiter(l.Name, l.Field, l.Spec, keyCriterion(o, l.Key))
		case policy.ScopeTier:
			classes = append(classes, class{name: l.Name, tier: l.Tier,
				limit: pl.newLimiter(l.Name, l.Field, l.Spec, keyCriterion(o, l.Key))})
		case policy.ScopeEndpoint:
			var i int
			fmt.Sscanf(l.Field, "endpoints[%d]", &i)
			endpointLimit[i] = pl.newLimiter(l.Name, l.Field, l.Spec, keyCriterion(o, l.Key))
		case policy.ScopeGlobal:
			global = pl.newLimiter(l.Name, l.Field, l.Spec, criterion{Header: GlobalHeader})
		}
	}
	for _, c := range classes {
		if c.limit != nil {
			pl.limiters = append(pl.limiters, c.limit)
		}
	}
	for i := range p.Endpoints {
		if l := endpointLimit[i]; l != nil {
			pl.limiters = append(pl.limiters, l)
		}
	}
	if global != nil {
		pl.limiters = append(pl.limiters, global)
		pl.globalKey = true
	}

	// Cost endpoints: a separate per-client limit with rate and burst
	// divided by the cost, per class.
	costLimit := map[[2]int]*limiter{}
	for i, e := range p.Endpoints {
		if e.Cost <= 1 {
			continue
		}
		for ci, c := range classes {
			if c.limit == nil {
				continue
			}
			base := c.limit
			l := &limiter{Name: fmt.Sprintf("%s_cost_%d", c.name, i), Field: fmt.Sprintf("endpoints[%d].cost", i),
				Spec: base.Spec, By: base.By, Cost: true}
			r := base.Rate / float64(e.Cost)
			l.Average, l.Period, l.Exact = average(r)
			l.Rate = traefikRate(l.Average, l.Period)
			l.Burst = max(1, base.Burst/e.Cost)
			if sh := base.Shared; sh != nil {
				s := &limiter{Name: l.Name, By: l.By, Cost: true}
				s.Average, s.Period, s.Exact = average(sh.Rate / float64(e.Cost))
				s.Rate = traefikRate(s.Average, s.Period)
				s.Burst = max(1, sh.Burst/e.Cost)
				l.Shared = s
			}
			costLimit[[2]int{ci, i}] = l
			pl.limiters = append(pl.limiters, l)
		}
	}

	// Routers: class × (catch-all + endpoints with a limit or a cost, and
	// the earlier endpoints that overlap one of those, so that the first
	// matching endpoint in policy order decides as the policy does).
	type route struct {
		endpoint int // -1: catch-all
		cond     string
	}
	routes := []route{{endpoint: -1, cond: "PathPrefix(`/`)"}}
	for _, i := range routedEndpoints(p.Endpoints, func(i int) bool { return endpointLimit[i] != nil || p.Endpoints[i].Cost > 1 }) {
		routes = append(routes, route{endpoint: i, cond: endpointRule(p.Endpoints[i].Match)})
	}
	for _, rt := range routes[1:] {
		pl.routed = append(pl.routed, rt.endpoint)
	}
	// Classes with routers: the tiers with their own limit, in policy
	// order, before the default clients.
	nClasses := 1
	for _, c := range classes[1:] {
		if c.limit != nil {
			nClasses++
		}
	}
	k := len(routes)
	rank := 0 // the class's rank among the tiers with routers
	for ci, c := range classes {
		if ci > 0 && c.limit == nil {
			continue
		}
		// Priorities: every tier's routers above the default's, earlier
		// tiers above later ones; within a class the endpoints in policy
		// order, then the catch-all (priority 1 for the default's).
		band := 0 // the default's routers: 1..k
		if ci > 0 {
			band = nClasses - 1 - rank
			rank++
		}
		for ri, rt := range routes {
			var mws []string
			if c.limit != nil {
				mws = append(mws, c.limit.Name)
			}
			name := c.name
			prio := band*k + 1 // the catch-all
			rule := rt.cond
			if rt.endpoint >= 0 {
				name += "-" + fmt.Sprintf("endpoint_%d", rt.endpoint)
				prio = band*k + k - (ri - 1)
				if l := costLimit[[2]int{ci, rt.endpoint}]; l != nil {
					mws = append(mws, l.Name)
				}
				if l := endpointLimit[rt.endpoint]; l != nil {
					mws = append(mws, l.Name)
				}
			}
			if ci > 0 {
				tierCond := tierRule(o.TierHeader, c.tier)
				if rt.endpoint < 0 {
					rule = tierCond
				} else {
					rule = tierCond + " && " + rule
				}
			}
			if global != nil {
				mws = append(mws, "global_key", global.Name)
			}
			for _, m := range mws {
				pl.uses[m]++
			}
			pl.routers = append(pl.routers, router{Name: name, Rule: rule, Priority: prio, Middlewares: mws})
		}
	}
	pl.mappings(classes, costLimit)
	return pl
}

// routedEndpoints are the indices, in policy order, of the endpoints that
// need a router: those for which need holds, and every endpoint before one
// of them that a request could match as well (the same method ignoring
// ASCII case, and a path both templates match). A request the policy gives
// to an endpoint without a router would otherwise reach a later
// endpoint's router; one that no routed endpoint matches takes the
// catch-all, which applies what an endpoint without limit or cost does.
func routedEndpoints(eps []policy.Endpoint, need func(int) bool) []int {
	var out []int
	for i := range eps {
		routed := need(i)
		for j := i + 1; !routed && j < len(eps); j++ {
			routed = need(j) && policy.Overlaps(eps[i].Match, eps[j].Match)
		}
		if routed {
			out = append(out, i)
		}
	}
	return out
}

// pathRegexp is a Go regexp (Traefik's PathRegexp syntax) matching exactly
// the paths the template matches, anchored at both ends.
func pathRegexp(template string) string { return "^" + export.PathPattern(template) + "$" }

// endpointRule is the Traefik v3 rule selecting an endpoint's requests: its
// method (Traefik compares the request's method to it exactly) and a
// PathRegexp of its template.
func endpointRule(m policy.Match) string {
	cond := "PathRegexp(" + quote(pathRegexp(m.Path)) + ")"
	if m.Method != "" {
		cond = "Method(" + quote(strings.ToUpper(m.Method)) + ") && " + cond
	}
	return cond
}

// foldASCII is a Go regexp matching exactly s ignoring ASCII case: each
// ASCII letter as a class of its two cases ([pP]), everything else quoted.
// (The (?i) flag would fold Unicode too: k would match the Kelvin sign.)
func foldASCII(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			fmt.Fprintf(&b, "[%c%c]", r, r-'a'+'A')
		case r >= 'A' && r <= 'Z':
			fmt.Fprintf(&b, "[%c%c]", r-'A'+'a', r)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String()
}

// tierRule is the Traefik v3 rule selecting a tier's requests: a value of
// header that is the tier's name ignoring ASCII case.
func tierRule(header, tier string) string {
	return "HeaderRegexp(" + quote(header) + ", " + quote("^"+foldASCII(tier)+"$") + ")"
}

// quote is s as a Traefik rule string: backticks, or a Go-quoted string
// when s holds a backtick.
func quote(s string) string {
	if strings.Contains(s, "`") {
		return strconv.Quote(s)
	}
	return "`" + s + "`"
}

// params is a limiter's parameters as written in the file.
func (l *limiter) params() string {
	return fmt.Sprintf("average=%d period=%ds burst=%d %s", l.Average, l.Period, l.Burst, l.By)
}

// mappings adds the export's mappings.
func (pl *plan) mappings(classes []class, costLimit map[[2]int]*limiter) {
	p, e := pl.p, &pl.exp
	for _, l := range pl.limiters {
		if l.Cost {
			continue
		}
		why := append([]string(nil), l.why...)
		fid := export.Approximate
		if l.Spec.Algorithm == algorithms.NameTokenBucket || l.Spec.Algorithm == algorithms.NameGCRA {
			why = append([]string{fmt.Sprintf("Traefik runs a token bucket of this rate and burst, but holds a request that would get a token within maxDelay (%s) and forwards it then, where the policy rejects it: the upstream sees the same conforming stream, the client is delayed instead of refused", maxDelay(l.Rate))}, why...)
		} else {
			why = append(why, fmt.Sprintf("as with every Traefik limit, a request that would get a token within maxDelay (%s) is delayed, not rejected", maxDelay(l.Rate)))
		}
		why = append(why, pl.bucketWhy(l)...)
		if l.By.Header != "" && l.By.Header != GlobalHeader {
			why = append(why, fmt.Sprintf("requests without %s share one bucket (empty key)", l.By.Header))
		}
		if l.Name == "global" {
			why = append(why, fmt.Sprintf("all clients share one bucket: the headers middleware global_key sets %s to a constant before it", GlobalHeader))
		}
		e.Add(export.Mapping{Field: l.Field, From: l.Spec.String(), To: "middleware " + l.Name + ": " + l.params(),
			Fidelity: fid, Why: strings.Join(why, "; ")})
	}
	pl.routeMappings(classes)
	for i, ep := range p.Endpoints {
		if ep.Cost <= 1 {
			continue
		}
		var to, costWhy []string
		for ci := range classes {
			if l := costLimit[[2]int{ci, i}]; l != nil {
				to = append(to, "middleware "+l.Name+": "+l.params())
				for _, w := range pl.bucketWhy(l) {
					if !slices.Contains(costWhy, w) {
						costWhy = append(costWhy, w)
					}
				}
			}
		}
		e.Add(export.Mapping{Field: fmt.Sprintf("endpoints[%d].cost", i), From: fmt.Sprintf("cost=%d", ep.Cost),
			To: strings.Join(to, "; "), Fidelity: export.NotExpressible,
			Why: strings.Join(append([]string{fmt.Sprintf("Traefik's rateLimit takes one token per request; the export adds a separate per-client limit on %s %s with rate and burst divided by %d, which does not draw on the client's other budget; like every Traefik limit it holds a request that would get a token within maxDelay", ep.Match.Method, ep.Match.Path, ep.Cost)}, costWhy...), "; ")})
	}
	if p.Defaults.Mode == policy.ModeShadow {
		e.Add(export.Mapping{Field: "defaults.mode", From: "shadow", To: "enforced",
			Fidelity: export.NotExpressible, Why: "Traefik's rateLimit has no dry-run mode: this export enforces the limits; to observe first, leave the rateLimit middlewares out of the routers"})
	}
	e.Add(pl.responseMapping())
	n := max(1, p.Service.Replicas)
	switch {
	case p.Service.Enforcement == calc.Local:
		e.Add(export.Mapping{Field: "service.enforcement", From: fmt.Sprintf("local, %d replicas", n), To: "in-memory buckets in each Traefik",
			Fidelity: export.Exact, Why: "each Traefik instance enforces the full limits, as the policy asks"})
	case n == 1:
		e.Add(export.Mapping{Field: "service.enforcement", From: "shared, 1 replica", To: "in-memory buckets in the one Traefik",
			Fidelity: export.Exact, Why: "one instance: its memory is the shared store"})
	default:
		e.Add(export.Mapping{Field: "service.enforcement", From: fmt.Sprintf("shared, %d replicas", n),
			To:       fmt.Sprintf("in-memory buckets, limits divided by %d; a redis block (v3.4+) with the undivided limits is offered commented out", n),
			Fidelity: export.Approximate, Why: fmt.Sprintf("each of the %d Traefik instances enforces 1/%d of every limit: exact only when the balancer spreads each client evenly; uncomment the Redis variant for one shared bucket", n, n)})
		f := p.Service.StoreFailureMode()
		m := export.Mapping{Field: "service.on_store_failure", From: string(f), To: "Redis errors answer 500 (fail closed)"}
		if f == policy.FailClosed {
			m.Fidelity = export.Exact
			m.Why = "with the Redis variant Traefik answers 500 when Redis fails: closed, as the policy asks; the in-memory file has no store to fail"
		} else {
			m.Fidelity = export.NotExpressible
			m.Why = "Traefik's Redis rate limiter answers 500 when Redis fails (fail closed) and has no fail-open switch; the in-memory file as exported has no store to fail"
		}
		e.Add(m)
	}
}

// bucketWhy is what Traefik's in-memory rateLimit does to l's buckets
// beyond the token bucket: one bucket set per router using it; a token
// spent on a request that a later rateLimit of the chain rejects (each
// middleware reserves on its own, where a rejected request charges no
// limit of the policy); and a source forgotten after ttl whole clock
// seconds without a request (ttl = 2 s at 1/s and more, 1 + ⌊1/r⌋ s
// below, counted on the Unix second, so after ttl-1 to ttl s), which comes
// back with a full bucket, a difference when burst > rate·(ttl-1).
func (pl *plan) bucketWhy(l *limiter) []string {
	var why []string
	if n := pl.uses[l.Name]; n > 1 {
		why = append(why, fmt.Sprintf("%d routers use this middleware and Traefik keeps one in-memory bucket set per router (traefik/traefik#13706), so a client gets this budget on each of them separately; the Redis backend (v3.4+) shares one bucket per middleware", n))
	}
	limiters := map[string]bool{}
	for _, o := range pl.limiters {
		limiters[o.Name] = true
	}
	later := false
	for _, r := range pl.routers {
		if i := slices.Index(r.Middlewares, l.Name); i >= 0 && slices.ContainsFunc(r.Middlewares[i+1:], func(m string) bool { return limiters[m] }) {
			later = true
		}
	}
	if later {
		why = append(why, "each rateLimit of a router's chain takes its token on its own: a request that a later one rejects has spent this one's token, where the policy charges none of its limits for a rejected request")
	}
	ttl := 2
	if l.Rate < 1 {
		ttl = 1 + int(1/l.Rate)
	}
	if float64(l.Burst) > l.Rate*float64(ttl-1) {
		why = append(why, fmt.Sprintf("Traefik forgets a client's bucket when no request has reached it for %d whole clock seconds (so after %d to %d s idle at this rate) and starts it again full: after such a pause the client gets up to burst (%d) at once, where the policy has refilled only %s per second of the pause", ttl, ttl-1, ttl, l.Burst, num(l.Rate)))
	}
	return why
}

// routeMappings says how the routers select the tier and the endpoint.
func (pl *plan) routeMappings(classes []class) {
	p, e := pl.p, &pl.exp
	for _, c := range classes[1:] {
		if c.limit == nil {
			continue
		}
		i := slices.IndexFunc(p.Tiers, func(t policy.Tier) bool { return t.Name == c.tier })
		m := export.Mapping{Field: fmt.Sprintf("tiers[%d].name", i), From: c.tier,
			To:       "routers with " + tierRule(pl.o.TierHeader, c.tier),
			Fidelity: export.Exact,
			Why:      fmt.Sprintf("a %s value equal to the tier's name ignoring ASCII case (each letter as a class of both cases) selects the tier, as the policy matches tier names", pl.o.TierHeader)}
		for j, t := range p.Tiers {
			if j != i && policy.LowerASCII(t.Name) == policy.LowerASCII(c.tier) {
				m.Fidelity = export.Approximate
				m.Why += fmt.Sprintf("; tiers[%d] (%s) has the same name ignoring case: Traefik gives every spelling to the first of them that has its own limit, while the policy looks the exact spelling up first, so the two can pick different tiers for one header value", j, t.Name)
			}
		}
		e.Add(m)
	}
	for pos, i := range pl.routed {
		ep := p.Endpoints[i]
		e.Add(export.Mapping{Field: fmt.Sprintf("endpoints[%d].match", i), From: ep.Match.Method + " " + ep.Match.Path,
			To:       endpointRule(ep.Match),
			Fidelity: export.Exact,
			Why: fmt.Sprintf("each {name} matches exactly one non-empty path segment and the rest of the template literally, as in the policy; "+
				"the routers' priorities follow the policy's order of endpoints (this is the %s of %d endpoint routers per class), so the first matching endpoint decides, as the policy's rule; "+
				"Traefik compares the method case-sensitively to %s, where the policy ignores its case (HTTP methods are case-sensitive; a client sending it in lower case would get no endpoint limit or cost)",
				ordinal(pos+1), len(pl.routed), strings.ToUpper(ep.Match.Method))})
	}
}

// ordinal is n as an English ordinal: "1st", "2nd", "11th".
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// responseMapping is how defaults.response lands: Traefik always answers
// 429 with Retry-After and X-Retry-In, and sends no RateLimit headers.
func (pl *plan) responseMapping() export.Mapping {
	r := pl.p.Defaults.Response
	status, headers := r.Code(), r.Styles()
	from := fmt.Sprintf("status=%d headers=%v retry_after=%v", status, headers, r.SendsRetryAfter())
	m := export.Mapping{Field: "defaults.response", From: from, To: "429, Retry-After (whole seconds), X-Retry-In", Fidelity: export.Exact}
	var why []string
	if status != 429 {
		m.Fidelity = export.NotExpressible
		why = append(why, fmt.Sprintf("Traefik's rateLimit always answers 429, not %d", status))
	}
	if len(headers) > 0 {
		m.Fidelity = export.Worst(m.Fidelity, export.Approximate)
		why = append(why, "Traefik sends no RateLimit headers")
	}
	if r.RetryAfter != nil && !*r.RetryAfter {
		m.Fidelity = export.Worst(m.Fidelity, export.Approximate)
		why = append(why, "Traefik always sends Retry-After")
	}
	m.Why = strings.Join(why, "; ")
	return m
}

// notes are what the user needs to deploy the file.
func (pl *plan) notes(crd bool) []string {
	o := pl.o
	var n []string
	if crd {
		svc, port := pl.k8sService()
		n = append(n, "Apply with kubectl apply -f; the Middlewares and the IngressRoute live in namespace default and need Traefik's CRDs (traefik.io/v1alpha1) and the kubernetescrd provider.",
			fmt.Sprintf("The IngressRoute sends traffic to the Kubernetes Service %s on port %d: rename it to your service.", svc, port))
	} else {
		n = append(n, "Load it with the file provider (providers.file.filename in the static configuration); routers use every entry point unless you add entryPoints.",
			fmt.Sprintf("Static configuration: an entry point listening on %s, e.g. entryPoints.web.address=\":%s\".", o.Listen, strings.TrimPrefix(listenPort(o.Listen), ":")))
	}
	n = append(n,
		fmt.Sprintf("Assumes the authentication layer in front sets %s to the client's tier; requests without it get the default limit. API keys come in %s, accounts in %s.", o.TierHeader, o.APIKeyHeader, o.AccountHeader),
		"ipStrategy keys by the connection's address; behind a load balancer set ipStrategy.depth (or excludedIPs) so the client's address is read from X-Forwarded-For.",
		"Rejected requests get 429 with Retry-After and X-Retry-In; a request that would wait at most maxDelay (1/(2r), 500 ms below 1 r/s) is delayed instead.",
		"Check: Traefik logs a configuration error per bad middleware or router at start-up (and the dashboard lists them); then send more than burst requests quickly with one key and expect 429.")
	if pl.sharedRedis {
		n = append(n, "Shared limits: uncomment each middleware's redis lines and use the undivided average/burst given beside them (Traefik v3.4+); set endpoints to your Redis. Traefik answers 500 when Redis fails.")
	}
	if pl.p.Defaults.Mode == policy.ModeShadow {
		n = append(n, "The policy is in shadow mode but Traefik cannot log without enforcing: this file enforces the limits.")
	}
	return n
}

// listenPort is the port of a Listen option ("8080", ":8080", "host:8080").
func listenPort(l string) string {
	if _, p, err := net.SplitHostPort(l); err == nil {
		return p
	}
	return l
}

// num formats a float the shortest way that reads back the same.
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
