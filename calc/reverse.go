package calc

import (
	"errors"
	"fmt"

	"github.com/ratelab/ratelab/algorithms"
)

// Limit is an existing limit in the one vocabulary of the API, the policy
// file and the UI: an algorithm and its parameters, the window in seconds.
//
// It is algorithms.Spec as JSON carries it; fields the algorithm does not
// use must be 0.
type Limit struct {
	Algorithm algorithms.Name `json:"algorithm" jsonschema:"required"`
	Rate      float64         `json:"rate,omitempty"`   // requests/s (token_bucket, gcra, leaky_bucket)
	Burst     int64           `json:"burst,omitempty"`  // requests (token_bucket, gcra)
	Queue     int64           `json:"queue,omitempty"`  // requests (leaky_bucket)
	Limit     int64           `json:"limit,omitempty"`  // requests per window (window algorithms)
	Window    float64         `json:"window,omitempty"` // seconds (window algorithms)
}

// LimitOf is s in the JSON vocabulary.
func LimitOf(s algorithms.Spec) Limit {
	return Limit{Algorithm: s.Algorithm, Rate: s.Rate, Burst: s.Burst, Queue: s.Queue, Limit: s.Limit, Window: s.Window.Seconds()}
}

// Spec converts l to the engine's spec and validates it; a bad field is an
// Errors naming it.
func (l Limit) Spec() (algorithms.Spec, error) {
	var v errs
	if l.Window != 0 && !v.in("window", l.Window, 0.001, MaxWindow, "seconds in [0.001, 31622400] (up to 366 days)") {
		return algorithms.Spec{}, v.err()
	}
	s := algorithms.Spec{Algorithm: l.Algorithm, Rate: l.Rate, Burst: l.Burst, Queue: l.Queue, Limit: l.Limit, Window: duration(l.Window)}
	if err := s.Validate(); err != nil {
		var pe *algorithms.ParamError
		if errors.As(err, &pe) {
			v.add(pe.Field, pe.Value, pe.Want)
			return algorithms.Spec{}, v.err()
		}
		return algorithms.Spec{}, err
	}
	return s, nil
}

// ReverseResult is what an existing limit means for a client, and the same
// limit in the other algorithms.
type ReverseResult struct {
	// The limit as read.
	Limit Limit `json:"limit"`
	// The limit itself, with its largest burst and the Retry-After to
	// expect.
	Params Params `json:"params"`
	// The gap between requests that is never rejected.
	MinInterval Value `json:"min_interval"`
	// The sustained rate a client can keep up forever.
	Pace Value `json:"pace"`
	// The other five algorithms, in the order of result.algorithms, each
	// with its fidelity and a note on how it differs.
	Equivalents []Params `json:"equivalents"`
	// The problems found in the limit.
	Checks []Check `json:"checks"`
}

// Reverse works out what an existing limit allows: the minimum interval
// between requests, the safe sustained pace, the largest burst (for a fixed
// window, 2 × limit at an edge), the Retry-After to expect, and the
// equivalent parameters in the other five algorithms.
func Reverse(l Limit) (ReverseResult, error) {
	s, err := l.Spec()
	if err != nil {
		return ReverseResult{}, err
	}
	res := ReverseResult{Limit: l, Checks: specChecks(s)}
	given := why{
		"rate":   fmt.Sprintf("rate = %s (given)", perSec(s.Rate)),
		"burst":  fmt.Sprintf("burst = %d (given)", s.Burst),
		"queue":  fmt.Sprintf("queue = %d (given)", s.Queue),
		"limit":  fmt.Sprintf("limit = %d (given)", s.Limit),
		"window": fmt.Sprintf("window = %s (given)", secs(s.Window.Seconds())),
	}
	res.Params = describe(s, given)

	// (r, c): the long-run rate and what passes at once.
	var r, c float64
	var fromWindow bool
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA, algorithms.NameLeakyBucket:
		r, c = s.Rate, float64(s.Capacity())
	default:
		L, W := float64(s.Limit), s.Window.Seconds()
		r, c, fromWindow = L/W, L, true
	}
	res.Pace, res.MinInterval = res.Params.Pace, res.Params.MinInterval

	for _, name := range algorithms.Names {
		if name == s.Algorithm {
			continue
		}
		res.Equivalents = append(res.Equivalents, equivalent(s, name, r, c, fromWindow))
	}
	return res, nil
}

// equivalent is s expressed as the algorithm called name; r is the long-run
// rate of s and c what it admits at once.
func equivalent(s algorithms.Spec, name algorithms.Name, r, c float64, fromWindow bool) Params {
	var t algorithms.Spec
	w := why{}
	fidelity, note := Approximate, ""
	W := c / r
	switch name {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		t = algorithms.Spec{Algorithm: name, Rate: r, Burst: count(c)}
		switch s.Algorithm {
		case algorithms.NameTokenBucket, algorithms.NameGCRA:
			w["rate"], w["burst"] = fmt.Sprintf("rate = %s (same)", perSec(r)), fmt.Sprintf("burst = %s (same)", num(c))
			fidelity, note = Exact, "Admits exactly the same requests: burst = 1 + τ/T."
		case algorithms.NameLeakyBucket:
			w["rate"], w["burst"] = fmt.Sprintf("rate = drain = %s", perSec(r)), fmt.Sprintf("burst = queue + 1 = %s", num(c))
			note = fmt.Sprintf("Admits the same requests but passes them at once instead of delaying them by up to queue/rate = %s.", secs((c-1)/r))
		default:
			w["rate"], w["burst"] = fmt.Sprintf("rate = limit/window = %s/%s = %s", num(c), num(s.Window.Seconds()), perSec(r)), fmt.Sprintf("burst = limit = %s", num(c))
			note = fmt.Sprintf("Same long-run rate and the same %s at once, but it refills continuously: after a burst, one more every %s instead of at the window's end, so up to 2 × %s in a span of %s.",
				num(c), secs(1/r), num(c), secs(s.Window.Seconds()))
		}
	case algorithms.NameLeakyBucket:
		t = algorithms.Spec{Algorithm: name, Rate: r, Queue: count(c - 1)}
		w["rate"], w["queue"] = fmt.Sprintf("rate = %s", perSec(r)), fmt.Sprintf("queue = %s − 1 = %s", num(c), num(c-1))
		note = fmt.Sprintf("Accepts the same %s at once but releases them 1/rate = %s apart: the last waits queue/rate = %s instead of passing at once.",
			num(c), secs(1/r), secs((c-1)/r))
		if !fromWindow {
			note = fmt.Sprintf("Admits exactly the same requests, but delays them instead of passing them at once: the last of a full burst waits %s.", secs((c-1)/r))
		}
	default:
		if fromWindow {
			W = s.Window.Seconds()
			w["limit"], w["window"] = fmt.Sprintf("limit = %s (same)", num(c)), fmt.Sprintf("window = %s (same)", secs(W))
		} else {
			w["limit"], w["window"] = fmt.Sprintf("limit = capacity = %s", num(c)), fmt.Sprintf("window = capacity/rate = %s/%s = %s", num(c), num(r), secs(W))
		}
		t = algorithms.Spec{Algorithm: name, Limit: count(c), Window: duration(W)}
		switch name {
		case algorithms.NameFixedWindow:
			note = fmt.Sprintf("Same %s per %s, counted per aligned window: admits up to 2 × %s = %s across a window edge.", num(c), secs(W), num(c), num(2*c))
		case algorithms.NameSlidingLog:
			note = fmt.Sprintf("Same %s per %s, exact: never more than %s in any span of %s.", num(c), secs(W), num(c), secs(W))
		default:
			note = fmt.Sprintf("Same %s per %s, weighting the previous window: %s at once, up to 2 × %s − 1 in a span of %s in the worst case.", num(c), secs(W), num(c), num(c), secs(W))
		}
		if !fromWindow {
			note += " No refill within a window: a client that used it all waits for the window instead of 1/rate."
		}
	}
	if err := t.Validate(); err != nil {
		return Params{Algorithm: name, Fidelity: NotExpressible, Note: fmt.Sprintf("Not expressible: %v.", err)}
	}
	p := describe(t, w)
	p.Fidelity, p.Note = fidelity, note
	return p
}
