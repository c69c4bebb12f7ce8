package algorithms

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// bruteRested walks every key of t and returns those whose state rested
// reports rested, the way Reclaim found them before keys were scheduled.
func bruteRested[S any](t *table[S], rested func(*S) bool) map[string]bool {
	out := make(map[string]bool)
	for k, i := range t.all() {
		if rested(&t.states[i]) {
			out[k] = true
		}
	}
	return out
}

// all yields every key of t with its slot, from the index.
func (t *table[S]) all() map[string]int32 {
	out := make(map[string]int32)
	for _, e := range t.index {
		if e != 0 {
			out[t.keys[uint32(e)-1]] = int32(uint32(e)) - 1
		}
	}
	return out
}

// heldKeys returns the keys t holds, checking that the index, the keys by
// slot and the free slots agree.
func heldKeys[S any](tb testing.TB, t *table[S]) map[string]bool {
	tb.Helper()
	out := make(map[string]bool)
	for k, i := range t.all() {
		if j, ok := t.slot(k); j != i || ok {
			tb.Fatalf("key %q is in slot %d, found in %d (fresh %v)", k, i, j, ok)
		}
		out[k] = true
	}
	if len(out) != t.len() || len(out)+len(t.free) != len(t.states) {
		tb.Fatalf("%d keys in the index, len() %d, + %d free slots, %d slots", len(out), t.len(), len(t.free), len(t.states))
	}
	return out
}

// restedKeys returns the keys l holds and, by a walk over all of them, those
// rested at now.
func restedKeys(tb testing.TB, l Limiter, now time.Duration) (held, rested map[string]bool) {
	switch l := l.(type) {
	case *TokenBucket:
		return heldKeys(tb, &l.buckets), bruteRested(&l.buckets, func(s *tokenBucketState) bool { return l.rested(s, now) })
	case *GCRA:
		return heldKeys(tb, &l.cells), bruteRested(&l.cells, func(s *gcraState) bool { return l.rested(s, now) })
	case *LeakyBucket:
		return heldKeys(tb, &l.queues), bruteRested(&l.queues, func(s *leakyState) bool { return l.rested(s, now) })
	case *FixedWindow:
		return heldKeys(tb, &l.windows), bruteRested(&l.windows, func(s *fixedWindowState) bool { return l.rested(s, now) })
	case *SlidingLog:
		return heldKeys(tb, &l.logs), bruteRested(&l.logs, func(s *slidingLogState) bool { return l.rested(s, now) })
	case *SlidingWindow:
		return heldKeys(tb, &l.counters), bruteRested(&l.counters, func(s *slidingWindowState) bool { return l.rested(s, now) })
	}
	tb.Fatalf("unknown limiter %T", l)
	return nil, nil
}

func TestReclaimDropsExactlyRestedKeys(t *testing.T) {
	// Many keys, random costs and Reclaim at random times: each Reclaim
	// must drop exactly the keys a walk over all of them finds rested. In
	// even sequences time only goes forward and Reclaim runs between
	// arrivals, so every decision must also match a twin that is never
	// reclaimed; in odd ones requests step back and Reclaim runs at times
	// before or after the arrivals around it, outside the contract of
	// Allow, where only the set of keys dropped is checked.
	ms := time.Millisecond
	specs := []Spec{
		{Algorithm: NameTokenBucket, Rate: 100, Burst: 5},
		{Algorithm: NameTokenBucket, Rate: 7, Burst: 1},
		{Algorithm: NameGCRA, Rate: 100, Burst: 5},
		{Algorithm: NameGCRA, Rate: 0.7, Burst: 3},
		{Algorithm: NameLeakyBucket, Rate: 100, Queue: 4},
		{Algorithm: NameLeakyBucket, Rate: 3, Queue: 0},
		{Algorithm: NameFixedWindow, Limit: 5, Window: 50 * ms},
		{Algorithm: NameFixedWindow, Limit: 1, Window: 999 * time.Microsecond * 7},
		{Algorithm: NameSlidingLog, Limit: 5, Window: 50 * ms},
		{Algorithm: NameSlidingLog, Limit: 3, Window: 7 * ms},
		{Algorithm: NameSlidingWindow, Limit: 5, Window: 50 * ms},
		{Algorithm: NameSlidingWindow, Limit: 2, Window: 7 * ms},
	}
	for _, spec := range specs {
		t.Run(spec.String(), func(t *testing.T) {
			for seq := range 20 {
				rng := rand.New(rand.NewPCG(uint64(seq), 0x5eed))
				lim, _ := New(spec)
				twin, _ := New(spec)
				horizon := float64(2 * spec.Capacity() * int64(time.Second) / 100)
				if spec.Window > 0 {
					horizon = float64(2 * spec.Window)
				}
				keys := 1 + rng.IntN(300)
				wild := seq%2 == 1
				now, reclaims, dropped := time.Duration(rng.Int64N(int64(horizon))), 0, 0
				for i := range 3000 {
					now += time.Duration(rng.ExpFloat64() * horizon / float64(keys) * 2)
					at := now
					if wild && rng.IntN(10) == 0 {
						at -= time.Duration(rng.Float64() * horizon / 4) // a clock stepping back
					}
					key := fmt.Sprint("k", rng.IntN(keys))
					cost := int64(rng.IntN(3))
					if rng.IntN(50) == 0 {
						cost = spec.Capacity() + 1
					}
					if d, want := lim.Allow(key, at, cost), twin.Allow(key, at, cost); d != want && !wild {
						t.Fatalf("seq %d, request %d (%s at %v cost %d): %+v, never reclaimed %+v", seq, i, key, at, cost, d, want)
					}
					if rng.IntN(40) != 0 {
						continue
					}
					when := now
					if wild {
						when += time.Duration((rng.Float64() - 0.2) * horizon)
					}
					held, rested := restedKeys(t, lim, when)
					n := lim.Reclaim(when)
					after, _ := restedKeys(t, lim, when)
					for k := range held {
						if after[k] == rested[k] {
							t.Fatalf("seq %d, Reclaim(%v) after request %d: key %s rested %v, kept %v", seq, when, i, k, rested[k], after[k])
						}
					}
					if n != len(rested) || len(after) != len(held)-len(rested) {
						t.Fatalf("seq %d, Reclaim(%v) = %d, %d keys left of %d; %d rested: %v", seq, when, n, len(after), len(held), len(rested), slices.Sorted(maps.Keys(rested)))
					}
					reclaims++
					dropped += n
				}
				if seq == 0 {
					t.Logf("%d reclaims dropped %d keys", reclaims, dropped)
				}
			}
		})
	}
}

func TestTableIndexMatchesMap(t *testing.T) {
	// Keys added and dropped at random, many colliding in a small index:
	// every key held is found in its slot, no dropped key is found, and
	// free slots are reused.
	rng := rand.New(rand.NewPCG(1, 2))
	tab := newTable[int64](time.Second)
	want := make(map[string]int32)
	for step := range 200_000 {
		key := fmt.Sprint(rng.IntN(5000))
		if rng.IntN(3) == 0 {
			if i, ok := want[key]; ok {
				tab.sched.next[i] = -1
				tab.remove(i)
				tab.keys[i] = ""
				tab.free = append(tab.free, i)
				tab.last = -1
				delete(want, key)
			}
			continue
		}
		i, fresh := tab.slot(key)
		if j, ok := want[key]; ok == fresh || (ok && i != j) {
			t.Fatalf("step %d: key %s in slot %d (fresh %v); want slot %d (held %v)", step, key, i, fresh, j, ok)
		}
		want[key] = i
		if tab.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, tab.len(), len(want))
		}
	}
	if got := tab.all(); !maps.Equal(got, want) {
		t.Fatalf("index holds %d keys, want %d", len(got), len(want))
	}
	if len(tab.states) > 5000 {
		t.Errorf("%d slots for at most 5000 keys: free slots not reused", len(tab.states))
	}
}
