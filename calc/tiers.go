package calc

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/algorithms"
)

// Tier is one class of clients and its limits: the base sizes with rate,
// burst and limit scaled by the tier's multiplier.
type Tier struct {
	Name    string `json:"name"`
	Clients int    `json:"clients"`
	// The multiple of the per-client rate the tier gets.
	Multiplier float64 `json:"multiplier"`
	Sizes
	// What the tier's clients may send together: clients × rate.
	Aggregate Value `json:"aggregate"`
}

// tiers scales base for each tier of in; a scaled spec outside the engine's
// ranges is an error on the tier's multiplier.
func tiers(in Input, base Sizes, cost int64, v *errs) []Tier {
	var out []Tier
	for i, t := range in.Tiers {
		m := t.Multiplier
		r := m * base.Rate.Value
		b := math.Max(1, ceil(m*base.Burst.Value))
		bWhy := fmt.Sprintf("burst = ⌈multiplier × burst⌉ = ⌈%s × %s⌉ = %s", num(m), num(base.Burst.Value), num(b))
		if float64(cost) > b {
			b = float64(cost)
			bWhy += fmt.Sprintf("; raised to the largest endpoint cost, %d", cost)
		}
		W := base.Window.Value
		L := math.Max(1, ceil(r*W))
		q, qWhy := queue(in, r, b)
		tier := Tier{Name: t.Name, Clients: t.Clients, Multiplier: m, Sizes: Sizes{
			Rate:   Value{r, UnitPerSecond, fmt.Sprintf("rate = multiplier × rate = %s × %s = %s", num(m), num(base.Rate.Value), perSec(r))},
			Burst:  Value{b, UnitRequests, bWhy},
			Limit:  Value{L, UnitRequests, fmt.Sprintf("limit = ⌈rate × window⌉ = ⌈%s × %s⌉ = %s per %s", num(r), num(W), num(L), secs(W))},
			Window: base.Window,
			Queue:  Value{q, UnitRequests, qWhy},
		}}
		agg := float64(t.Clients) * r
		tier.Aggregate = Value{agg, UnitPerSecond, fmt.Sprintf("aggregate = clients × rate = %d × %s = %s", t.Clients, num(r), perSec(agg))}
		if !validSizes(tier.Sizes, fmt.Sprintf("tiers[%d].multiplier", i), num(m), "tier "+t.Name, v) {
			continue
		}
		out = append(out, tier)
	}
	return out
}

// validSizes checks the specs of s (one per parameter family) and blames
// field for the first out of range.
func validSizes(s Sizes, field, value, what string, v *errs) bool {
	for _, name := range []algorithms.Name{algorithms.NameTokenBucket, algorithms.NameLeakyBucket, algorithms.NameFixedWindow} {
		if err := s.Spec(name).Validate(); err != nil {
			v.blame(field, value, what+" "+string(name), err)
			return false
		}
	}
	return true
}

// PerReplica is the split of a limit enforced locally on several replicas:
// each replica enforces rate/R, ⌈burst/R⌉ and ⌈limit/R⌉ so that together
// they admit about what one shared limit would.
type PerReplica struct {
	Replicas int `json:"replicas"`
	Sizes
	// When the split holds, and what breaks it.
	Caveat string `json:"caveat"`
}

// perReplica is nil unless enforcement is local on more than one replica.
func perReplica(in Input, base Sizes, v *errs) *PerReplica {
	if in.Enforcement != Local || in.Replicas < 2 {
		return nil
	}
	R := float64(in.Replicas)
	r := base.Rate.Value / R
	b := math.Max(1, ceil(base.Burst.Value/R))
	L := math.Max(1, ceil(base.Limit.Value/R))
	q := floor(base.Queue.Value / R)
	p := &PerReplica{Replicas: in.Replicas, Sizes: Sizes{
		Rate:   Value{r, UnitPerSecond, fmt.Sprintf("rate / replicas = %s / %d = %s", num(base.Rate.Value), in.Replicas, perSec(r))},
		Burst:  Value{b, UnitRequests, fmt.Sprintf("⌈burst / replicas⌉ = ⌈%s / %d⌉ = %s", num(base.Burst.Value), in.Replicas, num(b))},
		Limit:  Value{L, UnitRequests, fmt.Sprintf("⌈limit / replicas⌉ = ⌈%s / %d⌉ = %s per %s", num(base.Limit.Value), in.Replicas, num(L), secs(base.Window.Value))},
		Window: base.Window,
		Queue:  Value{q, UnitRequests, fmt.Sprintf("⌊queue / replicas⌋ = ⌊%s / %d⌋ = %s", num(base.Queue.Value), in.Replicas, num(q))},
	}}
	p.Caveat = fmt.Sprintf("The split is exact only when the balancer spreads each client's requests evenly over the %d replicas. "+
		"With random balancing, sticky sessions or a replica down, one replica sees more than 1/%d of a client's requests and rejects it early, "+
		"and rounding up lets the replicas together admit up to %d × %s = %s at once. A shared store (Redis) avoids both.",
		in.Replicas, in.Replicas, in.Replicas, num(b), num(R*b))
	if !validSizes(p.Sizes, "replicas", fmt.Sprint(in.Replicas), "per-replica", v) {
		return nil
	}
	return p
}

// EndpointFit is what one client can do on one endpoint with the base
// limits: how many requests fit in a burst and in a window, the sustained
// rate, and the Retry-After after an empty bucket.
type EndpointFit struct {
	Method     string `json:"method"`
	Path       string `json:"path"`
	Cost       int64  `json:"cost"`
	InBurst    Value  `json:"in_burst"`
	InWindow   Value  `json:"in_window"`
	Rate       Value  `json:"rate"`
	RetryAfter Value  `json:"retry_after"`
}

func endpointFits(in Input, s Sizes) []EndpointFit {
	var out []EndpointFit
	r, b, L, W := s.Rate.Value, s.Burst.Value, s.Limit.Value, s.Window.Value
	for _, e := range in.Endpoints {
		c := float64(e.Cost)
		nb, nw := floor(b/c), floor(L/c)
		out = append(out, EndpointFit{
			Method: e.Method, Path: e.Path, Cost: e.Cost,
			InBurst:  Value{nb, UnitRequests, fmt.Sprintf("⌊burst / cost⌋ = ⌊%s / %d⌋ = %s at once", num(b), e.Cost, num(nb))},
			InWindow: Value{nw, UnitRequests, fmt.Sprintf("⌊limit / cost⌋ = ⌊%s / %d⌋ = %s per %s", num(L), e.Cost, num(nw), secs(W))},
			Rate:     Value{r / c, UnitPerSecond, fmt.Sprintf("rate / cost = %s / %d = %s sustained", num(r), e.Cost, perSec(r/c))},
			RetryAfter: retryAfter(c/r, fmt.Sprintf("from an empty bucket the %d tokens refill in cost/rate = %d/%s = %s",
				e.Cost, e.Cost, num(r), secs(c/r))),
		})
	}
	return out
}
