package calc

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// Retry is how a client retries a rejected request: before retry n its
// exponential wait is d = min(Cap, Base × Factor^(n−1)) seconds, at most
// Attempts times, and it never waits less than the server's Retry-After.
//
// JitterMode says how the actual wait is drawn from d, uniformly:
//
//   - "proportional" (the default, ""): in [d, d × (1 + Jitter)), so it
//     never goes below d; Jitter 0 keeps clients in lockstep;
//   - "full": in [0, d);
//   - "equal": in [d/2, d);
//   - "decorrelated": in [Base, 3 × the previous wait), capped at Cap (the
//     first in [Base, 3 × Base)); Factor is not used.
//
// Jitter is the proportional mode's fraction; the other modes ignore it.
// A zero field takes its default; Jitter is a pointer because 0 (no
// jitter) is a valid choice.
type Retry struct {
	// Seconds before the first retry; 0 means 1.
	Base float64 `json:"base,omitempty"`
	// What each wait is multiplied by for the next; 0 means 2.
	Factor float64 `json:"factor,omitempty"`
	// The longest wait in seconds; 0 means 30.
	Cap float64 `json:"cap,omitempty"`
	// How many times a request is retried; 0 means 5.
	Attempts int `json:"attempts,omitempty"`
	// The proportional mode's fraction of each wait added at random;
	// omitted (nil) means 0.5; the other modes ignore it.
	Jitter *float64 `json:"jitter,omitempty"`
	// How each wait d is drawn: proportional in [d, d × (1 + jitter)),
	// full in [0, d), equal in [d/2, d), decorrelated in [base, 3 × the
	// previous wait) capped at cap; blank means proportional.
	JitterMode string `json:"jitter_mode,omitempty"`
}

// Retry defaults: 1, 2, 4, 8, 16 s with up to 50 % added.
const (
	DefaultRetryBase       = 1.0
	DefaultRetryFactor     = 2.0
	DefaultRetryCap        = 30.0
	DefaultRetryAttempts   = 5
	DefaultRetryJitter     = 0.5
	DefaultRetryJitterMode = string(algorithms.JitterProportional)
)

// JitterModes are the values of Retry.JitterMode, in the order the form
// and the messages list them.
var JitterModes = []string{
	string(algorithms.JitterProportional), string(algorithms.JitterFull),
	string(algorithms.JitterEqual), string(algorithms.JitterDecorrelated),
}

// normalize applies defaults and records errors under "retry.".
func (r Retry) normalize(v *errs) Retry {
	if r.Base == 0 {
		r.Base = DefaultRetryBase
	} else {
		v.in("retry.base", r.Base, 0.001, 3600, "seconds in [0.001, 3600]")
	}
	if r.Factor == 0 {
		r.Factor = DefaultRetryFactor
	} else {
		v.in("retry.factor", r.Factor, 1, 10, "a multiplier in [1, 10]")
	}
	if r.Cap == 0 {
		r.Cap = math.Max(DefaultRetryCap, r.Base)
	} else if !(r.Cap >= r.Base && r.Cap <= 86400) {
		base := r.Base
		if !(base >= 0.001 && base <= 3600) {
			base = 0.001
		}
		v.add("retry.cap", num(r.Cap), fmt.Sprintf("seconds in [base, 86400] = [%s, 86400]", num(base)))
	}
	if r.Attempts == 0 {
		r.Attempts = DefaultRetryAttempts
	} else if r.Attempts < 1 || r.Attempts > 20 {
		v.add("retry.attempts", strconv.Itoa(r.Attempts), "a whole number in [1, 20] (3 to 5 is usual)")
	}
	if r.Jitter == nil {
		r.Jitter = new(DefaultRetryJitter)
	} else {
		v.in("retry.jitter", *r.Jitter, 0, 1, "a fraction in [0, 1] of each wait added at random")
	}
	if r.JitterMode == "" {
		r.JitterMode = DefaultRetryJitterMode
	} else if !slices.Contains(JitterModes, r.JitterMode) {
		v.add("retry.jitter_mode", strconv.Quote(r.JitterMode), `"proportional", "full", "equal" or "decorrelated" (blank: proportional)`)
	}
	return r
}

// duration converts seconds to a Duration, rounding to the nearest
// nanosecond. Callers keep s within ±292 years.
func duration(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// Policy is r as the simulator's retry policy, honouring Retry-After, with
// its jitter mode and the seed of its jitter. r must have its defaults
// applied (as in a Result).
func (r Retry) Policy(seed uint64) algorithms.RetryPolicy {
	jitter := DefaultRetryJitter
	if r.Jitter != nil {
		jitter = *r.Jitter
	}
	return algorithms.RetryPolicy{
		Attempts: r.Attempts, Base: duration(r.Base), Factor: r.Factor, Cap: duration(r.Cap),
		Jitter: jitter, JitterMode: algorithms.JitterMode(r.JitterMode), HonorRetryAfter: true, Seed: seed,
	}
}

// Backoff is a client's retry schedule after a rejection: the wait before
// each attempt and the range jitter spreads it over, and the rules a client
// follows.
//
// It shows ranges, not random draws, so it is the same every time.
type Backoff struct {
	// The Retry-After the schedule honours, in whole seconds; 0 when the
	// server sends none.
	RetryAfter float64 `json:"retry_after"`
	// The retries, in order.
	Attempts []Attempt `json:"attempts"`
	// The rules a client follows, one sentence each.
	Rules []string `json:"rules"`
}

// Attempt is one retry: Wait seconds after the previous rejection without
// jitter (the exponential wait, raised to Retry-After), somewhere in
// [Min, Max) with the jitter mode's draw (exactly Max where the cap or
// Retry-After pins it), and Earliest to Latest seconds after the first
// rejection (the sums of Min and of Max).
type Attempt struct {
	// The retry's number, from 1.
	Attempt int `json:"attempt"`
	// Seconds after the previous rejection without jitter.
	Wait float64 `json:"wait"`
	// The shortest wait the jitter mode draws, in seconds.
	Min float64 `json:"min"`
	// The longest wait the jitter mode draws (exclusive unless the cap or
	// Retry-After pins it), in seconds.
	Max float64 `json:"max"`
	// The earliest the retry is sent, in seconds after the first
	// rejection.
	Earliest float64 `json:"earliest"`
	// The latest the retry is sent, in seconds after the first rejection.
	Latest float64 `json:"latest"`
	// How the wait was worked out.
	Reason string `json:"reason"`
}

// Schedule returns the backoff schedule of r for a server that answers every
// rejection with Retry-After retryAfter seconds (0: none). The waits are the
// simulator's own (algorithms.RetryPolicy.Backoff), and each range is what
// the jitter mode can draw for that retry, floored at Retry-After, so a
// chart of the same policy shows the same schedule.
func Schedule(r Retry, retryAfter float64) (Backoff, error) {
	var v errs
	r = r.normalize(&v)
	v.in("retry_after", retryAfter, 0, MaxWindow, "seconds in [0, 31622400] (0: no Retry-After)")
	if err := v.err(); err != nil {
		return Backoff{}, err
	}
	ra := 0.0
	if retryAfter > 0 {
		ra = publishSeconds(retryAfter)
	}
	p := r.Policy(0)
	b := Backoff{RetryAfter: ra, Attempts: make([]Attempt, r.Attempts)}
	var earliest, latest float64
	for n := 1; n <= r.Attempts; n++ {
		exp := math.Min(r.Cap, r.Base*math.Pow(r.Factor, float64(n-1)))
		wait := p.Backoff(n, duration(ra)).Seconds()
		lo, hi, jitter := jitterRange(p, n, ra)
		earliest += lo
		latest += hi
		var why string
		if p.JitterMode == algorithms.JitterDecorrelated {
			why = fmt.Sprintf("backoff = min(cap, base × factor^%d) = %s, which decorrelated jitter does not use", n-1, secs(exp))
		} else {
			why = fmt.Sprintf("backoff = min(cap, base × factor^%d) = min(%s, %s × %s^%d) = %s", n-1, num(r.Cap), num(r.Base), num(r.Factor), n-1, secs(exp))
		}
		switch {
		case ra > exp:
			why += fmt.Sprintf("; Retry-After %s is longer, so wait %s", secs(ra), secs(wait))
		case ra > 0:
			why += fmt.Sprintf(" (Retry-After %s is not longer)", secs(ra))
		}
		why += "; " + jitter
		b.Attempts[n-1] = Attempt{Attempt: n, Wait: wait, Min: lo, Max: hi, Earliest: earliest, Latest: latest, Reason: why}
	}
	afterRule := "When the response carries Retry-After, wait at least that long; jitter only adds to it."
	backoffRule := fmt.Sprintf("Otherwise back off exponentially: %s × %s^(n−1) seconds, capped at %s.", num(r.Base), num(r.Factor), secs(r.Cap))
	switch p.JitterMode {
	case algorithms.JitterFull:
		afterRule = "When the response carries Retry-After, wait at least that long, whatever the jitter draws."
		backoffRule = fmt.Sprintf("Otherwise back off exponentially with full jitter: a random wait below %s × %s^(n−1) seconds, capped at %s.", num(r.Base), num(r.Factor), secs(r.Cap))
	case algorithms.JitterEqual:
		afterRule = "When the response carries Retry-After, wait at least that long, whatever the jitter draws."
		backoffRule = fmt.Sprintf("Otherwise back off exponentially with equal jitter: half of %s × %s^(n−1) seconds, capped at %s, plus a random share of the other half.", num(r.Base), num(r.Factor), secs(r.Cap))
	case algorithms.JitterDecorrelated:
		afterRule = "When the response carries Retry-After, wait at least that long, whatever the jitter draws."
		backoffRule = fmt.Sprintf("Otherwise back off with decorrelated jitter: each wait random between %s and 3 × the previous one (the first below 3 × %s), capped at %s.", secs(r.Base), secs(r.Base), secs(r.Cap))
	}
	b.Rules = []string{
		"Retry only 429 and 503 (and lost connections). Never retry other 4xx such as 400, 401, 403, 404 or 422: the request itself is wrong and fails the same way every time.",
		afterRule,
		backoffRule,
		fmt.Sprintf("Give up after %d attempts and report the error instead of retrying forever.", r.Attempts),
		"Pace by the RateLimit headers (remaining, seconds until more quota) to avoid the 429 in the first place.",
	}
	return b, nil
}

// jitterRange is the range [lo, hi) in seconds that p's jitter mode draws
// the wait before retry number n (1-based) from, for a server that sends
// Retry-After ra seconds (0: none), and a reason that says so. With d the
// exponential wait min(cap, base × factor^(n−1)):
//
//   - proportional: [w, w × (1 + jitter)), where w = max(d, ra): the floor
//     first, then the jitter on top;
//   - full: [0, d), then raised to at least ra;
//   - equal: [d/2, d), then raised to at least ra;
//   - decorrelated: each wait in [base, 3 × the previous one), capped at
//     cap, the first in [base, 3 × base): retry n is within
//     [base, min(cap, base × 3^n)), then raised to at least ra.
func jitterRange(p algorithms.RetryPolicy, n int, ra float64) (lo, hi float64, why string) {
	d := p.Backoff(n, 0).Seconds()
	switch p.JitterMode {
	case algorithms.JitterFull:
		lo, hi = 0, d
		why = fmt.Sprintf("full jitter draws from [0, backoff) = [0, %s)", secs(d))
	case algorithms.JitterEqual:
		lo, hi = d/2, d
		why = fmt.Sprintf("equal jitter draws from [backoff/2, backoff) = [%s, %s)", num(lo), secs(hi))
	case algorithms.JitterDecorrelated:
		base, ceiling := p.Base.Seconds(), p.Cap.Seconds()
		lo, hi = base, math.Min(ceiling, base*math.Pow(3, float64(n)))
		end := ")"
		if hi == ceiling {
			end = "]" // the cap itself is drawn
		}
		why = fmt.Sprintf("decorrelated jitter draws from [base, 3 × the previous wait), capped at %s, the first from [base, 3 × base): retry %d is within [%s, %s%s", secs(ceiling), n, num(lo), secs(hi), end)
	default:
		w := p.Backoff(n, duration(ra)).Seconds()
		if p.Jitter == 0 {
			return w, w, "no jitter: clients rejected together retry together"
		}
		hi := w * (1 + p.Jitter)
		return w, hi, fmt.Sprintf("jitter adds up to %s %%: [%s, %s)", num(p.Jitter*100), num(w), secs(hi))
	}
	if ra > lo {
		lo, hi = ra, math.Max(hi, ra)
		if lo == hi {
			why += fmt.Sprintf(", never less than Retry-After %s: always %s", secs(ra), secs(lo))
		} else {
			why += fmt.Sprintf(", never less than Retry-After %s: [%s, %s)", secs(ra), num(lo), secs(hi))
		}
	}
	return lo, hi, why
}
