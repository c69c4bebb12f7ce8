// Package export turns one policy (package policy) into configuration for a
// real gateway or library, and says how faithfully that target enforces it.
//
// A target (nginx, Envoy, Traefik, Kong, HAProxy, Redis, Go libraries, and
// the operations and documentation artefacts) lives in its own package under
// export/ and is a [Target]: a name, a file name and a Render function. Its
// [Export] carries the file and, for every limit of the policy, a [Mapping]:
// the policy's parameters, the target's parameters, and a [Fidelity] —
// exact, approximate (with the reason: integer rates, a window instead of a
// bucket, rejected requests counted, discrete refill…) or not expressible.
// The export's fidelity is the worst of its mappings.
//
// This package holds what every target shares: the policy's limits in one
// flat list with their scope, key and match (policy.Policy.Limits), the request
// conventions a gateway needs to tell clients and tiers apart ([Options]),
// and the conversions between the algorithm families (a bucket as a window,
// a window as a bucket, a limit divided over local replicas).
package export

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/policy"
)

// Fidelity says how faithfully a target enforces a limit.
type Fidelity string

// Fidelities, from best to worst.
const (
	// Exact: the target admits exactly what the policy's algorithm admits
	// (up to the target's clock resolution).
	Exact Fidelity = "exact"
	// Approximate: the target enforces the same long-run rate but differs
	// in a way the mapping's Why states.
	Approximate Fidelity = "approximate"
	// NotExpressible: the target cannot enforce this at all; the export
	// leaves it out (or enforces something else) and says so.
	NotExpressible Fidelity = "not_expressible"
)

// Fidelities lists every fidelity, best first.
var Fidelities = []Fidelity{Exact, Approximate, NotExpressible}

// rank orders fidelities from best (0) to worst.
func (f Fidelity) rank() int { return slices.Index(Fidelities, f) }

// Worst is the worse of f and g.
func Worst(f, g Fidelity) Fidelity {
	if g.rank() > f.rank() {
		return g
	}
	return f
}

// Mapping is how one part of the policy — a limit, the shadow mode, the
// response — lands in the target.
type Mapping struct {
	// Field is the policy's path: "tiers[1].limit", "global.limit",
	// "defaults.mode".
	Field string `json:"field"`
	// From is the policy's value: "token_bucket(rate=10/s, burst=20)".
	From string `json:"from"`
	// To is the target's parameters: "rate=10r/s burst=19 nodelay".
	To string `json:"to"`
	// Fidelity says how faithful To is to From.
	Fidelity Fidelity `json:"fidelity"`
	// Why explains an approximate or inexpressible mapping, and any
	// parameter that differs from the policy's (burst = capacity − 1).
	Why string `json:"why,omitempty"`
}

// Export is one target's rendering of a policy.
type Export struct {
	// Target is the target's name.
	Target string `json:"target"`
	// Filename is what the download is called: "nginx.conf".
	Filename string `json:"filename"`
	// MediaType is the file's type: "text/plain; charset=utf-8",
	// "application/yaml".
	MediaType string `json:"media_type"`
	// Body is the file.
	Body []byte `json:"-"`
	// Fidelity is the worst of the mappings' fidelities.
	Fidelity Fidelity `json:"fidelity"`
	// Mappings says where each part of the policy went.
	Mappings []Mapping `json:"mappings"`
	// Notes are what the user must know to deploy it: where the file
	// goes, what it assumes, how to check it ("nginx -t").
	Notes []string `json:"notes,omitempty"`
}

// Add appends a mapping and lowers the export's fidelity to it.
func (e *Export) Add(m Mapping) {
	if e.Fidelity == "" {
		e.Fidelity = Exact
	}
	e.Mappings = append(e.Mappings, m)
	e.Fidelity = Worst(e.Fidelity, m.Fidelity)
}

// Target is one export target.
type Target struct {
	// Name is the URL and command-line name: "nginx", "envoy-local".
	Name string
	// Title is what the designer shows: "nginx limit_req".
	Title string
	// Group places it in the designer: gateways, libraries, operations,
	// docs.
	Group Group
	// Render renders a policy. The policy has passed policy.Validate;
	// Render returns an error only for a policy the target cannot render
	// at all (an *Error), never for a limit it can only approximate.
	Render func(p policy.Policy, o Options) (Export, error)
}

// Group is a class of targets.
type Group string

// Groups, in the designer's order.
const (
	Gateways   Group = "gateways"
	Libraries  Group = "libraries"
	Operations Group = "operations"
	Docs       Group = "docs"
)

// Error is a policy a target cannot render at all, or a policy or option
// that cannot be exported safely.
type Error struct {
	Target string
	// Field is the policy path or option at fault ("tiers[1].name",
	// "upstream"), "" when the policy as a whole is.
	Field  string
	Reason string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Target + ": " + e.Field + ": " + e.Reason
	}
	return e.Target + ": " + e.Reason
}

// Options are the request conventions a gateway needs and the policy does
// not say: which headers carry the client's API key, account and tier, and
// where the protected service listens. The zero Options means the
// defaults of [DefaultOptions].
type Options struct {
	// APIKeyHeader carries the client's API key (key: api_key).
	APIKeyHeader string
	// AccountHeader carries the authenticated account id (key: account),
	// set by the authentication layer in front of the limiter.
	AccountHeader string
	// TierHeader carries the client's tier name, set by the
	// authentication layer; a request without it gets the default limit.
	TierHeader string
	// Upstream is the protected service's address (host:port).
	Upstream string
	// Listen is the address the gateway listens on (host:port or port).
	Listen string
	// Gateway is the target whose metrics the operations exports
	// (Prometheus rules) watch: a gateway target's name; "" means nginx.
	Gateway string
}

// DefaultOptions are the conventions exports use unless told otherwise.
var DefaultOptions = Options{
	APIKeyHeader:  "X-API-Key",
	AccountHeader: "X-Account-ID",
	TierHeader:    "X-Tier",
	Upstream:      "127.0.0.1:8081",
	Listen:        "8080",
}

// WithDefaults fills o's empty fields from DefaultOptions.
func (o Options) WithDefaults() Options {
	d := DefaultOptions
	if o.APIKeyHeader == "" {
		o.APIKeyHeader = d.APIKeyHeader
	}
	if o.AccountHeader == "" {
		o.AccountHeader = d.AccountHeader
	}
	if o.TierHeader == "" {
		o.TierHeader = d.TierHeader
	}
	if o.Upstream == "" {
		o.Upstream = d.Upstream
	}
	if o.Listen == "" {
		o.Listen = d.Listen
	}
	return o
}

// KeyHeader is the header that carries key k, or "" for ip and global.
func (o Options) KeyHeader(k policy.Key) string {
	o = o.WithDefaults()
	switch k {
	case policy.KeyAPIKey:
		return o.APIKeyHeader
	case policy.KeyAccount:
		return o.AccountHeader
	}
	return ""
}

// Costs are the endpoints' costs greater than 1, by match, in policy order.
func Costs(p policy.Policy) []policy.Endpoint {
	var out []policy.Endpoint
	for _, e := range p.Endpoints {
		if e.Cost > 1 {
			out = append(out, e)
		}
	}
	return out
}

// Bucket is a limit as a token bucket: a long-run rate in requests per
// second and a capacity. For token_bucket and gcra it is the limit itself
// (exact: both admit the same, [algorithms] proves it); for leaky_bucket
// it is the meter with the queue's capacity (the target rejects where the
// policy delays); for the windows it is rate = limit/window and burst =
// limit, the same long-run rate and the same largest instant burst, but a
// smoother refill than a window's reset. Why says what differs, "" when
// nothing does.
func Bucket(s algorithms.Spec) (rate float64, burst int64, why string) {
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		return s.Rate, s.Burst, ""
	case algorithms.NameLeakyBucket:
		return s.Rate, s.Queue + 1, fmt.Sprintf("a leaky bucket queue delays requests beyond the rate; as a token bucket (rate %s/s, burst %d = queue + 1) the target rejects them instead of delaying", num(s.Rate), s.Queue+1)
	default:
		r := float64(s.Limit) / s.Window.Seconds()
		return r, s.Limit, fmt.Sprintf("a %s of %d per %s enforced as a token bucket of rate %s/s and burst %d: the same long-run rate and largest burst, but tokens return continuously instead of at the window's edge, so in any span of t seconds it admits at most %d + %s·t requests of cost 1 (L + L·t/W), where %s", s.Algorithm, s.Limit, s.Window, num(r), s.Limit, s.Limit, num(r), windowAdmits(s.Algorithm))
	}
}

// windowAdmits says what a window algorithm admits at most, for the
// comparison with a bucket.
func windowAdmits(a algorithms.Name) string {
	switch a {
	case algorithms.NameSlidingLog:
		return "the log admits at most L in any span up to W: a burst after a quiet spell gets up to L·t/W more"
	case algorithms.NameFixedWindow:
		return "the fixed window admits up to 2L in a span just across its edge and at most L in one window"
	}
	return "the sliding window's estimate admits about L per W, the previous window weighing on the current one"
}

// Window is a limit as a window of whole requests: limit per window. For
// the windows it is the limit itself; for the buckets it is burst per
// burst/rate, which keeps the long-run rate and the largest burst but
// admits up to twice the burst across a fixed window's edge. Why says what
// differs, "" when nothing does.
func Window(s algorithms.Spec) (limit int64, window float64, why string) {
	switch s.Algorithm {
	case algorithms.NameFixedWindow, algorithms.NameSlidingLog, algorithms.NameSlidingWindow:
		return s.Limit, s.Window.Seconds(), ""
	}
	r, b, _ := Bucket(s)
	w := float64(b) / r
	return b, w, fmt.Sprintf("a %s enforced as %d requests per %ss window: the same long-run rate and burst, but a window refills all at once at its end instead of one token every %ss", s.Algorithm, b, num(w), num(1/r))
}

// PerInstance is the limit each of the policy's replicas must enforce
// when the target keeps its counters in each instance (nginx, HAProxy,
// Envoy's local filter, Traefik without Redis) while the policy wants one
// shared limit: rate, burst, queue and window limits divided by the
// replica count, rounded up and never below 1. It is exact only when the
// balancer spreads every client's requests evenly over the replicas; Why
// says so, and is "" when there is one replica or the policy enforces
// locally anyway.
func PerInstance(p policy.Policy, s algorithms.Spec) (algorithms.Spec, string) {
	n := p.Service.Replicas
	if n <= 1 || p.Service.Enforcement == calc.Local {
		return s, ""
	}
	div := func(v int64) int64 { return max(1, (v+int64(n)-1)/int64(n)) }
	out := s
	out.Rate = s.Rate / float64(n)
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		out.Burst = div(s.Burst)
	case algorithms.NameLeakyBucket:
		out.Queue = max(0, (s.Queue+int64(n)-1)/int64(n))
	default:
		out.Limit = div(s.Limit)
	}
	return out, fmt.Sprintf("the target counts in each of the %d replicas, so each enforces 1/%d of the shared limit (%s): exact only when the balancer spreads each client's requests evenly", n, n, out)
}

// InstanceEnforcement maps service.enforcement for a target that counts in
// each of its instances ("nginx", "HAProxy"), as PerInstance divides the
// limits: a shared limit over several replicas is divided among them
// (approximate; sharedWhy says why the instances cannot share), a local
// one is whole in each (localWhy), and one replica is exact.
func InstanceEnforcement(p policy.Policy, instance, sharedWhy, localWhy string) Mapping {
	n, enf := max(1, p.Service.Replicas), p.Service.Enforcing()
	m := Mapping{Field: "service.enforcement", From: fmt.Sprintf("%s, replicas=%d", enf, n), Fidelity: Exact}
	switch {
	case n > 1 && enf != calc.Local:
		m.To, m.Fidelity = fmt.Sprintf("each of %d %s instances enforces 1/%d of every limit", n, instance, n), Approximate
		m.Why = sharedWhy
	case n > 1:
		m.To = fmt.Sprintf("each %s instance enforces the whole limit", instance)
		m.Why = localWhy
	default:
		m.To = fmt.Sprintf("one %s instance enforces the whole limit", instance)
	}
	return m
}

// num formats a float the shortest way that reads back the same.
func num(f float64) string { return fmt.Sprint(f) }

// Check reports what keeps p and o from being written safely into a
// gateway's configuration, as an *Error naming the field, the value and
// what is allowed: the first of the policy's own text that no target may
// carry (policy.Policy.ExportErrors: metadata.name and
// metadata.description without control characters or line breaks, tier
// names and endpoint paths of characters that need no quoting), then the
// options, held to the same rule: header names are RFC 9110 tokens of
// letters, digits and '-'; Upstream is host:port; Listen is a port or
// host:port; Gateway is a target's name or empty.
func Check(p policy.Policy, o Options) error {
	if errs := p.ExportErrors(); len(errs) > 0 {
		return &Error{Target: "export", Field: errs[0].Field, Reason: errs[0].Message}
	}
	bad := func(field, value, want string) error {
		return &Error{Target: "export", Field: field, Reason: fmt.Sprintf("%q cannot be exported; want %s", value, want)}
	}
	o = o.WithDefaults()
	for _, h := range []struct{ field, v string }{
		{"api_key_header", o.APIKeyHeader}, {"account_header", o.AccountHeader}, {"tier_header", o.TierHeader},
	} {
		if !headerName(h.v) {
			return bad(h.field, h.v, "a header name of letters, digits and '-' (at most 64)")
		}
	}
	if !hostPort(o.Upstream, true) {
		return bad("upstream", o.Upstream, "host:port, e.g. 127.0.0.1:8081 or api.internal:8080")
	}
	if !hostPort(o.Listen, false) {
		return bad("listen", o.Listen, "a port (8080) or host:port (127.0.0.1:8080)")
	}
	if !targetName(o.Gateway) {
		return bad("gateway", o.Gateway, "a target's name of lowercase letters, digits and '-' (at most 32), or empty")
	}
	return nil
}

// targetName reports whether s can be a target's name: "" or at most 32
// lowercase letters, digits and '-'. The target that reads the option
// checks it is one it knows.
func targetName(s string) bool {
	if len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func headerName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// hostPort reports whether s is host:port (or only a port when
// needHost is false) with a DNS name, IPv4 or bracketed IPv6 host and a
// port in [1, 65535].
func hostPort(s string, needHost bool) bool {
	host, port := "", s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
	} else if needHost {
		return false
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return false
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 && host == "" {
		return false
	}
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return false
		}
		ip, err := netip.ParseAddr(host[1 : len(host)-1])
		return err == nil && ip.Is6()
	}
	if len(host) > 253 {
		return false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
