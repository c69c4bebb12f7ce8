package main

import (
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
)

// Defaults of the API's own rate limit: each client IP may send 20
// requests per second to /api/, in bursts of up to 40.
const (
	defaultAPIRate  = 20
	defaultAPIBurst = 40
)

// apiPolicyName names the API's limit in the RateLimit and RateLimit-Policy
// headers.
const apiPolicyName = "api"

// Key reclamation. Rested keys (a full bucket) are dropped at least every
// reclaimInterval of the limiter's clock, and also whenever the number of
// keys has doubled since the last reclaim (from reclaimMinKeys up), so a
// flood of new addresses costs amortised O(1) per request and memory stays
// proportional to the clients active in the last interval.
const (
	reclaimInterval = time.Minute
	reclaimMinKeys  = 4096
)

// apiLimiter limits each client of the JSON API with one of the project's
// own limiters (token_bucket or gcra), keyed by client address.
//
// The limiter itself reads no clock: apiLimiter owns the clock (time.Now
// unless a test injects one) and passes the time since its start to every
// decision. A mutex makes it safe for concurrent use; a decision takes
// tens of nanoseconds, so one lock is not a bottleneck.
type apiLimiter struct {
	spec    algorithms.Spec
	now     func() time.Time
	start   time.Time
	metrics *metrics
	// policy is the RateLimit-Policy header value: the quota q is the
	// burst, and w the seconds an empty bucket takes to refill.
	policy string

	mu          sync.Mutex
	lim         algorithms.Limiter
	lastReclaim time.Duration
	reclaimKeys int // reclaim when Keys reaches this
}

// newAPILimiter returns a limiter for spec, which must be a token_bucket or
// gcra. now is its clock (nil means time.Now); rejections are counted in m.
func newAPILimiter(spec algorithms.Spec, now func() time.Time, m *metrics) (*apiLimiter, error) {
	if spec.Algorithm != algorithms.NameTokenBucket && spec.Algorithm != algorithms.NameGCRA {
		return nil, fmt.Errorf("api-algorithm: %q; want token_bucket or gcra", spec.Algorithm)
	}
	lim, err := algorithms.New(spec)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	window := max(1, int64(math.Ceil(float64(spec.Burst)/spec.Rate)))
	return &apiLimiter{
		spec:        spec,
		now:         now,
		start:       now(),
		metrics:     m,
		policy:      fmt.Sprintf("%q;q=%d;w=%d", apiPolicyName, spec.Burst, window),
		lim:         lim,
		reclaimKeys: reclaimMinKeys,
	}, nil
}

// allow decides one request of key now, and reclaims rested keys when due.
func (l *apiLimiter) allow(key string) algorithms.Decision {
	t := l.now().Sub(l.start)
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.lim.Allow(key, t, 1)
	if t-l.lastReclaim >= reclaimInterval || l.lim.Keys() >= l.reclaimKeys {
		l.lim.Reclaim(t)
		l.lastReclaim = t
		l.reclaimKeys = max(reclaimMinKeys, 2*l.lim.Keys())
	}
	return d
}

// keys returns how many client keys hold state.
func (l *apiLimiter) keys() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lim.Keys()
}

// middleware limits requests under /api/ and leaves every other path
// alone. Each API response carries RateLimit-Policy and RateLimit (IETF
// draft-ietf-httpapi-ratelimit-headers-10); a rejected request gets 429,
// Retry-After in whole seconds (rounded up, never 0) and the API's error
// body, and is counted by route.
func (l *apiLimiter) middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !isAPI(c.Request().URL.Path) {
				return next(c)
			}
			d := l.allow(clientKey(c.RealIP()))
			h := c.Response().Header()
			h.Set("RateLimit-Policy", l.policy)
			if d.Allowed {
				h.Set("RateLimit", l.rateLimit(d.Remaining, l.untilMore(d)))
				return next(c)
			}
			retry := l.retryAfter(d)
			h.Set("RateLimit", l.rateLimit(d.Remaining, retry))
			h.Set(echo.HeaderRetryAfter, strconv.FormatInt(retry, 10))
			h.Set(echo.HeaderCacheControl, "no-store")
			l.metrics.rejected(c.Path())
			msg := fmt.Sprintf("too many requests: each client may send %s requests per second to the API, in bursts of up to %d; retry after %d s",
				strconv.FormatFloat(l.spec.Rate, 'g', -1, 64), l.spec.Burst, retry)
			return writeJSON(c, http.StatusTooManyRequests, map[string]any{"errors": []fieldProblem{{Message: msg}}})
		}
	}
}

// rateLimit formats the RateLimit header: r requests remain, and more
// quota comes in t seconds (t < 0 leaves it out).
func (l *apiLimiter) rateLimit(r, t int64) string {
	if t < 0 {
		return fmt.Sprintf("%q;r=%d", apiPolicyName, r)
	}
	return fmt.Sprintf("%q;r=%d;t=%d", apiPolicyName, r, t)
}

// untilMore is the whole seconds, rounded up, until an admitted key gains
// one more request of quota: the time until its bucket is full (Reset)
// minus the time the units still missing after that one take to refill.
// It is -1 for a full bucket, which gains nothing.
func (l *apiLimiter) untilMore(d algorithms.Decision) int64 {
	missing := l.spec.Burst - d.Remaining
	if missing <= 0 {
		return -1
	}
	s := d.Reset.Seconds() - float64(missing-1)/l.spec.Rate
	return max(1, int64(math.Ceil(s)))
}

// retryAfter is a rejection's Retry-After in whole seconds: the limiter's
// exact wait rounded up, and at least 1, since "Retry-After: 0" invites an
// immediate retry that fails again.
func (l *apiLimiter) retryAfter(d algorithms.Decision) int64 {
	w := d.RetryAfter()
	if w == algorithms.Never {
		// A cost above the burst; the API only asks for 1, so this is
		// defensive: point at a full refill.
		w = time.Duration(float64(l.spec.Burst) / l.spec.Rate * float64(time.Second))
	}
	return max(1, int64(math.Ceil(w.Seconds())))
}

// clientKey is the rate-limit key of a client address: the address itself
// for IPv4 (and IPv4-mapped IPv6), the /64 prefix for IPv6, since one host
// or home usually holds a whole /64 and could otherwise take a fresh key per
// request. A string that is not an address is its own key.
func clientKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	p, err := a.Prefix(64)
	if err != nil {
		return a.String()
	}
	return p.String()
}
