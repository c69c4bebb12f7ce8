package algorithms

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// keySpecs are the specs the per-key stores (Cells, Dense) are compared
// with a Limiter on: every algorithm, a roomy and a tight one each.
var keySpecs = func() []Spec {
	ms := time.Millisecond
	return []Spec{
		{Algorithm: NameTokenBucket, Rate: 100, Burst: 5},
		{Algorithm: NameTokenBucket, Rate: 0.7, Burst: 1},
		{Algorithm: NameGCRA, Rate: 100, Burst: 5},
		{Algorithm: NameGCRA, Rate: 3, Burst: 2},
		{Algorithm: NameLeakyBucket, Rate: 100, Queue: 4},
		{Algorithm: NameLeakyBucket, Rate: 3, Queue: 0},
		{Algorithm: NameFixedWindow, Limit: 5, Window: 50 * ms},
		{Algorithm: NameFixedWindow, Limit: 1, Window: 7 * ms},
		{Algorithm: NameSlidingLog, Limit: 5, Window: 50 * ms},
		{Algorithm: NameSlidingLog, Limit: 40, Window: 7 * ms},
		{Algorithm: NameSlidingWindow, Limit: 5, Window: 50 * ms},
		{Algorithm: NameSlidingWindow, Limit: 2, Window: 7 * ms},
	}
}()

// keyRequests is the random stream of requests the per-key stores are
// compared with a Limiter on: keys drawn at random, times that mostly go
// forward (up to 4 ms) and sometimes step back (up to 3 ms), costs from
// 0 to one past the capacity. Its rng serves the tests' own draws too.
type keyRequests struct {
	rng      *rand.Rand
	keys     []string
	capacity int64
	now      time.Duration
}

func newKeyRequests(spec Spec, keys []string, seed uint64) *keyRequests {
	return &keyRequests{rng: rand.New(rand.NewPCG(seed, uint64(len(spec.String())))), keys: keys, capacity: spec.Capacity()}
}

// next draws the next request.
func (g *keyRequests) next() (key string, now time.Duration, cost int64) {
	if g.rng.IntN(10) == 0 {
		g.now -= time.Duration(g.rng.Int64N(int64(3 * time.Millisecond)))
	} else {
		g.now += time.Duration(g.rng.Int64N(int64(4 * time.Millisecond)))
	}
	return g.keys[g.rng.IntN(len(g.keys))], g.now, g.rng.Int64N(g.capacity + 2)
}

// TestCellsDecideAsTheLimiter sends the same random requests (a few keys,
// times that mostly go forward and sometimes step back, costs from 0 to
// past the capacity) to a Limiter and to one Cell per key, and compares
// every decision; whenever a cell says it is rested, a new cell must
// decide the next request exactly as it does.
func TestCellsDecideAsTheLimiter(t *testing.T) {
	for _, spec := range keySpecs {
		t.Run(spec.String(), func(t *testing.T) {
			cells, err := NewCells(spec)
			if err != nil {
				t.Fatal(err)
			}
			if cells.Spec() != spec {
				t.Fatalf("Spec() = %v", cells.Spec())
			}
			lim, _ := New(spec)
			byKey := map[string]Cell{}
			reqs := newKeyRequests(spec, []string{"a", "b", "c"}, 1)
			rested := 0
			for i := range 20_000 {
				key, now, cost := reqs.next()
				c := byKey[key]
				if c == nil {
					c = cells.New()
					byKey[key] = c
				}
				if c.Rested(now) {
					rested++
					if got, want := cells.New().Allow(now, cost), clone(t, c).Allow(now, cost); got != want {
						t.Fatalf("request %d: a rested cell decides %+v, a new one %+v", i, want, got)
					}
				}
				want := lim.Allow(key, now, cost)
				if got := c.Allow(now, cost); got != want {
					t.Fatalf("request %d (key %s, cost %d, at %v): cell %+v, limiter %+v", i, key, cost, now, got, want)
				}
			}
			if rested == 0 {
				t.Fatal("no cell was ever rested: the check of Rested did not run")
			}
		})
	}
}

// clone is a copy of c's state in a cell of its own, so that deciding on
// it leaves c as it was.
func clone(t *testing.T, c Cell) Cell {
	t.Helper()
	switch c := c.(type) {
	case *cell[tokenBucketState]:
		return &cell[tokenBucketState]{rule: c.rule, state: c.state}
	case *cell[gcraState]:
		return &cell[gcraState]{rule: c.rule, state: c.state}
	case *cell[leakyState]:
		return &cell[leakyState]{rule: c.rule, state: c.state}
	case *cell[fixedWindowState]:
		return &cell[fixedWindowState]{rule: c.rule, state: c.state}
	case *cell[slidingWindowState]:
		return &cell[slidingWindowState]{rule: c.rule, state: c.state}
	case *cell[slidingLogState]:
		s := c.state
		s.ring = slices.Clone(s.ring)
		return &cell[slidingLogState]{rule: c.rule, state: s}
	}
	t.Fatalf("cell of %T", c)
	return nil
}

// TestCellsRetire: a cell starts held and Retire marks it.
func TestCellsRetire(t *testing.T) {
	cells, _ := NewCells(Spec{Algorithm: NameGCRA, Rate: 1, Burst: 1})
	c := cells.New()
	if c.Retired() {
		t.Fatal("a new cell is retired")
	}
	c.Retire()
	if !c.Retired() {
		t.Fatal("Retire did not retire")
	}
}
