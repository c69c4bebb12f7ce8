// Package engine decides requests for a whole policy, in virtual time. It is
// the one place where the composition of a policy's limits is implemented:
// the simulate API, the designer's and the embeds' charts, the docs command,
// the shadow replay and the export proofs all call it, so they agree request
// for request.
//
// How a policy decides a request:
//
//  1. The limits that apply: the client's tier limit (the tier named by the
//     request, matched to the policy's tier names ignoring ASCII case; a
//     tier without its own limit has the default limit), or the default
//     limit when the request names no tier or an unknown one; the limit of
//     the first endpoint, in policy order, whose method (ignoring case)
//     and path template match the request ({name} matches exactly one
//     non-empty path segment), if that endpoint has a limit; and the global
//     limit.
//  2. The request's cost is the matched endpoint's cost (1 when no
//     endpoint matches or it sets none), and applies to every limit.
//  3. The request is admitted only if every applicable limit admits it at
//     that cost; then each of them is charged. A rejected request charges
//     none of them. The decision names the first limit, in the order of
//     policy.Policy.Limits (client, endpoint, global), that rejected it.
//
// Per-client limits (default, tier, endpoint) are keyed by the request's
// key, the global limit by nothing. A request without a key passes only the
// global limit: a gateway cannot tell whose it is. Every limit decides at
// the request's arrival time; a leaky bucket's delay is the decision's
// Delay, and the other limits do not see the request later.
//
// A policy in shadow mode is decided the same way (what the limits would
// have done); Decision.Shadow says the request passes anyway.
//
// State. The engine numbers the clients it has seen (a map from key to a
// small id, one lookup a request) and keeps each per-client limit's state
// in a slice by that id (algorithms.Dense), decided by the same functions
// as an algorithms.Limiter of the limit's spec: a request costs one key
// lookup however many limits apply. Reclaim frees the ids of clients
// rested in every limit.
//
// An Engine is not safe for concurrent use. Times should not decrease for
// a key (each limit treats an earlier time as its last one). A key passed
// to Decide is kept as long as its client holds state, so its bytes must
// not change.
package engine

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/policy"
)

// Request is one request to decide.
type Request struct {
	// At is the virtual time of arrival.
	At time.Duration
	// Key identifies the client (an IP, an API key, an account: whatever
	// the client's tier is keyed by); "" means unknown.
	Key string
	// Tier is the tier the request names (its tier header); "" or an
	// unknown name means the default limit.
	Tier string
	// Method and Path select the endpoint; Path is without the query.
	Method, Path string
}

// Decision is the policy's answer to one request.
type Decision struct {
	// Allowed reports whether every applicable limit admitted it.
	Allowed bool
	// Shadow is set when the policy is in shadow mode: the request
	// passes even when Allowed is false.
	Shadow bool
	// Rejected is the index (in Engine.Limits) of the first limit that
	// rejected the request, -1 when admitted.
	Rejected int
	// Applicable is what applied: the tier, the endpoint, the cost and
	// the limits.
	Applicable
	// Remaining is the fewest requests of cost 1 any applicable limit
	// would still admit after this decision.
	Remaining int64
	// RetryAfter is, for a rejected request, the wait after which every
	// rejecting limit admits the same request (the longest of their
	// waits; algorithms.Never when the cost exceeds a limit's capacity);
	// 0 when admitted.
	RetryAfter time.Duration
	// Reset is the longest time until an applicable limit is rested.
	Reset time.Duration
	// Delay is how long an admitted request waits in a leaky bucket.
	Delay time.Duration
}

// Engine decides requests for one policy.
type Engine struct {
	limits    []policy.Limit
	states    []algorithms.Dense // by limit, by client id; the global limit's state is id 0
	perClient []int              // the limits keyed by client: all but the global one
	def       int                // index of the default limit, -1 if none
	tiers     map[string]int     // tier name, as written and in ASCII lower case → index in policy.Tiers
	tierUpper []string           // policy tier index → its name in ASCII upper case
	tierLimit []int              // policy tier index → index of its limit, -1 if none
	routes    routes             // the endpoints
	global    int                // index of the global limit, -1 if none
	shadow    bool

	// The clients: ids[key] is a client's id, keyOf[id] its key ("" for
	// a free id), free the freed ids, reused last in first out; lastKey
	// is the last key looked up, lastID its id (-1 for none), for runs of
	// one client.
	ids     map[string]int32
	keyOf   []string
	free    []int32
	lastKey string
	lastID  int32
	epoch   uint64 // Reclaims that freed an id
}

// New builds the engine of p. It fails only when a limit is out of its
// range (a policy that decoded or validated never is).
func New(p policy.Policy) (*Engine, error) {
	e := &Engine{limits: p.Limits(), def: -1, global: -1, shadow: p.Defaults.EffectiveMode() == policy.ModeShadow,
		tiers: make(map[string]int, len(p.Tiers)), tierLimit: make([]int, len(p.Tiers)),
		ids: map[string]int32{}, lastID: -1}
	e.states = make([]algorithms.Dense, len(e.limits))
	for i := range e.tierLimit {
		e.tierLimit[i] = -1
	}
	for i, t := range p.Tiers {
		e.tierUpper = append(e.tierUpper, upperASCII(t.Name))
		// The name as written, for the common exact match without
		// folding, and in lower case.
		for _, name := range []string{t.Name, policy.LowerASCII(t.Name)} {
			if _, dup := e.tiers[name]; !dup {
				e.tiers[name] = i
			}
		}
	}
	byField := make(map[string]int, len(e.limits))
	for i, l := range e.limits {
		st, err := algorithms.NewDense(l.Spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Field, err)
		}
		e.states[i] = st
		byField[l.Field] = i
		switch l.Scope {
		case policy.ScopeDefault:
			e.def = i
		case policy.ScopeGlobal:
			e.global = i
		}
		if l.Scope != policy.ScopeGlobal {
			e.perClient = append(e.perClient, i)
		}
	}
	for i := range p.Tiers {
		if j, ok := byField[fmt.Sprintf("tiers[%d].limit", i)]; ok {
			e.tierLimit[i] = j
		}
	}
	var eps []endpoint
	var templates []string
	for i, pe := range p.Endpoints {
		ep := endpoint{method: upperASCII(pe.Match.Method), cost: max(pe.Cost, 1), limit: -1}
		ep.parts = template(pe.Match.Path)
		if j, ok := byField[fmt.Sprintf("endpoints[%d].limit", i)]; ok {
			ep.limit = j
		}
		eps, templates = append(eps, ep), append(templates, pe.Match.Path)
	}
	e.routes = newRoutes(eps, templates)
	return e, nil
}

// Limits are the policy's limits, in the order Decision.Rejected indexes.
func (e *Engine) Limits() []policy.Limit { return e.limits }

// Shadow reports whether the policy is in shadow mode.
func (e *Engine) Shadow() bool { return e.shadow }

// Applicable is what applies to a request.
type Applicable struct {
	// Tier is the index in the policy of the tier whose limit applies,
	// -1 for the default limit (or none); Endpoint the index of the
	// matched endpoint, -1 for none.
	Tier, Endpoint int
	// Cost is the request's cost.
	Cost int64
	// Limits[:N] are the indices in Engine.Limits of the limits that
	// apply, in order: client, endpoint, global.
	Limits [3]int
	N      int
}

// Match reports what applies to q, by rules 1 and 2 of the package
// comment, without deciding anything.
func (e *Engine) Match(q Request) Applicable {
	var a Applicable
	e.match(&q, &a)
	return a
}

// match is Match into *a. (Request, Applicable and Decision are a dozen
// words each: passed by pointer inside the engine, they are not copied
// from call to call.)
func (e *Engine) match(q *Request, a *Applicable) {
	*a = Applicable{Tier: -1, Endpoint: -1, Cost: 1}
	client := e.def
	if q.Tier != "" {
		if i, ok := e.tier(q.Tier); ok {
			a.Tier, client = i, e.tierLimit[i]
		}
	}
	if i := e.routes.find(q.Method, q.Path); i >= 0 {
		a.Endpoint, a.Cost = i, e.routes.eps[i].cost
	}
	if q.Key != "" {
		if client >= 0 {
			a.Limits[a.N] = client
			a.N++
		}
		if a.Endpoint >= 0 && e.routes.eps[a.Endpoint].limit >= 0 {
			a.Limits[a.N] = e.routes.eps[a.Endpoint].limit
			a.N++
		}
	}
	if e.global >= 0 {
		a.Limits[a.N] = e.global
		a.N++
	}
}

// tier finds the tier named name, ignoring ASCII case.
func (e *Engine) tier(name string) (int, bool) {
	if len(e.tierUpper) <= scanTiers {
		// A few names: compared in turn, in policy order (the first of
		// names equal but for case wins, as in the map).
		for i, t := range e.tierUpper {
			if equalFoldUpper(name, t) {
				return i, true
			}
		}
		return 0, false
	}
	if i, ok := e.tiers[name]; ok {
		return i, true
	}
	// Lower case in a buffer on the stack: the lookup by string(b)
	// allocates nothing.
	var buf [64]byte
	if len(name) > len(buf) {
		i, ok := e.tiers[policy.LowerASCII(name)]
		return i, ok
	}
	b := buf[:len(name)]
	for j := range len(name) {
		c := name[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[j] = c
	}
	i, ok := e.tiers[string(b)]
	return i, ok
}

// scanTiers is how many tiers tier compares in turn rather than look up:
// a few short names compare faster than they hash.
const scanTiers = 8

// Decide decides q by the policy, charging the limits when it is admitted.
func (e *Engine) Decide(q Request) Decision {
	var d Decision
	e.match(&q, &d.Applicable)
	// The client's id, for the per-client limits (the global limit has
	// one state, id 0; a request without a key meets only that).
	id := int32(0)
	if a := &d.Applicable; a.N > 1 || a.N == 1 && a.Limits[0] != e.global {
		id = e.Client(q.Key)
	}
	e.decide(&q, id, &d)
	return d
}

// DecideClient is Decide for a caller that keeps its clients' ids: id is
// what Client returned for q.Key since the last change of Epoch (any id
// when q.Key is "").
func (e *Engine) DecideClient(id int32, q Request) Decision {
	var d Decision
	e.DecideClientTo(&d, id, &q)
	return d
}

// DecideClientTo is DecideClient writing the decision to *d, for a caller
// deciding many requests in a loop.
func (e *Engine) DecideClientTo(d *Decision, id int32, q *Request) {
	e.match(q, &d.Applicable)
	e.decide(q, id, d)
}

// decide decides q, to which d.Applicable applies, id being its client's,
// into the rest of *d.
func (e *Engine) decide(q *Request, id int32, d *Decision) {
	a := &d.Applicable
	d.Allowed, d.Shadow, d.Rejected = false, e.shadow, -1
	d.Remaining, d.RetryAfter, d.Reset, d.Delay = 0, 0, 0, 0
	if a.N == 0 {
		d.Allowed, d.Remaining = true, noLimit
		return
	}
	allow := func(i int, cost int64) algorithms.Decision {
		if i == e.global {
			return e.states[i].Allow(0, q.At, cost)
		}
		return e.states[i].Allow(id, q.At, cost)
	}
	// One limit: its own decision is the policy's.
	if a.N == 1 {
		ld := allow(a.Limits[0], a.Cost)
		d.Allowed, d.Remaining, d.Reset = ld.Allowed, ld.Remaining, ld.Reset
		if ld.Allowed {
			d.Delay = ld.Delay()
		} else {
			d.Rejected, d.RetryAfter = a.Limits[0], ld.RetryAfter()
		}
		return
	}
	// Several: look at all but the last without charging (a request of
	// cost c passes a limit exactly when c ≤ the Remaining it reports for
	// cost 0). If they all admit, the last decides at its cost: rejected,
	// it charged nothing and nothing else was charged; admitted, the
	// others are charged too. An admitted request takes 2N−1 decisions.
	var peek [3]algorithms.Decision
	last := a.N - 1
	admit := true
	for j := range last {
		peek[j] = allow(a.Limits[j], 0)
		if peek[j].Remaining < a.Cost {
			admit = false
		}
	}
	if admit {
		ld := allow(a.Limits[last], a.Cost)
		if ld.Allowed {
			d.Allowed, d.Remaining, d.Reset, d.Delay = true, ld.Remaining, ld.Reset, ld.Delay()
			for j := range last {
				ld := allow(a.Limits[j], a.Cost)
				d.Remaining = min(d.Remaining, ld.Remaining)
				d.Reset = max(d.Reset, ld.Reset)
				d.Delay = max(d.Delay, ld.Delay())
			}
			return
		}
		d.Rejected, d.RetryAfter = a.Limits[last], ld.RetryAfter()
		d.Remaining, d.Reset = ld.Remaining, ld.Reset
		for j := range last {
			d.Remaining = min(d.Remaining, peek[j].Remaining)
			d.Reset = max(d.Reset, peek[j].Reset)
		}
		return
	}
	peek[last] = allow(a.Limits[last], 0)
	d.Remaining = noLimit
	for j := range a.N {
		i := a.Limits[j]
		d.Remaining = min(d.Remaining, peek[j].Remaining)
		d.Reset = max(d.Reset, peek[j].Reset)
		if peek[j].Remaining >= a.Cost {
			continue
		}
		// A rejected request charges nothing: this only asks for the
		// wait.
		ld := allow(i, a.Cost)
		if d.Rejected < 0 {
			d.Rejected = i
		}
		d.RetryAfter = max(d.RetryAfter, ld.RetryAfter())
	}
}

// Client returns the id of the client whose key is key (not ""),
// numbering it if it is new. The id is the client's until the next
// Reclaim that changes Epoch.
func (e *Engine) Client(key string) int32 {
	// The last key is known by its string's address, as algorithms'
	// tables know theirs: a byte comparison would cost every request
	// when keys of one length take turns.
	if e.lastID >= 0 && len(key) == len(e.lastKey) && unsafe.StringData(key) == unsafe.StringData(e.lastKey) {
		return e.lastID
	}
	id, ok := e.ids[key]
	if !ok {
		if n := len(e.free); n > 0 {
			id, e.free = e.free[n-1], e.free[:n-1]
			e.keyOf[id] = key
		} else {
			id = int32(len(e.keyOf))
			e.keyOf = append(e.keyOf, key)
		}
		e.ids[key] = id
	}
	e.lastKey, e.lastID = key, id
	return id
}

// noLimit is Remaining when no limit applies.
const noLimit = int64(^uint64(0) >> 1)

// Reclaim drops the state of every client rested at now in every
// per-client limit, frees its id, and returns how many it dropped. It
// looks at every client held: a caller that reclaims when Keys has grown
// to twice what the last Reclaim left pays O(1) per client, amortised.
func (e *Engine) Reclaim(now time.Duration) int {
	n := 0
	for id, key := range e.keyOf {
		if key == "" {
			continue
		}
		rested := true
		for _, i := range e.perClient {
			if !e.states[i].Rested(int32(id), now) {
				rested = false
				break
			}
		}
		if !rested {
			continue
		}
		for _, i := range e.perClient {
			e.states[i].Drop(int32(id))
		}
		delete(e.ids, key)
		e.keyOf[id] = ""
		e.free = append(e.free, int32(id))
		n++
	}
	e.lastKey, e.lastID = "", -1
	if n > 0 {
		e.epoch++
	}
	return n
}

// Reset puts the engine back to its fresh state, as New returns it: no
// client, every limit rested. The ids of Client change (Epoch).
func (e *Engine) Reset() {
	for _, st := range e.states {
		st.Reset()
	}
	clear(e.ids)
	clear(e.keyOf)
	e.keyOf, e.free = e.keyOf[:0], e.free[:0]
	e.lastKey, e.lastID = "", -1
	e.epoch++
}

// Epoch counts the Reclaims that freed an id, and the Resets: an id from
// Client stays its client's while Epoch returns the same number.
func (e *Engine) Epoch() uint64 { return e.epoch }

// Keys is how many clients hold state.
func (e *Engine) Keys() int { return len(e.ids) }
