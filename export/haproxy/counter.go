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
// where elapsed is the time since the current period began; periods start
// at the key's first request and follow each other (after two idle periods
// the next request starts a new one). That is ratelab's sliding_window
// estimate, except that HAProxy truncates the previous period's share
// where ratelab rounds it up. The file admits a request when the estimate
// plus its cost stays within Limit, and counts only admitted requests.
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
// estimate drops by one request at the long-run rate Limit/Period: the
// wait of a client just over the limit once the previous period is full.
func (c Counter) RetryAfter() int64 {
	ms := c.Period.Milliseconds()
	return max(1, (ms+c.Limit*1000-1)/(c.Limit*1000))
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
// The period is rounded to whole milliseconds; ok is false when it is
// longer than MaxPeriod.
func CounterFor(s algorithms.Spec) (c Counter, ok bool) {
	limit, window, why := export.Window(s)
	var reasons []string
	switch s.Algorithm {
	case algorithms.NameSlidingWindow:
		reasons = append(reasons, "HAProxy's counter is the same estimate, current + previous·(W − elapsed)/W, but truncates the previous period's share where ratelab rounds it up (it may admit a request up to one request's worth of time early), and its periods start at the key's first request instead of at multiples of W")
	case algorithms.NameSlidingLog:
		reasons = append(reasons, "HAProxy estimates the log from two periods' counts, current + previous·(W − elapsed)/W, assuming the previous period's requests were spread evenly: bursty traffic can get a little more or less than the log allows")
	case algorithms.NameFixedWindow:
		reasons = append(reasons, "HAProxy's counter slides: it never admits the 2× limit a fixed window allows across its edge, and it admits less than the full limit just after the edge while the previous window still weighs")
	case algorithms.NameLeakyBucket:
		reasons = append(reasons, why, "HAProxy cannot hold a request back, so requests the queue would delay are rejected")
	default:
		reasons = append(reasons, why)
	}
	if !slices.Contains([]algorithms.Name{algorithms.NameFixedWindow, algorithms.NameSlidingLog, algorithms.NameSlidingWindow}, s.Algorithm) {
		reasons = append(reasons, "HAProxy's period slides, so the quota comes back over the following period, weighted, rather than all at once")
	}
	period := time.Duration(math.Round(window*1000)) * time.Millisecond
	if period < time.Millisecond {
		period = time.Millisecond
	}
	if period > MaxPeriod {
		return Counter{Limit: limit, Period: period, Fidelity: export.NotExpressible,
			Why: fmt.Sprintf("a period of %s is longer than HAProxy's counters can hold (%s)", period, MaxPeriod)}, false
	}
	if math.Abs(period.Seconds()-window) > 1e-9*window {
		reasons = append(reasons, fmt.Sprintf("the period %ss is rounded to %s (HAProxy counts in milliseconds)", fmtFloat(window), duration(period)))
	}
	return Counter{Limit: limit, Period: period, Fidelity: export.Approximate, Why: strings.Join(reasons, "; ")}, true
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
