// Package golibs is the differential suite of package algorithms against
// the Go rate-limit libraries whose semantics the limiters claim to share,
// in a module of its own so that the main module does not depend on
// go.uber.org/ratelimit.
//
// What it proves, in virtual time and without any server: over ten
// thousand random arrival sequences per comparison (each reproducible
// from its seed and sequence number), token_bucket and gcra decide,
// count Remaining, and report RetryAfter and Reset as
// golang.org/x/time/rate's AllowN does; gcra does so as throttled/v2's
// GCRA, exactly, including retries 1 ns before, at and after throttled's
// RetryAfter; leaky_bucket releases each request when go.uber.org/ratelimit
// (WithoutSlack) and x/time/rate's ReserveN with burst 1 do; three keys
// interleaved through one limiter, with Reclaim, decide as three
// independent references. The classes where a library differs by design
// (a cost above the burst in throttled, throttled's peek and its interval
// truncated to whole ns, uber's slack and its Unix-0 sentinel) are pinned
// by tests of their own.
//
// Run it with
//
//	(cd conformance/golibs && go test ./...)
package golibs
