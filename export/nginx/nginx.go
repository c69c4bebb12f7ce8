// Package nginx exports a policy to nginx's limit_req module
// (ngx_http_limit_req_module): one file to include in the http {} block,
// with a server that limits and proxies to the protected service.
//
// nginx's limit_req is GCRA in milli-requests and milliseconds: per key it
// keeps an excess e (requests over the rate, ≥ 0) and for each request
// computes e' = max(0, e − rate·Δt + 1); the request passes when e' ≤ burst
// and then stores e', and a rejected request stores nothing. A token bucket
// or GCRA of rate r and burst b is therefore exactly rate=r burst=b−1
// nodelay; without nodelay the same meter is the leaky bucket's queue,
// delaying a request by e'/r. Rates are whole requests per second or per
// minute only, and only whole requests per second keep the leak exact (see
// [RateFor] and [ParamFor]); windows become buckets of the same long-run
// rate and burst (approximate); endpoint costs cannot be expressed (every
// request counts 1).
//
// How the file selects limits: maps turn the tier header into a tier, the
// request's method and path into the endpoint it matches (the first in
// policy order: a map of regular expressions, which nginx tries in order),
// and each limit into a key variable that is empty when the limit does not
// apply (nginx does not count a request whose key is empty). Every
// limit_req line sits in the one server block, so each request meets
// exactly the policy's applicable limits: its tier's or the default, its
// endpoint's, the global one. nginx admits a request only when every zone
// admits it and then charges them all, the policy's rule.
//
// Names: every zone, variable, upstream and named location starts with
// [Prefix] of the policy's name, so several policies' files can be
// included in one http {} block (each with its own listen address).
package nginx

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/headers"
	"github.com/ratelab/ratelab/policy"
)

// Target is the nginx limit_req export.
var Target = export.Target{Name: "nginx", Title: "nginx limit_req", Group: export.Gateways, Render: Render}

// Zone sizes: about 16 000 keys per megabyte on 64-bit (nginx's docs); the
// global limit has one key, and 1m stays above nginx's minimum of 8
// pages on any page size up to 128 KiB.
const (
	clientZone = "10m"
	globalZone = "1m"
)

// placed is one limit with everything the file says about it.
type placed struct {
	policy.Limit
	zone  string // zone name: the policy's prefix and the limit's name
	key   string // the limit_req_zone key: a variable, or "global"
	param Param
	why   string // the limit's full Why (replicas, rate, burst)
}

// Render renders p as an nginx configuration to include in http {}.
func Render(p policy.Policy, o export.Options) (export.Export, error) {
	o = o.WithDefaults()
	ex := export.Export{
		Target:    "nginx",
		Filename:  "ratelab-" + policy.Ident(p.Metadata.Name) + ".conf",
		MediaType: "text/plain; charset=utf-8",
	}
	n := names{prefix: Prefix(p.Metadata.Name)}
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
					Why: fmt.Sprintf("nginx's map compares header values ignoring case, and another tier is also called %q that way", l.Tier)})
				continue
			}
			tierSeen[k] = true
		}
		if l.Scope == policy.ScopeEndpoint && hasControl(l.Match.Path) {
			ex.Add(export.Mapping{Field: l.Field, From: l.Spec.String(), To: "(left out)", Fidelity: export.NotExpressible,
				Why: "the endpoint's path has a control character, which no request line can carry"})
			continue
		}
		if l.Scope == policy.ScopeEndpoint {
			if _, ok := pathRegex(l.Match.Path); !ok {
				ex.Add(export.Mapping{Field: l.Field, From: l.Spec.String(), To: "(left out)", Fidelity: export.NotExpressible,
					Why: "the endpoint's path does not decode to a path nginx can match"})
				continue
			}
		}
		name := l.Name
		spec, replicaWhy := export.PerInstance(p, l.Spec)
		pl := placed{Limit: l, zone: n.of(name), param: ParamFor(spec)}
		pl.why = join([]string{replicaWhy, pl.param.Why})
		fid := pl.param.Fidelity
		if l.Scope == policy.ScopeEndpoint {
			pl.why = join([]string{pl.why, uriWhy})
		}
		if replicaWhy != "" {
			fid = export.Worst(fid, export.Approximate)
		}
		switch l.Scope {
		case policy.ScopeGlobal:
			pl.key = `"global"`
		default:
			pl.key = "$" + n.of(fmt.Sprintf("k%d", len(lims)))
		}
		lims = append(lims, pl)
		ex.Add(export.Mapping{Field: l.Field, From: l.Spec.String(), To: "zone=" + pl.zone + " " + pl.param.To(), Fidelity: fid, Why: pl.why})
	}

	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# nginx limit_req configuration for the rate-limit policy %s,\n", comment(p.Metadata.Name))
	w("# generated by ratelab. Include it inside the http {} block; check with nginx -t.\n")
	w("# Tier from %s, API key from %s, account from %s (set by the authentication\n", o.TierHeader, o.APIKeyHeader, o.AccountHeader)
	w("# layer); a request with no tier, or one this policy does not know, gets the default limit.\n")
	w("# Every zone, variable, upstream and location name starts with %s, so other\n", n.prefix)
	w("# policies' files can be included in the same http {} block.\n")

	// Tier selection.
	tierVar := "$" + n.of("tier")
	hasTiers := slices.ContainsFunc(lims, func(l placed) bool { return l.Scope == policy.ScopeTier })
	if hasTiers || slices.ContainsFunc(lims, func(l placed) bool { return l.Scope == policy.ScopeDefault }) {
		w("\nmap \"t:%s\" %s {\n    default \"\";\n", headerVar(o.TierHeader), tierVar)
		for _, l := range lims {
			if l.Scope == policy.ScopeTier {
				w("    %s %s;\n", quote("t:"+l.Tier), l.Name)
			}
		}
		w("}\n")
	}

	// Client keys: the header; none when it is missing.
	keys := map[policy.Key]bool{}
	for _, l := range lims {
		if l.Scope != policy.ScopeGlobal {
			keys[l.Key] = true
		}
	}
	for _, k := range []policy.Key{policy.KeyAPIKey, policy.KeyAccount} {
		if !keys[k] {
			continue
		}
		h := headerVar(o.KeyHeader(k))
		w("\n# %s from %s; a request without it passes only the global limit (an empty key\n# is not counted): there is no telling whose it is.\n", k, o.KeyHeader(k))
		w("map %s %s {\n    \"\" \"\";\n    default \"key:%s\";\n}\n", h, n.clientVar(k), h)
	}

	// The endpoint: the first in policy order whose method and path match.
	endpointVar := "$" + n.of("ep")
	if slices.ContainsFunc(lims, func(l placed) bool { return l.Scope == policy.ScopeEndpoint }) {
		w("\n# The endpoint a request matches: the first, in policy order, whose method and\n")
		w("# path match. Every entry is a regular expression, and nginx tries those in order.\n")
		w("map \"$request_method $uri\" %s {\n    default \"\";\n", endpointVar)
		for i, e := range p.Endpoints {
			re, ok := endpointRegex(e.Match)
			if !ok {
				continue
			}
			w("    %s e%d;\n", quote("~"+re), i)
		}
		w("}\n")
	}

	// Which limit counts a request: an empty key is not counted.
	for _, l := range lims {
		w("\n# %s counts the request under this key.", l.Field)
		client := n.clientVar(l.Key)
		switch l.Scope {
		case policy.ScopeDefault:
			w("\nmap %s %s {\n    \"\" %s;\n    default \"\";\n}\n", tierVar, l.key, client)
		case policy.ScopeTier:
			w("\nmap %s %s {\n    %s %s;\n    default \"\";\n}\n", tierVar, l.key, l.Name, client)
		case policy.ScopeEndpoint:
			w("\nmap %s %s {\n    e%d %s;\n    default \"\";\n}\n", endpointVar, l.key, endpointIndex(l.Field), client)
		}
	}

	w("\n")
	for _, l := range lims {
		size := clientZone
		if l.Scope == policy.ScopeGlobal {
			size = globalZone
		}
		w("# %s: %s -> %s (%s)\n", l.Field, l.Spec, l.param.To(), fidelityOf(ex, l.Field))
		w("limit_req_zone %s zone=%s:%s rate=%s;\n", l.key, l.zone, size, l.param.Rate)
	}

	// Response.
	status := p.Defaults.Response.Code()
	styles := p.Defaults.Response.Styles()
	// RateLimit-Policy names the client's own limit, so it needs one.
	ietf := slices.Contains(styles, policy.HeadersIETF) &&
		slices.ContainsFunc(lims, func(l placed) bool { return l.Scope == policy.ScopeDefault || l.Scope == policy.ScopeTier })
	retry := p.Defaults.Response.SendsRetryAfter()
	var retryAfter int64 = 1
	for _, l := range lims {
		retryAfter = max(retryAfter, l.param.RetryAfter())
	}
	policyVar := "$" + n.of("rlp")
	if ietf {
		w("\n# IETF RateLimit-Policy of the client's own limit (quota q per w seconds).\n")
		w("map %s %s {\n    default \"\";\n", tierVar, policyVar)
		for _, l := range lims {
			switch l.Scope {
			case policy.ScopeDefault:
				w("    \"\" '%s';\n", headers.Policy(l.Name, l.Spec))
			case policy.ScopeTier:
				w("    %s '%s';\n", l.Name, headers.Policy(l.Name, l.Spec))
			}
		}
		w("}\n")
	}

	upstream, limited := n.of("upstream"), "@"+n.of("limited")
	w("\nupstream %s {\n    server %s;\n}\n", upstream, o.Upstream)
	w("\nserver {\n    listen %s;\n", o.Listen)
	w("    limit_req_status %d;\n    limit_req_log_level warn;\n", status)
	shadow := p.Defaults.Mode == policy.ModeShadow
	if shadow {
		w("    # Shadow mode: count and log (\"limiting requests, dry run\"), never reject or delay.\n")
		w("    limit_req_dry_run on;\n")
	}
	w("    # Every limit; the maps leave the key empty (not counted) where one does not apply.\n")
	for _, l := range lims {
		w("    limit_req zone=%s%s;\n", l.zone, l.param.args())
	}
	w("    error_page %d = %s;\n", status, limited)
	if ietf {
		w("    add_header RateLimit-Policy %s always;\n", policyVar)
	}
	w("\n    location / {\n        proxy_pass http://%s;\n    }\n", upstream)

	w("\n    location %s {\n", limited)
	if retry {
		w("        add_header Retry-After %d always;\n", retryAfter)
	}
	if ietf {
		w("        add_header RateLimit-Policy %s always;\n", policyVar)
	}
	w("        default_type application/problem+json;\n")
	w("        return %d '{\"type\":\"about:blank\",\"title\":\"%s\",\"status\":%d}';\n", status, http.StatusText(status), status)
	w("    }\n}\n")
	ex.Body = b.Bytes()

	// Policy-level mappings.
	for i, e := range p.Endpoints {
		if e.Cost > 1 {
			ex.Add(export.Mapping{Field: fmt.Sprintf("endpoints[%d].cost", i), From: fmt.Sprintf("cost=%d", e.Cost), To: "(each request counts 1)",
				Fidelity: export.NotExpressible, Why: fmt.Sprintf("limit_req counts every request as one; nginx has no request weights: this endpoint's requests take 1 instead of %d from every limit that applies to them, so up to %d times as many of them pass", e.Cost, e.Cost)})
		}
	}
	if shadow {
		ex.Add(export.Mapping{Field: "defaults.mode", From: string(policy.ModeShadow), To: "limit_req_dry_run on", Fidelity: export.Exact,
			Why: "nginx counts as when enforcing and logs \"limiting requests, dry run\" at warn, but never rejects or delays"})
	} else {
		ex.Add(export.Mapping{Field: "defaults.mode", From: string(policy.ModeEnforce), To: "limit_req_dry_run off", Fidelity: export.Exact})
	}
	ex.Add(export.Mapping{Field: "defaults.response.status", From: fmt.Sprint(status), To: fmt.Sprintf("limit_req_status %d", status), Fidelity: export.Exact})
	if retry {
		ex.Add(export.Mapping{Field: "defaults.response.retry_after", From: "true", To: fmt.Sprintf("add_header Retry-After %d", retryAfter), Fidelity: export.Approximate,
			Why: fmt.Sprintf("nginx can only send a static value and does not say which zone rejected: %d s is the longest of the limits' 1/rate (rounded up), the time one request's worth of excess takes to drain, so a client that waits it and sends one request passes whichever per-client limit rejected it", retryAfter)})
	} else {
		ex.Add(export.Mapping{Field: "defaults.response.retry_after", From: "false", To: "(no Retry-After)", Fidelity: export.Exact})
	}
	for _, s := range styles {
		m := export.Mapping{Field: "defaults.response.headers", From: string(s)}
		switch s {
		case policy.HeadersIETF:
			if !ietf {
				m.To, m.Fidelity = "(left out)", export.NotExpressible
				m.Why = "the policy has no per-client limit for RateLimit-Policy to name"
				break
			}
			m.To, m.Fidelity = "add_header RateLimit-Policy (per tier, static)", export.Approximate
			m.Why = "RateLimit-Policy names the client's own limit as q requests per w seconds (a bucket as burst per burst/rate); the RateLimit field with the remaining quota needs per-request state nginx does not expose"
		default:
			m.To, m.Fidelity = "(left out)", export.NotExpressible
			m.Why = "these headers carry the remaining quota and reset time, which limit_req does not expose to add_header"
		}
		ex.Add(m)
	}
	ex.Add(export.InstanceEnforcement(p, "nginx",
		"nginx keeps its counters in each instance's shared memory (zone sync is NGINX Plus only), so the shared limit is divided over the replicas: exact only when the balancer spreads each client evenly",
		"the policy enforces locally, and nginx counts per instance"))

	ex.Notes = []string{
		fmt.Sprintf("Include %s inside the http {} block (on Debian: /etc/nginx/conf.d/), then run nginx -t and nginx -s reload. It defines its own server on %s proxying to %s; every name in it starts with %s, so other policies' files can be included beside it (each on its own listen address).", ex.Filename, o.Listen, o.Upstream, n.prefix),
		fmt.Sprintf("The tier comes from %s, which the authentication layer must set (and strip from clients); clients are keyed by %s or %s, and a request without its key header passes only the global limit. Behind another proxy, set real_ip so $binary_remote_addr is the client's.", o.TierHeader, o.APIKeyHeader, o.AccountHeader),
		"Each zone holds about 16 000 keys per megabyte; when a zone is full nginx evicts the least recently used keys, and a request it still cannot place gets the limit status (fails closed).",
		"Rejections and delays are logged at warn (\"limiting requests\"); $limit_req_status (PASSED, DELAYED, REJECTED, REJECTED_DRY_RUN…) can be added to the access log.",
	}
	return ex, nil
}

// fidelityOf is the fidelity of the mapping for field, for the comments.
func fidelityOf(ex export.Export, field string) export.Fidelity {
	for _, m := range ex.Mappings {
		if m.Field == field {
			return m.Fidelity
		}
	}
	return ""
}

// uriWhy is how nginx's endpoint matching departs from the engine's: it
// matches the normalised $uri, not the path as sent.
const uriWhy = "nginx matches the endpoint against $uri, the path it has normalised (%XX escapes decoded, // merged, . and .. resolved), where ratelab's engine matches the path as given: a request for /v1//items/7 or /v1/./items/7 counts here under the endpoint /v1/items/{id}, which the engine would not give it; paths without // or dot segments match alike"

// headerVar is nginx's variable for request header h: $http_x_api_key.
func headerVar(h string) string {
	return "$http_" + strings.ReplaceAll(strings.ToLower(h), "-", "_")
}

// pathRegex is an endpoint's path as an anchored PCRE for nginx's $uri:
// literal text quoted, each {name} exactly one non-empty segment
// ([^/]+). nginx normalizes $uri by decoding %XX escapes, so the literal
// text is decoded too; ok is false when it decodes to something no URI
// holds (a control character, a bad escape, a '{' without its '}').
func pathRegex(path string) (string, bool) {
	var b strings.Builder
	b.WriteString("^")
	for rest := path; ; {
		i := strings.IndexByte(rest, '{')
		lit := rest
		if i >= 0 {
			lit = rest[:i]
		}
		dec, err := url.PathUnescape(lit)
		if err != nil || hasControl(dec) {
			return "", false
		}
		b.WriteString(regexp.QuoteMeta(dec))
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return "", false
		}
		b.WriteString("[^/]+")
		rest = rest[i+j+1:]
	}
	b.WriteString("$")
	return b.String(), true
}

// endpointRegex is the regular expression the endpoint map tests against
// "$request_method $uri": the method in upper case (nginx refuses a
// request whose method is not upper case with 400), a space, the path.
// ok is false for an endpoint no request can match: an empty method (the
// policy's rule matches no request with it) or a path pathRegex refuses.
func endpointRegex(m policy.Match) (string, bool) {
	path, ok := pathRegex(m.Path)
	if !ok || m.Method == "" || hasControl(m.Method) || strings.ContainsAny(m.Method, " \t") {
		return "", false
	}
	return "^" + regexp.QuoteMeta(strings.ToUpper(m.Method)) + " " + path[1:], true
}

// endpointIndex is i of a limit's field "endpoints[i].limit".
func endpointIndex(field string) int {
	var i int
	fmt.Sscanf(field, "endpoints[%d]", &i)
	return i
}

// Prefix is the start of every name the export of the policy called name
// defines (zones, variables, the upstream, the named location):
// "ratelab_" and the name itself when it is 1 to 14 lower-case ASCII
// letters and digits (ratelab_live); otherwise policy.Ident of the name,
// runs of '_' made one and cut to 14 bytes, then '_' and 48 bits of the
// name's SHA-256 in hex (ratelab_odd_names_5e1d0f8a3b2c). A plain name has
// no '_', a hashed one ends in its hash, so two policies get the same
// prefix only when the hashes of two different names collide; the prefix
// never has "__", which keeps the "__" before a limit's name unambiguous.
// Several exports can therefore share one nginx. A prefix is at most 35
// bytes, so that the variables (prefix, "__" and at most 7 bytes: tier,
// api_key, account, ep, rlp, k0, k1, …) fit in nginx's default
// variables_hash_bucket_size of 64 (at most 46 bytes a name).
func Prefix(name string) string {
	const maxLen = 14
	plain := name != "" && len(name) <= maxLen
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			plain = false
		}
	}
	if plain {
		return "ratelab_" + name
	}
	id := policy.Ident(name)
	for strings.Contains(id, "__") {
		id = strings.ReplaceAll(id, "__", "_")
	}
	if len(id) > maxLen {
		id = id[:maxLen]
	}
	if id = strings.Trim(id, "_"); id == "" {
		id = "x"
	}
	sum := sha256.Sum256([]byte(name))
	return "ratelab_" + id + "_" + hex.EncodeToString(sum[:6])
}

// names makes the export's nginx names: the policy's Prefix, "__" and a
// suffix.
type names struct{ prefix string }

// of is the name for suffix: ratelab_live__default.
func (n names) of(suffix string) string { return n.prefix + "__" + suffix }

// clientVar is the variable that identifies a client for key k.
func (n names) clientVar(k policy.Key) string {
	switch k {
	case policy.KeyIP:
		return "$binary_remote_addr"
	case policy.KeyGlobal:
		return `"global"`
	}
	return "$" + n.of(string(k))
}

// quote is s as an nginx double-quoted string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// comment is s quoted for a comment line: no line breaks.
func comment(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, fmt.Sprintf("%q", s))
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
