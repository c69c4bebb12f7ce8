package haproxy

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
)

// MaxPeriod is the longest counter period the file uses: HAProxy keeps
// ticks in 32-bit milliseconds and reads a counter by comparing ticks up to
// two periods apart as signed numbers, so two periods must stay under 2³¹
// ms (a period under 12.4 days); longer windows are not expressible.
const MaxPeriod = 12 * 24 * time.Hour

// Counter is one limit as a stick-table frequency counter: at most Limit
// requests (cost units) per Period, milliseconds.
//
// HAProxy's gpc0_rate(Period) keeps, per key, the count of the current
// period and of the previous one, and reads
//
//	current + ⌊previous · (Period − elapsed) / Period⌋
//
// where elapsed is the time since the current period began, except that
// it reads previous alone while current is 0 and previous at most 1 (its
// correction against flapping at low rates). A key's first count starts a
// period; a count one to two periods later starts the next one, a count
// after that a new one from its own time; period starts are even
// milliseconds. [Counter.Estimate] and [Counter.Charge] are that
// arithmetic. The file admits a request when the estimate plus its cost
// stays within Limit, and counts only admitted requests.
//
// The correction means a counter of 1 admits one request per two periods:
// after the request that fills the current period, the next one reads 1
// until the following period is over too. [CounterFor] therefore maps a
// limit of one request per interval I to 1 per I/2.
type Counter struct {
	Limit  int64
	Period time.Duration
	// Fidelity and Why describe the mapping from the policy's limit.
	Fidelity export.Fidelity
	Why      string
}

// Rate is the counter's period as the stick table writes it:
// "gpc0_rate(10s)", "gpc0_rate(2400ms)".
func (c Counter) Rate() string { return "gpc0_rate(" + duration(c.Period) + ")" }

// To is the mapping's To: "10 per gpc0_rate(2s)".
func (c Counter) To() string { return fmt.Sprintf("%d per %s", c.Limit, c.Rate()) }

// RetryAfter is the whole seconds, at least 1, in which a full counter's
// estimate drops by one request at the long-run rate: Period/Limit, or two
// periods for a counter of 1 (see [Counter]). It is the wait of a client
// just over the limit once the previous period is full.
func (c Counter) RetryAfter() int64 {
	ms := c.Period.Milliseconds()
	if c.Limit == 1 {
		ms *= 2
	}
	return max(1, (ms+c.Limit*1000-1)/(c.Limit*1000))
}

// Meter is one key's frequency counter in a stick table (HAProxy 2.6's
// freq_ctr): the start of its current period in milliseconds of HAProxy's
// clock, and the counts of the current and previous periods. The zero
// value is a key that has never been counted. It only changes through
// [Counter.Charge]; reading it changes nothing.
type Meter struct {
	started    bool
	tick       int64 // ms, even
	prev, curr int64
}

// Estimate is gpc0_rate as HAProxy reads it at now (HAProxy's clock,
// truncated to milliseconds): see [Counter].
func (c Counter) Estimate(m Meter, now time.Duration) int64 {
	if !m.started {
		return 0
	}
	p, t := c.Period.Milliseconds(), now.Milliseconds()
	remain, curr, prev := m.tick+p-t, m.curr, m.prev
	if remain < 0 {
		// The current period is over: it is the previous one now, or
		// too old to count when two are.
		remain += p
		if remain < 0 {
			prev = 0
		} else {
			prev = curr
		}
		curr = 0
	}
	if curr == 0 && prev <= 1 {
		return prev
	}
	return curr + prev*remain/p
}

// Over reports whether a request of cost at now is over the limit: the
// estimate plus the cost is more than Limit. That is the file's test.
func (c Counter) Over(m Meter, now time.Duration, cost int64) bool {
	return c.Estimate(m, now)+cost > c.Limit
}

// Charge counts cost units at now, as the file's sc-inc-gpc0 rules do for
// an admitted request: the first one rotates the periods when the current
// one is over.
func (c Counter) Charge(m *Meter, now time.Duration, cost int64) {
	p, t := c.Period.Milliseconds(), now.Milliseconds()
	switch {
	case !m.started:
		*m = Meter{started: true, tick: t &^ 1}
	case t-m.tick >= p:
		m.prev, m.curr = m.curr, 0
		m.tick += p
		if t-m.tick >= p {
			// Two periods or more without a count.
			m.prev, m.tick = 0, t
		}
		m.tick &^= 1
	}
	m.curr += cost
}

// CounterFor maps one limit (already divided over replicas when it must
// be) to a counter:
//
//	sliding_window (L, W)  L per W   approximate: truncation, periods start at first use
//	sliding_log (L, W)     L per W   approximate: an estimate of the log
//	fixed_window (L, W)    L per W   approximate: sliding, not reset at the window's edge
//	token_bucket, gcra     b per b/r approximate (export.Window)
//	leaky_bucket (r, q)    q+1 per (q+1)/r, rejecting instead of delaying
//
// A limit of one request per interval I (a burst or queue+1 of 1, a
// fixed window or sliding log of 1) is 1 per ⌈I/2⌉ ms instead, since a
// counter of 1 admits one request per two periods (see [Counter]): the
// next request passes 2·⌈I/2⌉ or one millisecond more after the last
// admitted one, never before I. A sliding window of 1 keeps 1 per W:
// ratelab's sliding window also keeps a limit of 1 full until the window
// after the request's is over.
//
// The period is rounded to whole milliseconds; ok is false when it is
// longer than MaxPeriod.
func CounterFor(s algorithms.Spec) (c Counter, ok bool) {
	limit, window, why := export.Window(s)
	var reasons []string
	single := limit == 1 && s.Algorithm != algorithms.NameSlidingWindow
	switch s.Algorithm {
	case algorithms.NameSlidingWindow:
		reasons = append(reasons, "HAProxy's counter is the same estimate, current + previous·(W − elapsed)/W, but truncates the previous period's share where ratelab rounds it up (it may admit a request up to one request's worth of time early), and its periods start at the key's first request instead of at multiples of W; "+spanBound(limit, window))
		if limit == 1 {
			reasons = append(reasons, "with a limit of 1 both admit at most one request per two windows under steady load, but after an idle spell ratelab's admits again once the window after the request's is over (1 to 2 W later) where HAProxy's waits 2 W from the request: up to one window later")
		}
	case algorithms.NameSlidingLog:
		if !single {
			reasons = append(reasons, "HAProxy estimates the log from two periods' counts, current + previous·(W − elapsed)/W, assuming the previous period's requests were spread evenly: "+
				spanBound(limit, window)+", where the log admits at most L in any span up to W, so bursty traffic gets up to L·t/W + 1 more; after a burst it may get fewer, the previous period weighing on the current one")
		}
	case algorithms.NameFixedWindow:
		slides := "HAProxy's counter slides"
		if !single {
			slides += ": " + spanBound(limit, window) + ", so"
		}
		reasons = append(reasons, slides+" it never admits the 2× limit a fixed window allows just across its edge, and it admits less than the full limit just after the edge while the previous window still weighs")
	case algorithms.NameLeakyBucket:
		if single {
			reasons = append(reasons, "a leaky bucket without a queue admits one request per 1/r")
		} else {
			reasons = append(reasons, why)
		}
		reasons = append(reasons, "HAProxy cannot hold a request back, so requests the queue would delay are rejected")
	default:
		if !single {
			reasons = append(reasons, why,
				fmt.Sprintf("in any span of t seconds the counter admits at most b + r·t + 1 = %d + %s·t + 1 requests of cost 1, one more than the bucket's b + r·t (its estimate truncates the previous period's share), and after a spell at the limit it may admit fewer than the bucket, the previous period weighing on the current one", limit, fmtFloat(s.Rate)))
		}
	}
	if !single && !slices.Contains([]algorithms.Name{algorithms.NameFixedWindow, algorithms.NameSlidingLog, algorithms.NameSlidingWindow}, s.Algorithm) {
		reasons = append(reasons, "HAProxy's period slides, so the quota comes back over the following period, weighted, rather than all at once")
	}
	period := time.Duration(math.Round(window*1000)) * time.Millisecond
	if single {
		// ⌈I/2⌉ ms; the rounding to whole ms is part of the stated bound.
		period = time.Duration(math.Ceil(window*1000/2-1e-9)) * time.Millisecond
	}
	if period < time.Millisecond {
		period = time.Millisecond
	}
	if period > MaxPeriod {
		return Counter{Limit: limit, Period: period, Fidelity: export.NotExpressible,
			Why: fmt.Sprintf("a period of %s is longer than HAProxy's counters can hold (%s)", period, MaxPeriod)}, false
	}
	switch {
	case single:
		// Admitted 2P or 2P+1 ms after the last admitted request (the
		// period starts on an even millisecond), against I.
		late := math.Ceil(float64(2*period.Milliseconds()+1) - window*1000 - 1e-9)
		reasons = append(reasons, fmt.Sprintf("one request per %ss as HAProxy's counter 1 per %s, which admits one request per two periods: the next request passes %d or %d ms after the last admitted one, never before %ss and at most %d ms after it (HAProxy counts whole milliseconds); the same long-run rate to within %d ms per request, one request at a time",
			fmtFloat(window), duration(period), 2*period.Milliseconds(), 2*period.Milliseconds()+1, fmtFloat(window), int64(late), int64(late)))
	case math.Abs(period.Seconds()-window) > 1e-9*window:
		reasons = append(reasons, fmt.Sprintf("the period %ss is rounded to %s (HAProxy counts in milliseconds)", fmtFloat(window), duration(period)))
	}
	return Counter{Limit: limit, Period: period, Fidelity: export.Approximate, Why: strings.Join(reasons, "; ")}, true
}

// spanBound states what a counter of limit per window seconds admits at
// most in any span of time (TestCounterSpanBound measures it on the
// model).
func spanBound(limit int64, window float64) string {
	return fmt.Sprintf("in any span of t seconds the counter admits at most L + L·t/W + 1 = %d + %s·t + 1 requests of cost 1", limit, fmtFloat(float64(limit)/window))
}

// duration formats d as HAProxy reads it: whole seconds as "10s", else
// milliseconds "2400ms".
func duration(d time.Duration) string {
	ms := d.Milliseconds()
	if ms%1000 == 0 {
		return fmt.Sprintf("%ds", ms/1000)
	}
	return fmt.Sprintf("%dms", ms)
}

func fmtFloat(f float64) string { return fmt.Sprint(f) }
