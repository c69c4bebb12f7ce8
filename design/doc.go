// Package design owns the designer's design and its URL: a design is a
// policy (package policy: every scope — defaults, tiers, endpoints, global
// — each limit with its own algorithm and parameters, keys, response,
// mode, service and metadata) plus the sizing inputs it was proposed from
// (already part of the policy: service, sizing, the tiers' clients and
// multipliers, the endpoints' costs) plus the chart traffic (an
// algorithms.Pattern).
//
// The calculator (calc.Size) proposes the limits; the user may pick
// another algorithm for each limit and pin their own numbers. A pinned
// number is kept when the inputs change; an unpinned one follows the
// proposal. [Design.Resolve] works a design out into a complete policy,
// with each limit's proposal and a note wherever a pinned number departs
// from it; [FromPolicy] turns any policy into a design that resolves to
// the same policy, so a policy survives import → design URL → export
// unchanged.
//
// # The design URL
//
// The designer's query string is the whole design, so a design can be
// bookmarked, shared and reloaded exactly. [Fields] lists every parameter
// in form order, which is also the order of the canonical query:
//
//   - the sizing, named as in calc.Input's JSON: capacity, headroom,
//     replicas, enforcement, clients, p50, p95, p99, percentile_unit,
//     margin, peak, peak_seconds, window, max_delay, retry.base,
//     retry.factor, retry.cap, retry.attempts, retry.jitter,
//     retry.jitter_mode;
//   - the rest of the policy: name and description (metadata),
//     on_store_failure, key (the defaults' key), mode, status, headers (a
//     comma list of ietf, legacy and x, or none), retry_after (true or
//     false);
//   - the default limit: limit.algorithm, limit.rate, limit.burst,
//     limit.queue, limit.limit, limit.window; the global limit the same
//     under global.limit.;
//   - rows, with the index as a segment: tiers.N.name, tiers.N.clients,
//     tiers.N.multiplier, tiers.N.key, tiers.N.limit.*;
//     endpoints.N.method, endpoints.N.path, endpoints.N.cost,
//     endpoints.N.limit.*;
//   - the chart pattern as pattern=<name> (algorithms.Patterns) and its
//     parameters under "pattern.", as algorithms.PatternInfo.Params spells
//     them.
//
// Durations (window, max_delay, retry.base, retry.cap, every limit's
// window and the pattern's durations) are seconds in the URL and
// time.Duration in the policy, to the nanosecond.
//
// A limit's algorithm is token_bucket when not given (an endpoint has no
// limit then); limit.algorithm=none and global.limit.algorithm=none leave
// the default or the global limit out, and tiers.N.limit.algorithm=default
// makes the tier take the default limit. A parameter given is pinned; one
// not given takes the proposal's value for the algorithm. Endpoint limits
// have no proposal: every parameter of the algorithm must be given.
// Parameters the algorithm does not use (and pattern parameters the
// pattern does not read) are kept in the URL and ignored.
//
// Example: /?capacity=2000&clients=200&p99=5&limit.algorithm=gcra&limit.burst=40&tiers.0.name=paid&tiers.0.clients=20&tiers.0.multiplier=4&pattern=idle_then_burst&pattern.count=300
//
// An empty value means "not given"; a tier or endpoint row whose fields
// are all empty is skipped, which is how the form offers blank rows for
// adding more. Row indices need not be contiguous, and are at most
// [MaxRowIndex]; problems name the row as the URL does ("tiers.3.clients").
// Only the first value of a repeated parameter counts, values are trimmed
// and at most 2048 bytes (a description 16384), and unknown parameters are
// ignored. A query without any design parameter is the [Example] design,
// so an empty URL shows complete results.
package design
