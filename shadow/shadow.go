// Package shadow replays logged requests through a policy in virtual time
// and reports what the policy would have rejected — the shadow-mode report
// of the articles' first rule: log what would be rejected before rejecting
// anything.
//
// Model. Each request passes, in order, its client's limit (its tier's
// limit, or the default limit when it has no tier or an unknown one), the
// limit of the first endpoint whose method and path pattern match it, and
// the global limit, each with the endpoint's cost (1 when no endpoint
// matches or the endpoint sets none). The first limit that rejects it is
// the one blamed; later limits do not see it, and earlier ones have
// counted it (as nginx's limit_req zones do). Per-client limits are keyed
// by the request's key, the global limit by nothing; a request without a
// key passes only the global limit (a gateway cannot tell whose it is).
// Time is the log's: the first request is at 0.
//
// Logs with whole-second timestamps (nginx's and Apache's combined format)
// do not say when inside a second a request came, and replaying a busy
// second as one instant would make every second look like a burst. When a
// request's timestamp is a whole second, the requests sharing it are
// spread evenly over that second in log order (the i-th of n at +i/n s);
// timestamps with a fraction are used as they are. A request logged
// earlier than the one before it (logs are written at completion, so
// slightly out of order) is replayed at the latest time seen, and counted
// in Report.Reordered.
//
// Memory is bounded by the number of distinct clients (limiter state,
// reclaimed when idle, and per-client counts), the chart's bins and the
// requests of one second; never by the log's length.
package shadow

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/policy"
)

// Request is one logged request.
type Request struct {
	At time.Time
	// Key identifies the client: an IP, an API key, an account.
	Key string
	// Tier is the client's tier name; "" (or a name the policy does not
	// have) means the default limit.
	Tier   string
	Method string
	// Path is the request path without the query; collapsed patterns
	// ("/v1/orders/{id}") match like the paths they stand for.
	Path string
}

// Options tune a replay. The zero value is usable.
type Options struct {
	// Bins is how many bins the series over time has at most; 0 means
	// 120. The bin width is the log's span divided by Bins, rounded up to
	// a whole second.
	Bins int
	// Top is how many offenders the report lists; 0 means 10.
	Top int
	// Rejections, when set, receives a CSV of every would-be rejection:
	// time (RFC 3339 with nanoseconds), key, tier, method, path, the
	// limit's field and name, and the Retry-After the client would have
	// got in seconds, to the millisecond ("never" for a request whose
	// cost exceeds the limit's capacity).
	Rejections io.Writer
	// Tiers maps a client's key to its tier, for logs that do not say;
	// a request's own Tier wins.
	Tiers map[string]string
}

// Report is what the policy would have done to the log.
type Report struct {
	// Start and End are the first and last request's times.
	Start, End time.Time
	Requests   int64
	// Rejected counts the requests some limit would have rejected.
	Rejected int64
	// Clients counts distinct keys; ClientsRejected those with at least
	// one rejection.
	Clients, ClientsRejected int
	// Reordered counts requests logged before the request above them.
	Reordered int64
	// Limits is every limit of the policy in export.Limits's order, with
	// its share of the rejections.
	Limits []LimitReport
	// Top lists the clients with the most rejections, most first (ties by
	// key), at most Options.Top.
	Top []Offender
	// Bin is the width of each Series bin.
	Bin    time.Duration
	Series []Bin
}

// LimitReport is one limit's part in the report.
type LimitReport struct {
	Field string // "tiers[1].limit"
	Name  string // "tier_paid"
	Spec  string // "token_bucket(rate=5/s, burst=10)"
	// Checked counts the requests that reached this limit; Rejected those
	// it rejected.
	Checked, Rejected int64
}

// Offender is one client's count.
type Offender struct {
	Key, Tier          string
	Requests, Rejected int64
	// FirstRejected is when the client was first rejected.
	FirstRejected time.Time
}

// Bin is one interval of the series.
type Bin struct {
	Start              time.Time
	Requests, Rejected int64
}

// check is a limit in force: its limiter, its endpoint pattern, and its
// report row.
type check struct {
	lim    algorithms.Limiter
	scope  policy.Scope
	tier   string
	method string
	path   *regexp.Regexp
	report *LimitReport
}

type client struct {
	tier               string
	requests, rejected int64
	firstRejected      time.Duration
}

// replayer holds one replay's state.
type replayer struct {
	o        Options
	checks   []check
	tiers    map[string]int // tier name → index of its client check
	def      int            // index of the default check, -1 if none
	costs    []endpointCost
	clients  map[string]*client
	origin   time.Time
	last     time.Duration // latest replay time so far
	bins     []Bin
	binWidth time.Duration
	csv      *csv.Writer
	rep      Report
	n        int64
	second   []Request // requests of the current whole second, held
}

type endpointCost struct {
	method string
	path   *regexp.Regexp
	cost   int64
}

// reclaimEvery is how many requests pass between reclaims of idle limiter
// state.
const reclaimEvery = 1 << 16

// Replay replays every request next yields (until it returns false)
// through p and reports the would-be rejections: New, Add for each
// request, Report. An error from next stops the replay and is returned.
func Replay(p policy.Policy, next func() (Request, bool, error), o Options) (Report, error) {
	r, err := New(p, o)
	if err != nil {
		return Report{}, err
	}
	for {
		q, ok, err := next()
		if err != nil {
			return Report{}, err
		}
		if !ok {
			break
		}
		r.Add(q)
	}
	return r.Report()
}

// Replayer replays requests pushed one at a time, for callers that read
// the log themselves (and measure it in the same pass).
type Replayer struct{ r *replayer }

// New starts a replay of p.
func New(p policy.Policy, o Options) (*Replayer, error) {
	r := &replayer{o: o, tiers: map[string]int{}, def: -1, clients: map[string]*client{}}
	if r.o.Bins <= 0 {
		r.o.Bins = 120
	}
	if r.o.Top <= 0 {
		r.o.Top = 10
	}
	if err := r.build(p); err != nil {
		return nil, err
	}
	if o.Rejections != nil {
		r.csv = csv.NewWriter(o.Rejections)
		if err := r.csv.Write([]string{"time", "key", "tier", "method", "path", "limit", "limit_name", "retry_after_s"}); err != nil {
			return nil, err
		}
	}
	return &Replayer{r}, nil
}

// Add replays one request. Requests should come in log order; see the
// package comment for time.
func (x *Replayer) Add(q Request) {
	r := x.r
	if q.Tier == "" && r.o.Tiers != nil {
		q.Tier = r.o.Tiers[q.Key]
	}
	// Requests sharing a whole-second timestamp are held until the second
	// is complete, then spread over it.
	if len(r.second) > 0 && !q.At.Equal(r.second[0].At) {
		r.flush()
	}
	if q.At.Nanosecond() == 0 {
		r.second = append(r.second, q)
		return
	}
	r.decide(q, q.At)
}

// Report ends the replay and reports; the CSV of rejections is flushed.
func (x *Replayer) Report() (Report, error) {
	r := x.r
	r.flush()
	if r.csv != nil {
		r.csv.Flush()
		if err := r.csv.Error(); err != nil {
			return Report{}, err
		}
	}
	return r.finish(), nil
}

// flush replays the held second, spread over it.
func (r *replayer) flush() {
	for i, q := range r.second {
		at := q.At.Add(time.Duration(int64(i) * int64(time.Second) / int64(len(r.second))))
		r.decide(q, at)
	}
	r.second = r.second[:0]
}

// build turns p's limits into checks.
func (r *replayer) build(p policy.Policy) error {
	limits := p.Limits()
	r.rep.Limits = make([]LimitReport, len(limits))
	for i, l := range limits {
		lim, err := algorithms.New(l.Spec)
		if err != nil {
			return fmt.Errorf("%s: %w", l.Field, err)
		}
		r.rep.Limits[i] = LimitReport{Field: l.Field, Name: l.Name, Spec: l.Spec.String()}
		c := check{lim: lim, scope: l.Scope, tier: l.Tier, report: &r.rep.Limits[i]}
		if l.Scope == policy.ScopeEndpoint {
			c.method = strings.ToUpper(l.Match.Method)
			c.path = pathPattern(l.Match.Path)
		}
		switch l.Scope {
		case policy.ScopeDefault:
			r.def = len(r.checks)
		case policy.ScopeTier:
			r.tiers[l.Tier] = len(r.checks)
		}
		r.checks = append(r.checks, c)
	}
	for _, e := range p.Endpoints {
		if e.Cost > 1 {
			r.costs = append(r.costs, endpointCost{method: strings.ToUpper(e.Match.Method), path: pathPattern(e.Match.Path), cost: e.Cost})
		}
	}
	return nil
}

// pathPattern matches a policy path: {name} segments match any one
// segment (including a collapsed "{id}"), the rest literally.
func pathPattern(path string) *regexp.Regexp {
	return regexp.MustCompile(policy.PathRegex(path))
}

func (r *replayer) cost(q Request) int64 {
	m := strings.ToUpper(q.Method)
	for _, e := range r.costs {
		if e.method == m && e.path.MatchString(q.Path) {
			return e.cost
		}
	}
	return 1
}

// decide replays one request at wall time at.
func (r *replayer) decide(q Request, at time.Time) {
	if r.n == 0 {
		r.origin = at
		r.rep.Start = q.At
		r.binWidth = time.Second
	}
	r.n++
	t := at.Sub(r.origin)
	if t < r.last {
		r.rep.Reordered++
		t = r.last
	}
	r.last = t
	if q.At.After(r.rep.End) || r.n == 1 {
		r.rep.End = q.At
	}
	r.rep.Requests++

	c := r.clients[q.Key]
	if c == nil {
		c = &client{tier: q.Tier, firstRejected: -1}
		r.clients[q.Key] = c
	}
	c.requests++

	cost := r.cost(q)
	rejectedBy := -1
	var retry time.Duration
	m := strings.ToUpper(q.Method)
	first := r.def
	if i, ok := r.tiers[q.Tier]; ok {
		first = i
	}
	try := func(i int, key string) bool {
		ch := &r.checks[i]
		ch.report.Checked++
		d := ch.lim.Allow(key, t, cost)
		if !d.Allowed {
			ch.report.Rejected++
			rejectedBy, retry = i, d.RetryAfter()
			return false
		}
		return true
	}
	keyless := q.Key == ""
	ok := keyless || first < 0 || try(first, q.Key)
	if ok && !keyless {
		for i := range r.checks {
			ch := &r.checks[i]
			if ch.scope == policy.ScopeEndpoint && ch.method == m && ch.path.MatchString(q.Path) {
				ok = try(i, q.Key)
				break
			}
		}
	}
	if ok {
		for i := range r.checks {
			if r.checks[i].scope == policy.ScopeGlobal {
				ok = try(i, "")
			}
		}
	}

	b := r.bin(t)
	b.Requests++
	if rejectedBy >= 0 {
		b.Rejected++
		r.rep.Rejected++
		if c.rejected == 0 {
			c.firstRejected = t
		}
		c.rejected++
		if r.csv != nil {
			l := r.checks[rejectedBy].report
			ra := "never"
			if retry != algorithms.Never {
				ra = strconv.FormatFloat(retry.Round(time.Millisecond).Seconds(), 'f', -1, 64)
			}
			// A write error surfaces at Flush, in Replay.
			_ = r.csv.Write([]string{r.origin.Add(t).UTC().Format(time.RFC3339Nano), q.Key, q.Tier, q.Method, q.Path, l.Field, l.Name, ra})
		}
	}
	if r.n%reclaimEvery == 0 {
		for i := range r.checks {
			r.checks[i].lim.Reclaim(t)
		}
	}
}

// bin returns the bin holding t, widening every bin (merging pairs) when
// the series would exceed Options.Bins.
func (r *replayer) bin(t time.Duration) *Bin {
	i := int(t / r.binWidth)
	for i >= r.o.Bins {
		merged := r.bins[:0:0]
		for j := 0; j < len(r.bins); j += 2 {
			b := r.bins[j]
			if j+1 < len(r.bins) {
				b.Requests += r.bins[j+1].Requests
				b.Rejected += r.bins[j+1].Rejected
			}
			merged = append(merged, b)
		}
		r.bins = merged
		r.binWidth *= 2
		i = int(t / r.binWidth)
	}
	for len(r.bins) <= i {
		r.bins = append(r.bins, Bin{Start: r.origin.Add(time.Duration(len(r.bins)) * r.binWidth)})
	}
	return &r.bins[i]
}

func (r *replayer) finish() Report {
	rep := r.rep
	rep.Clients = len(r.clients)
	rep.Bin = r.binWidth
	rep.Series = r.bins
	var top []Offender
	for k, c := range r.clients {
		if c.rejected == 0 {
			continue
		}
		rep.ClientsRejected++
		top = append(top, Offender{Key: k, Tier: c.tier, Requests: c.requests, Rejected: c.rejected,
			FirstRejected: r.origin.Add(c.firstRejected)})
	}
	slices.SortFunc(top, func(a, b Offender) int {
		if c := cmp.Compare(b.Rejected, a.Rejected); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	if len(top) > r.o.Top {
		top = top[:r.o.Top]
	}
	rep.Top = top
	return rep
}
