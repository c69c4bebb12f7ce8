// Package haproxy exports a policy as a complete haproxy.cfg that limits
// with stick tables: one table per limit storing a frequency counter
// (gpc0_rate, see [Counter]), a frontend that tracks each request in the
// tables of the limits that apply, rejects it when one of them is full,
// and otherwise counts it and forwards it to the protected service.
//
// Why gpc0_rate and not http_req_rate: http_req_rate counts every tracked
// request, rejected ones included, so a client that keeps sending over the
// limit stays blocked for ever, where ratelab's algorithms (and nginx,
// Envoy) let it through again at the limit's rate. The general purpose
// counter is incremented by the file itself, only for admitted requests
// (and as many times as the endpoint's cost), which keeps the sliding
// window's semantics.
//
// Stick counters: HAProxy 2.6 tracks at most three per request (sc0, sc1,
// sc2; tune.stick-counters only exists from 2.8). The file needs no more
// however many limits the policy has, because limits that never apply to
// the same request share a slot: sc0 holds the client's limit (the default
// or its tier's, chosen by the tier header), sc1 the endpoint's limit (one
// route per request), sc2 the global limit.
package haproxy

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/headers"
	"github.com/ratelab/ratelab/policy"
)

// Target is the HAProxy export.
var Target = export.Target{Name: "haproxy", Title: "HAProxy stick tables", Group: export.Gateways, Render: Render}

// MaxCost is the largest endpoint cost the file expresses: a cost is
// counted by that many sc-inc-gpc0 rules per slot (sc-add-gpc is newer
// than 2.6), so larger costs are left out.
const MaxCost = 100

// Stick counter slots, one per class of limits that never meet.
const (
	slotClient   = 0
	slotEndpoint = 1
	slotGlobal   = 2
)

// Table sizes: entries per client table; a key is at most keyLen bytes
// (longer API keys are truncated and share an entry).
const (
	clientTableSize = "100k"
	keyLen          = 128
)

// placed is one limit with its table and counter.
type placed struct {
	policy.Limit
	table   string
	slot    int
	counter Counter
	index   int // the endpoint's index in the policy (ScopeEndpoint)
}

// Render renders p as a complete haproxy.cfg.
func Render(p policy.Policy, o export.Options) (export.Export, error) {
	o = o.WithDefaults()
	ex := export.Export{Target: "haproxy", Filename: "haproxy.cfg", MediaType: "text/plain; charset=utf-8"}

	var lims []placed
	tierSeen := map[string]bool{}
	for _, l := range p.Limits() {
		if l.Scope == policy.ScopeTier {
			k := strings.ToLower(l.Tier)
			switch {
			case hasControl(l.Tier):
				ex.Add(export.Mapping{Field: l.Field, From: l.Spec.String(), To: "(left out)", Fidelity: export.NotExpressible,
					Why: "the tier's name has a control character, which no header value can carry"})
				continue
			case tierSeen[k]:
				ex.Add(export.Mapping{Field: l.Field, From: l.Spec.String(), To: "(left out)", Fidelity: export.NotExpressible,
					Why: fmt.Sprintf("the tier header is matched ignoring case, and another tier is also called %q that way", l.Tier)})
				continue
			}
			tierSeen[k] = true
		}
		if l.Scope == policy.ScopeEndpoint && hasControl(l.Match.Path) {
			ex.Add(export.Mapping{Field: l.Field, From: l.Spec.String(), To: "(left out)", Fidelity: export.NotExpressible,
				Why: "the endpoint's path has a control character, which no request line can carry"})
			continue
		}
		spec, replicaWhy := export.PerInstance(p, l.Spec)
		c, ok := CounterFor(spec)
		if !ok {
			ex.Add(export.Mapping{Field: l.Field, From: l.Spec.String(), To: "(left out)", Fidelity: export.NotExpressible, Why: c.Why})
			continue
		}
		pl := placed{Limit: l, table: "ratelab_" + l.Name, counter: c}
		switch l.Scope {
		case policy.ScopeEndpoint:
			pl.slot = slotEndpoint
			pl.index = endpointIndex(p, l)
		case policy.ScopeGlobal:
			pl.slot = slotGlobal
		default:
			pl.slot = slotClient
		}
		lims = append(lims, pl)
		why := c.Why
		if replicaWhy != "" {
			why = replicaWhy + "; " + why
		}
		keyTo, keyWhy := keyedBy(l, o)
		if keyWhy != "" {
			why += "; " + keyWhy
		}
		ex.Add(export.Mapping{Field: l.Field, From: l.Spec.String(),
			To: fmt.Sprintf("table %s: %s, sc%d%s", pl.table, c.To(), pl.slot, keyTo), Fidelity: c.Fidelity, Why: why})
	}

	status := p.Defaults.Response.Code()
	styles := p.Defaults.Response.Styles()
	ietf := slices.Contains(styles, policy.HeadersIETF)
	retry := p.Defaults.Response.SendsRetryAfter()
	shadow := p.Defaults.Mode == policy.ModeShadow

	// Endpoint costs the file counts.
	type costed struct {
		i    int
		cost int64
	}
	var costs []costed
	maxCost := int64(1)
	for i, e := range p.Endpoints {
		if e.Cost <= 1 || hasControl(e.Match.Path) {
			continue
		}
		if e.Cost > MaxCost {
			ex.Add(export.Mapping{Field: fmt.Sprintf("endpoints[%d].cost", i), From: fmt.Sprintf("cost=%d", e.Cost), To: "(each request counts 1)",
				Fidelity: export.NotExpressible, Why: fmt.Sprintf("a cost is counted by one rule per unit, and the file stops at %d", MaxCost)})
			continue
		}
		costs = append(costs, costed{i, e.Cost})
		maxCost = max(maxCost, e.Cost)
		ex.Add(export.Mapping{Field: fmt.Sprintf("endpoints[%d].cost", i), From: fmt.Sprintf("cost=%d", e.Cost),
			To:       fmt.Sprintf("txn.ratelab_cost %d: admitted when counter + %d stays within the limit, then %d × sc-inc-gpc0", e.Cost, e.Cost, e.Cost),
			Fidelity: export.Exact, Why: "the cost is taken from every limit the request passes (client, endpoint, global), as ratelab's limiters take it"})
	}

	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# HAProxy configuration for the rate-limit policy %q,\n", p.Metadata.Name)
	w("# generated by ratelab. Check it with haproxy -c -f %s (HAProxy 2.6 or later).\n", ex.Filename)
	w("# Tier from %s, API key from %s, account from %s (set by the authentication\n", o.TierHeader, o.APIKeyHeader, o.AccountHeader)
	w("# layer); a request with no tier, or one this policy does not know, gets the default limit.\n")
	w("\nglobal\n    # Add your logging, user and tuning settings here.\n")
	w("\ndefaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n    timeout server 30s\n")

	for _, l := range lims {
		w("\n# %s: %s -> %s\n", l.Field, l.Spec, l.counter.To())
		size, typ := clientTableSize, fmt.Sprintf("string len %d", keyLen)
		if l.Scope == policy.ScopeGlobal {
			size, typ = "1", "string len 8"
		}
		w("backend %s\n    stick-table type %s size %s expire %s store %s\n", l.table, typ, size, duration(2*l.counter.Period), l.counter.Rate())
	}
	w("\nbackend ratelab_upstream\n    server upstream %s\n", o.Upstream)

	listen := o.Listen
	if !strings.Contains(listen, ":") {
		listen = ":" + listen
	}
	w("\nfrontend ratelab\n    bind %s\n", listen)

	// Tier, endpoint and cost of the request.
	for _, l := range lims {
		if l.Scope == policy.ScopeTier {
			w("    http-request set-var(txn.ratelab_tier) str(%s) if { req.fhdr(%s) -m str -i -- %s } !{ var(txn.ratelab_tier) -m found }\n",
				strings.TrimPrefix(l.table, "ratelab_"), strings.ToLower(o.TierHeader), quote(l.Tier))
		}
	}
	// The endpoint is the first, in policy order, whose method and path
	// match: each rule sets txn.ratelab_route to its index only while no
	// earlier one has. Its limit and its cost follow from the index, so an
	// earlier endpoint without a limit or a cost still shadows a later one.
	routed := map[int]bool{}
	for _, l := range lims {
		if l.Scope == policy.ScopeEndpoint {
			routed[l.index] = true
		}
	}
	for _, c := range costs {
		routed[c.i] = true
	}
	if len(routed) > 0 {
		for i, e := range p.Endpoints {
			if hasControl(e.Match.Path) {
				continue // no request line carries it
			}
			w("    http-request set-var(txn.ratelab_route) int(%d) if !{ var(txn.ratelab_route) -m found } %s\n", i, route(e.Match))
		}
	}
	if len(costs) > 0 {
		w("    http-request set-var(txn.ratelab_cost) int(1)\n")
		for _, c := range costs {
			w("    http-request set-var(txn.ratelab_cost) int(%d) if { var(txn.ratelab_route) -m int %d }\n", c.cost, c.i)
		}
	}

	// Client keys: the client's address for key ip, the header for
	// api_key and account. A request without the header (or with it
	// empty) has no key: its variable stays unset, and the per-client
	// limits keyed by it neither track, reject nor count it (see cond);
	// only the global limit applies, as in the engine.
	keys := map[policy.Key]bool{}
	for _, l := range lims {
		if l.Scope != policy.ScopeGlobal {
			keys[l.Key] = true
		}
	}
	for _, k := range []policy.Key{policy.KeyIP, policy.KeyAPIKey, policy.KeyAccount} {
		if !keys[k] {
			continue
		}
		if h := o.KeyHeader(k); h != "" {
			h = strings.ToLower(h)
			w("    http-request set-var(txn.ratelab_key_%s) req.fhdr(%s),concat(@key) if { req.fhdr(%s) -m len gt 0 }\n", k, h, h)
		} else {
			w("    http-request set-var(txn.ratelab_key_%s) src,concat(@ip)\n", k)
		}
	}

	// Tracking: sc0 the client's limit, sc1 the endpoint's, sc2 global.
	for _, l := range lims {
		w("    http-request track-sc%d %s table %s%s\n", l.slot, keyExpr(l.Key), l.table, cond(l, ""))
	}

	// Which limit is over: the rate so far plus this request's cost. The
	// rules run from the shortest Retry-After to the longest, so the last
	// limit found over, whose Retry-After is kept, is the slowest to clear.
	order := slices.Clone(lims)
	slices.SortStableFunc(order, func(a, b placed) int { return int(a.counter.RetryAfter() - b.counter.RetryAfter()) })
	for _, l := range order {
		over := fmt.Sprintf("{ sc_gpc0_rate(%d) ge %d }", l.slot, l.counter.Limit)
		if len(costs) > 0 {
			over = fmt.Sprintf("{ sc_gpc0_rate(%d),add(txn.ratelab_cost) gt %d }", l.slot, l.counter.Limit)
		}
		w("    http-request set-var(txn.ratelab_over) str(%s)%s\n", strings.TrimPrefix(l.table, "ratelab_"), cond(l, over))
	}

	title := http.StatusText(status)
	if shadow {
		w("    # Shadow mode: tell the service which limit would reject, never reject.\n")
		w("    http-request set-header X-RateLimit-Would-Reject %%[var(txn.ratelab_over)] if { var(txn.ratelab_over) -m found }\n")
	} else {
		for _, l := range lims {
			w("    http-request return status %d content-type application/problem+json string '{\"type\":\"about:blank\",\"title\":\"%s\",\"status\":%d}'", status, title, status)
			if retry {
				w(" hdr Retry-After %d", l.counter.RetryAfter())
			}
			if ietf {
				w(" hdr RateLimit-Policy '%s'", headers.Policy(l.Name, l.Spec))
			}
			w(" if { var(txn.ratelab_over) -m str %s }\n", strings.TrimPrefix(l.table, "ratelab_"))
		}
	}

	// Count admitted requests only, cost times.
	slots := map[int]bool{}
	for _, l := range lims {
		slots[l.slot] = true
	}
	for slot := range 3 {
		if !slots[slot] {
			continue
		}
		w("    http-request sc-inc-gpc0(%d) if !{ var(txn.ratelab_over) -m found }\n", slot)
		for n := int64(2); n <= maxCost; n++ {
			w("    http-request sc-inc-gpc0(%d) if !{ var(txn.ratelab_over) -m found } { var(txn.ratelab_cost) -m int ge %d }\n", slot, n)
		}
	}
	w("    default_backend ratelab_upstream\n")
	ex.Body = b.Bytes()

	// Policy-level mappings.
	if shadow {
		ex.Add(export.Mapping{Field: "defaults.mode", From: string(policy.ModeShadow), To: "http-request set-header X-RateLimit-Would-Reject <limit>", Fidelity: export.Exact,
			Why: "the request is forwarded with the name of the limit that would reject it; like an enforcing run, it is not counted"})
	} else {
		ex.Add(export.Mapping{Field: "defaults.mode", From: string(policy.ModeEnforce), To: "http-request return", Fidelity: export.Exact})
	}
	ex.Add(export.Mapping{Field: "defaults.response.status", From: fmt.Sprint(status), To: fmt.Sprintf("http-request return status %d", status), Fidelity: export.Exact})
	if retry {
		ex.Add(export.Mapping{Field: "defaults.response.retry_after", From: "true", To: "hdr Retry-After <per limit>", Fidelity: export.Approximate,
			Why: "a static value per limit: the time a full counter takes to drop by one request at the limit's long-run rate (period/limit, rounded up); the wait of a given request depends on where it falls in the period"})
	} else {
		ex.Add(export.Mapping{Field: "defaults.response.retry_after", From: "false", To: "(no Retry-After)", Fidelity: export.Exact})
	}
	for _, s := range styles {
		m := export.Mapping{Field: "defaults.response.headers", From: string(s)}
		switch s {
		case policy.HeadersIETF:
			m.To, m.Fidelity = "hdr RateLimit-Policy (on rejections, per limit)", export.Approximate
			m.Why = "the rejection names the limit as the policy publishes it everywhere, q requests per w seconds (not the counter it runs as); RateLimit with the remaining quota is not sent"
		default:
			m.To, m.Fidelity = "(left out)", export.NotExpressible
			m.Why = "the remaining quota and reset headers are not generated (they would need per-response arithmetic on the counters)"
		}
		ex.Add(m)
	}
	ex.Add(export.InstanceEnforcement(p, "HAProxy",
		"stick tables live in each instance; a peers section copies entries between instances but does not add their counts, so the shared limit is divided over the replicas: exact only when the balancer spreads each client evenly",
		"the policy enforces locally, and stick tables are per instance"))

	ex.Notes = []string{
		fmt.Sprintf("A complete haproxy.cfg: it listens on %s and forwards to %s. Add your global settings (logging, user, maxconn), then check it with haproxy -c -f haproxy.cfg and reload.", listen, o.Upstream),
		fmt.Sprintf("The tier comes from %s, which the authentication layer must set (and strip from clients); clients are keyed by %s or %s (keys longer than %d bytes are truncated), or by their address for key ip. A request without its key header passes only the global limit: the per-client limits (default, tier, endpoint) keyed by that header do not apply to it.", o.TierHeader, o.APIKeyHeader, o.AccountHeader, keyLen),
		"Each limit has its own table (backend ratelab_*); inspect one with echo 'show table ratelab_default' | socat stdio /run/haproxy/admin.sock once a stats socket is configured.",
		"Stick counters: sc0 holds the client's limit, sc1 the endpoint's, sc2 the global one — HAProxy 2.6's three slots, whatever the number of limits.",
	}
	return ex, nil
}

// cond is the rule's condition: the limit applies (its tier, its
// endpoint, and, for a per-client limit keyed by a header, the request
// carries that header), and extra.
func cond(l placed, extra string) string {
	var c string
	switch l.Scope {
	case policy.ScopeDefault:
		c = "!{ var(txn.ratelab_tier) -m found }"
	case policy.ScopeTier:
		c = fmt.Sprintf("{ var(txn.ratelab_tier) -m str %s }", strings.TrimPrefix(l.table, "ratelab_"))
	case policy.ScopeEndpoint:
		c = fmt.Sprintf("{ var(txn.ratelab_route) -m int %d }", l.index)
	}
	if l.Scope != policy.ScopeGlobal && (l.Key == policy.KeyAPIKey || l.Key == policy.KeyAccount) {
		c += fmt.Sprintf(" { var(txn.ratelab_key_%s) -m found }", l.Key)
	}
	if extra != "" {
		if c != "" {
			c += " "
		}
		c += extra
	}
	if c == "" {
		return ""
	}
	return " if " + c
}

// keyedBy is what a limit's table is keyed by, for its mapping's To, and
// when that is a header, the Why of what a request without it gets.
func keyedBy(l policy.Limit, o export.Options) (to, why string) {
	if l.Scope == policy.ScopeGlobal {
		return ", one entry for all clients", ""
	}
	switch l.Key {
	case policy.KeyIP:
		return ", keyed by the client address", ""
	case policy.KeyGlobal:
		return ", one entry for all the tier's clients", ""
	}
	h := o.KeyHeader(l.Key)
	return ", keyed by " + h + " (a request without it skips this limit)",
		"a request without " + h + " has no key: this limit neither rejects nor counts it, and it passes only the global limit, as in ratelab's engine"
}

// endpointIndex is the index in p.Endpoints of the endpoint limit l.
func endpointIndex(p policy.Policy, l policy.Limit) int {
	for i := range p.Endpoints {
		if l.Field == fmt.Sprintf("endpoints[%d].limit", i) {
			return i
		}
	}
	return -1
}

// keyExpr is the sample that identifies a client for key k.
func keyExpr(k policy.Key) string {
	if k == policy.KeyGlobal {
		return "str(all)"
	}
	return "var(txn.ratelab_key_" + string(k) + ")"
}

// route is the condition matching an endpoint: its method ignoring ASCII
// case (any when empty) and its path, exactly, or as an anchored regular
// expression with one non-empty segment ([^/]+) per {name} for a
// template. HAProxy's path is the request's path as sent, without the
// query, %XX escapes included, as the policy writes it.
func route(m policy.Match) string {
	s := ""
	if m.Method != "" {
		s = fmt.Sprintf("{ method,upper -m str -- %s } ", quote(strings.ToUpper(m.Method)))
	}
	if policy.IsTemplate(m.Path) {
		return s + fmt.Sprintf("{ path -m reg -- %s }", quote(policy.PathRegex(m.Path)))
	}
	return s + fmt.Sprintf("{ path -m str -- %s }", quote(m.Path))
}

// quote is s as one HAProxy word: single-quoted (nothing is special
// inside), or double-quoted with \, " and $ escaped when s has a single
// quote.
func quote(s string) string {
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`)
	return `"` + r.Replace(s) + `"`
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
