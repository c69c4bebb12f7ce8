// Package snippet writes the Go files of the Go library targets (package
// ratelimit): the part every one of them shares — the policy's limits as
// a table, the request conventions, choosing a request's limits (default
// or tier, endpoint, global) and cost, the client key, and an HTTP
// middleware that sends the policy's status, header styles and
// Retry-After with an RFC 9457 problem details body (application/
// problem+json: type about:blank, the status's title, a detail naming the
// limit), honours shadow mode and on_store_failure — around the target's
// own limiter code.
//
// The target supplies a Limiter type with a method
//
//	check(ctx context.Context, ls []*limit, keys []string, cost int64) ([]decision, error)
//
// that decides one request against every limit in ls (keys[i] is the
// client key of ls[i]) and returns one decision per limit it consulted;
// a request rejected by one limit must not consume the others.
package snippet

import (
	"bytes"
	"fmt"
	"go/format"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/apidocs"
	"github.com/ratelab/ratelab/export/prometheus"
	"github.com/ratelab/ratelab/headers"
	"github.com/ratelab/ratelab/policy"
)

// File is one generated Go file.
type File struct {
	Policy  policy.Policy
	Options export.Options
	// Target is the target's name, for the header comment.
	Target string
	// Doc is the package comment's model paragraph, without comment
	// markers; lines are wrapped as given.
	Doc string
	// Imports are the target's imports beyond the shared ones (context,
	// encoding/json, log, net, net/http, slices, strconv, strings, time).
	Imports []string
	// LimitFields is Go source declaring the target's fields of type
	// limit, one per line.
	LimitFields string
	// Fields returns the target's field initialisers for one limit
	// ("rate: 10, burst: 20"), "" for none.
	Fields func(policy.Limit) string
	// Comment returns the comment line above a limit; nil means its spec.
	Comment func(policy.Limit) string
	// Body is the target's Go source: its Limiter type, a constructor and
	// the check method.
	Body string
}

// Render returns the file's source, gofmt-formatted. An error is a bug in
// the target's source, not in the policy.
func (f File) Render() ([]byte, error) {
	p, o := f.Policy, f.Options.WithDefaults()
	status := p.Defaults.Response.Status
	if status == 0 {
		status = 429
	}
	styles := p.Defaults.Response.Headers
	if styles == nil {
		styles = []policy.HeaderStyle{policy.HeadersIETF}
	}
	retry := p.Defaults.Response.RetryAfter == nil || *p.Defaults.Response.RetryAfter
	var limits []string
	for _, l := range p.Limits() {
		quota, window := headers.Quota(l.Spec)
		fields := fmt.Sprintf("name: %q, field: %q, scope: %q, key: %q, quota: %d, window: %d", l.Name, l.Field, l.Scope, l.Key, quota, window)
		if l.Tier != "" {
			fields += fmt.Sprintf(", tier: %q", l.Tier)
		}
		if l.Scope == policy.ScopeEndpoint {
			fields += fmt.Sprintf(", method: %q, path: %q", upperASCII(l.Match.Method), l.Match.Path)
		}
		fields += fmt.Sprintf(", detail: %q", Detail(l))
		if f.Fields != nil {
			if extra := f.Fields(l); extra != "" {
				fields += ", " + extra
			}
		}
		c := l.Spec.String()
		if f.Comment != nil {
			c = f.Comment(l)
		}
		limits = append(limits, fmt.Sprintf("\t// %s\n\t{%s},", c, fields))
	}
	var tiers []string
	for _, t := range p.Tiers {
		tiers = append(tiers, fmt.Sprintf("\t%q,", t.Name))
	}
	limitOf := map[string]string{}
	for _, l := range p.Limits() {
		if l.Scope == policy.ScopeEndpoint {
			limitOf[l.Field] = l.Name
		}
	}
	var endpoints []string
	for i, e := range p.Endpoints {
		fields := fmt.Sprintf("method: %q, path: %q, cost: %d", upperASCII(e.Match.Method), e.Match.Path, max(e.Cost, 1))
		if name, ok := limitOf[fmt.Sprintf("endpoints[%d].limit", i)]; ok {
			fields += fmt.Sprintf(", limit: %q", name)
		}
		endpoints = append(endpoints, "\t{"+fields+"},")
	}
	imports := []string{"context", "encoding/json", "log", "net", "net/http", "slices", "strconv", "strings", "time"}
	var third []string
	for _, im := range f.Imports {
		if strings.Contains(strings.SplitN(im, "/", 2)[0], ".") {
			third = append(third, im)
		} else if !slices.Contains(imports, im) {
			imports = append(imports, im)
		}
	}
	slices.Sort(imports)
	slices.Sort(third)
	data := map[string]any{
		"Name":              strconv.Quote(p.Metadata.Name),
		"DecisionsMetric":   prometheus.DecisionsMetric,
		"StoreErrorsMetric": prometheus.StoreErrorsMetric,
		"Allowed":           prometheus.DecisionAllowed,
		"Rejected":          prometheus.DecisionRejected,
		"ShadowRejected":    prometheus.DecisionShadowRejected,
		"Target":            f.Target,
		"Doc":               comment(f.Doc),
		"Imports":           imports,
		"Third":             third,
		"APIKey":            strconv.Quote(o.APIKeyHeader),
		"Account":           strconv.Quote(o.AccountHeader),
		"Tier":              strconv.Quote(o.TierHeader),
		"Status":            status,
		"Shadow":            p.Defaults.Mode == policy.ModeShadow,
		"FailClosed":        p.Service.OnStoreFailure == policy.FailClosed,
		"RetryAfter":        retry,
		"IETF":              slices.Contains(styles, policy.HeadersIETF),
		"Legacy":            slices.Contains(styles, policy.HeadersLegacy),
		"X":                 slices.Contains(styles, policy.HeadersX),
		"LimitFields":       strings.TrimSpace(f.LimitFields),
		"Limits":            strings.Join(limits, "\n"),
		"Tiers":             strings.Join(tiers, "\n"),
		"Endpoints":         strings.Join(endpoints, "\n"),
		"Body":              strings.TrimSpace(f.Body),
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, data); err != nil {
		return nil, err
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("snippet %s: gofmt: %w\n%s", f.Target, err, b.Bytes())
	}
	return src, nil
}

// Detail is the detail of the problem details a request rejected by l
// gets: the limit's name and what it allows, in the words of the API
// documentation export (apidocs.Phrase).
func Detail(l policy.Limit) string {
	return fmt.Sprintf("Rate limit exceeded: limit %s allows %s.", strconv.Quote(l.Name), apidocs.Phrase(l.Spec))
}

// upperASCII is s with its ASCII letters in upper case.
func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

// comment turns text into // lines.
func comment(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		b.WriteString(strings.TrimRight("// "+line, " ") + "\n")
	}
	return b.String()
}

var tmpl = template.Must(template.New("go").Parse(`// Code generated by ratelab ({{.Target}}) from policy {{.Name}}; DO NOT EDIT.

// Package ratelimit enforces the rate-limit policy {{.Name}}.
//
{{.Doc}}//
// Every request passes its client's limit (the tier the tier header names,
// ignoring ASCII case, else the default limit), the limit of the first
// endpoint in policy order whose method and path template match it, if
// that endpoint has one, and the global limit, all at that endpoint's cost
// (1 when none matches). A request rejected by one limit consumes none of
// the others.
package ratelimit

import (
{{range .Imports}}	{{printf "%q" .}}
{{end}}
{{range .Third}}	{{printf "%q" .}}
{{end}})

// The request conventions and the policy's response.
const (
	// apiKeyHeader and accountHeader carry the client's key (a request
	// without one is keyed by its IP address); tierHeader carries its
	// tier, set by the authentication layer.
	apiKeyHeader  = {{.APIKey}}
	accountHeader = {{.Account}}
	tierHeader    = {{.Tier}}
	// rejectStatus is the status of a rejected request.
	rejectStatus = {{.Status}}
	// shadowMode logs what would be rejected and rejects nothing.
	shadowMode = {{.Shadow}}
	// failClosed rejects requests (503) while the limiter's store
	// fails; otherwise they pass and the failure is logged.
	failClosed = {{.FailClosed}}
	// sendRetryAfter sends Retry-After (seconds) on a rejection.
	sendRetryAfter = {{.RetryAfter}}
	// Header styles: IETF RateLimit/RateLimit-Policy, legacy
	// RateLimit-Limit/-Remaining/-Reset, X-RateLimit-*.
	headersIETF   = {{.IETF}}
	headersLegacy = {{.Legacy}}
	headersX      = {{.X}}
)

// limit is one limit of the policy.
type limit struct {
	name   string // identifier, part of the client key
	field  string // where it is in the policy
	scope  string // default, tier, endpoint or global
	tier   string // the tier's name (scope tier)
	key    string // what identifies a client: ip, api_key, account, global
	method string // the endpoint's method and path (scope endpoint)
	path   string
	quota  int64 // RateLimit-Policy q: the capacity
	window int64 // RateLimit-Policy w, seconds
	detail string // the problem details' detail of a rejection
{{.LimitFields}}
}

// limits are the policy's limits: default, tiers, endpoints, global.
var limits = []*limit{
{{.Limits}}
}

// tiers are the names of the policy's tiers in policy order, unique
// ignoring ASCII case (see tierIndex).
var tiers = []string{
{{.Tiers}}
}

// endpoint is one of the policy's endpoints.
type endpoint struct {
	method string // upper case; a request's method matches ignoring ASCII case
	path   string // the path template (see matchPath)
	cost   int64  // tokens a request takes from each of its limits
	limit  string // the name of the endpoint's limit, "" when it has none
}

// endpoints are the policy's endpoints in policy order: a request belongs
// to the first that matches it.
var endpoints = []endpoint{
{{.Endpoints}}
}

// decision is one limit's answer to a request.
type decision struct {
	limit      *limit
	allowed    bool
	remaining  int64         // cost-1 requests the client may still send now
	retryAfter time.Duration // when rejected: wait before retrying; -1: never
	reset      time.Duration // until the client's state is rested
	more       time.Duration // when allowed: until remaining grows; 0 when rested
	delay      time.Duration // when allowed: wait before serving (a queue)
}

// route returns the limits request r passes, in order (client, endpoint,
// global), their client keys and the request's cost:
//   - the client's limit: the tier the tier header names (tierIndex), or
//     the default limit when it names none or an unknown one;
//   - the limit of the first endpoint, in policy order, whose method and
//     path template match (endpointIndex), if that endpoint has one;
//   - the global limit.
//
// The cost is that endpoint's, 1 when none matches, for every limit.
func route(r *http.Request) ([]*limit, []string, int64) {
	tier := tierIndex(r.Header.Get(tierHeader))
	ep := endpointIndex(r.Method, r.URL.Path)
	cost := int64(1)
	if ep >= 0 {
		cost = endpoints[ep].cost
	}
	var out []*limit
	for _, l := range limits {
		switch l.scope {
		case "default":
			if tier < 0 {
				out = append(out, l)
			}
		case "tier":
			if tier >= 0 && l.tier == tiers[tier] {
				out = append(out, l)
			}
		case "endpoint":
			if ep >= 0 && l.name == endpoints[ep].limit {
				out = append(out, l)
			}
		case "global":
			out = append(out, l)
		}
	}
	keys := make([]string, 0, len(out))
	kept := out[:0]
	for _, l := range out {
		// A request without its key passes only the global limit: there
		// is no telling whose it is.
		if k := clientKey(l, r); k != "" {
			kept, keys = append(kept, l), append(keys, k)
		}
	}
	return kept, keys, cost
}

// tierIndex returns the index in tiers of the tier a tier header value
// names, -1 for none: the tier whose name equals it ignoring ASCII case
// ("PAID" selects "Paid"). An empty value names none.
func tierIndex(name string) int {
	if name == "" {
		return -1
	}
	for i, t := range tiers {
		if equalFoldASCII(t, name) {
			return i
		}
	}
	return -1
}

// endpointIndex returns the index of the first endpoint whose method
// equals method ignoring ASCII case and whose template matches path, -1
// for none.
func endpointIndex(method, path string) int {
	for i, e := range endpoints {
		if equalFoldASCII(e.method, method) && matchPath(e.path, path) {
			return i
		}
	}
	return -1
}

// matchPath reports whether path matches template. Both are split into
// segments at '/' after their leading '/' (path must have one); they
// match when they have as many segments and each pair matches: a
// {name} segment of the template matches any one non-empty segment,
// another segment only itself. So "/v1/items/{id}" matches
// "/v1/items/42" but not "/v1/items/", "/v1/items/42/" or
// "/v1/items/4/2", and "/v1" does not match "/v1/".
//
// The middleware matches r.URL.Path: percent-decoded ("/v1/items/a%2Fb"
// is "/v1/items/a/b", four segments), without the query, and neither
// cleaned nor unescaped further (a trailing slash and empty segments
// count). The template is compared as written, so a template segment
// with a %XX escape matches only a path that holds those three
// characters after decoding.
func matchPath(template, path string) bool {
	if path == "" || path[0] != '/' {
		return false
	}
	template, path = strings.TrimPrefix(template, "/"), path[1:]
	for {
		seg, moreTemplate, tmore := strings.Cut(template, "/")
		s, morePath, pmore := strings.Cut(path, "/")
		if len(seg) >= 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
			if s == "" {
				return false
			}
		} else if s != seg {
			return false
		}
		if !tmore || !pmore {
			return tmore == pmore
		}
		template, path = moreTemplate, morePath
	}
}

// equalFoldASCII reports whether a and b are equal when ASCII letters are
// folded to lower case (and no other byte is).
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// clientKey identifies r's client for l: its API key or account header
// ("" when the request has none), or its IP address; "global" for the
// global limit.
func clientKey(l *limit, r *http.Request) string {
	switch l.key {
	case "global":
		return "global"
	case "api_key":
		if v := r.Header.Get(apiKeyHeader); v != "" {
			return "key:" + v
		}
		return ""
	case "account":
		if v := r.Header.Get(accountHeader); v != "" {
			return "account:" + v
		}
		return ""
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "ip:" + host
}

// Metrics. The alerting rules ratelab exports for this target
// (ratelab export -target prometheus -gateway {{.Target}}) watch two
// counters: {{.DecisionsMetric}}{limit, decision} and
// {{.StoreErrorsMetric}}{limit}. Count them by setting these hooks, for
// example with github.com/prometheus/client_golang:
//
//	decisions := promauto.NewCounterVec(prometheus.CounterOpts{Name: "{{.DecisionsMetric}}"}, []string{"limit", "decision"})
//	storeErrors := promauto.NewCounterVec(prometheus.CounterOpts{Name: "{{.StoreErrorsMetric}}"}, []string{"limit"})
//	ratelimit.OnDecision = func(limit, decision string) { decisions.WithLabelValues(limit, decision).Inc() }
//	ratelimit.OnStoreError = func(limit string) { storeErrors.WithLabelValues(limit).Inc() }
var (
	// OnDecision is called for every limit a request was checked
	// against, with the limit's name and "{{.Allowed}}", "{{.Rejected}}" or
	// "{{.ShadowRejected}}" (shadow mode).
	OnDecision = func(limit, decision string) {}
	// OnStoreError is called, for each limit of the request, when the
	// limiter's store fails.
	OnStoreError = func(limit string) {}
)

// Middleware enforces the policy in front of next.
func (lim *Limiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ls, keys, cost := route(r)
		if len(ls) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		ds, err := lim.check(r.Context(), ls, keys, cost)
		if err != nil {
			for _, l := range ls {
				OnStoreError(l.name)
			}
			if failClosed {
				log.Printf("ratelimit: store failed, rejecting (fail_closed): %v", err)
				w.Header().Set("Retry-After", "1")
				writeProblem(w, http.StatusServiceUnavailable, "The rate limiter is unavailable; retry after 1 s.")
				return
			}
			log.Printf("ratelimit: store failed, letting the request through (fail_open): %v", err)
			next.ServeHTTP(w, r)
			return
		}
		var binding, rejected *decision
		var delay time.Duration
		for i := range ds {
			d := &ds[i]
			switch {
			case d.allowed:
				OnDecision(d.limit.name, "{{.Allowed}}")
			case shadowMode:
				OnDecision(d.limit.name, "{{.ShadowRejected}}")
			default:
				OnDecision(d.limit.name, "{{.Rejected}}")
			}
			// The rejection that lasts longest says when to retry: only
			// then does every limit admit the request (-1: never).
			if !d.allowed && (rejected == nil || rejected.retryAfter >= 0 && (d.retryAfter < 0 || d.retryAfter > rejected.retryAfter)) {
				rejected = d
			}
			if binding == nil || d.remaining < binding.remaining {
				binding = d
			}
			delay = max(delay, d.delay)
		}
		if rejected != nil {
			binding = rejected
		}
		if binding == nil {
			next.ServeHTTP(w, r)
			return
		}
		writeHeaders(w.Header(), ls, binding)
		if rejected != nil {
			if shadowMode {
				log.Printf("ratelimit: shadow: would reject %s %s (limit %s, client %s)", r.Method, r.URL.Path, rejected.limit.field, keys[slices.Index(ls, rejected.limit)])
				next.ServeHTTP(w, r)
				return
			}
			if sendRetryAfter && rejected.retryAfter >= 0 {
				w.Header().Set("Retry-After", strconv.FormatInt(retrySeconds(rejected.retryAfter), 10))
			}
			writeProblem(w, rejectStatus, rejected.limit.detail)
			return
		}
		if delay > 0 {
			if shadowMode {
				log.Printf("ratelimit: shadow: would delay %s %s by %v", r.Method, r.URL.Path, delay)
			} else {
				t := time.NewTimer(delay)
				select {
				case <-t.C:
				case <-r.Context().Done():
					t.Stop()
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// problem is the body of a rejection: RFC 9457 problem details. Type
// about:blank says the status is the problem; title is its reason phrase.
type problem struct {
	Type   string ` + "`json:\"type\"`" + `
	Title  string ` + "`json:\"title\"`" + `
	Status int    ` + "`json:\"status\"`" + `
	Detail string ` + "`json:\"detail\"`" + `
}

// writeProblem answers status with problem details saying detail, as
// application/problem+json; the headers set before it are sent too.
func writeProblem(w http.ResponseWriter, status int, detail string) {
	title := http.StatusText(status)
	if title == "" {
		title = "Rate limit exceeded"
	}
	body, _ := json.Marshal(problem{Type: "about:blank", Title: title, Status: status, Detail: detail})
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/problem+json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// writeHeaders sets the policy's header styles from the binding decision:
// the rejecting one that lasts longest, else the one with the least
// remaining. RateLimit's t is the seconds until more quota, rounded up (0
// when rested); a rejection's is its Retry-After (or, when it can never
// pass, the seconds until the client is rested).
func writeHeaders(h http.Header, ls []*limit, d *decision) {
	t := seconds(d.more)
	switch {
	case !d.allowed && d.retryAfter >= 0:
		t = retrySeconds(d.retryAfter)
	case !d.allowed:
		t = seconds(d.reset)
	}
	if headersIETF {
		policies := make([]string, len(ls))
		for i, l := range ls {
			policies[i] = strconv.Quote(l.name) + ";q=" + strconv.FormatInt(l.quota, 10) + ";w=" + strconv.FormatInt(l.window, 10)
		}
		h.Set("RateLimit-Policy", strings.Join(policies, ", "))
		h.Set("RateLimit", strconv.Quote(d.limit.name)+";r="+strconv.FormatInt(d.remaining, 10)+";t="+strconv.FormatInt(t, 10))
	}
	if headersLegacy {
		h.Set("RateLimit-Limit", strconv.FormatInt(d.limit.quota, 10))
		h.Set("RateLimit-Remaining", strconv.FormatInt(d.remaining, 10))
		h.Set("RateLimit-Reset", strconv.FormatInt(seconds(d.reset), 10))
	}
	if headersX {
		h.Set("X-RateLimit-Limit", strconv.FormatInt(d.limit.quota, 10))
		h.Set("X-RateLimit-Remaining", strconv.FormatInt(d.remaining, 10))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(seconds(d.reset), 10))
	}
}

// seconds is d in whole seconds, rounded up.
func seconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

// retrySeconds is a rejection's wait in whole seconds, rounded up and at
// least 1: "Retry-After: 0" invites a retry that fails again.
func retrySeconds(d time.Duration) int64 { return max(1, seconds(d)) }

{{.Body}}
`))

// ResponseMapping is the mapping of defaults.response in every generated
// middleware: the policy's status, header styles and Retry-After, sent as
// they are.
func ResponseMapping(p policy.Policy) export.Mapping {
	r := p.Defaults.Response
	status, retry := r.Code(), r.SendsRetryAfter()
	var names []string
	for _, s := range r.Styles() {
		names = append(names, string(s))
	}
	return export.Mapping{Field: "defaults.response", From: fmt.Sprintf("status %d, headers [%s], retry_after %t", status, strings.Join(names, ", "), retry),
		To:       fmt.Sprintf("rejectStatus = %d, headers %s, sendRetryAfter = %t", status, strings.Join(names, "+"), retry),
		Fidelity: export.Exact,
		Why:      "the middleware sets the headers from the binding limit's decision (the rejecting limit that waits longest, else the one with the least remaining): RateLimit's t is the seconds until more quota, Retry-After the longest wait of the rejecting limits (at least 1), reset the seconds until rested, all rounded up; a request without its key header passes only the global limit"}
}
