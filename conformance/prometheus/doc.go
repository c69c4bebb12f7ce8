// Package prometheus is the conformance suite of the prometheus export
// (export/prometheus) against Prometheus's own Go packages, what promtool
// check rules runs and more, in a module of its own so that the main
// module does not depend on Prometheus.
//
// What it proves, in process and without a Prometheus binary: for every
// gateway and every test policy, the alerting rules load with
// Prometheus's rule-file loader (rulefmt: a strict YAML decode, every expr
// through the PromQL parser, every label and annotation through the
// template parser); each alert selects the gateway's metric names; its
// threshold is the one derived from the policy; shadow mode, the limits'
// mappings, a policy's own status and a policy name with {{ show in the
// rules as they should; and Prometheus's PromQL engine, evaluating the
// alerts over synthetic series in memory, fires the never-rejects alert
// after 7 days of traffic without a rejection and not before, nor after a
// rejection, while the rejected-share alert stays quiet.
//
// Run it with
//
//	(cd conformance/prometheus && go test ./...)
package prometheus
