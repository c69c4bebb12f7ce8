// Package apidocs exports a policy as documentation for the API's
// consumers: an OpenAPI 3.1 fragment describing the rejected response and
// its headers ([OpenAPI]), and a Markdown section that tells a client
// developer each limit in plain words, what the headers mean, and how to
// retry ([Markdown]).
//
// Both describe the policy rather than enforce it, so every limit maps
// exactly. The words for a limit ([Phrase]) are the consumer's view of the
// algorithm: a bucket is "up to b requests at once, then r per second", a
// sliding window "L per W, sliding", a leaky bucket's queue a steady pace
// with a short wait. Shadow mode is not named to consumers: the docs say
// the limits are being introduced.
package apidocs

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// Phrase is limit s in the words of an API consumer:
//
//	token_bucket, gcra  "up to 50 requests at once, then 5 per second"
//	leaky_bucket        "2.5 per second, evenly spaced; up to 5 more wait their turn (at most 2 seconds of delay)"
//	fixed_window        "1000 per hour, fixed window (the count restarts every hour)"
//	sliding_log         "no more than 30 in any 10 seconds"
//	sliding_window      "600 per minute, sliding"
//
// Rates of at least 1/s are per second; slower ones per minute, hour or
// day when that makes them whole (0.5/s is "30 per minute"), else "1 every
// N seconds".
func Phrase(s algorithms.Spec) string {
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		return fmt.Sprintf("up to %s at once, then %s", requests(s.Burst), Rate(s.Rate))
	case algorithms.NameLeakyBucket:
		if s.Queue == 0 {
			return Rate(s.Rate) + ", evenly spaced; requests arriving faster are rejected"
		}
		return fmt.Sprintf("%s, evenly spaced; up to %d more wait their turn (at most %s of delay)",
			Rate(s.Rate), s.Queue, seconds(float64(s.Queue)/s.Rate))
	case algorithms.NameFixedWindow:
		return fmt.Sprintf("%d per %s, fixed window (the count restarts every %s)", s.Limit, Window(s.Window), Window(s.Window))
	case algorithms.NameSlidingLog:
		return fmt.Sprintf("no more than %d in any %s", s.Limit, Window(s.Window))
	case algorithms.NameSlidingWindow:
		return fmt.Sprintf("%d per %s, sliding", s.Limit, Window(s.Window))
	}
	return s.String()
}

// Rate is r requests per second in words: "5 per second", "2.5 per
// second", "30 per minute", "1 every 7 seconds" (to the millisecond).
func Rate(r float64) string {
	if r >= 1 {
		return strconv.FormatFloat(math.Round(r*1000)/1000, 'f', -1, 64) + " per second"
	}
	for _, u := range []struct {
		per  float64
		name string
	}{{60, "minute"}, {3600, "hour"}, {86400, "day"}} {
		if n := r * u.per; n >= 1 && whole(n) {
			return strconv.FormatFloat(math.Round(n), 'f', -1, 64) + " per " + u.name
		}
	}
	return "1 every " + seconds(1/r)
}

// Window is a window's length in words: "second", "10 seconds", "minute",
// "2 hours", "day", "1.5 seconds".
func Window(w time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if w%u.d == 0 {
			if n := int64(w / u.d); n != 1 {
				return fmt.Sprintf("%d %ss", n, u.name)
			}
			return u.name
		}
	}
	return seconds(w.Seconds())
}

// whole reports whether f is an integer up to float rounding.
func whole(f float64) bool { return math.Abs(f-math.Round(f)) < 1e-9*math.Max(1, f) }

// seconds is s seconds in words, to the millisecond: "2 seconds", "1 second", "0.4 seconds".
func seconds(s float64) string {
	v := math.Round(s*1000) / 1000
	if v == 1 {
		return "1 second"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " seconds"
}

// requests is "1 request" or "n requests".
func requests(n int64) string {
	if n == 1 {
		return "1 request"
	}
	return strconv.FormatInt(n, 10) + " requests"
}

// AppliesTo says whom limit l applies to, for a consumer.
func AppliesTo(l policy.Limit) string {
	switch l.Scope {
	case policy.ScopeTier:
		return l.Tier + " tier"
	case policy.ScopeEndpoint:
		return "`" + l.Match.Method + " " + l.Match.Path + "`"
	case policy.ScopeGlobal:
		return "All clients together"
	}
	return "Default"
}

// CountedPer says what one limit counts for, for a consumer.
func CountedPer(k policy.Key) string {
	switch k {
	case policy.KeyIP:
		return "IP address"
	case policy.KeyAccount:
		return "account"
	case policy.KeyGlobal:
		return "the whole API"
	}
	return "API key"
}

// example is the rejected response of the policy's first limit, with the
// numbers of calc.HeadersAt: a rested client that used its allowance at
// calc.DefaultMoment and sent one more.
func example(p policy.Policy) (policy.Limit, calc.Response, error) {
	limits := p.Limits()
	if len(limits) == 0 {
		return policy.Limit{Field: "defaults.limit"}, calc.Response{}, errors.New("the policy has no limit: there is nothing to document")
	}
	l := limits[0]
	ex, err := calc.HeadersAt(l.Spec, calc.DefaultMoment(l.Spec))
	if err != nil {
		return l, calc.Response{}, err
	}
	return l, ex.Rejected, nil
}

// sent filters h to the forms the policy sends.
func sent(p policy.Policy, h []calc.Header) []calc.Header {
	on := map[calc.HeaderForm]bool{calc.FormRetryAfter: p.Defaults.Response.SendsRetryAfter()}
	for _, s := range p.Defaults.Response.Styles() {
		on[calc.HeaderForm(s)] = true
	}
	var out []calc.Header
	for _, x := range h {
		if on[x.Form] {
			out = append(out, x)
		}
	}
	return out
}

// retry is the client's backoff: the policy's sizing.retry, or calc's
// defaults when it sets none; ok says the policy set it.
func retry(p policy.Policy) (calc.Retry, bool) {
	r := p.Sizing.Retry
	set := r.Base != 0 || r.Factor != 0 || r.Cap != 0 || r.Attempts != 0 || r.Jitter != nil || r.JitterMode != ""
	return calc.Retry{Base: r.Base.Seconds(), Factor: r.Factor, Cap: r.Cap.Seconds(), Attempts: r.Attempts, Jitter: r.Jitter, JitterMode: r.JitterMode}, set
}

// limitMappings adds the exact mapping of every limit, documented as to.
func limitMappings(e *export.Export, p policy.Policy, to func(i int, l policy.Limit) string) {
	for i, l := range p.Limits() {
		e.Add(export.Mapping{Field: l.Field, From: l.Spec.String(), To: to(i, l), Fidelity: export.Exact,
			Why: "documentation describes the limit; it enforces nothing"})
	}
}

// styleNotes says which header styles are not sent.
func styleNotes(p policy.Policy) []string {
	var out []string
	on := map[policy.HeaderStyle]bool{}
	for _, s := range p.Defaults.Response.Styles() {
		on[s] = true
	}
	names := map[policy.HeaderStyle]string{
		policy.HeadersIETF:   "RateLimit and RateLimit-Policy (ietf)",
		policy.HeadersLegacy: "RateLimit-Limit/-Remaining/-Reset (legacy)",
		policy.HeadersX:      "X-RateLimit-Limit/-Remaining/-Reset (x)",
	}
	for _, s := range []policy.HeaderStyle{policy.HeadersIETF, policy.HeadersLegacy, policy.HeadersX} {
		if !on[s] {
			out = append(out, fmt.Sprintf("Not documented: %s — defaults.response.headers does not send them.", names[s]))
		}
	}
	if !p.Defaults.Response.SendsRetryAfter() {
		out = append(out, "Not documented: Retry-After — defaults.response.retry_after is false.")
	}
	return out
}
