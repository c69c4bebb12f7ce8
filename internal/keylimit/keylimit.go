// Package keylimit makes one of the project's limiters safe and fast for
// concurrent use: a Limiter keeps one algorithms.Cell per key (the key's
// state, its decision rule and its own lock, in one object) in a sync.Map,
// whose lookups of a known key take no lock and write nothing shared. Two
// goroutines deciding different keys touch different memory, so
// throughput grows with the cores, while a key's decisions stay exactly
// those of a single algorithms.Limiter: the per-key state of the
// project's limiters is independent of the other keys, a key has one live
// cell, and only rested cells are dropped, which decide as new ones do.
//
// (An earlier design held N algorithms.Limiter shards behind a mutex each.
// Every decision then wrote the shard's lock and its limiter's header
// besides the key's state, lines that both cores write, and two goroutines
// ran 1.15 times as fast as one.)
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
//     sweep sweeps every key, locking one cell at a time (the others keep
//     deciding meanwhile);
//   - by size: the call that finds the keys at the size threshold sweeps,
//     and the threshold becomes twice the keys left (at least
//     ReclaimMinKeys), so a flood of new keys costs amortised O(1) per
//     call and the Limiter holds at most about max(ReclaimMinKeys, 2·live
//     keys) keys (keys added while a sweep runs come on top).
//
// A sweep retires a rested cell under its lock before deleting it, and a
// goroutine that locks a retired cell looks its key up again, so no
// request is ever decided on a cell the map no longer holds.
package keylimit

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// Options tune a Limiter. The zero value means no sweep by time and a
// size threshold of 4096 keys.
type Options struct {
	// ReclaimInterval is the virtual time between two sweeps; 0 means
	// none (only the size threshold sweeps).
	ReclaimInterval time.Duration
	// ReclaimMinKeys is the least size threshold; 0 means 4096.
	ReclaimMinKeys int
}

// Limiter decides requests for many keys concurrently with one limiter
// spec; it is safe for concurrent use. Build one with New.
type Limiter struct {
	spec     algorithms.Spec
	capacity int64 // spec.Capacity()
	cells    algorithms.Cells
	keys     sync.Map // key → algorithms.Cell
	interval time.Duration
	minKeys  int64
	// held counts the keys in the map; threshold is the size that
	// triggers a sweep; sweeping is set while an automatic one runs.
	held, threshold atomic.Int64
	sweeping        atomic.Bool
	// lastSweep is the virtual time of the last sweep by time, in ns.
	lastSweep atomic.Int64
}

// New returns a limiter of spec (any algorithm of package algorithms), or
// the spec's error.
func New(spec algorithms.Spec, opts Options) (*Limiter, error) {
	cells, err := algorithms.NewCells(spec)
	if err != nil {
		return nil, err
	}
	minKeys := int64(opts.ReclaimMinKeys)
	if minKeys <= 0 {
		minKeys = 4096
	}
	l := &Limiter{spec: spec, capacity: spec.Capacity(), cells: cells, interval: opts.ReclaimInterval, minKeys: minKeys}
	l.threshold.Store(minKeys)
	return l, nil
}

// Spec returns the limiter's algorithm and parameters.
func (l *Limiter) Spec() algorithms.Spec { return l.spec }

// Allow decides one request of cost 1 from key at now; see AllowN.
func (l *Limiter) Allow(key string, now time.Duration) (algorithms.Decision, time.Duration) {
	return l.AllowN(key, now, 1)
}

// AllowN decides a request of cost n from key at virtual time now, exactly
// as algorithms.Limiter.Allow would, and for an admitted request also
// returns how long until the key has more quota (headers.UntilMore), read
// under the same cell lock as the decision so that no other request of
// the key comes in between. It then sweeps when due (see the package
// comment).
func (l *Limiter) AllowN(key string, now time.Duration, n int64) (algorithms.Decision, time.Duration) {
	var d algorithms.Decision
	var more time.Duration
	for {
		c := l.cell(key)
		c.Lock()
		if c.Retired() {
			c.Unlock()
			continue // swept since the lookup: the map has a new cell, or will
		}
		d = c.Allow(now, n)
		if d.Allowed && d.Remaining < l.capacity {
			// headers.UntilMore, with the capacity read once in New.
			if next := c.Allow(now, d.Remaining+1); !next.Allowed {
				more = next.RetryAfter()
			}
		}
		c.Unlock()
		break
	}
	if l.held.Load() >= l.threshold.Load() {
		l.autoSweep(now)
	}
	if l.interval > 0 {
		if last := l.lastSweep.Load(); now-time.Duration(last) >= l.interval && l.lastSweep.CompareAndSwap(last, int64(now)) {
			l.autoSweep(now)
		}
	}
	return d, more
}

// cell is key's cell, a new one stored if the key has none.
func (l *Limiter) cell(key string) algorithms.Cell {
	if v, ok := l.keys.Load(key); ok {
		return v.(algorithms.Cell)
	}
	v, loaded := l.keys.LoadOrStore(key, l.cells.New())
	if !loaded {
		l.held.Add(1)
	}
	return v.(algorithms.Cell)
}

// autoSweep sweeps at now unless another automatic sweep is running.
func (l *Limiter) autoSweep(now time.Duration) {
	if l.sweeping.CompareAndSwap(false, true) {
		l.Reclaim(now)
		l.sweeping.Store(false)
	}
}

// Reclaim drops every key whose cell is rested at now, one cell lock at a
// time, sets the size threshold to twice the keys left (at least
// ReclaimMinKeys) and returns how many it dropped. It may run beside
// decisions and other sweeps.
func (l *Limiter) Reclaim(now time.Duration) int {
	dropped := 0
	l.keys.Range(func(k, v any) bool {
		c := v.(algorithms.Cell)
		c.Lock()
		if !c.Retired() && c.Rested(now) {
			c.Retire()
			l.keys.CompareAndDelete(k, v)
			l.held.Add(-1)
			dropped++
		}
		c.Unlock()
		return true
	})
	l.threshold.Store(max(l.minKeys, 2*l.held.Load()))
	return dropped
}

// Keys returns how many keys hold state.
func (l *Limiter) Keys() int { return int(l.held.Load()) }
