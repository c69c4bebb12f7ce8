// Package policy owns the policy file of DESIGN.md §6: a versioned YAML
// document (apiVersion ratelab/v1, kind RateLimitPolicy) that says how a
// service is rate limited — who is keyed how, each tier's and endpoint's
// limit, the global limit, the response a rejected client gets — together
// with the calculator inputs the limits were sized from. The designer
// exports it, imports it without loss, and the command line lints it.
//
// The package holds the model ([Policy]), its strict YAML codec ([Decode],
// [Encode]), its limits as one flat list ([Policy.Limits]), the
// calculator input it was sized from ([Policy.Design]) and the lint
// ([Lint]). One vocabulary with calc, the
// JSON API and the UI: rate, burst, queue, limit, window, capacity,
// headroom, p99, margin… Durations in the file are Go duration strings
// ("60s", "1m30s", "500ms"); rates are requests per second.
//
// Decoding is strict: an unknown field, a value of the wrong type, a bad
// duration, a duplicate name or an algorithm that does not exist is an
// [Error] with the line and column, the field's path
// ("tiers[1].limit.burst") and, where one helps, a hint ("did you mean
// `burst`?"). Every value is checked against the ranges of packages
// algorithms and calc. Decode refuses documents over [MaxSize], nested
// deeper than [MaxDepth], or whose aliases would expand past
// [MaxExpandedNodes] nodes, before doing any work proportional to them.
package policy

import (
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// The document's version and kind.
const (
	APIVersion = "ratelab/v1"
	Kind       = "RateLimitPolicy"
)

// Policy is one policy document. A zero field takes the default its
// documentation names, and the encoder leaves it out; the pointer fields
// are those where 0 (or false) differs from the default.
//
// Limits are algorithms.Spec values in the file's vocabulary: algorithm,
// rate (requests/s), burst, queue, limit (requests per window), window (a
// duration). A zero Spec (no algorithm) is "no limit here".
type Policy struct {
	APIVersion string   // must be APIVersion
	Kind       string   // must be Kind
	Metadata   Metadata // name is required
	Service    Service
	Defaults   Defaults
	// Sizing holds the calculator inputs that the rest of the document
	// does not express, so that a design survives the round trip.
	Sizing    Sizing
	Tiers     []Tier
	Endpoints []Endpoint
	Global    Global

	// pos is where each field was in the decoded YAML, by path
	// ("tiers[1].limit.burst"); nil for a policy built in code.
	pos map[string]Pos
}

// Metadata names the policy.
type Metadata struct {
	Name        string // required, 1 to 128 characters
	Description string
}

// Service is the service behind the limits.
type Service struct {
	// Capacity is the measured ceiling in requests/s. Required.
	Capacity float64
	// Headroom is the fraction of Capacity kept free; nil means 0.2.
	Headroom *float64
	// Replicas enforcing the limits; 0 means 1.
	Replicas int
	// Enforcement is shared (one store, the default) or local.
	Enforcement calc.Enforcement
	// OnStoreFailure is what a shared store's outage does: fail_open
	// (the default) or fail_closed.
	OnStoreFailure StoreFailure
}

// Enforcing is Enforcement, or shared when unset.
func (s Service) Enforcing() calc.Enforcement {
	if s.Enforcement == "" {
		return calc.Shared
	}
	return s.Enforcement
}

// StoreFailureMode is OnStoreFailure, or fail_open when unset.
func (s Service) StoreFailureMode() StoreFailure {
	if s.OnStoreFailure == "" {
		return FailOpen
	}
	return s.OnStoreFailure
}

// StoreFailure is what happens when the shared store is unreachable.
type StoreFailure string

// Store failure modes.
const (
	FailOpen   StoreFailure = "fail_open"
	FailClosed StoreFailure = "fail_closed"
)

// Key is what identifies a client.
type Key string

// Keys.
const (
	KeyIP      Key = "ip"
	KeyAPIKey  Key = "api_key"
	KeyAccount Key = "account"
	KeyGlobal  Key = "global"
)

// Mode says whether limits are enforced or only logged.
type Mode string

// Modes: shadow logs what would be rejected and rejects nothing.
const (
	ModeEnforce Mode = "enforce"
	ModeShadow  Mode = "shadow"
)

// HeaderStyle is a family of rate-limit response headers (DESIGN.md §5).
type HeaderStyle string

// Header styles: the IETF draft's RateLimit and RateLimit-Policy, the older
// RateLimit-Limit/-Remaining/-Reset, and the X-RateLimit-* spellings.
const (
	HeadersIETF   HeaderStyle = "ietf"
	HeadersLegacy HeaderStyle = "legacy"
	HeadersX      HeaderStyle = "x"
)

// Defaults apply to every client unless a tier says otherwise.
type Defaults struct {
	// Key identifies a client; "" means api_key.
	Key Key
	// Mode is enforce (the default) or shadow.
	Mode     Mode
	Response Response
	// Limit is the per-client limit of clients in no tier; tier
	// multipliers scale it.
	Limit algorithms.Spec
}

// EffectiveMode is Mode, or enforce when unset.
func (d Defaults) EffectiveMode() Mode {
	if d.Mode == "" {
		return ModeEnforce
	}
	return d.Mode
}

// Response is what a rejected client receives.
type Response struct {
	// Status is 0 (meaning 429) or an HTTP status in [400, 599].
	Status int
	// Headers are the header styles sent; nil means [ietf].
	Headers []HeaderStyle
	// RetryAfter says whether Retry-After is sent; nil means true.
	RetryAfter *bool
}

// Code is the status a rejected client gets: Status, or 429 when unset.
func (r Response) Code() int {
	if r.Status == 0 {
		return 429
	}
	return r.Status
}

// Styles are the header styles sent: Headers, or [ietf] when nil.
func (r Response) Styles() []HeaderStyle {
	if r.Headers == nil {
		return []HeaderStyle{HeadersIETF}
	}
	return r.Headers
}

// SendsRetryAfter reports whether Retry-After is sent: RetryAfter, or true
// when unset.
func (r Response) SendsRetryAfter() bool { return r.RetryAfter == nil || *r.RetryAfter }

// Sizing is what the calculator needs beyond the rest of the document:
// calc.Input's fields, with its defaults and ranges, durations as
// time.Duration. The designer's design is Service + Sizing + the tiers'
// clients and multipliers + the endpoints' costs.
type Sizing struct {
	Clients        int
	P50, P95, P99  float64
	PercentileUnit calc.PercentileUnit
	Margin         float64
	Peak           float64
	PeakSeconds    float64
	Window         time.Duration
	MaxDelay       *time.Duration
	Retry          Retry
}

// Retry is calc.Retry with durations: its exponential backoff, and how
// jitter draws each wait from it (JitterMode, one of calc.JitterModes, ""
// meaning proportional; Jitter is the proportional mode's fraction, which
// the other modes ignore).
type Retry struct {
	Base       time.Duration
	Factor     float64
	Cap        time.Duration
	Attempts   int
	Jitter     *float64
	JitterMode string
}

// Tier is a class of clients with its own limit.
type Tier struct {
	Name string // required, unique
	// Key overrides Defaults.Key for the tier.
	Key Key
	// Clients and Multiplier are the calculator's tier inputs.
	Clients    int
	Multiplier float64
	// Limit is the tier's per-client limit; zero means the default limit.
	Limit algorithms.Spec
}

// Endpoint is a route with a cost in tokens and, optionally, its own limit.
type Endpoint struct {
	Match Match
	// Cost is the tokens one request takes; 0 means 1.
	Cost  int64
	Limit algorithms.Spec
}

// Match selects requests by method and path.
type Match struct {
	Method string
	Path   string
}

// Global is the limit on the whole service, all clients together.
type Global struct {
	Limit algorithms.Spec
}

// Pos is a place in a YAML document, 1-based.
type Pos struct {
	Line, Column int
}

// Pos is where the field at path (as in Error.Field) was in the decoded
// document, or of its nearest enclosing field that was; ok is false for a
// policy not decoded from YAML.
func (p Policy) Pos(path string) (Pos, bool) {
	for path != "" {
		if at, ok := p.pos[path]; ok {
			return at, true
		}
		path = parent(path)
	}
	return Pos{}, false
}

// parent is the path of the field enclosing path: "tiers[1].limit" for
// "tiers[1].limit.burst", "tiers[1]" for "tiers[1].limit", "tiers" for
// "tiers[1]".
func parent(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		switch path[i] {
		case '.':
			return path[:i]
		case '[':
			return path[:i]
		}
	}
	return ""
}
