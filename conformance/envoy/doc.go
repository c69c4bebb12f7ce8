// Package envoy is the conformance suite of the Envoy exports
// (export/envoy: envoy-local, envoy-ratelimit and envoy-gateway) against
// the Envoy projects' own Go code, in a module of its own so that the
// main module's dependency graph does not carry go-control-plane, the
// ratelimit service or Envoy Gateway and Kubernetes.
//
// What it proves, in process and without an Envoy binary:
//
//   - envoy-local: the bootstrap decodes with go-control-plane the way
//     Envoy reads its config (YAML to JSON, strict protojson, every Any
//     unpacked, protoc-gen-validate's rules) and meets the start-up rules
//     Envoy adds (fill intervals, duplicate descriptors); its buckets have
//     the numbers worked out by hand and decide, as Envoy's token bucket,
//     like ratelab's own limiter wherever the mapping is exact; and its
//     rate_limits actions, routes and descriptors, simulated as Envoy
//     applies them, count every request of the routing tables under
//     exactly the limits the engine applies, at the engine's cost.
//   - envoy-ratelimit: the service's own config loader accepts the file
//     and finds, for each limit's descriptor, the requests per unit and
//     shadow mode the export's mapping states; it refuses broken files;
//     the Envoy filter in the notes validates with go-control-plane.
//   - envoy-gateway: the BackendTrafficPolicy decodes strictly into Envoy
//     Gateway's Go type and validates against its CRD schema, and its
//     rules, as Envoy Gateway translates them, count each request under
//     the limits the engine applies.
//   - the status names the exports write are Envoy's StatusCode enum's.
//
// Run it with
//
//	(cd conformance/envoy && go test ./...)
//
// The live suite against the ratelimit service's Redis cache is
// conformance/envoyratelimit.
package envoy
