package algorithms

import "time"

// SlidingLog keeps, per key, the log of admitted requests in the last
// Window: a request of cost n at time now is admitted when the cost admitted
// in (now−W, now] plus n is at most Limit. It is exact: no span of length W
// ever holds more than Limit admitted cost.
//
// The log is a ring buffer of (time, cumulative cost) entries; requests at
// the same instant share an entry, so a key holds at most Limit entries and
// memory is O(Limit) per key, grown on demand. Deciding is amortised O(1);
// the Retry-After of a rejection is found by binary search, O(log Limit).
//
// The zero value is not usable; build one with New. Not safe for concurrent use.
type SlidingLog struct {
	limit  int64
	window time.Duration
	logs   table[slidingLogState]
}

type logEntry struct {
	at  time.Duration
	cum int64 // cost admitted by the key up to and including this entry
}

// slidingLogState is one key's log. The zero value is an empty log.
type slidingLogState struct {
	ring    []logEntry
	head, n int   // ring[head] is the oldest of n entries
	base    int64 // cumulative cost of everything that has left the window
	total   int64 // cumulative cost of everything admitted
}

var _ Limiter = (*SlidingLog)(nil)

func newSlidingLog(limit int64, window time.Duration) *SlidingLog {
	return &SlidingLog{limit: limit, window: window}
}

// Spec implements Limiter.
func (l *SlidingLog) Spec() Spec {
	return Spec{Algorithm: NameSlidingLog, Limit: l.limit, Window: l.window}
}

// Keys implements Limiter.
func (l *SlidingLog) Keys() int { return l.logs.len() }

func (s *slidingLogState) at(i int) *logEntry { return &s.ring[(s.head+i)&(len(s.ring)-1)] }

// expire drops entries at or before now−W: they are outside (now−W, now].
func (s *slidingLogState) expire(now, window time.Duration) {
	for s.n > 0 {
		e := &s.ring[s.head]
		if e.at > now-window {
			return
		}
		s.base = e.cum
		s.head = (s.head + 1) & (len(s.ring) - 1)
		s.n--
	}
}

// Allow implements Limiter.
func (l *SlidingLog) Allow(key string, now time.Duration, cost int64) Decision {
	s := l.logs.state(key)
	lag := time.Duration(0)
	if s.n > 0 {
		if last := s.at(s.n - 1).at; now < last {
			lag, now = last-now, last
		}
	}
	s.expire(now, l.window)
	used := s.total - s.base
	reset := time.Duration(0)
	if s.n > 0 {
		reset = lag + s.at(s.n-1).at + l.window - now
	}
	if cost <= 0 {
		return Decision{Allowed: true, Remaining: l.limit - used, Reset: reset}
	}
	if cost > l.limit {
		return Decision{Remaining: l.limit - used, Wait: Never, Reset: reset}
	}
	if used+cost > l.limit {
		// The request passes once the oldest entries holding at least
		// need units have left: the first entry whose cumulative cost since
		// base reaches need leaves at its time + W.
		need := used + cost - l.limit
		lo, hi := 0, s.n-1
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if s.at(mid).cum-s.base >= need {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return Decision{Remaining: l.limit - used, Wait: lag + s.at(lo).at + l.window - now, Reset: reset}
	}
	s.total += cost
	if s.n > 0 && s.at(s.n-1).at == now {
		s.at(s.n - 1).cum = s.total
	} else {
		if s.n == len(s.ring) {
			s.grow()
		}
		*s.at(s.n) = logEntry{at: now, cum: s.total}
		s.n++
	}
	return Decision{Allowed: true, Remaining: l.limit - (s.total - s.base), Reset: lag + l.window}
}

// grow doubles the ring, keeping the order. Sizes are powers of two so
// indices wrap with a mask. A full ring of fewer than limit entries is the
// only one that grows (limit entries of cost ≥ 1 leave no room to admit),
// so the ring stays under max(4, 2·limit).
func (s *slidingLogState) grow() {
	c := max(4, 2*len(s.ring))
	ring := make([]logEntry, c)
	for i := 0; i < s.n; i++ {
		ring[i] = *s.at(i)
	}
	s.ring, s.head = ring, 0
}

// Reclaim implements Limiter: a key is rested when its log is empty.
func (l *SlidingLog) Reclaim(now time.Duration) int {
	return l.logs.reclaim(func(s *slidingLogState) bool {
		return s.n == 0 || s.at(s.n-1).at <= now-l.window
	})
}
