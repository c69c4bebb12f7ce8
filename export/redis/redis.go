// Package redis is the "redis-lua" export target: one atomic Redis Lua
// script per algorithm, deciding exactly as package algorithms does, and a
// Go file (package ratelimit, go-redis v9) that runs the scripts of a
// policy's limits as an HTTP middleware.
//
// The scripts' contract, the same for all six:
//
//	KEYS    the client's state under ratelab:{<limit>:<client>}, suffixed
//	        (":log", ":meta") where an algorithm needs two keys; the {…}
//	        hash tag puts every key of one script call in one Cluster slot.
//	ARGV    [1], [2] the parameters: rate (requests/s) and burst or queue,
//	        or limit and window (µs); [3] the cost; [4] now in µs since the
//	        Unix epoch, "" to read Redis TIME (production: every replica
//	        shares the store's clock); [5] "1" for a dry run that decides
//	        without writing.
//	returns {allowed 0|1, remaining, retry_after µs (-1 = never: the cost
//	        exceeds the capacity), reset µs, delay µs (leaky_bucket; else 0)}
//
// Durations are rounded up to whole µs (the ns result of algorithms,
// ceiled). The bucket scripts keep state as an anchor time in µs plus a
// double (tokens missing, TAT offset, backlog in ns), so their arithmetic
// is the algorithms package's float64 at full precision even at today's
// epoch; the window scripts use integers. Windows are aligned to the Unix
// epoch. Every admission sets a TTL of the time until the key is rested
// plus one second, so idle keys expire and none expires while it matters.
//
// On a Redis Cluster each script call is atomic on the master that owns
// its slot, but the limits of one request (client, endpoint, global) have
// different hash tags, so they live in different slots: the generated
// file keeps the all-or-nothing rule with a dry run of every limit and
// then the charge, as on one Redis, which is not atomic across the limits
// (the export's notes say what that means).
package redis

import (
	"embed"
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

// name is the target's name.
const name = "redis-lua"

// Target is the redis-lua export.
var Target = export.Target{Name: name, Title: "Redis Lua scripts (go-redis)", Group: export.Libraries, Render: Render}

//go:embed lua/*.lua
var lua embed.FS

// Script is the Lua source of algorithm name's script, "" for an unknown
// name.
func Script(name algorithms.Name) string {
	body, err := lua.ReadFile("lua/" + string(name) + ".lua")
	if err != nil {
		return ""
	}
	prelude, _ := lua.ReadFile("lua/prelude.lua")
	return "-- ratelab " + string(name) + ".lua\n" + string(prelude) + string(body)
}

// KeyPrefix starts every key the scripts use.
const KeyPrefix = "ratelab:"

// Keys are the Redis keys of limit's state for client: the base
// ratelab:{<limit>:<client>} and, for sliding_log, its log and its meta
// hash. All share the base's hash tag.
func Keys(name algorithms.Name, limit, client string) []string {
	base := KeyPrefix + "{" + limit + ":" + client + "}"
	if name == algorithms.NameSlidingLog {
		return []string{base + ":log", base + ":meta"}
	}
	return []string{base}
}

// Args are a spec's ARGV[1] and ARGV[2]: rate and burst or queue, or limit
// and window in µs (rounded to the nearest µs).
func Args(s algorithms.Spec) [2]string {
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		return [2]string{num(s.Rate), strconv.FormatInt(s.Burst, 10)}
	case algorithms.NameLeakyBucket:
		return [2]string{num(s.Rate), strconv.FormatInt(s.Queue, 10)}
	}
	return [2]string{strconv.FormatInt(s.Limit, 10), strconv.FormatInt(s.Window.Round(time.Microsecond).Microseconds(), 10)}
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// exactDoubles is 2^53: integers below it are exact in a Lua double.
const exactDoubles = 1 << 53

// mapping is how spec s lands in its script, and how faithfully.
func mapping(l policy.Limit) export.Mapping {
	s := l.Spec
	a := Args(s)
	m := export.Mapping{Field: l.Field, From: s.String(), Fidelity: export.Exact}
	var names [2]string
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		names = [2]string{"rate", "burst"}
	case algorithms.NameLeakyBucket:
		names = [2]string{"rate", "queue"}
	default:
		names = [2]string{"limit", "window_us"}
	}
	client := "<client>"
	if l.Scope == policy.ScopeGlobal {
		client = "global"
	}
	m.To = fmt.Sprintf("%s.lua KEYS=%s ARGV=[%s=%s, %s=%s, cost, now_us]", s.Algorithm,
		strings.Join(Keys(s.Algorithm, l.Name, client), ","), names[0], a[0], names[1], a[1])
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA, algorithms.NameLeakyBucket:
		m.Why = "the script runs the algorithms package's float64 arithmetic on Redis TIME (µs); retry-after, reset and delay are returned in µs, rounded up"
		if s.Algorithm == algorithms.NameLeakyBucket {
			m.Why += "; the script returns the delay and the middleware waits it out before serving (a queue, not a meter)"
		}
	default:
		w := s.Window.Round(time.Microsecond)
		m.Why = "integer arithmetic in µs on Redis TIME; windows aligned to the Unix epoch"
		if w != s.Window {
			m.Fidelity = export.Approximate
			m.Why = fmt.Sprintf("the window %s is rounded to whole µs (%s), the scripts' clock resolution", s.Window, w)
		}
		if s.Algorithm == algorithms.NameSlidingWindow && float64(s.Limit)*float64(w.Microseconds()) >= exactDoubles {
			m.Fidelity = export.Approximate
			m.Why = fmt.Sprintf("limit × window = %d × %d µs reaches 2^53, beyond which Lua's doubles round the weighted count", s.Limit, w.Microseconds())
		}
		if s.Algorithm == algorithms.NameSlidingLog {
			m.Why += "; the log is a sorted set of at most limit members"
		}
	}
	return m
}

// Render writes the Go file that runs the policy's limits in Redis.
func Render(p policy.Policy, o export.Options) (export.Export, error) {
	o = o.WithDefaults()
	ex := export.Export{Target: name, Filename: "ratelimit_redis.go", MediaType: "text/x-go; charset=utf-8"}
	limits := p.Limits()
	used := map[algorithms.Name]bool{}
	for _, l := range limits {
		ex.Add(mapping(l))
		used[l.Spec.Algorithm] = true
	}
	var body strings.Builder
	body.WriteString("// The Lua scripts of the algorithms the policy uses (see the ratelab\n// redis-lua export for the contract: KEYS, ARGV, results in µs).\nconst (\n")
	for _, n := range algorithms.Names {
		if used[n] {
			fmt.Fprintf(&body, "\t%sLua = %s\n", ident(n), "`"+Script(n)+"`")
		}
	}
	body.WriteString(")\n\n// One go-redis script per algorithm: EVALSHA, loading on NOSCRIPT.\nvar (\n")
	for _, n := range algorithms.Names {
		if used[n] {
			fmt.Fprintf(&body, "\t%sScript = redis.NewScript(%sLua)\n", ident(n), ident(n))
		}
	}
	body.WriteString(")\n\n")
	body.WriteString(goBody)
	f := snippet.File{
		Policy: p, Options: o, Target: name,
		Doc: `Each limit is one atomic Lua script in Redis (go-redis v9): the state of
a client lives under ratelab:{<limit>:<client>} (one Cluster slot per
limit and client), the scripts read Redis TIME so every replica shares one
clock, and keys expire once rested. Use it with
ratelimit.NewLimiter(rdb).Middleware(handler), rdb a *redis.Client or
*redis.ClusterClient.`,
		Imports: []string{"fmt", "github.com/redis/go-redis/v9"},
		LimitFields: `	script   *redis.Script // the algorithm's script
	args     []any         // ARGV[1] and ARGV[2]
	logKeys  bool          // sliding_log: a log and a meta key`,
		Fields: func(l policy.Limit) string {
			a := Args(l.Spec)
			f := fmt.Sprintf("script: %sScript, args: []any{%q, %q}", ident(l.Spec.Algorithm), a[0], a[1])
			if l.Spec.Algorithm == algorithms.NameSlidingLog {
				f += ", logKeys: true"
			}
			return f
		},
		Body: body.String(),
	}
	src, err := f.Render()
	if err != nil {
		return export.Export{}, err
	}
	ex.Body = src
	addPolicyMappings(&ex, p, "the Redis scripts")
	ex.Notes = []string{
		"Copy ratelimit_redis.go into your service (package ratelimit), add github.com/redis/go-redis/v9, and wrap your handler: ratelimit.NewLimiter(rdb).Middleware(mux). Check it with go vet.",
		fmt.Sprintf("It reads the client's tier from %s, its API key from %s and its account from %s (headers your authentication layer sets); a request without its key header is keyed by its IP address (RemoteAddr: put the middleware behind your proxy's real-IP handling).", o.TierHeader, o.APIKeyHeader, o.AccountHeader),
		"Every limit of a request is first decided in a dry run (ARGV[5] = \"1\"), then charged: a request rejected by one limit consumes none of the others. Between the two round trips another replica may take the last tokens; the charge then rejects, and the limits before it in that request stay charged.",
		"Redis Cluster: pass a *redis.ClusterClient (any redis.UniversalClient). Each limit keeps a client's state under ratelab:{<limit>:<client>} (sliding_log: that name plus :log and :meta), the global limit under ratelab:{<limit>:global}; the {…} hash tag puts every key of one script call in one slot, so each limit's decision is atomic on the master that owns it. A request's limits (its tier or default limit, its endpoint's, the global one) have different tags, so they live in different slots, usually on different masters, and no one script or MULTI may span them (Redis answers CROSSSLOT): the all-or-nothing rule is kept by the dry run and the charge described above, exact for requests that do not race for the same limit. Charging them all-or-nothing atomically would need every key of a request in one slot, one hash tag shared by each client's limits and the global limit, which puts every client's state on one master; Redis Cluster has no transaction across slots. The global limit's one key is a hot slot: every request's global decision runs on the master that owns it.",
		"The scripts read Redis TIME, so replicas need no synchronised clocks; tests pass ARGV[4] (µs) instead. On a cluster each limit's state is timed by the master that owns its slot (after a failover, by the promoted replica: keep the masters' clocks synchronised; a clock behind the last time seen counts as that time, one ahead refills early). Fixed and sliding windows start at multiples of the window since the Unix epoch.",
		"Each script is a constant of the file (tokenBucketLua, …); saved to a file it runs by hand: redis-cli --eval token_bucket.lua 'ratelab:{default:ip:1.2.3.4}' , 10 20 1 '' 0 (rate 10/s, burst 20, cost 1, Redis TIME, not a dry run).",
	}
	return ex, nil
}

// addPolicyMappings adds the policy-level mappings of a Redis-backed Go
// snippet.
func addPolicyMappings(ex *export.Export, p policy.Policy, store string) {
	mode := p.Defaults.Mode
	if mode == "" {
		mode = policy.ModeEnforce
	}
	ex.Add(export.Mapping{Field: "defaults.mode", From: string(mode), To: fmt.Sprintf("shadowMode = %t", mode == policy.ModeShadow),
		Fidelity: export.Exact, Why: "in shadow mode the middleware logs what it would reject or delay, and serves the request"})
	for i, e := range p.Endpoints {
		if e.Cost > 1 {
			ex.Add(export.Mapping{Field: fmt.Sprintf("endpoints[%d].cost", i), From: strconv.FormatInt(e.Cost, 10),
				To: fmt.Sprintf("cost %d for %s %s", e.Cost, strings.ToUpper(e.Match.Method), e.Match.Path), Fidelity: export.Exact,
				Why: "the cost is passed to every limit the request passes (client, endpoint, global)"})
		}
	}
	ex.Add(snippet.ResponseMapping(p))
	n := max(1, p.Service.Replicas)
	enf := p.Service.Enforcing()
	em := export.Mapping{Field: "service.enforcement", From: fmt.Sprintf("%s, %d replicas", enf, n), To: "one shared state in Redis (one server or a Cluster: one hash slot per limit and client) for every replica",
		Fidelity: export.Exact, Why: store + " keep one state per client for all replicas"}
	if enf == calc.Local && n > 1 {
		em.Fidelity = export.Approximate
		em.Why = fmt.Sprintf("the policy enforces each limit in each of the %d replicas (%d× the limit in total); %s share one state, so the service admits each limit once", n, n, store)
	}
	ex.Add(em)
	fail := p.Service.StoreFailureMode()
	fm := export.Mapping{Field: "service.on_store_failure", From: string(fail), Fidelity: export.Exact}
	if fail == policy.FailClosed {
		fm.To = "failClosed = true: a Redis error rejects the request with 503 and Retry-After: 1"
	} else {
		fm.To = "failClosed = false: a Redis error is logged and the request passes"
	}
	ex.Add(fm)
}

// ident is the Go identifier stem of an algorithm: tokenBucket.
func ident(n algorithms.Name) string {
	parts := strings.Split(string(n), "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// goBody is the Limiter of the generated file.
const goBody = `// keyPrefix starts every Redis key: ratelab:{<limit>:<client>}.
const keyPrefix = "ratelab:"

// Limiter decides requests with the policy's scripts in Redis. It is safe
// for concurrent use.
type Limiter struct {
	rdb redis.UniversalClient
}

// NewLimiter returns a Limiter that keeps its state in rdb.
func NewLimiter(rdb redis.UniversalClient) *Limiter { return &Limiter{rdb: rdb} }

// check decides the request against every limit in ls: a dry run of all
// of them first, so that one limit's rejection consumes none of the
// others, then the charge. With the IETF headers on, a third dry run asks
// each limit short of quota for one request more than it has left, which
// it rejects: its wait is the time until more quota (RateLimit's t).
func (lim *Limiter) check(ctx context.Context, ls []*limit, keys []string, cost int64) ([]decision, error) {
	each := func(int) int64 { return cost }
	ds, err := lim.run(ctx, ls, keys, each, true)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if !d.allowed {
			return ds, nil
		}
	}
	if ds, err = lim.run(ctx, ls, keys, each, false); err != nil || !headersIETF {
		return ds, err
	}
	var short []int
	for i, d := range ds {
		if d.remaining < d.limit.quota {
			short = append(short, i)
		}
	}
	if len(short) == 0 {
		return ds, nil
	}
	sl, sk := make([]*limit, len(short)), make([]string, len(short))
	for j, i := range short {
		sl[j], sk[j] = ls[i], keys[i]
	}
	more, err := lim.run(ctx, sl, sk, func(j int) int64 { return ds[short[j]].remaining + 1 }, true)
	if err != nil {
		return nil, err
	}
	for j, i := range short {
		ds[i].more = max(0, more[j].retryAfter)
	}
	return ds, nil
}

// run runs every limit's script in one pipeline, limit i at cost(i); dry
// decides without writing. The scripts read Redis TIME (ARGV[4] = "").
func (lim *Limiter) run(ctx context.Context, ls []*limit, keys []string, cost func(int) int64, dry bool) ([]decision, error) {
	flag := "0"
	if dry {
		flag = "1"
	}
	cmds := make([]*redis.Cmd, len(ls))
	exec := func(load bool) error {
		pipe := lim.rdb.Pipeline()
		for i, l := range ls {
			base := keyPrefix + "{" + l.name + ":" + keys[i] + "}"
			ks := []string{base}
			if l.logKeys {
				ks = []string{base + ":log", base + ":meta"}
			}
			args := append(append([]any(nil), l.args...), cost(i), "", flag)
			if load {
				cmds[i] = l.script.Eval(ctx, pipe, ks, args...)
			} else {
				cmds[i] = l.script.EvalSha(ctx, pipe, ks, args...)
			}
		}
		_, err := pipe.Exec(ctx)
		return err
	}
	err := exec(false)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		err = exec(true)
	}
	if err != nil {
		return nil, err
	}
	ds := make([]decision, len(ls))
	for i, c := range cmds {
		v, err := c.Int64Slice()
		if err != nil {
			return nil, err
		}
		if len(v) != 5 {
			return nil, fmt.Errorf("ratelimit: script of %s returned %d values, want 5", ls[i].name, len(v))
		}
		ds[i] = decision{limit: ls[i], allowed: v[0] == 1, remaining: v[1],
			retryAfter: micros(v[2]), reset: micros(v[3]), delay: micros(v[4])}
	}
	return ds, nil
}

// micros converts the scripts' µs to a Duration; -1 (never) stays -1.
func micros(v int64) time.Duration {
	if v < 0 {
		return -1
	}
	return time.Duration(v) * time.Microsecond
}
`
