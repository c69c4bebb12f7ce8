package server

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/headers"
	"github.com/ratelab/ratelab/internal/keylimit"
	"github.com/ratelab/ratelab/views"
)

// Defaults of the API's own rate limit: each client IP may send 20
// requests per second to /api/, in bursts of up to 40.
const (
	defaultAPIRate  = 20
	defaultAPIBurst = 40
)

// Defaults of the pages' own rate limit: each client IP may ask for 5
// designer pages, results, embeds or exports per second, in bursts of up
// to 30 (a documentation page with a dozen embedded charts, and the
// designer's live updates while typing).
const (
	defaultPageRate  = 5
	defaultPageBurst = 30
)

// apiPolicyName and pagePolicyName name the limits in the RateLimit and
// RateLimit-Policy headers.
const (
	apiPolicyName  = "api"
	pagePolicyName = "pages"
)

// Key reclamation. Rested keys (a full bucket) are dropped from every
// shard at least every reclaimInterval of the limiter's clock, and from a
// shard whenever its keys have doubled since its last reclaim (from its
// share of reclaimMinKeys up), so a flood of new addresses costs amortised
// O(1) per request and memory stays proportional to the clients active in
// the last interval.
const (
	reclaimInterval = time.Minute
	reclaimMinKeys  = 4096
)

// apiLimiter limits each client of the JSON API (or, with its own spec,
// of the expensive pages) with one of the project's own limiters
// (token_bucket or gcra), keyed by client address.
//
// The limiter itself reads no clock: apiLimiter owns the clock (time.Now
// unless a test injects one) and passes the time since its start to every
// decision. It is safe for concurrent use: each key has its own state and
// lock (package keylimit), so different clients are decided on different
// cores at once, and a key's decisions are those of one limiter.
type apiLimiter struct {
	spec algorithms.Spec
	// name is the limit's name in its headers; scope says which requests
	// it limits, and what names them in a 429's message.
	name    string
	scope   func(*http.Request) bool
	what    string
	now     func() time.Time
	start   time.Time
	metrics *metrics
	// policy is the RateLimit-Policy header value (headers.Policy): the
	// quota q is the burst, and w the seconds an empty bucket takes to
	// refill.
	policy string

	lim *keylimit.Limiter
}

// newAPILimiter returns the API's limiter for spec, which must be a
// token_bucket or gcra: it limits /api/ and POST /import (which decodes a
// policy as the API does). now is its clock (nil means time.Now);
// rejections are counted in m.
func newAPILimiter(spec algorithms.Spec, now func() time.Time, m *metrics) (*apiLimiter, error) {
	return newLimiter(apiPolicyName, isAPIWork, "the API", spec, now, m)
}

// isAPIWork reports whether the API's rate limit applies to req.
func isAPIWork(req *http.Request) bool {
	return isAPI(req.URL.Path) || req.URL.Path == importPath
}

// newPageLimiter returns the pages' limiter for spec: it limits the
// designer, its results, embeds and exports (isHeavyPage).
func newPageLimiter(spec algorithms.Spec, now func() time.Time, m *metrics) (*apiLimiter, error) {
	return newLimiter(pagePolicyName, isHeavyPage, "the designer, embed and export pages", spec, now, m)
}

// isHeavyPage reports whether req asks for a page that simulates or
// renders a design: the designer, its results and its docs panels, an
// embed, the exports.
func isHeavyPage(req *http.Request) bool {
	p := req.URL.Path
	return p == designerPath || p == resultsPath || p == exportsPath || p == comparePath ||
		strings.HasPrefix(p, "/embed/") || strings.HasPrefix(p, "/export/") || strings.HasPrefix(p, views.DocsPanelPath)
}

// newLimiter returns a limiter called name for the requests scope
// accepts; what names them in messages.
func newLimiter(name string, scope func(*http.Request) bool, what string, spec algorithms.Spec, now func() time.Time, m *metrics) (*apiLimiter, error) {
	if spec.Algorithm != algorithms.NameTokenBucket && spec.Algorithm != algorithms.NameGCRA {
		return nil, fmt.Errorf("api-algorithm: %q; want token_bucket or gcra", spec.Algorithm)
	}
	lim, err := keylimit.New(spec, keylimit.Options{ReclaimInterval: reclaimInterval, ReclaimMinKeys: reclaimMinKeys})
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &apiLimiter{
		spec:    spec,
		name:    name,
		scope:   scope,
		what:    what,
		now:     now,
		start:   now(),
		metrics: m,
		policy:  headers.Policy(name, spec),
		lim:     lim,
	}, nil
}

// allow decides one request of key now, and reclaims rested keys when due.
func (l *apiLimiter) allow(key string) (algorithms.Decision, time.Duration) { return l.allowN(key, 1) }

// allowN decides n units of quota for key now; for an admitted request it
// also returns how long until the key has more quota (headers.UntilMore),
// read in the same instant under the key's lock. Rested keys are
// reclaimed when due (keylimit's sweep by time and size threshold).
func (l *apiLimiter) allowN(key string, n int64) (algorithms.Decision, time.Duration) {
	return l.lim.AllowN(key, l.now().Sub(l.start), n)
}

// keys returns how many client keys hold state.
func (l *apiLimiter) keys() int { return l.lim.Keys() }

// middleware limits the requests of its scope and leaves every other
// request alone. Each limited response carries RateLimit-Policy and
// RateLimit (IETF draft-ietf-httpapi-ratelimit-headers-10); a rejected
// request gets 429, Retry-After in whole seconds (rounded up, never 0) and
// the API's problem details (plain text for a page), and is counted by
// route.
// An admitted request's quota is left for the heavy routes to charge more
// as their work becomes known (quota.charge).
func (l *apiLimiter) middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !l.scope(c.Request()) {
				return next(c)
			}
			key := clientKey(c.RealIP())
			d, more := l.allow(key)
			c.Response().Header().Set("RateLimit-Policy", l.policy)
			if !d.Allowed {
				return l.refuse(c, d, fmt.Sprintf("too many requests: each client may send %s requests per second to %s, in bursts of up to %d",
					strconv.FormatFloat(l.spec.Rate, 'g', -1, 64), l.what, l.spec.Burst))
			}
			c.Response().Header().Set("RateLimit", l.rateLimit(d, more))
			c.Set(quotaKey, &quota{lim: l, key: key, charged: 1})
			return next(c)
		}
	}
}

// refuse answers a rejection d with 429, its headers and msg (to which it
// adds the wait).
func (l *apiLimiter) refuse(c echo.Context, d algorithms.Decision, msg string) error {
	retry := l.retryAfter(d)
	h := c.Response().Header()
	h.Set("RateLimit-Policy", l.policy)
	h.Set("RateLimit", l.rateLimit(d, 0))
	h.Set(echo.HeaderRetryAfter, strconv.FormatInt(retry, 10))
	h.Set(echo.HeaderCacheControl, "no-store")
	l.metrics.rejected(c.Path())
	msg = fmt.Sprintf("%s; retry after %d s", msg, retry)
	if !isAPI(c.Request().URL.Path) {
		return c.String(http.StatusTooManyRequests, msg)
	}
	return writeProblem(c, newProblem(http.StatusTooManyRequests, msg, nil))
}

// quota is what a rate limit has charged one request so far; the
// middleware charges 1, a heavy handler more once it knows its size.
type quota struct {
	lim     *apiLimiter
	key     string
	charged int64
}

// quotaKey is where the middleware leaves an admitted request's *quota.
const quotaKey = "ratelab.quota"

// charge brings the request's charge up to want units for the work of
// n arrivals, or answers 429 when the client's quota does not hold the
// rest. The limiter takes nothing from a rejected charge.
func (q *quota) charge(c echo.Context, want int64, n int) error {
	extra := want - q.charged
	if extra <= 0 {
		return nil
	}
	d, more := q.lim.allowN(q.key, extra)
	if !d.Allowed {
		return q.lim.refuse(c, d, fmt.Sprintf("too many requests: a simulation of %d arrivals costs %d requests of the client's quota "+
			"(1 + arrivals/%d, at most the burst of %d); it has %d more left",
			n, want, arrivalsPerRequest, q.lim.spec.Burst, d.Remaining))
	}
	q.charged = want
	c.Response().Header().Set("RateLimit", q.lim.rateLimit(d, more))
	return nil
}

// rateLimit is the RateLimit header of decision d: r requests remain, and
// more quota comes in t seconds (headers.T: more for an admitted request,
// the Retry-After of a rejected one).
func (l *apiLimiter) rateLimit(d algorithms.Decision, more time.Duration) string {
	t, _ := headers.T(l.wait(d), more)
	return headers.Item(l.name, d.Remaining, t)
}

// wait is a rejection's wait: the limiter's, or for a cost above the
// burst (which the charges never ask for; defensive) a full refill.
func (l *apiLimiter) wait(d algorithms.Decision) algorithms.Decision {
	if w := d.RetryAfter(); w == algorithms.Never {
		d.Wait = time.Duration(float64(l.spec.Burst) / l.spec.Rate * float64(time.Second))
	}
	return d
}

// retryAfter is a rejection's Retry-After in whole seconds: the limiter's
// exact wait rounded up, and at least 1, since "Retry-After: 0" invites an
// immediate retry that fails again (headers.RetryAfter).
func (l *apiLimiter) retryAfter(d algorithms.Decision) int64 {
	secs, _ := headers.RetryAfter(l.wait(d).RetryAfter())
	return secs
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

// pageRateLimit returns the middleware that limits each client of the
// heavy pages by cfg.pageLimit; with the limit off (a zero Rate) it passes
// every request through. It panics on a spec that run would have rejected.
func pageRateLimit(cfg config, m *metrics) echo.MiddlewareFunc {
	if cfg.pageLimit.Rate == 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	lim, err := newPageLimiter(cfg.pageLimit, cfg.clock, m)
	if err != nil {
		panic(fmt.Sprintf("newServer: page rate limit: %v", err))
	}
	return lim.middleware()
}
