// Package calc turns measured capacity, client counts and per-client
// percentiles into rate-limit parameters for every algorithm in package
// algorithms, each number with the one-line reason for it, and warns when a
// design overcommits the service or multiplies across replicas.
//
// The model (DESIGN.md §4): a service sustains Capacity requests per second
// and keeps Headroom free; Clients (or Tiers of them) share what is usable.
// A client's sustained rate r is its measured p99 times a margin (default
// 2), or its fair share without percentiles; its burst b lets an evenly
// spaced peak through, or holds 10 s of rate. From (r, b) follow the window
// limit L = ⌈r × W⌉, GCRA's T = 1/r and τ = (b − 1)·T, and the leaky
// bucket's queue, so the six algorithms describe one design.
//
// Units: rates are requests per second (percentiles may be given per
// minute), sizes are requests, durations are seconds as float64 — the same
// numbers the JSON API carries. Every output is a Value: the number, its
// unit and its reason.
//
// Entry points:
//
//	Size        Input → Result: sizes, the six algorithms' Params, tiers,
//	            endpoints, per-replica split, header examples, backoff,
//	            predicted share over the limit, checks
//	Reverse     an existing Limit → what it allows a client, and the same
//	            limit in the other five algorithms
//	HeadersAt   a limiter at a Moment → RateLimit, RateLimit-Policy,
//	            RateLimit-*, X-RateLimit-* and Retry-After values
//	Schedule    Retry settings and a Retry-After → a client's backoff
//
// Bad input gives Errors, one *FieldError per bad field, each naming the
// field as the JSON API spells it, the value and the allowed range.
//
// Everything here is pure functions: no HTTP, no templ, no wall clock and no
// randomness (the header examples run the engine in virtual time). Params,
// Sizes and Limit convert to algorithms.Spec, so the simulator runs exactly
// what the calculator recommends.
package calc
