package algorithms

import (
	"math/bits"
	"time"
)

// SlidingWindow is the sliding window counter per key: two counters for the
// current and previous aligned windows, and the estimate
//
//	prev·(1 − elapsed/W) + current
//
// where elapsed is the time since the current window began. A request of cost
// n is admitted when the estimate plus n is at most Limit. It approximates
// the sliding log in O(1) memory by assuming the previous window's requests
// were spread evenly; it can let more than Limit through in a span of W when
// they were not.
//
// The comparison is exact: prev·(W − elapsed) + (current + n)·W ≤ Limit·W is
// evaluated in 128-bit integers, so there is no float rounding at the edges.
//
// The zero value is not usable; build one with New. Not safe for concurrent use.
type SlidingWindow struct {
	limit    int64
	window   time.Duration
	counters table[slidingWindowState]
}

// slidingWindowState is one key's pair of counters. Zero counters are rested
// in any window.
type slidingWindowState struct {
	index      int64 // window index k of curr
	prev, curr int64
}

var _ Limiter = (*SlidingWindow)(nil)

func newSlidingWindow(limit int64, window time.Duration) *SlidingWindow {
	return &SlidingWindow{limit: limit, window: window, counters: newTable[slidingWindowState](2 * window)}
}

// Spec implements Limiter.
func (l *SlidingWindow) Spec() Spec {
	return Spec{Algorithm: NameSlidingWindow, Limit: l.limit, Window: l.window}
}

// Keys implements Limiter.
func (l *SlidingWindow) Keys() int { return l.counters.len() }

// mulDiv returns ⌊a·b/c⌋ and ⌈a·b/c⌉ for non-negative a, b and positive c,
// with a·b/c < 2^63.
func mulDiv(a, b, c int64) (floor, ceil int64) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, r := bits.Div64(hi, lo, uint64(c))
	if r != 0 {
		return int64(q), int64(q) + 1
	}
	return int64(q), int64(q)
}

// Allow implements Limiter.
func (l *SlidingWindow) Allow(key string, now time.Duration, cost int64) Decision {
	i, fresh := l.counters.slot(key)
	d := l.allow(&l.counters.states[i], now, cost)
	if fresh {
		l.counters.file(i, l.due(&l.counters.states[i]))
	}
	return d
}

func (l *SlidingWindow) allow(s *slidingWindowState, now time.Duration, cost int64) Decision {
	w := int64(l.window)
	k := floorDiv(int64(now), w)
	prev, curr := int64(0), int64(0)
	switch {
	case s.prev == 0 && s.curr == 0:
	case s.index >= k:
		// The key's window; a time before it stays in it.
		k, prev, curr = s.index, s.prev, s.curr
	case s.index == k-1:
		prev = s.curr
	}
	// A time before window k (a clock stepping back) is decided as the
	// window's start, lag later; Reset and RetryAfter still count from now.
	elapsed, lag := int64(now)-k*w, int64(0)
	if elapsed < 0 {
		elapsed, lag = 0, -elapsed
	}
	// weighted = ⌈prev·(W − elapsed)/W⌉ is what the previous window still
	// costs in whole units.
	_, weighted := mulDiv(prev, w-elapsed, w)
	reset := time.Duration(0)
	switch {
	case curr > 0:
		reset = time.Duration((k+2)*w - int64(now))
	case prev > 0:
		reset = time.Duration((k+1)*w - int64(now))
	}
	remaining := l.limit - curr - weighted
	if remaining < 0 {
		remaining = 0
	}
	if cost <= 0 {
		return Decision{Allowed: true, Remaining: remaining, Reset: reset}
	}
	if cost > l.limit {
		return Decision{Remaining: remaining, Wait: Never, Reset: reset}
	}
	if room := l.limit - curr - cost; room < 0 || (prev > 0 && !fits(prev, w-elapsed, room, w)) {
		return Decision{Remaining: remaining, Wait: time.Duration(lag) + l.retryAfter(k, elapsed, prev, curr, cost), Reset: reset}
	}
	s.index, s.prev, s.curr = k, prev, curr+cost
	remaining = l.limit - s.curr - weighted
	if remaining < 0 {
		remaining = 0
	}
	return Decision{Allowed: true, Remaining: remaining, Reset: time.Duration((k+2)*w - int64(now))}
}

// fits reports prev·left ≤ room·w in 128-bit arithmetic.
func fits(prev, left, room, w int64) bool {
	h1, l1 := bits.Mul64(uint64(prev), uint64(left))
	h2, l2 := bits.Mul64(uint64(room), uint64(w))
	return h1 < h2 || (h1 == h2 && l1 <= l2)
}

// retryAfter is the wait from elapsed (into window k) until a request of
// cost passes, given the counters prev and curr of window k.
func (l *SlidingWindow) retryAfter(k, elapsed, prev, curr, cost int64) time.Duration {
	w := int64(l.window)
	if room := l.limit - curr - cost; room >= 0 {
		// Later in this window: prev·(W − e) ≤ room·W ⇔ e ≥ W − ⌊room·W/prev⌋.
		fl, _ := mulDiv(room, w, prev)
		return time.Duration(w - fl - elapsed)
	}
	// In the next window, curr becomes prev and its current count is 0:
	// curr·(W − e) ≤ (limit − cost)·W ⇔ e ≥ W − ⌊(limit − cost)·W/curr⌋.
	fl, _ := mulDiv(l.limit-cost, w, curr)
	return time.Duration(w - elapsed + w - fl)
}

// Reclaim implements Limiter: a key is rested when both its windows have ended.
func (l *SlidingWindow) Reclaim(now time.Duration) int {
	return l.counters.reclaim(now, func(s *slidingWindowState) bool { return l.rested(s, now) }, l.due)
}

// rested reports whether s is rested at now: both its windows have ended.
func (l *SlidingWindow) rested(s *slidingWindowState, now time.Duration) bool {
	return (s.prev == 0 && s.curr == 0) || s.index < floorDiv(int64(now), int64(l.window))-1
}

// due is when both of s's windows have ended.
func (l *SlidingWindow) due(s *slidingWindowState) time.Duration {
	if s.prev == 0 && s.curr == 0 {
		return rested
	}
	return windowStart(s.index+2, l.window)
}
