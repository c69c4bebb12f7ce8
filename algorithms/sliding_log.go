package algorithms

import (
	"math/bits"
	"time"
)

// SlidingLog keeps, per key, the log of admitted requests in the last
// Window: a request of cost n at time now is admitted when the cost admitted
// in (now−W, now] plus n is at most Limit. It is exact: no span of length W
// ever holds more than Limit admitted cost.
//
// The log is a ring buffer of (time, cumulative cost) entries; requests at
// the same instant share an entry, so a key holds at most Limit entries,
// grown on demand (doubling, up to exactly Limit entries). Deciding is
// amortised O(1); the Retry-After of a rejection is found by binary search,
// O(log Limit).
//
// Entries are exact, in nanoseconds and units of cost, and packed in one
// 64-bit word when the limiter's window and limit allow it: the time as an
// offset from a per-key base time in the high bits, the cumulative cost as
// an offset from a per-key base cost in the low bits. The offsets of the
// entries in (now−W, now] are under W and Limit, so with 2W and 2·Limit
// fitting the two fields (bits.Len64(2W) + bits.Len64(2·Limit) ≤ 64) a key
// moves its bases, re-encoding its entries, at most once per window and
// once per Limit units admitted: still amortised O(1). That holds for every
// window up to 4.29 s, a minute up to 67 M requests, an hour up to 1 048 575
// and a day up to 32 767; other logs take two words per entry. A busy key
// (one at its limit) thus holds 8 bytes per admitted request in the window
// (16 when not packed), and a key below it at most twice its most entries
// so far; see the README for the per-key overhead.
//
// The zero value is not usable; build one with New. Not safe for concurrent use.
type SlidingLog struct {
	limit  int64
	window time.Duration
	packed bool // entries take one word: time offset << cbits | cost offset
	cbits  uint // bits of the cost offset
	logs   table[slidingLogState]
}

// slidingLogState is one key's log. The zero value is an empty log.
type slidingLogState struct {
	ring    []uint64 // entries: one word each if packed, else two (time, cum)
	head, n int32    // the oldest of n entries is entry head of the ring
	at0     time.Duration
	cum0    int64 // packed entries are offsets from at0 and cum0
	base    int64 // cumulative cost of everything that has left the window
	total   int64 // cumulative cost of everything admitted
}

var _ Limiter = (*SlidingLog)(nil)

func newSlidingLog(limit int64, window time.Duration) *SlidingLog {
	cbits := bits.Len64(uint64(2 * limit))
	return &SlidingLog{limit: limit, window: window, cbits: uint(cbits),
		packed: bits.Len64(uint64(2*window))+cbits <= 64,
		logs:   newTable[slidingLogState](window)}
}

// Spec implements Limiter.
func (l *SlidingLog) Spec() Spec {
	return Spec{Algorithm: NameSlidingLog, Limit: l.limit, Window: l.window}
}

// Keys implements Limiter.
func (l *SlidingLog) Keys() int { return l.logs.len() }

// capacity is how many entries s's ring holds.
func (l *SlidingLog) capacity(s *slidingLogState) int {
	if l.packed {
		return len(s.ring)
	}
	return len(s.ring) / 2
}

// index is the ring position of s's entry i, the oldest being 0.
func (l *SlidingLog) index(s *slidingLogState, i int) int {
	j := int(s.head) + i
	if c := l.capacity(s); j >= c {
		j -= c
	}
	return j
}

// entry returns the time and cumulative cost of s's entry i.
func (l *SlidingLog) entry(s *slidingLogState, i int) (time.Duration, int64) {
	if !l.packed {
		return l.wideEntry(s, i)
	}
	j := int(s.head) + i
	if j >= len(s.ring) {
		j -= len(s.ring)
	}
	w := s.ring[j]
	return s.at0 + time.Duration(w>>l.cbits), s.cum0 + int64(w&(1<<l.cbits-1))
}

// wideEntry is entry for two-word entries.
func (l *SlidingLog) wideEntry(s *slidingLogState, i int) (time.Duration, int64) {
	j := l.index(s, i)
	return time.Duration(s.ring[2*j]), int64(s.ring[2*j+1])
}

// put stores entry i of s, which fits the bases of s if packed.
func (l *SlidingLog) put(s *slidingLogState, i int, at time.Duration, cum int64) {
	j := l.index(s, i)
	if l.packed {
		s.ring[j] = uint64(at-s.at0)<<l.cbits | uint64(cum-s.cum0)
		return
	}
	s.ring[2*j], s.ring[2*j+1] = uint64(at), uint64(cum)
}

// fits reports whether an entry (at, cum) fits the bases of s.
func (l *SlidingLog) fits(s *slidingLogState, at time.Duration, cum int64) bool {
	return !l.packed || (uint64(at-s.at0) < 1<<(64-l.cbits) && uint64(cum-s.cum0) < 1<<l.cbits)
}

// lastAt is the time of s's newest entry; s must have one.
func (l *SlidingLog) lastAt(s *slidingLogState) time.Duration {
	if !l.packed {
		at, _ := l.wideEntry(s, int(s.n)-1)
		return at
	}
	j := int(s.head) + int(s.n) - 1
	if j >= len(s.ring) {
		j -= len(s.ring)
	}
	return s.at0 + time.Duration(s.ring[j]>>l.cbits)
}

// expire drops entries at or before now−W: they are outside (now−W, now].
// It reports whether it emptied the log, which rests the key at any time,
// even before its due time (last entry + W) if now is later than that.
func (l *SlidingLog) expire(s *slidingLogState, now time.Duration) (emptied bool) {
	if s.n == 0 {
		return false
	}
	for s.n > 0 {
		at, cum := l.entry(s, 0)
		if at > now-l.window {
			return false
		}
		s.base = cum
		s.head = int32(l.index(s, 1))
		s.n--
	}
	return true
}

// Allow implements Limiter.
func (l *SlidingLog) Allow(key string, now time.Duration, cost int64) Decision {
	i, fresh := l.logs.slot(key)
	d := l.allow(&l.logs.states[i], now, cost, &l.logs.latest)
	if fresh {
		l.logs.file(i, l.due(&l.logs.states[i]))
	}
	return d
}

// allow decides on s; when expiring entries leaves s rested it moves
// *latest (the table's, for Reclaim) up to now, if latest is not nil.
func (l *SlidingLog) allow(s *slidingLogState, now time.Duration, cost int64, latest *time.Duration) Decision {
	lag, last := time.Duration(0), time.Duration(0)
	if s.n > 0 {
		if last = l.lastAt(s); now < last {
			lag, now = last-now, last
		}
	}
	if l.expire(s, now) && latest != nil && now > *latest {
		*latest = now
	}
	used := s.total - s.base
	reset := time.Duration(0)
	if s.n > 0 {
		reset = lag + last + l.window - now
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
		// The search gallops from the oldest entry (0, 1, 3, 7, …), which
		// is the answer for most requests of cost 1, and reads entries
		// near it first.
		need := used + cost - l.limit
		lo, hi := 0, int(s.n)-1
		for step := 1; lo < hi; step *= 2 {
			if _, cum := l.entry(s, lo); cum-s.base >= need {
				hi = lo
				break
			}
			if lo+step >= hi {
				lo++
				break
			}
			if _, cum := l.entry(s, lo+step); cum-s.base >= need {
				lo, hi = lo+1, lo+step
				break
			}
			lo += step + 1
		}
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if _, cum := l.entry(s, mid); cum-s.base >= need {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		at, _ := l.entry(s, lo)
		return Decision{Remaining: l.limit - used, Wait: lag + at + l.window - now, Reset: reset}
	}
	s.total += cost
	l.append(s, now, s.n > 0 && last == now)
	return Decision{Allowed: true, Remaining: l.limit - (s.total - s.base), Reset: lag + l.window}
}

// append records s.total at now: in the newest entry if merge (it is at
// now), else in a new one. now is not before the newest entry, and entries
// before now−W have expired.
func (l *SlidingLog) append(s *slidingLogState, now time.Duration, merge bool) {
	if s.n == 0 {
		s.at0, s.cum0 = now, s.base
	}
	switch {
	case !merge && int(s.n) == l.capacity(s):
		l.grow(s, now)
	case !l.fits(s, now, s.total):
		l.rebase(s, now)
	}
	if merge {
		l.put(s, int(s.n)-1, now, s.total)
		return
	}
	l.put(s, int(s.n), now, s.total)
	s.n++
}

// bases are the bases that fit every entry of s and one at now: the oldest
// entry's time (or now) and the cost that has left the window.
func (l *SlidingLog) bases(s *slidingLogState, now time.Duration) (time.Duration, int64) {
	if s.n == 0 {
		return now, s.base
	}
	at, _ := l.entry(s, 0)
	return at, s.base
}

// rebase moves s's bases to those of bases, re-encoding its entries in
// place. Entries are in (now−W, now] and their costs in (base, base+Limit],
// under half of each field, so the next rebase comes after all of them
// have left the window.
func (l *SlidingLog) rebase(s *slidingLogState, now time.Duration) {
	at0, cum0 := l.bases(s, now)
	for i := 0; i < int(s.n); i++ {
		at, cum := l.entry(s, i)
		j := l.index(s, i)
		s.ring[j] = uint64(at-at0)<<l.cbits | uint64(cum-cum0)
	}
	s.at0, s.cum0 = at0, cum0
}

// grow doubles the ring, up to Limit entries, keeping the order and moving
// the bases. A full ring of fewer than Limit entries is the only one that
// grows (Limit entries of cost ≥ 1 leave no room to admit).
func (l *SlidingLog) grow(s *slidingLogState, now time.Duration) {
	c := int(min(l.limit, int64(max(4, 2*l.capacity(s)))))
	grown := slidingLogState{head: 0, n: s.n, base: s.base, total: s.total}
	grown.at0, grown.cum0 = l.bases(s, now)
	if l.packed {
		grown.ring = make([]uint64, c)
	} else {
		grown.ring = make([]uint64, 2*c)
	}
	for i := 0; i < int(s.n); i++ {
		at, cum := l.entry(s, i)
		l.put(&grown, i, at, cum)
	}
	*s = grown
}

// Reclaim implements Limiter: a key is rested when its log is empty.
func (l *SlidingLog) Reclaim(now time.Duration) int {
	return l.logs.reclaim(now, func(s *slidingLogState) bool { return l.rested(s, now) }, l.due)
}

// rested reports whether s is rested at now: its log is empty in
// (now−W, now].
func (l *SlidingLog) rested(s *slidingLogState, now time.Duration) bool {
	return s.n == 0 || l.lastAt(s) <= now-l.window
}

// due is when s's last entry leaves the window.
func (l *SlidingLog) due(s *slidingLogState) time.Duration {
	if s.n == 0 {
		return rested
	}
	return addSat(l.lastAt(s), l.window)
}
