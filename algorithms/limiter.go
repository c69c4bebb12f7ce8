// Package algorithms holds ratelab's rate limiters, traffic patterns and
// simulator. It is the one engine behind the calculator's charts, the JSON
// API, the proofs of the gateway exports and the server's own rate limiting.
//
// Everything here runs in virtual time: a time is a time.Duration since the
// start of a run, passed in by the caller. Nothing reads the wall clock,
// sleeps, starts goroutines or uses the global random source, so the same
// inputs always give the same decisions. The package uses only the standard
// library.
//
// Six algorithms share one interface, [Limiter]:
//
//	token_bucket    rate r/s, burst b     starts full; tokens = min(b, tokens + r·Δt)
//	gcra            rate r/s, burst b     T = 1/r, τ = (b−1)·T; admit if TAT' − now ≤ τ + T
//	leaky_bucket    rate r/s, queue q     FIFO drained at exactly r/s; delays, rejects when q wait
//	fixed_window    limit L, window W     counter per aligned window [kW, (k+1)W)
//	sliding_log     limit L, window W     admitted requests in (now−W, now], ring buffer O(L)
//	sliding_window  limit L, window W     prev·(1 − elapsed/W) + current, aligned windows
//
// Rejected requests never consume quota, as in x/time/rate, nginx and Envoy.
package algorithms

import (
	"math"
	"time"
)

// Never is the RetryAfter of a request that can never pass: its cost is
// larger than the limiter's capacity, so waiting does not help.
const Never time.Duration = math.MaxInt64

// Decision is a limiter's answer to one request: whether it is allowed, how
// long it waits (Delay, shapers only) or must wait before it can pass
// (RetryAfter), how much quota remains, and when the key is rested again.
//
// Delay and RetryAfter share one field, Wait, since a request is either
// admitted or rejected; keeping Decision at four words lets it travel in
// registers, which halves the simulator's cost per arrival.
type Decision struct {
	// Allowed reports whether the request is admitted. A shaper
	// (leaky_bucket) admits a request but may delay it.
	Allowed bool
	// Wait is the Delay of an admitted request or the RetryAfter of a
	// rejected one; read it through those methods.
	Wait time.Duration
	// Remaining is how many more requests of cost 1 the key could send
	// right now, after this decision, and still be admitted.
	Remaining int64
	// Reset is how long until the key is back to its rested state (a full
	// bucket, an empty queue, an empty window) if it sends nothing more.
	Reset time.Duration
}

// Delay is how long an admitted request waits before it is served: 0 for
// every algorithm except leaky_bucket, and 0 for a rejected request.
func (d Decision) Delay() time.Duration {
	if d.Allowed {
		return d.Wait
	}
	return 0
}

// RetryAfter is, for a rejected request, the shortest wait after which the
// same request (same key and cost, nothing else sent in between) is
// admitted. It is Never when the cost exceeds the capacity, and 0 for an
// admitted request.
func (d Decision) RetryAfter() time.Duration {
	if d.Allowed {
		return 0
	}
	return d.Wait
}

// Limiter decides requests for many keys (clients) at once. Each key has its
// own state, created on first use in its rested state.
//
// Implementations are not safe for concurrent use: a server shares one
// behind a mutex. Times passed to Allow should not decrease for a key; a
// time earlier than the key's last one is treated as that last time, so the
// limiter never re-credits quota when a clock steps back.
type Limiter interface {
	// Allow decides a request of cost units from key at virtual time now.
	// A cost of 0 (or less) only reports the key's state and consumes
	// nothing.
	Allow(key string, now time.Duration, cost int64) Decision
	// Spec returns the limiter's algorithm and parameters.
	Spec() Spec
	// Keys returns how many keys currently hold state.
	Keys() int
	// Reclaim drops the state of every key that is rested at now (it would
	// decide exactly as a new key would) and returns how many it dropped.
	Reclaim(now time.Duration) int
}

// ceilDuration converts a non-negative number of nanoseconds to a Duration,
// rounding up and saturating at Never.
func ceilDuration(ns float64) time.Duration {
	if ns <= 0 {
		return 0
	}
	if ns >= float64(Never) {
		return Never
	}
	return time.Duration(math.Ceil(ns))
}

// floorUnits converts a non-negative real number of units to whole units,
// rounding down and clamping to [0, MaxInt64].
func floorUnits(x float64) int64 {
	if x <= 0 {
		return 0
	}
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(x)
}

// floorWhole is ⌊x⌋ for x > 0, else 0. token_bucket's and gcra's
// Remaining take their estimate with it and check it as a float64,
// converting it to int64 only at the end: a count (at most MaxCount + 1)
// is a whole float64 exactly, and the checks need not wait for a
// conversion and back (about 1 ns of a decision; leaky_bucket's, whose
// estimate is one more, ran slower so).
func floorWhole(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return math.Floor(x)
}
