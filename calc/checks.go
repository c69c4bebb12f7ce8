package calc

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/algorithms"
)

// Severity is how much a check matters: an error is a design that cannot
// work as meant, a warning one that will surprise someone, info a fact to
// know when exporting.
type Severity string

// Severities.
const (
	SeverityInfo    Severity = "info"
	SeverityWarning Severity = "warning"
	SeverityError   Severity = "error"
)

// Severities are the severities, least first.
var Severities = []Severity{SeverityInfo, SeverityWarning, SeverityError}

// Check is one problem found in a design: what, how bad, the numbers behind
// it, and how to fix it.
type Check struct {
	// The check's stable identifier.
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	// The value the check is about, when that is not obvious
	// ("tiers[1]", "per_replica.burst").
	Subject string `json:"subject,omitempty"`
	// The numbers behind the message, by name.
	Numbers map[string]float64 `json:"numbers"`
	// What is wrong, with the numbers.
	Message string `json:"message"`
	// How to fix it.
	Fix string `json:"fix"`
}

// Check IDs.
const (
	CheckOvercommit          = "overcommit"
	CheckUndersized          = "undersized"
	CheckLimitBelowP99       = "limit_below_p99"
	CheckBurstBelowRate      = "burst_below_rate"
	CheckBurstOfOne          = "burst_of_one"
	CheckBurstBelowCost      = "burst_below_cost"
	CheckBurstAboveCapacity  = "burst_above_capacity"
	CheckLocalReplicas       = "local_replicas_multiply"
	CheckFixedWindowBoundary = "fixed_window_boundary"
	CheckIntegerRate         = "integer_rate_rounding"
	CheckWindowUnit          = "window_not_gateway_unit"
	CheckWindowOverADay      = "window_over_a_day"
)

// over reports a > b beyond float noise.
func over(a, b float64) bool { return a > b*(1+epsilon) }

// checks runs every check on a sized design.
func checks(in Input, res *Result) []Check {
	out := []Check{}
	add := func(c Check, fired bool) {
		if fired {
			out = append(out, c)
		}
	}
	usable := res.Usable.Value
	r, b, L, W := res.Rate.Value, res.Burst.Value, res.Limit.Value, res.Window.Value
	cost, costly := in.maxCost()
	p99 := in.P99 / in.PercentileUnit.seconds()

	// Aggregate against capacity.
	agg, aggWhy := float64(in.Clients)*r, fmt.Sprintf("clients × rate = %d × %s", in.Clients, num(r))
	if len(res.Tiers) > 0 {
		agg, aggWhy = 0, "Σ tier clients × tier rate ="
		for i, t := range res.Tiers {
			agg += t.Aggregate.Value
			if i > 0 {
				aggWhy += " +"
			}
			aggWhy += fmt.Sprintf(" %d × %s", t.Clients, num(t.Rate.Value))
		}
	}
	add(Check{
		ID: CheckOvercommit, Severity: SeverityWarning,
		Numbers: map[string]float64{"aggregate": agg, "usable": usable, "ratio": agg / usable},
		Message: fmt.Sprintf("If every client sends at its limit they send %s = %s, %s × the usable %s.", aggWhy, perSec(agg), num(agg/usable), perSec(usable)),
		Fix:     "Accept it knowingly (clients rarely all peak at once; the ratio says how far over you are if they do) and add a global limit at the usable rate, or lower the margin, or add capacity.",
	}, over(agg, usable))

	if p, name := in.P95, "p95"; p > 0 || in.P50 > 0 {
		if p == 0 {
			p, name = in.P50, "p50"
		}
		ps := p / in.PercentileUnit.seconds()
		demand := float64(in.Clients) * ps
		add(Check{
			ID: CheckUndersized, Severity: SeverityError,
			Numbers: map[string]float64{"clients": float64(in.Clients), name: ps, "demand": demand, "usable": usable},
			Message: fmt.Sprintf("Normal traffic already exceeds the usable capacity: clients × %s = %d × %s = %s > %s.", name, in.Clients, num(ps), perSec(demand), perSec(usable)),
			Fix:     "Add capacity or reduce demand before tuning per-client limits, which cannot help here; meanwhile protect the service with a global limit at the usable rate.",
		}, over(demand, usable))
	}

	// Limits below p99 throttle ordinary clients.
	if p99 > 0 {
		below := func(subject string, rate float64) {
			n := map[string]float64{"rate": rate, "p99": p99}
			msg := fmt.Sprintf("The rate %s is below p99 = %s: more than 1 %% of clients would be throttled in normal use", perSec(rate), perSec(p99))
			if s, ok := in.predictShare(rate); ok {
				n["share"] = s.Fraction
				msg += fmt.Sprintf(" (predicted: %s %%)", num(100*s.Fraction))
			}
			add(Check{ID: CheckLimitBelowP99, Severity: SeverityWarning, Subject: subject, Numbers: n, Message: msg + ".",
				Fix: "Raise the margin to at least 1 (2 is usual); for a tier meant to be tighter, such as anonymous clients, say so in the API documentation."}, true)
		}
		if over(p99, r) {
			below("rate", r)
		}
		for i, t := range res.Tiers {
			if over(p99, t.Rate.Value) {
				below(fmt.Sprintf("tiers[%d]", i), t.Rate.Value)
			}
		}
	}

	// Burst.
	add(Check{
		ID: CheckBurstBelowRate, Severity: SeverityWarning, Subject: "burst",
		Numbers: map[string]float64{"burst": b, "rate": r},
		Message: fmt.Sprintf("The burst %s is below the rate %s: a client cannot send even one second of its own rate at once.", num(b), perSec(r)),
		Fix:     fmt.Sprintf("Raise the burst to at least ⌈rate⌉ = %s; %s to %s (10 to 20 s of rate) is common.", num(ceil(r)), num(ceil(10*r)), num(ceil(20*r))),
	}, b < r*(1-epsilon))
	add(burstOfOne(b, r), b == 1)
	add(Check{
		ID: CheckBurstAboveCapacity, Severity: SeverityWarning, Subject: "burst",
		Numbers: map[string]float64{"burst": b, "usable": usable},
		Message: fmt.Sprintf("One client's burst of %s is more than a second of the whole service's usable capacity (%s): a single rested client can hold it for %s.", num(b), perSec(usable), secs(b/usable)),
		Fix:     "Lower the burst, or shape it with the leaky bucket so a burst is served at the rate instead of at once.",
	}, over(b, usable))
	if costly != nil {
		belowCost := func(subject, key string, v float64) {
			add(Check{
				ID: CheckBurstBelowCost, Severity: SeverityError, Subject: subject,
				Numbers: map[string]float64{key: v, "cost": float64(cost)},
				Message: fmt.Sprintf("The %s %s is below the cost %d of %s %s: that request can never pass.", subject, num(v), cost, costly.Method, costly.Path),
				Fix:     fmt.Sprintf("Raise it to at least %d, give the endpoint its own limit, or enforce in a shared store instead of per replica.", cost),
			}, v < float64(cost))
		}
		belowCost("limit", "limit", L)
		for i, t := range res.Tiers {
			belowCost(fmt.Sprintf("tiers[%d].limit", i), "limit", t.Limit.Value)
		}
		if p := res.PerReplica; p != nil {
			belowCost("per_replica.burst", "burst", p.Burst.Value)
			belowCost("per_replica.limit", "limit", p.Limit.Value)
		}
	}

	// Replicas.
	if in.Enforcement == Local && in.Replicas > 1 {
		R := float64(in.Replicas)
		c := Check{
			ID: CheckLocalReplicas, Severity: SeverityWarning, Subject: "replicas",
			Numbers: map[string]float64{"replicas": R, "limit": L, "total_limit": R * L, "rate": r, "total_rate": R * r},
			Message: fmt.Sprintf("Each of the %d replicas enforces the whole limit on its own: a client gets up to %d × %s = %s per %s (%s in total).",
				in.Replicas, in.Replicas, num(L), num(R*L), secs(W), perSec(R*r)),
			Fix: "Enforce in one shared store (e.g. Redis), or give each replica its share (see per_replica): exact only when the balancer spreads each client's requests evenly.",
		}
		if p := res.PerReplica; p != nil {
			c.Fix = fmt.Sprintf("Enforce in one shared store (e.g. Redis), or give each replica its share: rate %s, burst %s, limit %s; exact only when the balancer spreads each client's requests evenly.",
				perSec(p.Rate.Value), num(p.Burst.Value), num(p.Limit.Value))
		}
		add(c, true)
	}

	// Windows and exports.
	add(fixedWindowBoundary(L, W, b), 2*L > b)
	if c, ok := integerRate(r); ok {
		add(c, true)
	}
	for _, c := range windowChecks(W) {
		add(c, true)
	}
	return out
}

func burstOfOne(b, r float64) Check {
	return Check{
		ID: CheckBurstOfOne, Severity: SeverityWarning, Subject: "burst",
		Numbers: map[string]float64{"burst": b, "rate": r},
		Message: fmt.Sprintf("A burst of 1 rejects any two requests closer than 1/rate = %s, and real clients send in clumps (a page load, a retry).", secs(1/r)),
		Fix:     "Raise the burst to 2 or more, or smooth with the leaky bucket's queue instead of rejecting.",
	}
}

// fixedWindowBoundary is the fixed window's edge: 2L within a moment. burst
// is the designed burst it exceeds (0: none designed).
func fixedWindowBoundary(L, W, burst float64) Check {
	msg := fmt.Sprintf("A fixed window of %s per %s admits %s within a moment: %s at the end of one window and %s at the start of the next.",
		num(L), secs(W), num(2*L), num(L), num(L))
	n := map[string]float64{"limit": L, "boundary": 2 * L, "window": W}
	if burst > 0 {
		n["burst"] = burst
		msg = fmt.Sprintf("A fixed window of %s per %s admits 2 × %s = %s within a moment at a window edge, more than the burst of %s designed for.",
			num(L), secs(W), num(L), num(2*L), num(burst))
	}
	return Check{
		ID: CheckFixedWindowBoundary, Severity: SeverityWarning, Subject: "fixed_window", Numbers: n, Message: msg,
		Fix: "Prefer the sliding window or sliding log (or a token bucket); if it must be a fixed window, size the service for 2 × limit or shorten the window.",
	}
}

// nginxRate is the nearest rate nginx's limit_req can express: whole r/s,
// or whole r/m, which nginx stores as whole milli-requests per second
// (N × 1000 / 60, truncated: 1r/m runs as 0.016/s). ok is false below
// 0.5 r/m.
func nginxRate(r float64) (directive string, effective float64, ok bool) {
	best := math.Inf(1)
	if n := math.Round(r); n >= 1 {
		directive, effective, best = fmt.Sprintf("rate=%sr/s", num(n)), n, math.Abs(n-r)
	}
	if m := math.Round(r * 60); m >= 1 && m <= 1e15 {
		eff := math.Floor(m*1000/60) / 1000
		if d := math.Abs(eff - r); d < best {
			directive, effective, best = fmt.Sprintf("rate=%sr/m", num(m)), eff, d
		}
	}
	return directive, effective, !math.IsInf(best, 1)
}

// integerRate is the rounding nginx imposes on rate r; ok is false when r
// is exact.
func integerRate(r float64) (Check, bool) {
	directive, eff, ok := nginxRate(r)
	if !ok {
		return Check{
			ID: CheckIntegerRate, Severity: SeverityWarning, Subject: "rate",
			Numbers: map[string]float64{"rate": r},
			Message: fmt.Sprintf("nginx takes whole requests per second or per minute; %s (%s) rounds to 0r/m and cannot be expressed.", perSec(r), perMin(r)),
			Fix:     "Use at least 1 request per minute for an nginx export, or a target with fractional rates (Envoy, Traefik, x/time/rate).",
		}, true
	}
	errPct := 100 * (eff - r) / r
	if math.Abs(errPct) < 1e-7 {
		return Check{}, false
	}
	sev := SeverityInfo
	if math.Abs(errPct) >= 1 {
		sev = SeverityWarning
	}
	return Check{
		ID: CheckIntegerRate, Severity: sev, Subject: "rate",
		Numbers: map[string]float64{"rate": r, "nginx_rate": eff, "error_percent": errPct},
		Message: fmt.Sprintf("nginx takes whole r/s or r/m: %s becomes %s, which nginx runs as %s (%s %%).", perSec(r), directive, perSec(eff), signed(errPct)),
		Fix:     "Pick a rate that is a whole number per second, or per minute divisible by 3 (nginx keeps r/m as whole milli-requests per second), or accept the error; the burst maps to burst=b−1 nodelay.",
	}, true
}

func signed(x float64) string {
	if x > 0 {
		return "+" + num(x)
	}
	return "−" + num(-x)
}

// gatewayUnits are the window lengths Kong OSS, envoyproxy/ratelimit and
// Envoy Gateway count in: second, minute, hour, day.
var gatewayUnits = []float64{1, 60, 3600, 86400}

// windowChecks are the portability checks of a window of W seconds.
func windowChecks(W float64) []Check {
	var out []Check
	unit := false
	for _, u := range gatewayUnits {
		unit = unit || W == u
	}
	if !unit {
		msg := fmt.Sprintf("A %s window is not a whole second, minute, hour or day, the only windows Kong OSS, envoyproxy/ratelimit and Envoy Gateway count; exports there are approximate.", secs(W))
		if W != math.Trunc(W) {
			msg += " The IETF RateLimit-Policy w takes whole seconds only."
		}
		out = append(out, Check{
			ID: CheckWindowUnit, Severity: SeverityInfo, Subject: "window",
			Numbers: map[string]float64{"window": W},
			Message: msg,
			Fix:     "Use 1, 60, 3600 or 86400 s, scaling the limit to keep the rate.",
		})
	}
	if W > 86400 {
		out = append(out, Check{
			ID: CheckWindowOverADay, Severity: SeverityWarning, Subject: "window",
			Numbers: map[string]float64{"window": W, "days": W / 86400},
			Message: fmt.Sprintf("A window of %s days is a quota rather than a rate limit: a client that spends it early waits up to %s days, and common gateways (Envoy local fill_interval, Azure's 300 s rate-limit-by-key, Kong and the ratelimit service's day unit) are built for shorter windows.", num(W/86400), num(W/86400)),
			Fix:     "Keep the rate limit at a day or less and add a separate quota for the long period (Kong month, AWS usage-plan quota, envoyproxy/ratelimit month).",
		})
	}
	return out
}

// specChecks are the checks that apply to one limit on its own (Reverse).
func specChecks(s algorithms.Spec) []Check {
	out := []Check{}
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA, algorithms.NameLeakyBucket:
		if s.Capacity() == 1 {
			out = append(out, burstOfOne(1, s.Rate))
		}
		if c, ok := integerRate(s.Rate); ok {
			out = append(out, c)
		}
	default:
		if s.Algorithm == algorithms.NameFixedWindow {
			out = append(out, fixedWindowBoundary(float64(s.Limit), s.Window.Seconds(), 0))
		}
		out = append(out, windowChecks(s.Window.Seconds())...)
	}
	return out
}

// CheckDescription is a one-line description of each check ID, for
// tools that list the rules a report can hold (ratelab lint's SARIF
// rules); TestEveryCheckDescribed holds it to the Check constants.
var CheckDescription = map[string]string{
	CheckOvercommit:          "Every client at its limit would send more than the service's usable capacity.",
	CheckUndersized:          "Normal traffic (clients × p95) already exceeds the usable capacity.",
	CheckLimitBelowP99:       "A limit below the clients' p99 throttles ordinary clients.",
	CheckBurstBelowRate:      "The burst is below one second of the rate.",
	CheckBurstOfOne:          "A burst of 1 rejects any two requests closer than 1/rate.",
	CheckBurstBelowCost:      "A request costs more than the burst, so it can never pass.",
	CheckBurstAboveCapacity:  "One client's burst is more than a second of the service's usable capacity.",
	CheckLocalReplicas:       "Local (per-replica) counting multiplies the limit by the replicas.",
	CheckFixedWindowBoundary: "A fixed window admits up to twice its limit across a window edge.",
	CheckIntegerRate:         "nginx rounds the rate to whole requests per second or minute.",
	CheckWindowUnit:          "The window is not a unit that Kong, envoyproxy/ratelimit and Envoy Gateway count.",
	CheckWindowOverADay:      "A window over a day is a quota rather than a rate limit.",
}
