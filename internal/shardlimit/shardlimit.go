// Package shardlimit makes one of the project's limiters safe and fast for
// concurrent use: a Limiter holds N independent algorithms.Limiter shards,
// each behind its own mutex, and sends every key to one shard by a hash of
// the key (hash/maphash, computed once per call). Requests of keys in
// different shards never wait for each other, so throughput grows with the
// cores while a key's decisions stay exactly those of a single
// algorithms.Limiter: the per-key state of the project's limiters is
// independent of the other keys, a key's state lives in one shard only,
// and Reclaim drops only rested keys, which decide as new ones do.
//
// Times are virtual, as in package algorithms: a time.Duration since the
// start of the caller's clock. The Limiter reads no clock.
//
// # Reclamation
//
// A Limiter drops rested keys (Reclaim) in two ways, so its memory stays
// proportional to the clients active in the last ReclaimInterval:
//
//   - by time: the first call at or past ReclaimInterval after the last
//     sweep reclaims every shard, one shard lock at a time (the other
//     shards keep deciding meanwhile);
//   - by size: a shard whose keys reach its threshold is reclaimed by the
//     call that found it, and its threshold becomes twice the keys left
//     (at least ReclaimMinKeys/N), so a flood of new keys costs amortised
//     O(1) per call and no shard holds more than max(ReclaimMinKeys/N,
//     2·its live keys) keys.
package shardlimit

import (
	"hash/maphash"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ratelab/ratelab/algorithms"
)

// Options tune a Limiter. The zero value means DefaultShards(), no sweep
// by time and a size threshold of 4096 keys in all.
type Options struct {
	// Shards is the number of shards, rounded up to a power of two; 0
	// means DefaultShards().
	Shards int
	// ReclaimInterval is the virtual time between two sweeps of every
	// shard; 0 means none (only the size threshold reclaims).
	ReclaimInterval time.Duration
	// ReclaimMinKeys is the least total of the shards' size thresholds;
	// 0 means 4096.
	ReclaimMinKeys int
}

// DefaultShards is the shard count when Options.Shards is 0: 16 per
// GOMAXPROCS, rounded up to a power of two, so that two goroutines rarely
// want the same shard at once.
func DefaultShards() int { return 16 * runtime.GOMAXPROCS(0) }

// shardState is one limiter and its lock.
type shardState struct {
	mu          sync.Mutex
	lim         algorithms.Limiter
	reclaimKeys int // reclaim this shard when its keys reach this
}

// shard is a shardState padded to whole 128-byte blocks (two cache lines
// on amd64, one on arm64), so that two cores working on neighbouring
// shards do not share a line.
type shard struct {
	shardState
	_ [128 - unsafe.Sizeof(shardState{})%128]byte
}

// Limiter decides requests for many keys concurrently with one limiter
// spec; it is safe for concurrent use. Build one with New.
type Limiter struct {
	spec     algorithms.Spec
	capacity int64 // spec.Capacity()
	seed     maphash.Seed
	mask     uint64
	shards   []shard
	interval time.Duration
	minKeys  int // per shard
	// lastSweep is the virtual time of the last sweep by time, in ns.
	lastSweep atomic.Int64
}

// New returns a sharded limiter of spec (any algorithm of package
// algorithms), or the spec's error.
func New(spec algorithms.Spec, opts Options) (*Limiter, error) {
	n := opts.Shards
	if n <= 0 {
		n = DefaultShards()
	}
	p := 1
	for p < n {
		p <<= 1
	}
	minKeys := opts.ReclaimMinKeys
	if minKeys <= 0 {
		minKeys = 4096
	}
	l := &Limiter{
		spec:     spec,
		capacity: spec.Capacity(),
		seed:     maphash.MakeSeed(),
		mask:     uint64(p - 1),
		shards:   make([]shard, p),
		interval: opts.ReclaimInterval,
		minKeys:  max(1, minKeys/p),
	}
	for i := range l.shards {
		lim, err := algorithms.New(spec)
		if err != nil {
			return nil, err
		}
		l.shards[i].lim = lim
		l.shards[i].reclaimKeys = l.minKeys
	}
	return l, nil
}

// Spec returns the limiter's algorithm and parameters.
func (l *Limiter) Spec() algorithms.Spec { return l.spec }

// Shards returns the number of shards.
func (l *Limiter) Shards() int { return len(l.shards) }

// shardOf is key's shard.
func (l *Limiter) shardOf(key string) *shard {
	return &l.shards[maphash.String(l.seed, key)&l.mask]
}

// Allow decides one request of cost 1 from key at now; see AllowN.
func (l *Limiter) Allow(key string, now time.Duration) (algorithms.Decision, time.Duration) {
	return l.AllowN(key, now, 1)
}

// AllowN decides a request of cost n from key at virtual time now, exactly
// as algorithms.Limiter.Allow would, and for an admitted request also
// returns how long until the key has more quota (headers.UntilMore), read
// under the same shard lock as the decision so that no other request of
// the key comes in between. It then reclaims rested keys when due (see the
// package comment).
func (l *Limiter) AllowN(key string, now time.Duration, n int64) (algorithms.Decision, time.Duration) {
	s := l.shardOf(key)
	s.mu.Lock()
	d := s.lim.Allow(key, now, n)
	var more time.Duration
	if d.Allowed && d.Remaining < l.capacity {
		// headers.UntilMore, with the capacity read once in New.
		if next := s.lim.Allow(key, now, d.Remaining+1); !next.Allowed {
			more = next.RetryAfter()
		}
	}
	if s.lim.Keys() >= s.reclaimKeys {
		s.reclaim(now, l.minKeys)
	}
	s.mu.Unlock()
	if l.interval > 0 {
		if last := l.lastSweep.Load(); time.Duration(now)-time.Duration(last) >= l.interval && l.lastSweep.CompareAndSwap(last, int64(now)) {
			l.Reclaim(now)
		}
	}
	return d, more
}

// reclaim drops s's rested keys and sets its next threshold; s.mu is held.
func (s *shard) reclaim(now time.Duration, minKeys int) int {
	n := s.lim.Reclaim(now)
	s.reclaimKeys = max(minKeys, 2*s.lim.Keys())
	return n
}

// Reclaim drops the state of every rested key at now, one shard at a time,
// and returns how many it dropped.
func (l *Limiter) Reclaim(now time.Duration) int {
	dropped := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		dropped += s.reclaim(now, l.minKeys)
		s.mu.Unlock()
	}
	return dropped
}

// Keys returns how many keys hold state, summed shard by shard (each
// shard's count is exact at the moment it is read).
func (l *Limiter) Keys() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += s.lim.Keys()
		s.mu.Unlock()
	}
	return n
}
