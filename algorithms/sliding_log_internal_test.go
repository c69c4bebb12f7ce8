package algorithms

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// refSlidingLog is the sliding log as it was before its entries were
// packed: 16-byte (time, cumulative cost) entries, a power-of-two ring and
// a plain map. The packed log must decide exactly as it does.
type refSlidingLog struct {
	limit  int64
	window time.Duration
	logs   map[string]*refSlidingLogState
}

type refLogEntry struct {
	at  time.Duration
	cum int64 // cost admitted by the key up to and including this entry
}

// refSlidingLogState is one key's log. The zero value is an empty log.
type refSlidingLogState struct {
	ring    []refLogEntry
	head, n int   // ring[head] is the oldest of n entries
	base    int64 // cumulative cost of everything that has left the window
	total   int64 // cumulative cost of everything admitted
}

func (s *refSlidingLogState) at(i int) *refLogEntry { return &s.ring[(s.head+i)&(len(s.ring)-1)] }

// expire drops entries at or before now−W: they are outside (now−W, now].
func (s *refSlidingLogState) expire(now, window time.Duration) {
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
func (l *refSlidingLog) Allow(key string, now time.Duration, cost int64) Decision {
	s := l.logs[key]
	if s == nil {
		s = new(refSlidingLogState)
		l.logs[key] = s
	}
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
		*s.at(s.n) = refLogEntry{at: now, cum: s.total}
		s.n++
	}
	return Decision{Allowed: true, Remaining: l.limit - (s.total - s.base), Reset: lag + l.window}
}

// grow doubles the ring, keeping the order. Sizes are powers of two so
// indices wrap with a mask. A full ring of fewer than limit entries is the
// only one that grows (limit entries of cost ≥ 1 leave no room to admit),
// so the ring stays under max(4, 2·limit).
func (s *refSlidingLogState) grow() {
	c := max(4, 2*len(s.ring))
	ring := make([]refLogEntry, c)
	for i := 0; i < s.n; i++ {
		ring[i] = *s.at(i)
	}
	s.ring, s.head = ring, 0
}

func TestSlidingLogPackedMatchesUnpacked(t *testing.T) {
	// Long runs on few keys, so that keys move their bases many times,
	// with costs up to the limit, repeated instants and clocks stepping
	// back; packed and two-word logs alike must decide as the 16-byte log.
	day := 24 * time.Hour
	for _, c := range []struct {
		limit  int64
		window time.Duration
		packed bool
	}{
		{1, MinWindow, true},
		{3, 7 * time.Millisecond, true},
		{10, time.Second, true},
		{1000, time.Second, true},
		{1_000_000_000, 4 * time.Second, true},
		{1_000_000_000, 5 * time.Second, false},
		{1_048_575, time.Hour, true},
		{1_048_576, time.Hour, false},
		{32_767, day, true},
		{5, MaxWindow, true},
		{200, MaxWindow, false},
	} {
		t.Run(fmt.Sprintf("limit=%d,window=%s", c.limit, c.window), func(t *testing.T) {
			lim := newSlidingLog(c.limit, c.window)
			if lim.packed != c.packed {
				t.Fatalf("packed = %v, want %v", lim.packed, c.packed)
			}
			for seq := range 4 {
				rng := rand.New(rand.NewPCG(uint64(seq), 0x106))
				lim := newSlidingLog(c.limit, c.window)
				ref := &refSlidingLog{limit: c.limit, window: c.window, logs: make(map[string]*refSlidingLogState)}
				// About 2·limit requests per window while they pass, so
				// the log fills and empties; the limit bounds the entries.
				perWindow := float64(min(c.limit, 300)) * 2
				now := time.Duration(rng.Int64N(int64(c.window)))
				for i := range 20_000 {
					switch r := rng.IntN(100); {
					case r < 2:
						now += time.Duration(rng.Float64() * 3 * float64(c.window)) // idle
					case r < 20:
						// the same instant
					default:
						now += time.Duration(rng.ExpFloat64() * float64(c.window) / perWindow)
					}
					at := now
					if rng.IntN(20) == 0 {
						at -= time.Duration(rng.Float64() * float64(c.window) / 10)
					}
					key := fmt.Sprint("k", rng.IntN(3))
					cost := int64(1)
					switch r := rng.IntN(20); {
					case r == 0:
						cost = 0
					case r == 1:
						cost = 1 + rng.Int64N(c.limit)
					case r == 2:
						cost = c.limit + 1
					case r < 6:
						cost = 1 + rng.Int64N(min(c.limit, 5))
					}
					if got, want := lim.Allow(key, at, cost), ref.Allow(key, at, cost); got != want {
						t.Fatalf("seq %d, request %d (%s at %v cost %d): %+v, unpacked %+v", seq, i, key, at, cost, got, want)
					}
				}
			}
		})
	}
}

func TestSlidingLogBytesPerRequest(t *testing.T) {
	// Fill keys to their limit, each request at its own instant, and weigh
	// the heap. A packed log's ring then holds exactly one 8-byte word per
	// admitted request in the window (two when not packed); Go's allocator
	// rounds a ring under 32 KiB up to its size class, at most 1/8 more.
	// A key with one request takes at most slidingLogKeyBytes.
	for _, c := range []struct {
		limit  int64
		window time.Duration
		keys   int
		words  int // per entry
	}{
		{500, time.Second, 200, 1},
		{1000, time.Minute, 100, 1},
		{777, 24 * time.Hour, 100, 1},
		{4096, time.Second, 25, 1},
		{100_000, time.Second, 2, 1},
		{200, MaxWindow, 100, 2},
	} {
		t.Run(fmt.Sprintf("limit=%d,window=%s", c.limit, c.window), func(t *testing.T) {
			heap := func() int64 {
				runtime.GC()
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				return int64(m.HeapAlloc)
			}
			keys := make([]string, c.keys)
			for i := range keys {
				keys[i] = fmt.Sprint("client-", i)
			}
			gap := c.window / time.Duration(2*c.limit)
			lim := newSlidingLog(c.limit, c.window)
			before := heap()
			for _, k := range keys {
				lim.Allow(k, 0, 1)
			}
			one := heap()
			for j := int64(1); j < c.limit; j++ {
				for _, k := range keys {
					if !lim.Allow(k, time.Duration(j)*gap, 1).Allowed {
						t.Fatalf("request %d of %s rejected", j+1, k)
					}
				}
			}
			full := heap()
			if lim.Allow(keys[0], time.Duration(c.limit)*gap, 1).Allowed {
				t.Fatal("a request beyond the limit passed")
			}
			for _, s := range lim.logs.states {
				if got, want := len(s.ring), c.words*int(c.limit); got != want {
					t.Fatalf("a full key's ring holds %d words; want %d (%d per admitted request)", got, want, c.words)
				}
			}
			perKey := float64(one-before) / float64(c.keys)
			perRequest := float64(full-one) / float64(int64(c.keys)*(c.limit-1))
			t.Logf("%.1f bytes per key with one request, %.2f bytes per admitted request", perKey, perRequest)
			if want := float64(8*c.words) * 9 / 8; perRequest > want {
				t.Errorf("%.2f bytes per admitted request in the window; want at most %v", perRequest, want)
			}
			runtime.KeepAlive(lim)
		})
	}
	// A key with one request, weighed over 20 000 keys: with a few dozen,
	// a few KB that the runtime allocates between the two readings made
	// the figure swing by half.
	t.Run("per key", func(t *testing.T) {
		const n = 20_000
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprint("client-", i)
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		before := int64(m.HeapAlloc)
		lim := newSlidingLog(500, time.Second)
		for _, k := range keys {
			lim.Allow(k, 0, 1)
		}
		runtime.GC()
		runtime.ReadMemStats(&m)
		perKey := float64(int64(m.HeapAlloc)-before) / n
		t.Logf("%.1f bytes per key with one request", perKey)
		if perKey > slidingLogKeyBytes {
			t.Errorf("%.1f bytes per key with one request; want at most %d", perKey, slidingLogKeyBytes)
		}
		runtime.KeepAlive(lim)
	})
}

// slidingLogKeyBytes bounds what a key of the sliding log takes with one
// entry: its 64-byte state, its table entries (map entry, key header, list
// link, with the slack of slices and maps that grow by doubling) and a ring
// of 4 entries; its key's own bytes are the caller's.
const slidingLogKeyBytes = 256
