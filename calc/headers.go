package calc

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/headers"
)

// Moment is the situation a header example shows: a rested client sends
// Used requests at once, At seconds into virtual time (window algorithms
// align their windows to 0), then keeps sending until it is rejected.
type Moment struct {
	// Seconds into the run.
	At float64 `json:"at"`
	// Requests the client has sent.
	Used int64 `json:"used"`
}

// DefaultMoment is 70 % into the spec's window (0 for the bucket algorithms)
// with 58 % of the capacity used: for 100 per 60 s, 58 requests at 42 s,
// which leaves r=42 and t=18 as in DESIGN.md §5.
func DefaultMoment(s algorithms.Spec) Moment {
	m := Moment{Used: int64(ceil(0.58 * float64(s.Capacity())))}
	if s.Window > 0 {
		m.At = math.Round(0.7*s.Window.Seconds()*1000) / 1000
	}
	return m
}

// HeaderForm groups the header fields by the convention they follow.
type HeaderForm string

// Header conventions.
const (
	// FormIETF is draft-ietf-httpapi-ratelimit-headers-10: RateLimit-Policy
	// and RateLimit, structured fields.
	FormIETF HeaderForm = "ietf"
	// FormLegacy is the older draft's RateLimit-Limit/-Remaining/-Reset.
	FormLegacy HeaderForm = "legacy"
	// FormX is the X-RateLimit-* spelling still in wide use.
	FormX HeaderForm = "x"
	// FormRetryAfter is Retry-After (RFC 9110) on a 429.
	FormRetryAfter HeaderForm = "retry_after"
)

// HeaderForms are the header conventions, in the order examples list them.
var HeaderForms = []HeaderForm{FormIETF, FormLegacy, FormX, FormRetryAfter}

// Header is one response header field.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// The convention the field follows.
	Form HeaderForm `json:"form"`
}

// Response is one response of a header example with the exact numbers
// behind its headers: Remaining requests, More seconds until more quota (the
// IETF t), Reset seconds until the client is fully rested (the older
// Reset), and, for a rejection, RetryAfter seconds until a request passes.
type Response struct {
	// The HTTP status: 200, or 429 for a rejection.
	Status int `json:"status"`
	// Requests left.
	Remaining int64 `json:"remaining"`
	// Seconds until more quota (the IETF t).
	More float64 `json:"more"`
	// Seconds until the client is fully rested (the older Reset).
	Reset float64 `json:"reset"`
	// Seconds until a request passes (only on a rejection).
	RetryAfter float64  `json:"retry_after,omitempty"`
	Headers    []Header `json:"headers"`
}

// HeaderExample is what a limiter's responses carry at a Moment: the
// response to the client's burst (Allowed) and to the first request it
// sends after using everything (Rejected, a 429).
//
// The numbers come from running the limiter in virtual time.
type HeaderExample struct {
	Algorithm algorithms.Name `json:"algorithm"`
	Moment    Moment          `json:"moment"`
	// The IETF quota policy's name.
	Policy string `json:"policy"`
	// The IETF policy's quota q, in requests.
	Quota int64 `json:"quota"`
	// The IETF policy's window w, in seconds.
	QuotaWindow int64 `json:"quota_window"`
	// The response to the client's burst.
	Allowed Response `json:"allowed"`
	// The response to the first request after the client used everything
	// (a 429).
	Rejected Response `json:"rejected"`
	// What the example shows about the algorithm.
	Note string `json:"note"`
}

// PolicyName is the quota policy's name in the IETF fields.
const PolicyName = "default"

// HeadersAt runs a fresh limiter for s through m and returns the headers of
// the two responses. m.Used must be in [0, capacity] and m.At in
// [0, 366 days].
func HeadersAt(s algorithms.Spec, m Moment) (HeaderExample, error) {
	if err := s.Validate(); err != nil {
		return HeaderExample{}, err
	}
	var v errs
	v.in("at", m.At, 0, MaxWindow, "seconds in [0, 31622400]")
	if m.Used < 0 || m.Used > s.Capacity() {
		v.add("used", strconv.FormatInt(m.Used, 10), fmt.Sprintf("requests in [0, %d] (the capacity of %s)", s.Capacity(), s))
	}
	if err := v.err(); err != nil {
		return HeaderExample{}, err
	}
	at := duration(m.At)
	ex := HeaderExample{Algorithm: s.Algorithm, Moment: m, Policy: PolicyName}
	ex.Quota, ex.QuotaWindow = headers.Quota(s)
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		ex.Note = fmt.Sprintf("q is the burst (%d) and w the time to refill it from empty, ⌈%d/%s⌉ = %d s; the bucket refills continuously, so quota returns before w ends.",
			ex.Quota, ex.Quota, num(s.Rate), ex.QuotaWindow)
	case algorithms.NameLeakyBucket:
		ex.Note = fmt.Sprintf("q is what the queue accepts at once (queue + 1 = %d) and w the time to drain it, ⌈%d/%s⌉ = %d s; it drains continuously, so room returns before w ends.",
			ex.Quota, ex.Quota, num(s.Rate), ex.QuotaWindow)
	default:
		ex.Note = fmt.Sprintf("q is the limit and w the window, %d s.", ex.QuotaWindow)
		if float64(ex.QuotaWindow) != s.Window.Seconds() {
			ex.Note = fmt.Sprintf("q is the limit; w must be whole seconds, so the %s window is published as w=%d.", s.Window, ex.QuotaWindow)
		}
	}

	// The burst, then the rest of the allowance, then one more.
	lim, _ := algorithms.New(s)
	const key = "client"
	first := lim.Allow(key, at, m.Used) // cost 0 only looks
	ex.Allowed = ex.response(first, headers.UntilMore(lim, key, at, first.Remaining))
	if first.Remaining > 0 {
		lim.Allow(key, at, first.Remaining)
	}
	var rej algorithms.Decision
	for range 3 { // a tie at an exact boundary may admit one more
		if rej = lim.Allow(key, at, 1); !rej.Allowed {
			break
		}
	}
	if rej.Allowed {
		return HeaderExample{}, fmt.Errorf("%s never rejected a client that used its whole allowance", s)
	}
	ex.Rejected = ex.response(rej, 0)
	return ex, nil
}

// response builds the headers of one decision; more is the time until
// more quota (unused for a rejection, whose t is its Retry-After).
func (ex *HeaderExample) response(d algorithms.Decision, more time.Duration) Response {
	r := Response{Status: 200, Remaining: d.Remaining, More: more.Seconds(), Reset: d.Reset.Seconds()}
	t, _ := headers.T(d, more)
	reset := headers.Seconds(d.Reset)
	if !d.Allowed {
		r.Status = 429
		r.RetryAfter = d.RetryAfter().Seconds()
		r.More = r.RetryAfter
	}
	limit, remaining := strconv.FormatInt(ex.Quota, 10), strconv.FormatInt(d.Remaining, 10)
	r.Headers = []Header{
		{"RateLimit-Policy", headers.PolicyItem(ex.Policy, ex.Quota, ex.QuotaWindow), FormIETF},
		{"RateLimit", headers.Item(ex.Policy, d.Remaining, t), FormIETF},
		{"RateLimit-Limit", limit, FormLegacy},
		{"RateLimit-Remaining", remaining, FormLegacy},
		{"RateLimit-Reset", strconv.FormatInt(reset, 10), FormLegacy},
		{"X-RateLimit-Limit", limit, FormX},
		{"X-RateLimit-Remaining", remaining, FormX},
		{"X-RateLimit-Reset", strconv.FormatInt(reset, 10), FormX},
	}
	if !d.Allowed {
		r.Headers = append(r.Headers, Header{"Retry-After", strconv.FormatInt(t, 10), FormRetryAfter})
	}
	return r
}
