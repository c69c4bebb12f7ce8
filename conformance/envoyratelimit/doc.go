// Package envoyratelimit proves the envoy-ratelimit export against the
// envoyproxy/ratelimit service's own code: its file provider and config
// loader read the exported file, its Redis fixed-window cache counts on a
// real redis-server on 127.0.0.1, and its ShouldRateLimit decides each
// request of a timed schedule, in virtual time (whole seconds since the
// Unix epoch, through the service's TimeSource), with the descriptors the
// export's Envoy filter actions build. Every decision is compared with the
// export's claim: requests_per_unit per unit in fixed windows counting
// every request (always), the engine's decision (when every deciding
// mapping is exact), and the per-window bounds the approximations state.
//
// It is a module of its own so that the main module's dependency graph
// does not carry the service's. Run it with
//
//	(cd conformance/envoyratelimit && go test ./...)
//
// Without redis-server the test skips, unless RATELAB_INTEGRATION=required.
package envoyratelimit
