// Package prometheus exports a policy as Prometheus alerting rules that
// watch the gateway enforcing it.
//
// The rules file has one group with up to three alerts, written against
// the metric names the chosen gateway really exposes (Options.Gateway; ""
// means nginx):
//
//   - RateLimitRejectedShareHigh: the share of requests the limiter
//     rejected (or, in shadow mode, would have rejected) over 10 minutes
//     is above [Threshold] for 15 minutes. Per client where the target's
//     metrics carry a client label (Kong's consumer), else per the
//     target's route, tier, frontend or filter label, with a note that
//     per-client is not possible from those metrics.
//   - RateLimitNeverRejects (info): a series that served traffic for 7
//     days without one rejection: requests in the last 7 days, a sample
//     of the series from 7 days ago (within the hour before), so a series
//     younger than 7 days cannot fire, and no rejection in the 7 days;
//     for 1 hour. A limit that never fires is either far
//     above what clients send (so it protects nothing) or not wired to
//     the traffic at all (a key header that never arrives, a route that
//     does not match).
//   - RateLimitStoreErrors / RateLimitStoreDown: the shared store (Redis,
//     the ratelimit service) failing while the limiter fails open, so
//     limits are silently not enforced — or, failing closed, clients are
//     refused. Only for targets that keep counters in a store.
//
// The Go library targets (xtime-rate, throttled, redis-rate) and the Redis
// Lua scripts have no metrics of their own; their rendered snippets count
// decisions in [DecisionsMetric] and store errors in [StoreErrorsMetric],
// which this package defines as the contract between the snippets and the
// rules.
package prometheus

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// The metrics the rendered Go snippets and the Redis Lua callers expose.
// A snippet counts every decision of every limit in DecisionsMetric with
// the limit's export name (policy.Limit.Name: "default", "tier_paid",
// "endpoint_1", "global") in LimitLabel and the outcome in DecisionLabel;
// a snippet that keeps its counters in a shared store counts every store
// error (after which it fails open or closed as the policy says) in
// StoreErrorsMetric with the same LimitLabel. There is deliberately no
// client label: one series per API key would grow without bound.
const (
	// DecisionsMetric is a counter: ratelab_ratelimit_decisions_total{limit, decision}.
	DecisionsMetric = "ratelab_ratelimit_decisions_total"
	// StoreErrorsMetric is a counter: ratelab_ratelimit_store_errors_total{limit}.
	StoreErrorsMetric = "ratelab_ratelimit_store_errors_total"
	// LimitLabel names the limit (policy.Limit.Name).
	LimitLabel = "limit"
	// DecisionLabel is one of DecisionAllowed, DecisionRejected,
	// DecisionShadowRejected.
	DecisionLabel = "decision"
	// DecisionAllowed: the request passed the limit.
	DecisionAllowed = "allowed"
	// DecisionRejected: the request was refused (enforce mode).
	DecisionRejected = "rejected"
	// DecisionShadowRejected: shadow mode; the limit would have refused
	// the request and let it through.
	DecisionShadowRejected = "shadow_rejected"
)

// Alert names, the same for every gateway.
const (
	AlertRejectedShare = "RateLimitRejectedShareHigh"
	AlertNeverRejects  = "RateLimitNeverRejects"
	AlertStoreErrors   = "RateLimitStoreErrors"
	AlertStoreDown     = "RateLimitStoreDown"
)

// Evaluation windows and pending durations of the alerts.
const (
	shareWindow   = "10m" // rate window of the rejected share
	shareFor      = "15m" // the share must stay high this long
	neverWindow   = "7d"  // a week covers weekly traffic cycles
	neverSince    = "1h"  // a sample this long before neverWindow ago proves the series that old
	neverFor      = "1h"
	storeWindow   = "5m"
	storeFor      = "5m"
	storeDownFor  = "2m"
	defaultShare  = 0.05
	measuredShare = 0.01
)

// Gateways lists the gateway names Options.Gateway accepts.
var Gateways = []string{
	"nginx", "haproxy", "envoy-local", "envoy-ratelimit", "envoy-gateway",
	"traefik", "traefik-crd", "kong", "redis-lua", "xtime-rate", "throttled", "redis-rate",
}

// Target is the Prometheus rules export.
var Target = export.Target{Name: "prometheus", Title: "Prometheus alerting rules", Group: export.Operations, Render: Render}

// Threshold is the share of rejected requests (a fraction) above which
// RateLimitRejectedShareHigh fires, and why. A policy says how much each
// client may send, not how much clients will send, so it cannot know the
// share of rejections to expect: without measurements the threshold is 5 %,
// a common starting point to tune after a week of data. When the policy
// was sized from measured percentiles (sizing.p99 or p95), its limits sit
// at p99 × margin of real clients' rates, so clients sending as measured
// are almost never refused, and more than 1 % refused means traffic has
// changed or a limit is wrong: the threshold is 1 %.
func Threshold(p policy.Policy) (share float64, why string) {
	if p.Sizing.P99 > 0 || p.Sizing.P95 > 0 {
		return measuredShare, "the policy was sized from measured percentiles (limits at p99 × margin), so clients sending as measured are almost never rejected; more than 1 % rejected means traffic changed or a limit is wrong"
	}
	return defaultShare, "the policy carries no measured percentiles, so it cannot know what share of rejections to expect; 5 % over 10 minutes is a starting point to tune after a week of data"
}

// source is how one gateway's metrics show rejections.
type source struct {
	// total and rejected are PromQL selectors of counters: every request
	// the limiter saw, and those it rejected (or would have, in shadow
	// mode). rejected is "" when the target cannot show them.
	total, rejected string
	// by is the label the alerts group by; perClient says it names a
	// client.
	by        string
	perClient bool
	// byWhat says what a value of by is ("Kong consumer", "router").
	byWhat string
	// fidelity and why describe the share rules.
	fidelity export.Fidelity
	why      string
	// excludeGlobal is a matcher that leaves the global limit out of
	// RateLimitNeverRejects, "" when the metrics cannot tell it apart.
	excludeGlobal string
	// store is the store rule, nil without a store.
	store *storeRule
	notes []string
}

// storeRule watches the shared store.
type storeRule struct {
	alert, expr, forDur, severity string
	summary, description          string
	fidelity                      export.Fidelity
	why                           string
}

// Render renders the rules for p and the gateway o.Gateway names.
func Render(p policy.Policy, o export.Options) (export.Export, error) {
	o = o.WithDefaults()
	gw := o.Gateway
	if gw == "" {
		gw = "nginx"
	}
	if !slices.Contains(Gateways, gw) {
		return export.Export{}, &export.Error{Target: "prometheus", Field: "gateway",
			Reason: fmt.Sprintf("unknown gateway %q; want one of %s", gw, strings.Join(Gateways, ", "))}
	}
	src := sourceFor(gw, p, o)
	limits := p.Limits()
	shadow := p.Defaults.Mode == policy.ModeShadow
	share, shareWhy := Threshold(p)

	e := export.Export{Target: "prometheus", Filename: "ratelimit-alerts." + gw + ".rules.yml", MediaType: "application/yaml; charset=utf-8"}
	var rules []rule
	verb := "rejected"
	if shadow {
		verb = "would be rejected (shadow mode)"
	}
	if src.rejected != "" {
		rules = append(rules, rule{
			alert: AlertRejectedShare,
			expr: fmt.Sprintf("%s\n/\n%s\n> %s",
				sumBy(src.by, "rate", src.rejected, shareWindow, ""), sumBy(src.by, "rate", src.total, shareWindow, ""), num(share)),
			forDur:   shareFor,
			severity: "warning",
			summary:  fmt.Sprintf("More than %s of requests %s by the rate limit", pct(share), verb),
			description: fmt.Sprintf("{{ $value | humanizePercentage }} of the requests of %s {{ $labels.%s }} %s over the last %s (threshold %s: %s).",
				src.byWhat, src.by, verb, shareWindow, pct(share), literal(shareWhy)),
		})
		total := src.total
		if src.excludeGlobal != "" {
			total = withMatcher(total, src.excludeGlobal)
		}
		rules = append(rules, rule{
			alert: AlertNeverRejects,
			// increase over 7d is positive from the second sample on, so
			// the middle term requires samples from 7d ago: the series
			// has 7 days of data, not merely some data in the last 7.
			expr: fmt.Sprintf("%[2]s > 0\nand on (%[1]s)\n%[3]s\nunless on (%[1]s)\n%[4]s > 0",
				src.by, sumBy(src.by, "increase", total, neverWindow, ""),
				sumBy(src.by, "count_over_time", total, neverSince, neverWindow),
				sumBy(src.by, "increase", src.rejected, neverWindow, "")),
			forDur:   neverFor,
			severity: "info",
			summary:  "A rate limit served traffic for 7 days without rejecting anything",
			description: fmt.Sprintf("%s {{ $labels.%s }} served requests for %s and none %s. Either the limit is far above what clients send (it protects nothing: lower it, or keep it as a known safety net and silence this), or it is not applied to this traffic (a key header that never arrives, a route that does not match).",
				src.byWhat, src.by, neverWindow, strings.TrimSuffix(verb, " (shadow mode)")),
		})
	}
	if src.store != nil {
		s := src.store
		rules = append(rules, rule{alert: s.alert, expr: s.expr, forDur: s.forDur, severity: s.severity, summary: s.summary, description: s.description})
	}

	// Mappings: the rule kinds, then each limit, then policy features.
	ruleTo := fmt.Sprintf("%s: sum by (%s) of %s / %s > %s for %s", AlertRejectedShare, src.by, src.rejected, src.total, num(share), shareFor)
	if src.rejected == "" {
		ruleTo = "no rule: the target's metrics do not show " + verb + " requests"
	}
	e.Add(export.Mapping{Field: "alerts.rejected_share", From: fmt.Sprintf("share of requests %s > %s (%s)", verb, pct(share), shareWhy),
		To: ruleTo, Fidelity: src.fidelity, Why: src.why})
	neverTo := fmt.Sprintf("%s: no rejection in %s where %s served traffic and its series is %s old (info)", AlertNeverRejects, neverWindow, src.by, neverWindow)
	if src.rejected == "" {
		neverTo = "no rule: the target's metrics do not show " + verb + " requests"
	}
	e.Add(export.Mapping{Field: "alerts.no_rejections", From: "a limit that never rejects over " + neverWindow,
		To: neverTo, Fidelity: src.fidelity, Why: src.why})
	if src.store != nil {
		e.Add(export.Mapping{Field: "service.on_store_failure", From: string(p.Service.StoreFailureMode()),
			To: src.store.alert + ": " + oneLine(src.store.expr), Fidelity: src.store.fidelity, Why: src.store.why})
	} else {
		e.Notes = append(e.Notes, fmt.Sprintf("Store errors: n/a — %s keeps its counters in each instance, so there is no shared store to fail and no store alert.", gw))
	}
	for _, l := range limits {
		m := export.Mapping{Field: l.Field, From: l.Spec.String(), Fidelity: src.fidelity}
		switch {
		case src.rejected == "":
			m.To = "not watched"
			m.Why = src.why
		case src.by == LimitLabel:
			m.To = fmt.Sprintf("%s{%s=%q}", AlertRejectedShare, LimitLabel, l.Name)
			m.Why = "the snippet counts each limit's decisions under its own limit label"
		case len(limits) == 1:
			m.To = fmt.Sprintf("%s by %s", AlertRejectedShare, src.by)
			m.Why = "the policy's only limit: every rejection the target counts is this limit's"
		default:
			m.To = fmt.Sprintf("%s by %s", AlertRejectedShare, src.by)
			m.Fidelity = export.Worst(src.fidelity, export.Approximate)
			m.Why = fmt.Sprintf("the target's metrics count rejections per %s, not per limit, so this limit's rejections are summed with the other limits' that apply to the same %s", src.byWhat, src.byWhat)
		}
		e.Add(m)
	}
	modeTo := "rules count rejected requests"
	if shadow {
		modeTo = "rules count requests that would be rejected: " + src.rejected
		if src.rejected == "" {
			modeTo = "not watched: the target's metrics do not count requests its shadow mode would reject"
		}
	}
	modeFid := export.Exact
	if src.rejected == "" {
		modeFid = export.NotExpressible
	}
	modeWhy := ""
	if shadow {
		modeWhy = src.why
	}
	e.Add(export.Mapping{Field: "defaults.mode", From: string(p.Defaults.EffectiveMode()), To: modeTo, Fidelity: modeFid, Why: modeWhy})
	e.Add(export.Mapping{Field: "defaults.response.status", From: strconv.Itoa(p.Defaults.Response.Code()), To: "rejections are counted by " + orNone(src.rejected),
		Fidelity: export.Exact, Why: "the rules select the limiter's own rejection counter or the policy's status code"})
	if len(export.Costs(p)) > 0 {
		e.Add(export.Mapping{Field: "endpoints[].cost", From: "costs > 1", To: "shares count requests, not tokens",
			Fidelity: export.Exact, Why: "an expensive endpoint's rejected request counts once in the share, as a client sees it"})
	}
	if p.Service.Replicas > 1 {
		e.Add(export.Mapping{Field: "service.replicas", From: strconv.Itoa(p.Service.Replicas), To: "sum by (" + src.by + ") over every instance's series",
			Fidelity: export.Exact, Why: "the sums drop the instance label, so the share is the whole fleet's"})
	}

	e.Notes = append(e.Notes,
		"Load the file with rule_files in prometheus.yml (or a PrometheusRule's spec.groups), then check it with promtool check rules "+e.Filename+".",
		"Threshold "+pct(share)+": "+shareWhy+".")
	if !src.perClient && src.rejected != "" {
		e.Notes = append(e.Notes, fmt.Sprintf("Per client is not possible from %s's metrics: they carry no client label, so the share is per %s.", gw, src.byWhat))
	}
	e.Notes = append(e.Notes, src.notes...)
	e.Body = render(p, gw, share, shareWhy, rules)
	return e, nil
}

// rule is one alerting rule.
type rule struct {
	alert, expr, forDur, severity string
	summary, description          string
}

// render writes the rules file.
func render(p policy.Policy, gw string, share float64, why string, rules []rule) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Prometheus alerting rules for rate-limit policy %s, generated by ratelab.\n", strconv.Quote(p.Metadata.Name))
	fmt.Fprintf(&b, "# Gateway: %s. Threshold of the rejected share: %s (%s): %s.\n", gw, num(share), pct(share), why)
	fmt.Fprintf(&b, "# Check: promtool check rules <this file>\n")
	b.WriteString("groups:\n")
	fmt.Fprintf(&b, "  - name: %s\n", strconv.Quote("ratelab-"+policy.Ident(p.Metadata.Name)+"-"+gw))
	if len(rules) == 0 {
		b.WriteString("    rules: []\n")
		return b.Bytes()
	}
	b.WriteString("    rules:\n")
	for _, r := range rules {
		fmt.Fprintf(&b, "      - alert: %s\n", r.alert)
		b.WriteString("        expr: |-\n")
		for line := range strings.SplitSeq(r.expr, "\n") {
			fmt.Fprintf(&b, "          %s\n", line)
		}
		fmt.Fprintf(&b, "        for: %s\n", r.forDur)
		b.WriteString("        labels:\n")
		fmt.Fprintf(&b, "          severity: %s\n", r.severity)
		fmt.Fprintf(&b, "          ratelab_policy: %s\n", strconv.Quote(literal(p.Metadata.Name)))
		fmt.Fprintf(&b, "          ratelab_gateway: %s\n", strconv.Quote(gw))
		b.WriteString("        annotations:\n")
		fmt.Fprintf(&b, "          summary: %s\n", strconv.Quote(r.summary))
		fmt.Fprintf(&b, "          description: %s\n", strconv.Quote(r.description))
	}
	return b.Bytes()
}

// literal is s as alert template text that prints s: label values and
// annotations are Go templates, so a policy name holding "{{" is printed
// through a string constant instead of being parsed.
func literal(s string) string {
	if !strings.Contains(s, "{{") && !strings.Contains(s, "}}") {
		return s
	}
	return "{{ " + strconv.Quote(s) + " }}"
}

// sourceFor is how gateway gw shows rejections and store errors.
func sourceFor(gw string, p policy.Policy, o export.Options) source {
	shadow := p.Defaults.Mode == policy.ModeShadow
	code := strconv.Itoa(p.Defaults.Response.Code())
	shared := p.Service.Replicas > 1 && p.Service.Enforcement != calc.Local
	var s source
	switch gw {
	case "nginx":
		tierVar := "http_" + strings.ReplaceAll(strings.ToLower(o.TierHeader), "-", "_")
		state := "REJECTED"
		if shadow {
			state = "REJECTED_DRY_RUN"
		}
		s = source{
			total:    "nginx_http_response_count_total",
			rejected: fmt.Sprintf("nginx_http_response_count_total{limit_req_status=%q}", state),
			by:       "tier", byWhat: "tier",
			fidelity: export.Approximate,
			why:      "nginx OSS exposes no per-status or per-zone counters (stub_status counts connections and requests only); the rules read prometheus-nginxlog-exporter's counter of the access log, with $limit_req_status and the tier header logged as labels, so the share is per tier (endpoint and global limits are summed into it) and only as complete as the log",
			notes: []string{
				fmt.Sprintf("nginx: log the limiter's verdict and the tier, e.g. log_format ratelab '$remote_addr [$time_local] \"$request\" $status $limit_req_status \"$%s\"'; access_log /var/log/nginx/ratelab.log ratelab;", tierVar),
				fmt.Sprintf("prometheus-nginxlog-exporter: a namespace named nginx with that format and relabel_configs {target_label: limit_req_status, from: limit_req_status} and {target_label: tier, from: %s}; it exports nginx_http_response_count_total{method, status, limit_req_status, tier}. A request without the tier header has tier=\"\" (the default limit).", tierVar),
			},
		}
	case "haproxy":
		class := code[:1] + "xx"
		s = source{
			total:    "haproxy_frontend_http_requests_total",
			rejected: fmt.Sprintf("haproxy_frontend_http_responses_total{code=%q}", class),
			by:       "proxy", byWhat: "frontend",
			fidelity: export.Approximate,
			why:      fmt.Sprintf("HAProxy's built-in exporter counts responses by class only (code=%q counts every %s, not only the limiter's %s) and per frontend, not per stick table; haproxy_frontend_denied_req_total counts only http-request deny, not http-request return", class, class, code),
			notes:    []string{"HAProxy: expose the built-in exporter with http-request use-service prometheus-exporter if { path /metrics } on a stats frontend."},
		}
		if shadow {
			s.rejected = ""
			s.fidelity = export.NotExpressible
			s.why = "in shadow mode the HAProxy export only sets a header on requests it would reject; the built-in exporter has no counter of them (count them from the log instead)"
		}
	case "envoy-local":
		s = envoyLocal()
	case "envoy-ratelimit":
		s = envoyGlobal(p, shadow)
	case "envoy-gateway":
		if shared {
			s = envoyGlobal(p, shadow)
			s.notes = append(s.notes, "Envoy Gateway: the policy shares its limits over replicas, so the export uses global rules (the ratelimit service); scrape the Envoy proxies' /stats/prometheus.")
		} else {
			s = envoyLocal()
			s.notes = append(s.notes, "Envoy Gateway: local rules run Envoy's local_ratelimit filter in each proxy; scrape the Envoy proxies' /stats/prometheus.")
		}
	case "traefik", "traefik-crd":
		s = source{
			total:    "traefik_router_requests_total",
			rejected: `traefik_router_requests_total{code="429"}`,
			by:       "router", byWhat: "router",
			fidelity: export.Exact,
			why:      "Traefik's rateLimit middleware answers 429 inside the router, so traefik_router_requests_total{code=\"429\"} counts its rejections (plus any 429 the upstream returns); traefik_service_requests_total only sees requests that reached the service",
			notes:    []string{"Traefik: enable metrics.prometheus with addRoutersLabels: true, or the router series do not exist."},
		}
		if code != "429" {
			s.notes = append(s.notes, fmt.Sprintf("Traefik's rateLimit middleware always answers 429, not the policy's %s: the rules count 429.", code))
		}
		if shadow {
			s.rejected = ""
			s.fidelity = export.NotExpressible
			s.why = "Traefik's rateLimit middleware has no shadow mode, so nothing counts requests it would reject"
		}
		if shared {
			s.store = &storeRule{alert: AlertStoreDown, expr: "redis_up == 0", forDur: storeDownFor, severity: "critical",
				summary:     "The rate limit's Redis is unreachable",
				description: "redis_exporter cannot reach Redis at {{ $labels.instance }}. Traefik answers 500 to every request its Redis-backed rateLimit middleware cannot check (it fails closed).",
				fidelity:    export.Approximate,
				why:         "Traefik exposes no store-error metric and fails closed (500) on Redis errors whatever the policy says; the rule watches Redis itself through redis_exporter's redis_up"}
			if p.Service.StoreFailureMode() == policy.FailOpen {
				s.store.why += "; the policy's fail_open is not what Traefik does"
			}
		}
	case "kong":
		s = source{
			total:    "kong_http_requests_total",
			rejected: fmt.Sprintf(`kong_http_requests_total{code=%q,source="kong"}`, code),
			by:       "consumer", byWhat: "Kong consumer", perClient: true,
			fidelity: export.Exact,
			why:      fmt.Sprintf("the Kong prometheus plugin with per_consumer: true labels kong_http_requests_total by consumer; source=\"kong\" keeps the plugin's own %s apart from the upstream's", code),
			notes: []string{
				"Kong: enable the prometheus plugin with per_consumer: true and status_code_metrics: true (off by default since Kong 3.0), or the consumer and code labels are empty.",
				"Kong: clients keyed by IP all use the anonymous consumer (key-auth config.anonymous): their share is one series, not one per client.",
			},
		}
		if shadow {
			s.rejected = ""
			s.fidelity = export.NotExpressible
			s.why = "Kong's rate-limiting plugin has no shadow mode, so nothing counts requests it would reject"
		}
		if shared {
			s.store = &storeRule{alert: AlertStoreDown, expr: "redis_up == 0", forDur: storeDownFor, severity: "critical",
				fidelity: export.Approximate,
				why:      "Kong's prometheus plugin exposes no rate-limiting store errors (they are only logged); the rule watches Redis itself through redis_exporter's redis_up",
				summary:  "The rate limit's Redis is unreachable"}
			if p.Service.StoreFailureMode() == policy.FailOpen {
				s.store.description = "redis_exporter cannot reach Redis at {{ $labels.instance }}. Kong's rate-limiting plugin (fault_tolerant: true) lets every request through while Redis is down: limits are not enforced."
			} else {
				s.store.description = "redis_exporter cannot reach Redis at {{ $labels.instance }}. Kong's rate-limiting plugin (fault_tolerant: false) answers 500 while Redis is down."
			}
		}
	default: // redis-lua and the Go libraries
		s = goSource(gw, p, shadow, shared)
	}
	return s
}

// envoyLocal is Envoy's local_ratelimit filter.
func envoyLocal() source {
	return source{
		total:    "envoy_http_local_rate_limit_enabled",
		rejected: "envoy_http_local_rate_limit_rate_limited",
		by:       "envoy_local_http_ratelimit_prefix", byWhat: "local_ratelimit filter (stat_prefix)",
		fidelity: export.Exact,
		why:      "the filter's <stat_prefix>.http_local_rate_limit.enabled and .rate_limited counters (Prometheus: envoy_http_local_rate_limit_* with the stat_prefix in envoy_local_http_ratelimit_prefix); rate_limited counts requests without a token whether or not enforced, so it also counts shadow mode's; they are per filter, not per descriptor",
		notes:    []string{"Envoy: scrape the admin endpoint /stats/prometheus; counters keep Envoy's names (no _total suffix)."},
	}
}

// envoyGlobal is Envoy's ratelimit filter in front of envoyproxy/ratelimit.
func envoyGlobal(p policy.Policy, shadow bool) source {
	s := source{
		total:    `{__name__=~"envoy_cluster_ratelimit_ok|envoy_cluster_ratelimit_over_limit"}`,
		rejected: "envoy_cluster_ratelimit_over_limit",
		by:       "envoy_cluster_name", byWhat: "upstream cluster",
		fidelity: export.Exact,
		why:      "Envoy's ratelimit filter counts the service's answers in cluster.<route_target_cluster>.ratelimit.ok and .over_limit (Prometheus: envoy_cluster_ratelimit_* with envoy_cluster_name), per upstream cluster, not per descriptor",
		notes:    []string{"Per descriptor (tier, key): the ratelimit service's own stats ratelimit.service.rate_limit.<domain>.<key>.over_limit / total_hits (ratelimit_service_rate_limit_over_limit{domain, key1} with its statsd_exporter mapping)."},
	}
	if shadow {
		s.rejected = "ratelimit_service_rate_limit_shadow_mode"
		s.total = "ratelimit_service_rate_limit_total_hits"
		s.by, s.byWhat = "key1", "descriptor key"
		s.fidelity = export.Approximate
		s.why = "a shadow_mode descriptor answers OK to Envoy, so only the ratelimit service counts would-be rejections: ratelimit.service.rate_limit.<domain>.<key>.shadow_mode, whose Prometheus name and labels (ratelimit_service_rate_limit_shadow_mode{domain, key1}) come from the statsd_exporter mapping the service ships"
	}
	if p.Service.StoreFailureMode() == policy.FailOpen {
		s.store = &storeRule{alert: AlertStoreErrors, forDur: storeFor, severity: "warning",
			expr:        fmt.Sprintf("sum by (envoy_cluster_name) (rate(envoy_cluster_ratelimit_failure_mode_allowed[%s])) > 0", storeWindow),
			summary:     "Rate limits are not enforced: the ratelimit service is failing and Envoy fails open",
			description: "Envoy let {{ $value | humanize }} requests/s to cluster {{ $labels.envoy_cluster_name }} through without a rate-limit decision (failure_mode_deny: false): the ratelimit service or its Redis is failing.",
			fidelity:    export.Exact,
			why:         "cluster.<name>.ratelimit.failure_mode_allowed counts requests let through because the service errored (failure_mode_deny: false, Envoy Gateway failClosed: false)"}
	} else {
		s.store = &storeRule{alert: AlertStoreErrors, forDur: storeFor, severity: "critical",
			expr:        fmt.Sprintf("sum by (envoy_cluster_name) (rate(envoy_cluster_ratelimit_error[%s])) > 0", storeWindow),
			summary:     "Requests are refused: the ratelimit service is failing and Envoy fails closed",
			description: "Envoy could not get a rate-limit decision for {{ $value | humanize }} requests/s to cluster {{ $labels.envoy_cluster_name }} and refused them (failure_mode_deny: true).",
			fidelity:    export.Exact,
			why:         "cluster.<name>.ratelimit.error counts calls to the service that failed; with failure_mode_deny: true each is refused"}
	}
	return s
}

// goSource is a Go snippet's or a Redis Lua caller's own metrics.
func goSource(gw string, p policy.Policy, shadow, shared bool) source {
	state := DecisionRejected
	if shadow {
		state = DecisionShadowRejected
	}
	s := source{
		total:    DecisionsMetric,
		rejected: fmt.Sprintf("%s{%s=%q}", DecisionsMetric, DecisionLabel, state),
		by:       LimitLabel, byWhat: "limit",
		fidelity: export.Exact,
		why:      fmt.Sprintf("the rendered snippet counts every decision in %s{%s, %s}, one series per limit; it has no client label (one series per API key would grow without bound)", DecisionsMetric, LimitLabel, DecisionLabel),
		notes:    []string{fmt.Sprintf("%s: the rendered Go file counts every decision and store error through its OnDecision and OnStoreError hooks; set them to increment %s and %s with the Prometheus client (its doc comment shows how) and serve them on /metrics.", gw, DecisionsMetric, StoreErrorsMetric)},
	}
	if p.Global.Limit.Algorithm != "" {
		s.excludeGlobal = LimitLabel + `!="global"`
		s.notes = append(s.notes, "The global limit is a capacity safety net that should rarely fire, so RateLimitNeverRejects leaves it out.")
	}
	hasStore := gw == "redis-lua" || gw == "redis-rate" || (gw == "throttled" && shared)
	if !hasStore {
		return s
	}
	st := &storeRule{alert: AlertStoreErrors, forDur: storeFor,
		expr:     fmt.Sprintf("sum by (%s) (rate(%s[%s])) > 0", LimitLabel, StoreErrorsMetric, storeWindow),
		fidelity: export.Exact,
		why:      fmt.Sprintf("the snippet counts every store error in %s{%s} before it fails %s", StoreErrorsMetric, LimitLabel, strings.TrimPrefix(string(p.Service.StoreFailureMode()), "fail_"))}
	if p.Service.StoreFailureMode() == policy.FailOpen {
		st.severity = "warning"
		st.summary = "Rate limits are not enforced: the store is failing and the limiter fails open"
		st.description = "Limit {{ $labels.limit }} met {{ $value | humanize }} store errors/s and let those requests through unchecked (on_store_failure: fail_open)."
	} else {
		st.severity = "critical"
		st.summary = "Requests are refused: the store is failing and the limiter fails closed"
		st.description = "Limit {{ $labels.limit }} met {{ $value | humanize }} store errors/s and refused those requests (on_store_failure: fail_closed)."
	}
	s.store = st
	return s
}

// withMatcher adds matcher m to selector sel ("metric" or "metric{...}").
// sumBy is the PromQL `sum by (by) (fn(sel[window] offset off))` (no
// offset when off is ""). A selector of several metric names
// ({__name__=~"a|b", …}) is taken one name at a time, each result given
// its name in the label ratelab_metric by label_replace and the results
// joined with or before the sum: a range function drops the metric name,
// and Prometheus refuses a vector in which two series, differing only in
// their name, end up with the same labels.
func sumBy(by, fn, sel, window, off string) string {
	rng := func(sel string) string {
		r := fn + "(" + sel + "[" + window + "]"
		if off != "" {
			r += " offset " + off
		}
		return r + ")"
	}
	const multi = `{__name__=~"`
	if !strings.HasPrefix(sel, multi) {
		return "sum by (" + by + ") (" + rng(sel) + ")"
	}
	inner := sel[len(multi):]
	q := strings.IndexByte(inner, '"')
	rest := strings.TrimPrefix(inner[q+1:], ",") // the other matchers and "}"
	var parts []string
	for _, name := range strings.Split(inner[:q], "|") {
		one := name
		if rest != "}" {
			one += "{" + rest
		}
		parts = append(parts, fmt.Sprintf(`label_replace(%s, "ratelab_metric", %q, "", "")`, rng(one), name))
	}
	return "sum by (" + by + ") (" + strings.Join(parts, " or ") + ")"
}

func withMatcher(sel, m string) string {
	if strings.HasSuffix(sel, "}") {
		return strings.TrimSuffix(sel, "}") + "," + m + "}"
	}
	return sel + "{" + m + "}"
}

func orNone(s string) string {
	if s == "" {
		return "nothing (see notes)"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// num formats a fraction the shortest way that reads back the same.
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// pct formats a fraction as a percentage: 0.05 → "5 %".
func pct(f float64) string { return strconv.FormatFloat(f*100, 'g', -1, 64) + " %" }
