package calc

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/algorithms"
)

// Result is everything the calculator derives from an Input.
//
// The embedded Sizes are the per-client limits (for a tier multiplier of 1); Algorithms
// turns them into the six algorithms' parameters.
type Result struct {
	// The input with its defaults applied.
	Input Input `json:"input"`
	// The capacity less the headroom.
	Usable Value `json:"usable"`
	// The usable capacity over the clients (weighted by the tiers'
	// multipliers).
	FairShare Value `json:"fair_share"`
	Sizes
	// The fastest steady rate that none of the six algorithms rejects (the
	// rate, or a little less when the sliding window counter sets it).
	Pace Value `json:"pace"`
	// The gap between requests at that pace (1/pace).
	MinInterval Value `json:"min_interval"`
	// The six algorithms' parameters: token_bucket, gcra, leaky_bucket,
	// fixed_window, sliding_log, sliding_window.
	Algorithms []Params `json:"algorithms"`
	// Each tier's limits, in the input's order (only with tiers).
	Tiers []Tier `json:"tiers,omitempty"`
	// What a client can do on each costly endpoint (only with endpoints).
	Endpoints []EndpointFit `json:"endpoints,omitempty"`
	// The split of the limits over the replicas (only with local
	// enforcement on more than one).
	PerReplica *PerReplica `json:"per_replica,omitempty"`
	// Each algorithm's response headers at a moment of a client's run.
	Headers []HeaderExample `json:"headers"`
	// The client's retry schedule for the token bucket's Retry-After.
	Backoff Backoff `json:"backoff"`
	// The predicted share of clients above the rate (only when two
	// percentiles are measured).
	Share *Share `json:"share,omitempty"`
	// The problems found in the design.
	Checks []Check `json:"checks"`
}

// Params returns the parameters of the algorithm called name.
func (r Result) Params(name algorithms.Name) (Params, bool) {
	for _, p := range r.Algorithms {
		if p.Algorithm == name {
			return p, true
		}
	}
	return Params{}, false
}

// Size derives rate-limit parameters from in, following DESIGN.md §4:
//
//  1. usable = capacity × (1 − headroom); fair share = usable / Σ clients × multiplier
//  2. rate r = p99 × margin, or the fair share without p99
//  3. burst b = ⌈(peak − r) × peak_seconds + r/peak⌉ with a peak above r, else ⌈r × 10 s⌉;
//     never below the largest endpoint cost
//  4. limit L = ⌈r × window⌉ (a fixed window admits 2L at an edge)
//  5. GCRA T = 1/r, τ = (b − 1)·T; leaky bucket drain r, queue ⌊max_delay × r⌋ or b − 1
//  6. safe pace: the slowest of the six algorithms' (r, or (L − 1)/window
//     for the sliding window counter), and the minimum interval 1/pace
//  7. Retry-After per algorithm, whole seconds, never 0
//
// then per-tier, per-endpoint and per-replica values, header examples, a
// backoff schedule, the predicted share of clients over the limit, and the
// checks. A bad input gives Errors naming every bad field.
func Size(in Input) (Result, error) {
	res, err := sizeLimits(in)
	if err != nil {
		return Result{}, err
	}
	in = res.Input
	r := res.Rate.Value
	for _, p := range res.Algorithms {
		spec := p.Spec()
		ex, err := HeadersAt(spec, DefaultMoment(spec))
		if err != nil {
			return Result{}, fmt.Errorf("headers for %s: %w", spec, err) // a bug: the spec is valid
		}
		res.Headers = append(res.Headers, ex)
	}
	tb, _ := res.Params(algorithms.NameTokenBucket)
	if res.Backoff, err = Schedule(in.Retry, tb.RetryAfter.Value); err != nil {
		return Result{}, err
	}
	if s, ok := in.predictShare(r); ok {
		res.Share = &s
	}
	res.Checks = checks(in, &res)
	return res, nil
}

// sizeLimits is the part of Size that derives the limits and can refuse
// the input: everything but the header examples, the backoff schedule,
// the predicted share and the checks, which a valid input always has.
func sizeLimits(in Input) (Result, error) {
	in, err := in.normalize()
	if err != nil {
		return Result{}, err
	}
	res := Result{Input: in}
	h := *in.Headroom
	usable := in.Capacity * (1 - h)
	res.Usable = Value{usable, UnitPerSecond, fmt.Sprintf("usable = capacity × (1 − headroom) = %s × (1 − %s) = %s",
		num(in.Capacity), num(h), perSec(usable))}
	weight := in.weight()
	fair := usable / weight
	if len(in.Tiers) > 0 {
		res.FairShare = Value{fair, UnitPerSecond, fmt.Sprintf("fair share = usable / Σ clients × multiplier = %s / %s = %s (for a multiplier of 1)",
			num(usable), num(weight), perSec(fair))}
	} else {
		res.FairShare = Value{fair, UnitPerSecond, fmt.Sprintf("fair share = usable / clients = %s / %d = %s", num(usable), in.Clients, perSec(fair))}
	}

	// 2. Rate.
	var r float64
	rateFrom := "clients"
	if in.P99 > 0 {
		rateFrom = "p99"
		r = in.P99 / in.PercentileUnit.seconds() * in.Margin
		if in.PercentileUnit == PerMinute {
			res.Rate = Value{r, UnitPerSecond, fmt.Sprintf("rate = p99 × margin = %s/min × %s = %s = %s: a limit below p99 throttles legitimate clients",
				num(in.P99), num(in.Margin), perMin(r), perSec(r))}
		} else {
			res.Rate = Value{r, UnitPerSecond, fmt.Sprintf("rate = p99 × margin = %s × %s = %s: a limit below p99 throttles legitimate clients",
				perSec(in.P99), num(in.Margin), perSec(r))}
		}
	} else {
		r = fair
		res.Rate = Value{r, UnitPerSecond, fmt.Sprintf("rate = fair share = %s (no p99 measured)", perSec(r))}
	}

	// 3. Burst.
	cost, costly := in.maxCost()
	b, burstWhy := burst(in, r)
	burstFrom := rateFrom
	if in.Peak > r {
		burstFrom = "peak_seconds"
	}
	if float64(cost) > b {
		b = float64(cost)
		burstWhy += fmt.Sprintf("; raised to %d, the cost of %s %s, so that request can pass at all", cost, costly.Method, costly.Path)
		burstFrom = "endpoints"
	}
	res.Burst = Value{b, UnitRequests, burstWhy}

	// 4. Window limit.
	W := in.Window
	L := math.Max(1, ceil(r*W))
	res.Limit = Value{L, UnitRequests, fmt.Sprintf("limit = ⌈rate × window⌉ = ⌈%s × %s⌉ = %s per %s", num(r), num(W), num(L), secs(W))}
	res.Window = Value{W, UnitSeconds, windowWhy(W)}

	// 5. Queue.
	q, queueWhy := queue(in, r, b)
	queueFrom := burstFrom
	if in.MaxDelay != nil {
		queueFrom = "max_delay"
	}
	res.Queue = Value{q, UnitRequests, queueWhy}

	// The six algorithms, checked against the engine's ranges.
	var v errs
	blame := map[string]string{"rate": rateFrom, "burst": burstFrom, "queue": queueFrom, "limit": "window", "window": "window"}
	for _, name := range algorithms.Names {
		spec := res.Spec(name)
		if err := spec.Validate(); err != nil {
			field := blame[paramField(err)]
			if field == "" {
				field = "capacity"
			}
			v.blame(field, in.fieldValue(field), string(name), err)
			continue
		}
		res.Algorithms = append(res.Algorithms, describe(spec, why{
			"rate": res.Rate.Reason, "burst": res.Burst.Reason, "queue": res.Queue.Reason, "limit": res.Limit.Reason, "window": res.Window.Reason,
		}))
	}
	if err := v.err(); err != nil {
		return Result{}, err // the tiers and replicas would only repeat it
	}
	res.Pace, res.MinInterval = safePace(res.Algorithms, r)
	res.Tiers = tiers(in, res.Sizes, cost, &v)
	res.PerReplica = perReplica(in, res.Sizes, &v)
	if err := v.err(); err != nil {
		return Result{}, err
	}
	res.Endpoints = endpointFits(in, res.Sizes)
	return res, nil
}

// safePace is step 6: the fastest steady pace that none of the algorithms
// rejects (usually the rate; the sliding window counter needs a little
// less), and its interval.
func safePace(ps []Params, r float64) (pace, interval Value) {
	slowest := ps[0]
	for _, p := range ps[1:] {
		if p.Pace.Value < slowest.Pace.Value {
			slowest = p
		}
	}
	pr := slowest.Pace.Value
	if pr >= r*(1-epsilon) {
		pace = Value{r, UnitPerSecond, fmt.Sprintf("pace = rate = %s = %s: a client that sends no faster is never rejected by any of the six", perSec(r), perMin(r))}
	} else {
		pace = Value{pr, UnitPerSecond, fmt.Sprintf("pace = %s = %s, set by %s (%s); the others allow rate = %s",
			perSec(pr), perMin(pr), slowest.Algorithm, formula(slowest.Pace.Reason), perSec(r))}
	}
	interval = Value{1 / pace.Value, UnitSeconds, fmt.Sprintf("min interval = 1/pace = 1/%s = %s", num(pace.Value), secs(1/pace.Value))}
	return pace, interval
}

// formula is a reason without its explanation: the part before ": ".
func formula(reason string) string {
	f, _, _ := strings.Cut(reason, ": ")
	return f
}

// burst is step 3 before the endpoint-cost floor.
func burst(in Input, r float64) (float64, string) {
	if in.Peak > r {
		p, d := in.Peak, in.PeakSeconds
		fluid := (p - r) * d
		b := math.Max(1, ceil(fluid+r/p))
		s := fmt.Sprintf("burst = ⌈(peak − rate) × peak_seconds + rate/peak⌉ = ⌈(%s − %s) × %s + %s/%s⌉ = %s: a full bucket plus its refill admits every request of an evenly spaced peak",
			num(p), num(r), num(d), num(r), num(p), num(b))
		if math.Max(1, ceil(fluid)) < b {
			s += fmt.Sprintf(" ((peak − rate) × peak_seconds = %s alone misses the last one by rate/peak of a token)", num(fluid))
		}
		return b, s
	}
	b := math.Max(1, ceil(r*DefaultBurstSeconds))
	s := fmt.Sprintf("burst = ⌈rate × %s⌉ = ⌈%s × %s⌉ = %s: 10 to 20 s of rate absorbs ordinary clumps of requests",
		secs(DefaultBurstSeconds), num(r), num(DefaultBurstSeconds), num(b))
	if in.Peak > 0 {
		s += fmt.Sprintf(" (the peak, %s, is not above the rate, which covers it)", perSec(in.Peak))
	} else {
		s += " (no peak given)"
	}
	return b, s
}

// queue is step 5's leaky-bucket queue for rate r and burst b.
func queue(in Input, r, b float64) (float64, string) {
	if in.MaxDelay != nil {
		q := floor(*in.MaxDelay * r)
		return q, fmt.Sprintf("queue = ⌊max_delay × rate⌋ = ⌊%s × %s⌋ = %s: the last in line waits queue/rate = %s ≤ max_delay",
			num(*in.MaxDelay), num(r), num(q), secs(q/r))
	}
	return b - 1, fmt.Sprintf("queue = burst − 1 = %s: with the one being served, a whole burst is accepted (no max_delay given)", num(b-1))
}

func windowWhy(W float64) string {
	if W == DefaultWindow {
		return fmt.Sprintf("window = %s (default)", secs(W))
	}
	return fmt.Sprintf("window = %s (given)", secs(W))
}

// fieldValue formats the value of a field that blame may name.
func (in Input) fieldValue(field string) string {
	switch field {
	case "p99":
		return num(in.P99)
	case "clients":
		return strconv.Itoa(in.Clients)
	case "peak_seconds":
		return num(in.PeakSeconds)
	case "window":
		return num(in.Window)
	case "max_delay":
		return num(*in.MaxDelay)
	case "replicas":
		return strconv.Itoa(in.Replicas)
	case "endpoints":
		c, _ := in.maxCost()
		return "largest cost " + strconv.FormatInt(c, 10)
	}
	return num(in.Capacity)
}

// paramField is the spec parameter an algorithms.ParamError names ("rate",
// "burst", …), or "".
func paramField(err error) string {
	var pe *algorithms.ParamError
	if errors.As(err, &pe) {
		return pe.Field
	}
	return ""
}

// blame records a derived spec (what) outside the engine's ranges as an
// error on the input field it came from, once per field.
func (v *errs) blame(field, value, what string, err error) {
	for _, e := range v.list {
		if e.Field == field {
			return
		}
	}
	v.add(field, value, fmt.Sprintf("a value for which the derived %s is in range (%v)", what, err))
}
