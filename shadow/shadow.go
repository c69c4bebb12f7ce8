// Package shadow replays logged requests through a policy in virtual time
// and reports what the policy would have rejected — the shadow-mode report
// of the articles' first rule: log what would be rejected before rejecting
// anything.
//
// Model. Each request is decided by package engine, the one rule every
// part of ratelab follows: its client's limit (its tier's limit, tier names
// matched ignoring ASCII case, or the default limit when it has no tier or
// an unknown one), the limit of the first endpoint whose method and path
// template match it, and the global limit apply, each at the matched
// endpoint's cost (1 when none matches or it sets none). It is admitted
// only if every one of them admits it, and then each is charged; a
// rejected request charges none of them, as the algorithms, nginx and the
// Go exports do. The first of them (client, endpoint, global) that rejects
// it is the one blamed. Per-client limits are keyed by the request's key,
// the global limit by nothing; a request without a key passes only the
// global limit (a gateway cannot tell whose it is). Time is the log's: the
// first request is at 0.
//
// Logs with whole-second timestamps (nginx's and Apache's combined format)
// do not say when inside a second a request came, and replaying a busy
// second as one instant would make every second look like a burst. When a
// request's timestamp is a whole second, the requests sharing it are
// spread evenly over that second in log order (the i-th of n at +i/n s);
// timestamps with a fraction are used as they are. At most
// Options.MaxHeld requests (and 4 MiB of their text) are held for one
// second: when a second has more, the held ones are spread over it as if
// they were all, and the rest of that second's requests are replayed, in
// log order, at the second's last spread instant, a burst; they are
// counted in Report.Unspread and the report is marked degraded (its
// rejections are then likely overstated). A request logged
// earlier than the one before it (logs are written at completion, so
// slightly out of order) is replayed at the latest time seen, and counted
// in Report.Reordered.
//
// Memory is bounded by the number of distinct clients (limiter state,
// reclaimed when idle, and per-client counts), the chart's bins and the
// requests held for one second (Options.MaxHeld); never by the log's
// length.
package shadow

import (
	"cmp"
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/engine"
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
	// cost exceeds the limit's capacity). Keys, tiers, methods, paths and
	// names come from the log and the policy and reach spreadsheets: a
	// cell starting with '=', '+', '-', '@', a tab or a carriage return
	// is prefixed with a single quote (OWASP's CSV-injection rule), so
	// that no spreadsheet reads it as a formula.
	Rejections io.Writer
	// Tiers maps a client's key to its tier, for logs that do not say;
	// a request's own Tier wins.
	Tiers map[string]string
	// MaxHeld is how many requests sharing a whole-second timestamp are
	// held to be spread over their second (see the package comment); 0
	// means DefaultMaxHeld.
	MaxHeld int
}

// DefaultMaxHeld is Options.MaxHeld's default. A held request costs 88
// bytes and its text (at most 4 MiB in all for one second).
const DefaultMaxHeld = 100_000

// maxHeldBytes bounds the text (keys, tiers, methods, paths) of the
// requests held for one second.
const maxHeldBytes = 4 << 20

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
	// Unspread counts requests past Options.MaxHeld in their whole
	// second, replayed at once at its end instead of spread over it; when
	// it is not 0 the report is degraded.
	Unspread int64
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
	// Checked counts the requests this limit applied to; Rejected those
	// it was the first to reject.
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

type client struct {
	key, tier          string
	requests, rejected int64
	firstRejected      time.Duration
	// own is the client's entry when it is found by its key, not by a
	// number.
	own numbered
}

// numbered is what judge touches of a client on every request, in a
// slice by the number measure gave the client (replayer.byNum), small
// enough to stay in the caches: the client, its requests not yet added to
// the client's count (requestCounts adds them), and its id in the engine,
// valid while the engine's Epoch is epoch (-1 before the first request).
type numbered struct {
	c        *client
	requests int64
	id       int32
	epoch    uint64
}

// requestCounts adds the requests counted in the clients' entries to
// the clients' counts.
func (r *replayer) requestCounts() {
	for i := range r.byNum {
		if h := &r.byNum[i]; h.c != nil {
			h.c.requests += h.requests
			h.requests = 0
		}
	}
	for _, c := range r.clients {
		c.requests += c.own.requests
		c.own.requests = 0
	}
}

// replayer holds one replay's state.
type replayer struct {
	o        Options
	policy   policy.Policy
	engine   *engine.Engine
	clients  map[string]*client
	byNum    []numbered // a shard's clients by their number in measure's shard
	decision engine.Decision
	req      engine.Request // a sharded replay's request being judged
	origin   time.Time      // the replay's time 0, once a request is judged
	bins     []Bin
	binWidth time.Duration
	// binFrom and binTo bound the times of bins[binAt], the bin last
	// returned: requests come in time order, so most fall in it and
	// skip a division.
	binFrom, binTo time.Duration
	binAt          int
	csv            *csv.Writer
	rep            Report

	// seq times the requests of a replay on one goroutine, or of a
	// sharded replay's timer; the requests (pending, from next) or the
	// slots (a timer's: where each request's replay time goes) wait in
	// log order until timed.
	seq     sequencer
	pending fifo[Request]
	slots   fifo[*int64]

	// A sharded replay (Sharded): its timer only times requests; its
	// shards only decide them.
	timer  *replayer
	judged int64 // requests decided
	// reclaimAt is how many clients hold limiter state when the next
	// reclaim runs, if at least reclaimMin.
	reclaimAt int
	rows      []row       // a shard's rejection rows not yet written
	mu        *sync.Mutex // guards rows
}

// row is one rejection's CSV row and its request's index in the log.
type row struct {
	idx  int64
	cols []string
}

// reclaimMin is the least number of clients holding limiter state at
// which a replay reclaims the idle ones; after a reclaim, the next is
// when twice as many as it left hold state, so reclaiming, which looks
// at every client held, costs O(1) per client, amortised, and the state
// held stays under max(reclaimMin, 2 × the clients not yet rested).
const reclaimMin = 1 << 14

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
type Replayer struct {
	r *replayer
	s *Sharded // set by Replayer.Sharded
}

// New starts a replay of p.
func New(p policy.Policy, o Options) (*Replayer, error) {
	r := &replayer{o: o, clients: map[string]*client{}}
	if r.o.Bins <= 0 {
		r.o.Bins = 120
	}
	if r.o.Top <= 0 {
		r.o.Top = 10
	}
	if r.o.MaxHeld <= 0 {
		r.o.MaxHeld = DefaultMaxHeld
	}
	r.seq = sequencer{maxHeld: r.o.MaxHeld, timed: r.timedRequest}
	if err := r.build(p); err != nil {
		return nil, err
	}
	if o.Rejections != nil {
		r.csv = csv.NewWriter(o.Rejections)
		if err := r.csv.Write([]string{"time", "key", "tier", "method", "path", "limit", "limit_name", "retry_after_s"}); err != nil {
			return nil, err
		}
	}
	return &Replayer{r: r}, nil
}

// Add replays one request. Requests should come in log order; see the
// package comment for time. Times are kept as Unix nanoseconds (the
// years 1678 to 2262), and the report gives them in UTC.
func (x *Replayer) Add(q Request) {
	r := x.r
	if q.Tier == "" && r.o.Tiers != nil {
		q.Tier = r.o.Tiers[q.Key]
	}
	r.pending.push(q)
	r.seq.add(q.At.UnixNano(), len(q.Key)+len(q.Tier)+len(q.Method)+len(q.Path))
}

// timedRequest decides the oldest pending request, timed t.
func (r *replayer) timedRequest(t time.Duration) {
	q := r.pending.pop()
	r.judge(&engine.Request{At: t, Key: q.Key, Tier: q.Tier, Method: q.Method, Path: q.Path}, 0, -1)
}

// timedSlot writes t to the oldest waiting slot (a sharded replay's
// timer).
func (r *replayer) timedSlot(t time.Duration) {
	*r.slots.pop() = int64(t)
}

// Report ends the replay and reports; the CSV of rejections is flushed.
func (x *Replayer) Report() (Report, error) {
	if x.s != nil {
		return x.s.report()
	}
	r := x.r
	r.seq.flush()
	if r.csv != nil {
		r.csv.Flush()
		if err := r.csv.Error(); err != nil {
			return Report{}, err
		}
	}
	return r.finish(), nil
}

// build makes the engine of p and the report's row of each limit.
func (r *replayer) build(p policy.Policy) error {
	e, err := engine.New(p)
	if err != nil {
		return err
	}
	r.engine, r.policy = e, p
	r.rep.Limits = make([]LimitReport, len(e.Limits()))
	for i, l := range e.Limits() {
		r.rep.Limits[i] = LimitReport{Field: l.Field, Name: l.Name, Spec: l.Spec.String()}
	}
	return nil
}

// judge decides q at its replay time q.At and counts the decision; idx
// is q's index in the log, for a shard's rejection rows, and num its
// client's number from measure.Sharded.Consume (-1 for none), by which
// the client is found without looking its key up.
func (r *replayer) judge(q *engine.Request, idx int64, num int32) {
	t := q.At
	if r.judged == 0 {
		seq := &r.seq
		if r.timer != nil {
			seq = &r.timer.seq
		}
		r.origin, r.binWidth = seq.originTime(), time.Second
	}
	r.judged++
	// The client: by its number, touching only its numbered entry (the
	// client itself, a cache miss, only on a rejection), else by its key.
	var h *numbered
	if num >= 0 && int(num) < len(r.byNum) && r.byNum[num].c != nil {
		h = &r.byNum[num]
	} else {
		c := r.clients[q.Key]
		if c == nil {
			c = &client{key: strings.Clone(q.Key), tier: strings.Clone(q.Tier), firstRejected: -1}
			r.clients[c.key] = c
		}
		if num < 0 {
			h = &c.own
		} else {
			if int(num) >= len(r.byNum) {
				r.byNum = append(r.byNum, make([]numbered, int(num)+1-len(r.byNum))...)
			}
			h = &r.byNum[num]
		}
		if h.c == nil {
			*h = numbered{c: c, id: -1}
		}
	}
	h.requests++
	if q.Key != "" && (h.id < 0 || h.epoch != r.engine.Epoch()) {
		h.id, h.epoch = r.engine.Client(h.c.key), r.engine.Epoch()
	}

	d := &r.decision
	r.engine.DecideClientTo(d, h.id, q)
	for _, i := range d.Limits[:d.N] {
		r.rep.Limits[i].Checked++
	}
	rejectedBy, retry := d.Rejected, d.RetryAfter
	if rejectedBy >= 0 {
		r.rep.Limits[rejectedBy].Rejected++
	}

	b := r.bin(t)
	b.Requests++
	if rejectedBy >= 0 {
		c := h.c
		b.Rejected++
		r.rep.Rejected++
		if c.rejected == 0 {
			c.firstRejected = t
		}
		c.rejected++
		if r.csv != nil {
			l := r.rep.Limits[rejectedBy]
			ra := "never"
			if retry != algorithms.Never {
				ra = strconv.FormatFloat(retry.Round(time.Millisecond).Seconds(), 'f', -1, 64)
			}
			cols := []string{r.origin.Add(t).UTC().Format(time.RFC3339Nano), Cell(c.key), Cell(strings.Clone(q.Tier)),
				Cell(strings.Clone(q.Method)), Cell(strings.Clone(q.Path)), Cell(l.Field), Cell(l.Name), ra}
			if r.mu != nil {
				r.mu.Lock()
				r.rows = append(r.rows, row{idx, cols})
				r.mu.Unlock()
			} else {
				// A write error surfaces at Flush, in Replay.
				_ = r.csv.Write(cols)
			}
		}
	}
	if r.engine.Keys() >= max(r.reclaimAt, reclaimMin) {
		r.engine.Reclaim(t)
		r.reclaimAt = 2 * r.engine.Keys()
	}
}

// Cell is s as a CSV cell that no spreadsheet reads as a formula: s
// prefixed with a single quote when it starts with '=', '+', '-', '@', a
// tab or a carriage return (OWASP's CSV-injection rule), else s.
func Cell(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// bin returns the bin holding t, widening every bin (merging pairs) when
// the series would exceed Options.Bins.
func (r *replayer) bin(t time.Duration) *Bin {
	if r.binFrom <= t && t < r.binTo {
		return &r.bins[r.binAt]
	}
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
	r.binAt, r.binFrom = i, time.Duration(i)*r.binWidth
	r.binTo = r.binFrom + r.binWidth
	return &r.bins[i]
}

func (r *replayer) finish() Report {
	r.requestCounts()
	rep := r.rep
	r.seq.report(&rep)
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
