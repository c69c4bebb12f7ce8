// Package traefik is the conformance suite of the traefik export
// (export/traefik, file provider target) against Traefik v3's own Go
// packages, in a module of its own so that the main module does not
// depend on Traefik.
//
// What it proves, in process and without a Traefik binary: for a set of
// policies, the rendered dynamic configuration decodes with the decoder
// Traefik's file provider uses (paerser's file.DecodeContent into
// dynamic.Configuration); the routers' rules and priorities, added to
// Traefik's HTTP muxer (pkg/muxer/http), pick for every tried method,
// path and tier-header spelling a router whose middlewares are exactly the
// limits package engine applies (the mappings labelled exact); and
// Traefik's rateLimit middleware (pkg/middlewares/ratelimiter), chained as
// each router names its middlewares, decides a timed schedule of real
// requests as the export's approximate mappings say it does: the policy's
// own limiter for each limit, per router, with the differences their Why
// states (a request that would get a token within maxDelay is held and
// forwarded, each middleware of a chain charges on its own, and a bucket
// left idle is forgotten).
package traefik
