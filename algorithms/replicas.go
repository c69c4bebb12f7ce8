package algorithms

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// Balance is how a load balancer spreads requests over replicas.
type Balance string

// Balancers.
const (
	RoundRobin Balance = "round_robin"
	Random     Balance = "random"
)

// Balances are the balancers.
var Balances = []Balance{RoundRobin, Random}

// Replicas describes where a limit is enforced. Count ≤ 1 is one shared
// state (one process, or a central store such as Redis that every replica
// asks). Count > 1 is local enforcement: every replica keeps its own state
// with the full limit, and a balancer sends each request to one of them, so
// together they admit about Count times the limit.
//
// Skew offsets each replica's clock (replica i sees now + Skew[i], never
// below 0; missing entries are 0). With fixed windows, unsynchronised clocks
// move the window edges apart, so a client gets a fresh window on one
// replica while another is mid-window.
type Replicas struct {
	Count   int
	Balance Balance
	Skew    []time.Duration
	Seed    uint64 // seed of the random balancer
}

// MaxReplicas bounds Replicas.Count.
const MaxReplicas = 1000

// Validate reports the first field of r outside its range.
func (r Replicas) Validate() error {
	switch {
	case r.Count < 0 || r.Count > MaxReplicas:
		return &ParamError{"count", strconv.Itoa(r.Count), "a whole number in [0, 1000] (0 and 1 are one shared state)"}
	case r.Count > 1 && !slices.Contains(Balances, r.Balance):
		return &ParamError{"balance", strconv.Quote(string(r.Balance)), `"round_robin" or "random"`}
	case len(r.Skew) > max(r.Count, 1):
		return &ParamError{"skew", strconv.Itoa(len(r.Skew)) + " entries", "at most one per replica"}
	}
	for i, s := range r.Skew {
		if s < -time.Hour || s > time.Hour {
			return &ParamError{"skew[" + strconv.Itoa(i) + "]", s.String(), "a duration in [-1h, 1h]"}
		}
	}
	return nil
}

// Replicated is a limit enforced locally on several replicas behind a
// balancer; it implements Limiter so Simulate can run it beside one shared
// limiter on the same arrivals. Build one with NewReplicated.
type Replicated struct {
	spec      Spec
	instances []Limiter
	skew      []time.Duration
	balance   Balance
	rng       *rand.Rand
	next      int
}

var _ Limiter = (*Replicated)(nil)

// NewReplicated returns a limiter for spec enforced as r describes. With one
// replica and no skew it is simply New(spec).
func NewReplicated(spec Spec, r Replicas) (Limiter, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	n := max(r.Count, 1)
	if n == 1 && (len(r.Skew) == 0 || r.Skew[0] == 0) {
		return New(spec)
	}
	l := &Replicated{spec: spec, skew: make([]time.Duration, n), balance: r.Balance,
		rng: rand.New(rand.NewPCG(r.Seed, 0xba1a)), instances: make([]Limiter, n)}
	copy(l.skew, r.Skew)
	for i := range l.instances {
		inst, err := New(spec)
		if err != nil {
			return nil, err
		}
		l.instances[i] = inst
	}
	return l, nil
}

// Spec implements Limiter: the spec every replica enforces.
func (l *Replicated) Spec() Spec { return l.spec }

// Replicas returns how many replicas enforce the limit.
func (l *Replicated) Replicas() int { return len(l.instances) }

// Allow implements Limiter: the balancer picks a replica, which decides with
// its own state and its own clock. A peek (cost ≤ 0) asks replica 0 and does
// not move the balancer.
func (l *Replicated) Allow(key string, now time.Duration, cost int64) Decision {
	i := 0
	if cost > 0 {
		switch l.balance {
		case Random:
			i = l.rng.IntN(len(l.instances))
		default:
			i = l.next
			l.next++
			if l.next == len(l.instances) {
				l.next = 0
			}
		}
	}
	return l.instances[i].Allow(key, max(now+l.skew[i], 0), cost)
}

// Keys implements Limiter: states summed over replicas.
func (l *Replicated) Keys() int {
	n := 0
	for _, in := range l.instances {
		n += in.Keys()
	}
	return n
}

// Reclaim implements Limiter on every replica, each at its own clock.
func (l *Replicated) Reclaim(now time.Duration) int {
	n := 0
	for i, in := range l.instances {
		n += in.Reclaim(max(now+l.skew[i], 0))
	}
	return n
}
