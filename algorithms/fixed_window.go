package algorithms

import (
	"math"
	"math/bits"
	"time"
)

// FixedWindow counts admitted cost per key in windows aligned to the start of
// virtual time, [kW, (k+1)W). A request of cost n is admitted when the
// count plus n is at most Limit; the count starts again at zero when a new
// window begins, at exactly kW.
//
// Its known flaw is the boundary: Limit at the end of one window and Limit
// at the start of the next pass within a span far shorter than W, so up to
// 2·Limit requests get through in a short time.
//
// The zero value is not usable; build one with New. Not safe for concurrent use.
type FixedWindow struct {
	limit   int64
	window  time.Duration
	windows table[fixedWindowState]
}

// fixedWindowState is one key's counter. A zero count is rested in any window.
type fixedWindowState struct {
	index int64 // window index k of count
	count int64
}

var _ Limiter = (*FixedWindow)(nil)

func newFixedWindow(limit int64, window time.Duration) *FixedWindow {
	return &FixedWindow{limit: limit, window: window, windows: newTable[fixedWindowState](window)}
}

// Spec implements Limiter.
func (l *FixedWindow) Spec() Spec {
	return Spec{Algorithm: NameFixedWindow, Limit: l.limit, Window: l.window}
}

// Keys implements Limiter.
func (l *FixedWindow) Keys() int { return l.windows.len() }

// floorDiv is ⌊a/b⌋ for b > 0, also for negative a.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Allow implements Limiter.
func (l *FixedWindow) Allow(key string, now time.Duration, cost int64) Decision {
	i, fresh := l.windows.slot(key)
	d := l.allow(&l.windows.states[i], now, cost)
	if fresh {
		l.windows.file(i, l.due(&l.windows.states[i]))
	}
	return d
}

func (l *FixedWindow) allow(s *fixedWindowState, now time.Duration, cost int64) Decision {
	k := floorDiv(int64(now), int64(l.window))
	count := int64(0)
	if s.count > 0 && s.index >= k {
		// The key's window; a time before it (a clock stepping back) stays in it.
		k, count = s.index, s.count
	}
	toEnd := time.Duration(k+1)*l.window - now
	reset := toEnd
	if count == 0 {
		reset = 0
	}
	if cost <= 0 {
		return Decision{Allowed: true, Remaining: l.limit - count, Reset: reset}
	}
	if cost > l.limit {
		return Decision{Remaining: l.limit - count, Wait: Never, Reset: reset}
	}
	if count+cost > l.limit {
		return Decision{Remaining: l.limit - count, Wait: toEnd, Reset: reset}
	}
	s.index, s.count = k, count+cost
	return Decision{Allowed: true, Remaining: l.limit - s.count, Reset: toEnd}
}

// Reclaim implements Limiter: a key is rested when its window has ended.
func (l *FixedWindow) Reclaim(now time.Duration) int {
	return l.windows.reclaim(now, func(s *fixedWindowState) bool { return l.rested(s, now) }, l.due)
}

// rested reports whether s is rested at now: its window has ended.
func (l *FixedWindow) rested(s *fixedWindowState, now time.Duration) bool {
	return s.count == 0 || s.index < floorDiv(int64(now), int64(l.window))
}

// due is when s's window ends.
func (l *FixedWindow) due(s *fixedWindowState) time.Duration {
	if s.count == 0 {
		return rested
	}
	return windowStart(s.index+1, l.window)
}

// windowStart is k·w, saturating at the ends of time.Duration.
func windowStart(k int64, w time.Duration) time.Duration {
	hi, lo := bits.Mul64(uint64(max(k, -k)), uint64(w))
	if hi != 0 || lo > math.MaxInt64 {
		if k < 0 {
			return rested
		}
		return time.Duration(math.MaxInt64)
	}
	if k < 0 {
		return -time.Duration(lo)
	}
	return time.Duration(lo)
}
