// Package golib holds the Go library export targets: a Go file (package
// ratelimit) that enforces a policy with golang.org/x/time/rate
// ("xtime-rate"), throttled's GCRA ("throttled") or go-redis/redis_rate
// ("redis-rate"), as an HTTP middleware that picks each request's limits
// (default or tier, endpoint, global) at the endpoint's cost and answers
// with the policy's status, header styles and Retry-After.
//
// The parameters follow §12 of the reference (algorithm-semantics.md):
// x/time/rate NewLimiter(r, C); throttled MaxBurst = C − 1 with its
// interval in whole ns; redis_rate Limit{Rate, Burst: C, Period}. The
// buckets are exact (x/time/rate and throttled are algorithms' own
// reference implementations), the leaky bucket is a queue only in
// x/time/rate (ReserveN), and windows become a bucket of the same rate and
// burst everywhere ([export.Bucket]): approximate.
//
// x/time/rate and throttled keep their state in each process: a policy
// shared by several replicas is divided among them ([export.PerInstance]).
// redis_rate keeps it in Redis, shared.
package golib

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/golib/snippet"
	"github.com/ratelab/ratelab/policy"
)

// The targets' names.
const (
	nameXTimeRate = "xtime-rate"
	nameThrottled = "throttled"
	nameRedisRate = "redis-rate"
)

// The targets.
var (
	XTimeRate = export.Target{Name: nameXTimeRate, Title: "Go: golang.org/x/time/rate", Group: export.Libraries, Render: renderXTimeRate}
	Throttled = export.Target{Name: nameThrottled, Title: "Go: throttled GCRA", Group: export.Libraries, Render: renderThrottled}
	RedisRate = export.Target{Name: nameRedisRate, Title: "Go: go-redis/redis_rate", Group: export.Libraries, Render: renderRedisRate}
)

// Targets lists the package's targets.
var Targets = []export.Target{XTimeRate, Throttled, RedisRate}

// library is what differs between the three targets.
type library struct {
	name, filename, module string
	// shared: the state lives in a store every replica shares (Redis).
	shared bool
	doc    string
	// imports, limitFields, body: see snippet.File.
	imports     []string
	limitFields string
	body        string
	// fields and to write a limit's parameters into the file and the
	// mapping; why is "" when the library admits exactly what spec admits.
	// costWhy says how an endpoint's cost reaches the library.
	costWhy string
	fields  func(spec algorithms.Spec) string
	to      func(spec algorithms.Spec) string
	why     func(spec algorithms.Spec, p policy.Policy) string
	notes   []string
}

// render renders p for lib.
func render(lib library, p policy.Policy, o export.Options) (export.Export, error) {
	o = o.WithDefaults()
	ex := export.Export{Target: lib.name, Filename: lib.filename, MediaType: "text/x-go; charset=utf-8"}
	// The spec each limit enforces in the library: per process unless
	// the library shares a store.
	spec := func(l policy.Limit) (algorithms.Spec, string) {
		if lib.shared {
			return l.Spec, ""
		}
		return export.PerInstance(p, l.Spec)
	}
	for _, l := range p.Limits() {
		s, replicas := spec(l)
		why := lib.why(s, p)
		m := export.Mapping{Field: l.Field, From: l.Spec.String(), To: lib.to(s), Fidelity: export.Exact}
		if why != "" || replicas != "" {
			m.Fidelity = export.Approximate
		}
		m.Why = join(why, replicas)
		ex.Add(m)
	}
	f := snippet.File{Policy: p, Options: o, Target: lib.name, Doc: lib.doc, Imports: lib.imports,
		LimitFields: lib.limitFields, Body: lib.body,
		Fields: func(l policy.Limit) string {
			s, _ := spec(l)
			return lib.fields(s)
		},
		Comment: func(l policy.Limit) string {
			if s, _ := spec(l); s != l.Spec {
				return fmt.Sprintf("%s, per replica %s", l.Spec, s)
			}
			return l.Spec.String()
		}}
	src, err := f.Render()
	if err != nil {
		return export.Export{}, err
	}
	ex.Body = src
	policyMappings(&ex, p, lib.shared, lib.costWhy)
	ex.Notes = append([]string{
		fmt.Sprintf("Copy %s into your service (package ratelimit), add %s, and wrap your handler with the Limiter's Middleware. Check it with go vet.", lib.filename, lib.module),
		fmt.Sprintf("It reads the client's tier from %s, its API key from %s and its account from %s (headers your authentication layer sets); a request without its key header is keyed by its IP address (RemoteAddr: put the middleware behind your proxy's real-IP handling).", o.TierHeader, o.APIKeyHeader, o.AccountHeader),
	}, lib.notes...)
	return ex, nil
}

// policyMappings adds the mappings of the policy-level features.
func policyMappings(ex *export.Export, p policy.Policy, shared bool, costWhy string) {
	mode := p.Defaults.Mode
	if mode == "" {
		mode = policy.ModeEnforce
	}
	ex.Add(export.Mapping{Field: "defaults.mode", From: string(mode), To: fmt.Sprintf("shadowMode = %t", mode == policy.ModeShadow),
		Fidelity: export.Exact, Why: "in shadow mode the middleware logs what it would reject or delay, and serves the request"})
	for i, t := range p.Tiers {
		ex.Add(export.Mapping{Field: fmt.Sprintf("tiers[%d].name", i), From: t.Name, To: fmt.Sprintf("tiers[%d] = {%q, %q}", i, t.Name, policy.LowerASCII(t.Name)), Fidelity: export.Exact,
			Why: "the tier header selects the first tier whose name is the header's value or its lower case, else the first equal to it ignoring ASCII case"})
	}
	for i, e := range p.Endpoints {
		ex.Add(export.Mapping{Field: fmt.Sprintf("endpoints[%d].match", i), From: strings.ToUpper(e.Match.Method) + " " + e.Match.Path,
			To: fmt.Sprintf("endpoints[%d]: method %s ignoring ASCII case, path template %s on r.URL.Path", i, strings.ToUpper(e.Match.Method), e.Match.Path), Fidelity: export.Exact,
			Why: "a request belongs to the first endpoint in policy order that matches it; a {name} segment matches one non-empty segment of the decoded path"})
		if e.Cost > 1 {
			ex.Add(export.Mapping{Field: fmt.Sprintf("endpoints[%d].cost", i), From: strconv.FormatInt(e.Cost, 10),
				To: fmt.Sprintf("cost %d for %s %s", e.Cost, strings.ToUpper(e.Match.Method), e.Match.Path), Fidelity: export.Exact,
				Why: costWhy})
		}
	}
	ex.Add(snippet.ResponseMapping(p))

	n := max(1, p.Service.Replicas)
	enf := p.Service.Enforcing()
	em := export.Mapping{Field: "service.enforcement", From: fmt.Sprintf("%s, %d replicas", enf, n), Fidelity: export.Exact}
	fail := p.Service.StoreFailureMode()
	fm := export.Mapping{Field: "service.on_store_failure", From: string(fail), Fidelity: export.Exact}
	switch {
	case shared:
		em.To, em.Why = "one shared state in Redis for every replica", "redis_rate keeps each client's TAT in Redis, one key per limit and client (rate:<limit>:<client>); each AllowN is one script on one key, so on a Redis Cluster (pass a *redis.ClusterClient to NewLimiter) a request's limits may sit on different masters, and the middleware asks them one after the other"
		if enf == calc.Local && n > 1 {
			em.Fidelity = export.Approximate
			em.Why = fmt.Sprintf("the policy enforces each limit in each of the %d replicas (%d× in total); redis_rate shares one state, so the service admits each limit once", n, n)
		}
		if fail == policy.FailClosed {
			fm.To = "failClosed = true: a Redis error rejects the request with 503 and Retry-After: 1"
		} else {
			fm.To = "failClosed = false: a Redis error is logged and the request passes"
		}
	default:
		em.To = "state in each process's memory"
		em.Why = "each replica enforces its own limits"
		if enf == calc.Shared && n > 1 {
			em.Fidelity = export.Approximate
			em.Why = fmt.Sprintf("the policy shares its limits among %d replicas; the library counts in each process, so each enforces 1/%d of every limit (see the limits' mappings): exact only when the balancer spreads each client evenly", n, n)
		}
		fm.To = "no store: the state is in process memory"
		fm.Why = "there is no shared store to fail; a restart forgets the state (clients start rested)"
	}
	ex.Add(em)
	ex.Add(fm)
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// goDuration is d as Go source: "2 * time.Second", "1500 * time.Millisecond".
func goDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "time.Hour"}, {time.Minute, "time.Minute"}, {time.Second, "time.Second"}, {time.Millisecond, "time.Millisecond"}, {time.Microsecond, "time.Microsecond"}} {
		if d >= u.d && d%u.d == 0 {
			if d == u.d {
				return u.name
			}
			return fmt.Sprintf("%d * %s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d", int64(d))
}

// hasCosts reports whether some endpoint costs more than 1.
func hasCosts(p policy.Policy) bool { return len(export.Costs(p)) > 0 }

func renderXTimeRate(p policy.Policy, o export.Options) (export.Export, error) {
	return render(library{
		name: nameXTimeRate, filename: "ratelimit_xtime_rate.go", module: "golang.org/x/time",
		doc: `Each limit is a golang.org/x/time/rate token bucket per client, in this
process's memory: rate.NewLimiter(rate, burst), a request of cost n is
AllowN(now, n). A leaky_bucket limit is a queue: the request reserves
its slot (ReserveN) and waits for it, up to queue/rate. Clients whose
bucket is full again are dropped once a minute. Use it with
ratelimit.NewLimiter().Middleware(handler).`,
		imports: []string{"math", "sync", "golang.org/x/time/rate"},
		costWhy: "the cost is the n of AllowN for every limit the request passes (client, endpoint, global), except a leaky_bucket queue, where every request takes one slot",
		limitFields: `	rate    rate.Limit    // tokens per second
	burst   int           // the bucket's size
	queue   bool          // leaky_bucket: wait for the slot, up to maxWait
	maxWait time.Duration // the queue's longest wait, queue/rate`,
		body: xtimeBody,
		fields: func(s algorithms.Spec) string {
			x, _ := XRateParams(s)
			f := fmt.Sprintf("rate: %s, burst: %d", num(x.Limit), x.Burst)
			if x.Queue {
				f += fmt.Sprintf(", queue: true, maxWait: %s", goDuration(x.MaxWait))
			}
			return f
		},
		to: func(s algorithms.Spec) string {
			x, _ := XRateParams(s)
			if x.Queue {
				return fmt.Sprintf("rate.NewLimiter(%s, 1); ReserveN(now, 1), wait DelayFrom(now) up to %s, else CancelAt", num(x.Limit), x.MaxWait)
			}
			return fmt.Sprintf("rate.NewLimiter(%s, %d); AllowN(now, cost)", num(x.Limit), x.Burst)
		},
		why: func(s algorithms.Spec, p policy.Policy) string {
			_, why := XRateParams(s)
			if s.Algorithm == algorithms.NameLeakyBucket && hasCosts(p) {
				why = join(why, "the queue has burst 1, where ReserveN(now, n) fails for n > 1: every request takes one slot, whatever its endpoint's cost")
			}
			return why
		},
	}, p, o)
}

func renderThrottled(p policy.Policy, o export.Options) (export.Export, error) {
	return render(library{
		name: nameThrottled, filename: "ratelimit_throttled.go", module: "github.com/throttled/throttled/v2",
		doc: `Each limit is a throttled/v2 GCRA limiter whose in-memory store (memstore,
LRU of maxKeys clients) holds every client of that limit:
RateQuota{MaxRate, MaxBurst} with MaxBurst = capacity − 1, and a request
of cost n is RateLimitCtx(ctx, key, n), every limit at the one instant
the Limiter's clock gave the request. Use it with
ratelimit.NewLimiter() and its Middleware(handler).`,
		imports: []string{"sync", "github.com/throttled/throttled/v2", "github.com/throttled/throttled/v2/store/memstore"},
		costWhy: "the cost is the quantity of RateLimitCtx for every limit the request passes (client, endpoint, global)",
		limitFields: `	rateQuota throttled.RateQuota // MaxRate: the interval; MaxBurst: capacity − 1
	interval  time.Duration       // MaxRate's interval: one token's time`,
		body: throttledBody,
		fields: func(s algorithms.Spec) string {
			t, _ := ThrottledParams(s)
			return fmt.Sprintf("rateQuota: throttled.RateQuota{MaxRate: throttled.PerDuration(%d, %s), MaxBurst: %d}, interval: %s", t.N, goDuration(t.Per), t.MaxBurst, goDuration(t.Per/time.Duration(t.N)))
		},
		to: func(s algorithms.Spec) string {
			t, _ := ThrottledParams(s)
			return fmt.Sprintf("RateQuota{MaxRate: PerDuration(%d, %s), MaxBurst: %d}; RateLimitCtx(ctx, key, cost)", t.N, t.Per, t.MaxBurst)
		},
		why: func(s algorithms.Spec, _ policy.Policy) string {
			_, why := ThrottledParams(s)
			return why
		},
		notes: []string{"throttled's memstore keeps at most maxKeys clients per limit (least recently used first out): an evicted client starts rested."},
	}, p, o)
}

func renderRedisRate(p policy.Policy, o export.Options) (export.Export, error) {
	return render(library{
		name: nameRedisRate, filename: "ratelimit_redis_rate.go", module: "github.com/go-redis/redis_rate/v10 and github.com/redis/go-redis/v9",
		shared: true,
		doc: `Each limit is a go-redis/redis_rate/v10 GCRA in Redis, shared by every
replica: Limit{Rate, Burst, Period} with Burst = capacity, and a request
of cost n is AllowN(ctx, key, limit, n). redis_rate reads Redis TIME, so
replicas share one clock; its keys expire once rested. Use it with
ratelimit.NewLimiter(rdb).Middleware(handler).`,
		imports:     []string{"github.com/go-redis/redis_rate/v10", "github.com/redis/go-redis/v9"},
		costWhy:     "the cost is the n of AllowN for every limit the request passes (client, endpoint, global)",
		limitFields: `	limit redis_rate.Limit // Rate per Period, Burst = capacity`,
		body:        redisRateBody,
		fields: func(s algorithms.Spec) string {
			r, _ := RedisRateParams(s)
			return fmt.Sprintf("limit: redis_rate.Limit{Rate: %d, Burst: %d, Period: %s}", r.Rate, r.Burst, goDuration(r.Period))
		},
		to: func(s algorithms.Spec) string {
			r, _ := RedisRateParams(s)
			return fmt.Sprintf("Limit{Rate: %d, Burst: %d, Period: %s}; AllowN(ctx, key, limit, cost)", r.Rate, r.Burst, r.Period)
		},
		why: func(s algorithms.Spec, _ policy.Policy) string {
			_, why := RedisRateParams(s)
			return why
		},
		notes: []string{
			"Every limit of a request is first peeked (AllowN with n = 0: it admits n when its ResetAfter ≤ (Burst − n)·Period/Rate), then charged: a request rejected by one limit consumes none of the others. Between the two round trips another replica may take the last tokens; the charge then rejects, and the limits before it in that request stay charged. A limit whose bucket was full starts refilling at the charge, a round trip after the decision: each request that finds it full loses up to one Redis round trip of refill.",
			"A cost above a limit's burst is rejected without asking Redis, with no Retry-After (it can never pass; redis_rate would answer a finite, misleading RetryAfter).",
		},
	}, p, o)
}

const xtimeBody = `// Limiter holds an x/time/rate limiter per limit and client, in memory.
// It is safe for concurrent use: one mutex makes a request's decision
// over all its limits atomic.
type Limiter struct {
	mu      sync.Mutex
	clients map[string]*rate.Limiter // by limit name and client key
	swept   time.Time
	// Now is the clock (time.Now); a test may set it.
	Now func() time.Time
}

// NewLimiter returns a Limiter with no clients.
func NewLimiter() *Limiter {
	return &Limiter{clients: map[string]*rate.Limiter{}, Now: time.Now}
}

// sweepEvery is how often check drops the limiters of rested clients: a
// full bucket decides exactly as a new one.
const sweepEvery = time.Minute

func (lim *Limiter) sweep(now time.Time) {
	if now.Sub(lim.swept) < sweepEvery {
		return
	}
	lim.swept = now
	for k, rl := range lim.clients {
		if rl.TokensAt(now) >= float64(rl.Burst()) {
			delete(lim.clients, k)
		}
	}
}

// check reserves the request in every limit; if one rejects it, it
// cancels them all, so a rejected request consumes nothing.
func (lim *Limiter) check(_ context.Context, ls []*limit, keys []string, cost int64) ([]decision, error) {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	now := lim.Now()
	lim.sweep(now)
	ds := make([]decision, len(ls))
	rls := make([]*rate.Limiter, len(ls))
	var taken []*rate.Reservation
	rejected := false
	for i, l := range ls {
		k := l.name + "|" + keys[i]
		rl := lim.clients[k]
		if rl == nil {
			rl = rate.NewLimiter(l.rate, l.burst)
			lim.clients[k] = rl
		}
		rls[i] = rl
		n := int(cost)
		if l.queue {
			n = 1 // the queue releases one request per slot
		}
		d := decision{limit: l}
		r := rl.ReserveN(now, n)
		if !r.OK() {
			d.retryAfter = -1 // the cost exceeds the burst: never
		} else {
			taken = append(taken, r)
			wait := r.DelayFrom(now)
			switch {
			case l.queue && wait <= l.maxWait:
				d.allowed, d.delay = true, wait
			case l.queue:
				d.retryAfter = wait - l.maxWait
			case wait == 0:
				d.allowed = true
			default:
				d.retryAfter = wait
			}
		}
		rejected = rejected || !d.allowed
		ds[i] = d
	}
	if rejected {
		for j := len(taken) - 1; j >= 0; j-- {
			taken[j].CancelAt(now)
		}
	}
	for i, l := range ls {
		tokens := rls[i].TokensAt(now)
		room := tokens
		if l.queue {
			room += l.maxWait.Seconds() * float64(l.rate)
		}
		ds[i].remaining = int64(math.Max(0, math.Floor(room+1e-9)))
		ds[i].reset = time.Duration((float64(rls[i].Burst()) - tokens) / float64(l.rate) * 1e9)
		if ds[i].allowed && tokens < float64(rls[i].Burst()) {
			// The next whole token (or queue slot).
			ds[i].more = time.Duration(math.Ceil((float64(ds[i].remaining) + 1 - room) / float64(l.rate) * 1e9))
		}
	}
	return ds, nil
}
`

const throttledBody = `// maxKeys is how many clients each limit's memstore keeps (LRU).
const maxKeys = 65536

// Limiter holds a throttled GCRA limiter per limit, each with its own
// in-memory store of clients. It is safe for concurrent use: one mutex
// makes a request's decision over all its limits atomic, and every store
// reads the same instant for it.
type Limiter struct {
	mu       sync.Mutex
	limiters map[string]*throttled.GCRARateLimiterCtx // by limit name
	now      time.Time                                // the instant of the request being decided, under mu
	// Now is the clock (time.Now), read once per request; a test may
	// set it.
	Now func() time.Time
}

// NewLimiter returns a Limiter for the policy's limits.
func NewLimiter() (*Limiter, error) {
	lim := &Limiter{limiters: map[string]*throttled.GCRARateLimiterCtx{}, Now: time.Now}
	for _, l := range limits {
		st, err := memstore.New(maxKeys)
		if err != nil {
			return nil, err
		}
		st.SetTimeNow(func() time.Time { return lim.now })
		gl, err := throttled.NewGCRARateLimiterCtx(throttled.WrapStoreWithContext(st), l.rateQuota)
		if err != nil {
			return nil, err
		}
		lim.limiters[l.name] = gl
	}
	return lim, nil
}

// check peeks every limit first (quantity 0): a GCRA admits cost n exactly
// when n ≤ the Remaining a peek reports. Only if all admit does it charge
// them, so a rejected request consumes nothing.
func (lim *Limiter) check(ctx context.Context, ls []*limit, keys []string, cost int64) ([]decision, error) {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	lim.now = lim.Now()
	ds := make([]decision, len(ls))
	rejected := false
	for i, l := range ls {
		gl := lim.limiters[l.name]
		_, res, err := gl.RateLimitCtx(ctx, keys[i], 0)
		if err != nil {
			return nil, err
		}
		d := decision{limit: l, allowed: int64(res.Remaining) >= cost, remaining: int64(res.Remaining), reset: res.ResetAfter}
		if !d.allowed {
			// Limited, the request changes nothing and says when to
			// retry: -1 (never) when the cost exceeds the capacity.
			_, res, err := gl.RateLimitCtx(ctx, keys[i], int(cost))
			if err != nil {
				return nil, err
			}
			d.retryAfter = res.RetryAfter
			rejected = true
		}
		ds[i] = d
	}
	if rejected {
		return ds, nil
	}
	for i, l := range ls {
		limited, res, err := lim.limiters[l.name].RateLimitCtx(ctx, keys[i], int(cost))
		if err != nil {
			return nil, err
		}
		ds[i] = decision{limit: l, allowed: !limited, remaining: int64(res.Remaining), reset: res.ResetAfter, retryAfter: res.RetryAfter}
		if missing := int64(res.Limit) - int64(res.Remaining); missing > 0 {
			// TAT − now less the tokens after the next one.
			ds[i].more = max(0, res.ResetAfter-time.Duration(missing-1)*l.interval)
		}
	}
	return ds, nil
}
`

const redisRateBody = `// Limiter decides requests with redis_rate in Redis. It is safe for
// concurrent use.
type Limiter struct {
	rl *redis_rate.Limiter
}

// NewLimiter returns a Limiter that keeps its state in rdb.
func NewLimiter(rdb redis.UniversalClient) *Limiter {
	return &Limiter{rl: redis_rate.NewLimiter(rdb)}
}

// check peeks every limit first (n = 0, which changes nothing a later
// decision could tell), then charges them all if all admit, so that one
// limit's rejection consumes none of the others. Each call reads Redis
// TIME: the peeks and the charges of one request see instants a round
// trip or two apart.
//
// A peek's ResetAfter is TAT − now, and a GCRA admits cost n when
// TAT + n·T − Burst·T ≤ now (T = Period/Rate): when ResetAfter ≤
// (Burst − n)·T, which is how check decides. Not by the peek's Remaining:
// redis_rate computes it in float seconds since 2017 and truncates it, so
// a rested client's Remaining is Burst − 1 whenever the float error of
// now − Burst·T falls below (for an interval such as 0.1 s, which binary
// cannot hold).
func (lim *Limiter) check(ctx context.Context, ls []*limit, keys []string, cost int64) ([]decision, error) {
	ds := make([]decision, len(ls))
	rejected := false
	for i, l := range ls {
		key := l.name + ":" + keys[i]
		if cost > int64(l.limit.Burst) {
			// It can never pass (redis_rate would give a finite RetryAfter).
			ds[i] = decision{limit: l, retryAfter: -1}
			rejected = true
			continue
		}
		res, err := lim.rl.AllowN(ctx, key, l.limit, 0)
		if err != nil {
			return nil, err
		}
		d := decision{limit: l, remaining: remaining(l, res.ResetAfter), reset: res.ResetAfter}
		// How long until cost n passes: TAT + n·T − Burst·T − now.
		if wait := res.ResetAfter + time.Duration(cost-int64(l.limit.Burst))*interval(l); wait <= 0 {
			d.allowed = true
		} else {
			d.retryAfter = wait
			rejected = true
		}
		ds[i] = d
	}
	if rejected {
		return ds, nil
	}
	for i, l := range ls {
		res, err := lim.rl.AllowN(ctx, l.name+":"+keys[i], l.limit, int(cost))
		if err != nil {
			return nil, err
		}
		d := decision{limit: l, allowed: res.Allowed > 0, remaining: remaining(l, res.ResetAfter), reset: res.ResetAfter, retryAfter: max(0, res.RetryAfter)}
		if missing := int64(l.limit.Burst) - d.remaining; missing > 0 {
			// TAT − now less the tokens after the next one.
			d.more = max(0, res.ResetAfter-time.Duration(missing-1)*interval(l))
		}
		ds[i] = d
	}
	return ds, nil
}

// interval is l's T = Period/Rate, the time one token takes to come back.
func interval(l *limit) time.Duration {
	return l.limit.Period / time.Duration(l.limit.Rate)
}

// remaining is how many requests of cost 1 l admits now, given its
// ResetAfter (TAT − now): ⌊(Burst·T − ResetAfter)/T⌋, at least 0.
func remaining(l *limit, resetAfter time.Duration) int64 {
	t := interval(l)
	return max(0, int64((time.Duration(l.limit.Burst)*t-resetAfter)/t))
}
`
