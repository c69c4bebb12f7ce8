// Package headers decides the rate-limit fields of an HTTP response, for
// every place that writes or shows them: the designer's preview, the API
// docs (Markdown and OpenAPI), the gateway exports, the generated Go
// middleware and ratelab's own API limiter.
//
// The IETF draft (draft-ietf-httpapi-ratelimit-headers) publishes a limit
// as a quota policy and its state as a RateLimit item:
//
//	RateLimit-Policy: "default";q=100;w=60
//	RateLimit: "default";r=42;t=18
//
// q is the limit's capacity in requests of cost 1 (the burst of a bucket,
// the queue plus the one being served of a leaky bucket, the limit of a
// window) and w the seconds it applies to: the window itself, or the time
// an empty bucket takes to refill (q/rate), rounded up to whole seconds and
// at least 1, since the field is an integer and a quota published over a
// shorter time than it really takes would promise more than it gives. r is
// how many requests of cost 1 pass now, and t the seconds until more quota
// comes back (r grows), rounded up: 0 for a rested client. A rejection's t
// is its Retry-After: the seconds until the rejected request would pass,
// rounded up and at least 1, since "Retry-After: 0" invites an immediate
// retry that fails again.
//
// The older draft's RateLimit-Limit/-Remaining/-Reset and the X-RateLimit-*
// spellings carry q, r and the seconds until the client is rested.
package headers

import (
	"math"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// Quota is what a limit publishes in RateLimit-Policy: q, its capacity,
// and w, the seconds the capacity applies to (see the package comment).
func Quota(s algorithms.Spec) (q, w int64) {
	q = s.Capacity()
	secs := s.Window.Seconds()
	if s.Window <= 0 {
		secs = float64(q) / s.Rate
	}
	return q, wholeSeconds(secs)
}

// wholeSeconds is secs rounded up to whole seconds, at least 1, ignoring
// float noise of one part in 10⁹ (20/0.1 is 200.00000000000003).
func wholeSeconds(secs float64) int64 {
	c := math.Ceil(secs - 1e-9*math.Max(1, secs))
	if c >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(1, int64(c))
}

// Policy is one RateLimit-Policy item: "name";q=Q;w=W.
func Policy(name string, s algorithms.Spec) string {
	q, w := Quota(s)
	return PolicyItem(name, q, w)
}

// PolicyItem formats one RateLimit-Policy item from its numbers.
func PolicyItem(name string, q, w int64) string {
	return strconv.Quote(name) + ";q=" + strconv.FormatInt(q, 10) + ";w=" + strconv.FormatInt(w, 10)
}

// Item is one RateLimit item: "name";r=R;t=T.
func Item(name string, r, t int64) string {
	return strconv.Quote(name) + ";r=" + strconv.FormatInt(r, 10) + ";t=" + strconv.FormatInt(t, 10)
}

// Seconds is d in whole seconds, rounded up (0 for 0): the t of an
// admitted response and the older drafts' Reset.
func Seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d-1)/time.Second) + 1
}

// RetryAfter is a rejection's wait in whole seconds, rounded up and at
// least 1; ok is false for algorithms.Never (the request can never pass,
// so no wait helps and none is sent).
func RetryAfter(wait time.Duration) (secs int64, ok bool) {
	if wait == algorithms.Never {
		return 0, false
	}
	return max(1, Seconds(wait)), true
}

// T is the RateLimit t of a limiter's decision: for an admitted request,
// the seconds until more quota (more, from [UntilMore]); for a rejected
// one, its Retry-After. ok is false when a rejected request can never pass.
func T(d algorithms.Decision, more time.Duration) (t int64, ok bool) {
	if d.Allowed {
		return Seconds(more), true
	}
	return RetryAfter(d.RetryAfter())
}

// UntilMore is how long until key's Remaining at lim grows above
// remaining, if key sends nothing: 0 when remaining is already the
// capacity. remaining must be what lim reports for key at now (after the
// request just decided): a request of cost remaining+1 then cannot pass,
// so asking for it charges nothing and its RetryAfter is the wait for one
// more unit of quota.
func UntilMore(lim algorithms.Limiter, key string, now time.Duration, remaining int64) time.Duration {
	if remaining >= lim.Spec().Capacity() {
		return 0
	}
	d := lim.Allow(key, now, remaining+1)
	if d.Allowed {
		return 0 // remaining was not lim's own answer; more is here already
	}
	return d.RetryAfter()
}
