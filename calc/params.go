package calc

import (
	"fmt"

	"github.com/ratelab/ratelab/algorithms"
)

// Sizes is one set of limits in the model's units: the sustained rate and
// burst of the bucket algorithms, the limit per window of the window
// algorithms, and the leaky bucket's queue. Every algorithm's parameters
// come from these five numbers (see Spec).
type Sizes struct {
	Rate   Value `json:"rate"`   // requests/s
	Burst  Value `json:"burst"`  // requests
	Limit  Value `json:"limit"`  // requests per window
	Window Value `json:"window"` // seconds
	Queue  Value `json:"queue"`  // requests that may wait in the leaky bucket
}

// Spec is the algorithm called name with the parameters of s, ready for
// algorithms.New and algorithms.Simulate.
func (s Sizes) Spec(name algorithms.Name) algorithms.Spec {
	switch name {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		return algorithms.Spec{Algorithm: name, Rate: s.Rate.Value, Burst: count(s.Burst.Value)}
	case algorithms.NameLeakyBucket:
		return algorithms.Spec{Algorithm: name, Rate: s.Rate.Value, Queue: count(s.Queue.Value)}
	default:
		return algorithms.Spec{Algorithm: name, Limit: count(s.Limit.Value), Window: duration(s.Window.Value)}
	}
}

// Params is one algorithm's parameters, each with its reason, and what they
// mean for a client: the largest burst the algorithm lets through and the
// Retry-After to publish, only the algorithm's own parameters set.
//
// The fields of each algorithm:
//
//	token_bucket     rate, burst
//	gcra             rate, burst, interval T, tolerance τ
//	leaky_bucket     rate (drain), queue, max_delay (worst added delay)
//	fixed_window, sliding_log, sliding_window
//	                 limit, window
type Params struct {
	Algorithm algorithms.Name `json:"algorithm"`
	Rate      *Value          `json:"rate,omitempty"`
	Burst     *Value          `json:"burst,omitempty"`
	Interval  *Value          `json:"interval,omitempty"`
	Tolerance *Value          `json:"tolerance,omitempty"`
	Queue     *Value          `json:"queue,omitempty"`
	MaxDelay  *Value          `json:"max_delay,omitempty"`
	Limit     *Value          `json:"limit,omitempty"`
	Window    *Value          `json:"window,omitempty"`
	// The fastest steady rate that is never rejected.
	Pace Value `json:"pace"`
	// The gap between requests at that pace (1/pace).
	MinInterval Value `json:"min_interval"`
	// The most requests a client gets through in a short span: the burst,
	// the queue plus one (delayed), or 2 × limit across a fixed window's
	// edge.
	LargestBurst Value `json:"largest_burst"`
	// The Retry-After to publish for a client that just used its whole
	// allowance: whole seconds, rounded up, never 0.
	RetryAfter Value `json:"retry_after"`
	// How well an equivalent of an existing limit reproduces it (only on
	// equivalents).
	Fidelity Fidelity `json:"fidelity,omitempty"`
	// How an equivalent differs from the limit (only on equivalents).
	Note string `json:"note,omitempty"`
}

// Fidelity says how well an equivalent reproduces a limit.
type Fidelity string

// Fidelities.
const (
	Exact          Fidelity = "exact"
	Approximate    Fidelity = "approximate"
	NotExpressible Fidelity = "not_expressible"
)

// Fidelities are the fidelities, best first.
var Fidelities = []Fidelity{Exact, Approximate, NotExpressible}

// Spec is the algorithm with these parameters. Validate it before use: a
// not_expressible equivalent has none.
func (p Params) Spec() algorithms.Spec {
	s := algorithms.Spec{Algorithm: p.Algorithm}
	if p.Rate != nil {
		s.Rate = p.Rate.Value
	}
	if p.Burst != nil {
		s.Burst = count(p.Burst.Value)
	}
	if p.Queue != nil {
		s.Queue = count(p.Queue.Value)
	}
	if p.Limit != nil {
		s.Limit = count(p.Limit.Value)
	}
	if p.Window != nil {
		s.Window = duration(p.Window.Value)
	}
	return s
}

// why holds the reasons for the parameters a caller chose, by name: "rate",
// "burst", "queue", "limit", "window".
type why map[string]string

// describe returns the parameters of a valid spec with the reasons given and
// the derived values (T, τ, worst delay, largest burst, Retry-After) worked
// out with their formulas.
func describe(s algorithms.Spec, w why) Params {
	p := Params{Algorithm: s.Algorithm}
	val := func(v float64, u Unit, reason string) *Value { return &Value{v, u, reason} }
	r := s.Rate
	T := 1 / r
	pace := func(v float64, formula, note string) {
		if note == "" {
			note = "a client that sends no faster is never rejected"
		}
		p.Pace = Value{v, UnitPerSecond, fmt.Sprintf("%s = %s: %s", formula, perMin(v), note)}
		p.MinInterval = Value{1 / v, UnitSeconds, fmt.Sprintf("min interval = 1/pace = %s", secs(1/v))}
	}
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		b := float64(s.Burst)
		p.Rate = val(r, UnitPerSecond, w["rate"])
		p.Burst = val(b, UnitRequests, w["burst"])
		pace(r, fmt.Sprintf("pace = rate = %s", perSec(r)), "")
		p.LargestBurst = Value{b, UnitRequests, fmt.Sprintf("a rested client sends burst = %s at once, then rate = %s", num(b), perSec(r))}
		if s.Algorithm == algorithms.NameGCRA {
			p.Interval = val(T, UnitSeconds, fmt.Sprintf("T = 1/rate = 1/%s = %s", num(r), secs(T)))
			p.Tolerance = val((b-1)*T, UnitSeconds, fmt.Sprintf("τ = (burst − 1) × T = %s × %s = %s", num(b-1), num(T), secs((b-1)*T)))
			p.RetryAfter = retryAfter(T, fmt.Sprintf("after a whole burst TAT − τ − now = burst × T − τ = T = %s", secs(T)))
			p.Note = "One timestamp per client; admits exactly the requests the token bucket with the same rate and burst admits."
		} else {
			p.RetryAfter = retryAfter(T, fmt.Sprintf("an empty bucket has the next token in 1/rate = 1/%s = %s", num(r), secs(T)))
			p.Note = "Starts full; rejected requests take no tokens (as in x/time/rate, nginx and Envoy)."
		}
	case algorithms.NameLeakyBucket:
		q := float64(s.Queue)
		p.Rate = val(r, UnitPerSecond, w["rate"])
		p.Queue = val(q, UnitRequests, w["queue"])
		pace(r, fmt.Sprintf("pace = rate = %s", perSec(r)), "")
		p.MaxDelay = val(q*T, UnitSeconds, fmt.Sprintf("worst added delay = queue/rate = %s/%s = %s", num(q), num(r), secs(q*T)))
		p.LargestBurst = Value{q + 1, UnitRequests, fmt.Sprintf("queue + 1 = %s accepted at once (one served, %s waiting), released 1/rate = %s apart", num(q+1), num(q), secs(T))}
		p.RetryAfter = retryAfter(T, fmt.Sprintf("with the queue full, a slot frees every 1/rate = %s", secs(T)))
		p.Note = "A queue, not a meter: it delays instead of rejecting, and the price of a smooth flow is latency."
	default:
		L, W := float64(s.Limit), s.Window.Seconds()
		p.Limit = val(L, UnitRequests, w["limit"])
		p.Window = val(W, UnitSeconds, w["window"])
		if s.Algorithm != algorithms.NameSlidingWindow {
			pace(L/W, fmt.Sprintf("pace = limit/window = %s/%s = %s", num(L), secs(W), perSec(L/W)), "")
		} else if L >= 2 {
			// After a full window the counter assumes its requests were
			// spread evenly: at exactly limit/window the estimate plus
			// one exceeds the limit by up to a request.
			pace((L-1)/W, fmt.Sprintf("pace = (limit − 1)/window = %s/%s = %s", num(L-1), secs(W), perSec((L-1)/W)),
				"not limit/window, which the counter's estimate rejects now and then after a full window")
		} else {
			pace(1/(2*W), fmt.Sprintf("pace = 1/(2 × window) = 1/(2 × %s) = %s", num(W), perSec(1/(2*W))),
				"with a limit of 1 the previous window's request counts until the next window ends")
		}
		switch s.Algorithm {
		case algorithms.NameFixedWindow:
			p.LargestBurst = Value{2 * L, UnitRequests, fmt.Sprintf("2 × limit = %s: %s at the end of one window and %s at the start of the next", num(2*L), num(L), num(L))}
			p.RetryAfter = retryAfter(W, fmt.Sprintf("until the window ends: up to window = %s for a client that used the limit at its start", secs(W)))
			p.Note = "Counts per aligned window; admits up to 2 × limit across a window edge."
		case algorithms.NameSlidingLog:
			p.LargestBurst = Value{L, UnitRequests, fmt.Sprintf("limit = %s: never more in any span of %s", num(L), secs(W))}
			p.RetryAfter = retryAfter(W, fmt.Sprintf("until the oldest request leaves the window: up to window = %s after a burst", secs(W)))
			p.Note = "Exact: keeps a timestamp per admitted request, memory O(limit) per client."
		default:
			p.LargestBurst = Value{L, UnitRequests, fmt.Sprintf("limit = %s at once; up to 2 × limit − 1 = %s in a span of %s when the previous window's requests all came at its end", num(L), num(2*L-1), secs(W))}
			p.RetryAfter = retryAfter(W+W/L, fmt.Sprintf("after a burst at a window's start: the window ends, then the previous count must fade by one request, window + window/limit = %s + %s/%s = %s", num(W), num(W), num(L), secs(W+W/L)))
			p.Note = "Weights the previous window's count by how much of it still overlaps: O(1) memory, an approximation of the log."
		}
	}
	return p
}

// retryAfter is the Retry-After to publish for an exact wait.
func retryAfter(wait float64, reason string) Value {
	pub := publishSeconds(wait)
	return Value{pub, UnitSeconds, fmt.Sprintf("%s; published as ⌈%s⌉ = %s (whole seconds, never 0)", reason, num(wait), secs(pub))}
}
