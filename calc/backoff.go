package calc

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// Retry is how a client retries a rejected request: before retry n it waits
// min(Cap, Base × Factor^(n−1)) seconds, but never less than the server's
// Retry-After, at most Attempts times. Jitter spreads each wait d uniformly
// over [d, d × (1 + Jitter)), so it never goes below d. A zero field takes
// its default; Jitter is a pointer because 0 (no jitter) is a valid choice.
type Retry struct {
	Base     float64  `json:"base,omitempty"`     // seconds; 0 means 1
	Factor   float64  `json:"factor,omitempty"`   // 0 means 2
	Cap      float64  `json:"cap,omitempty"`      // seconds; 0 means 30
	Attempts int      `json:"attempts,omitempty"` // 0 means 5
	Jitter   *float64 `json:"jitter,omitempty"`   // fraction; nil means 0.5
}

// Retry defaults: 1, 2, 4, 8, 16 s with up to 50 % added.
const (
	DefaultRetryBase     = 1.0
	DefaultRetryFactor   = 2.0
	DefaultRetryCap      = 30.0
	DefaultRetryAttempts = 5
	DefaultRetryJitter   = 0.5
)

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
	return r
}

// duration converts seconds to a Duration, rounding to the nearest
// nanosecond. Callers keep s within ±292 years.
func duration(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// Policy is r as the simulator's retry policy, honouring Retry-After, with
// the seed of its jitter. r must have its defaults applied (as in a Result).
func (r Retry) Policy(seed uint64) algorithms.RetryPolicy {
	jitter := DefaultRetryJitter
	if r.Jitter != nil {
		jitter = *r.Jitter
	}
	return algorithms.RetryPolicy{
		Attempts: r.Attempts, Base: duration(r.Base), Factor: r.Factor, Cap: duration(r.Cap),
		Jitter: jitter, HonorRetryAfter: true, Seed: seed,
	}
}

// Backoff is a client's retry schedule after a rejection: the wait before
// each attempt and the range jitter spreads it over, and the rules a client
// follows. It shows ranges, not random draws, so it is the same every time.
type Backoff struct {
	// RetryAfter is the Retry-After the schedule honours, in whole seconds;
	// 0 when the server sends none.
	RetryAfter float64   `json:"retry_after"`
	Attempts   []Attempt `json:"attempts"`
	Rules      []string  `json:"rules"`
}

// Attempt is one retry: Wait seconds after the previous rejection without
// jitter, somewhere in [Min, Max) with it, and Earliest to Latest seconds
// after the first rejection.
type Attempt struct {
	Attempt  int     `json:"attempt"`
	Wait     float64 `json:"wait"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	Earliest float64 `json:"earliest"`
	Latest   float64 `json:"latest"`
	Reason   string  `json:"reason"`
}

// Schedule returns the backoff schedule of r for a server that answers every
// rejection with Retry-After retryAfter seconds (0: none). The waits are the
// simulator's own (algorithms.RetryPolicy.Backoff), so a chart of the same
// policy shows the same schedule.
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
		hi := wait * (1 + p.Jitter)
		earliest += wait
		latest += hi
		why := fmt.Sprintf("backoff = min(cap, base × factor^%d) = min(%s, %s × %s^%d) = %s", n-1, num(r.Cap), num(r.Base), num(r.Factor), n-1, secs(exp))
		switch {
		case ra > exp:
			why += fmt.Sprintf("; Retry-After %s is longer, so wait %s", secs(ra), secs(wait))
		case ra > 0:
			why += fmt.Sprintf(" (Retry-After %s is not longer)", secs(ra))
		}
		if p.Jitter > 0 {
			why += fmt.Sprintf("; jitter adds up to %s %%: [%s, %s)", num(p.Jitter*100), num(wait), secs(hi))
		} else {
			why += "; no jitter: clients rejected together retry together"
		}
		b.Attempts[n-1] = Attempt{Attempt: n, Wait: wait, Min: wait, Max: hi, Earliest: earliest, Latest: latest, Reason: why}
	}
	b.Rules = []string{
		"Retry only 429 and 503 (and lost connections). Never retry other 4xx such as 400, 401, 403, 404 or 422: the request itself is wrong and fails the same way every time.",
		"When the response carries Retry-After, wait at least that long; jitter only adds to it.",
		fmt.Sprintf("Otherwise back off exponentially: %s × %s^(n−1) seconds, capped at %s.", num(r.Base), num(r.Factor), secs(r.Cap)),
		fmt.Sprintf("Give up after %d attempts and report the error instead of retrying forever.", r.Attempts),
		"Pace by the RateLimit headers (remaining, seconds until more quota) to avoid the 429 in the first place.",
	}
	return b, nil
}
