package algorithms

import (
	"strconv"
	"testing"
)

// TestDenseDecidesAsTheLimiter sends the same random requests (six keys,
// times that mostly go forward and sometimes step back, costs from 0 to
// past the capacity) to a Limiter and to a Dense, the keys numbered as a
// caller would: a new key takes a freed id, else the next one. Every
// decision must agree. Now and then a key whose id says it is rested is
// dropped, as a caller's reclaim would, and its id is freed for the next
// new key; when the key comes back, it is a new key to the Limiter too
// (under a new name: a rested key decides as a new one at the time it is
// rested, not at an earlier time that may come after it).
func TestDenseDecidesAsTheLimiter(t *testing.T) {
	for _, spec := range keySpecs {
		t.Run(spec.String(), func(t *testing.T) {
			d, err := NewDense(spec)
			if err != nil {
				t.Fatal(err)
			}
			if d.Spec() != spec {
				t.Fatalf("Spec() = %v", d.Spec())
			}
			lim, _ := New(spec)
			keys := []string{"a", "b", "c", "d", "e", "f"}
			reqs := newKeyRequests(spec, keys, 2)
			ids := map[string]int32{}
			life := map[string]int{} // how many times each key was dropped
			var free []int32
			next := int32(0)
			dropped, reused := 0, 0
			for i := range 20_000 {
				key, now, cost := reqs.next()
				id, ok := ids[key]
				if !ok {
					if n := len(free); n > 0 {
						id, free = free[n-1], free[:n-1]
						reused++
					} else {
						id, next = next, next+1
					}
					ids[key] = id
				}
				want := lim.Allow(key+"#"+strconv.Itoa(life[key]), now, cost)
				if got := d.Allow(id, now, cost); got != want {
					t.Fatalf("request %d (key %s as id %d, cost %d, at %v): Dense %+v, Limiter %+v", i, key, id, cost, now, got, want)
				}
				// Now and then, drop a rested key, as a caller's reclaim.
				if k := keys[reqs.rng.IntN(len(keys))]; reqs.rng.IntN(4) == 0 {
					if id, ok := ids[k]; ok && d.Rested(id, now) {
						d.Drop(id)
						delete(ids, k)
						life[k]++
						free = append(free, id)
						dropped++
					}
				}
			}
			if dropped == 0 || reused == 0 {
				t.Fatalf("%d ids dropped, %d reused: the test did not exercise reuse", dropped, reused)
			}
			if int(next) > len(keys) {
				t.Fatalf("%d ids for %d keys: freed ids were not reused", next, len(keys))
			}
		})
	}
}

// TestDenseUnusedIsRested: an id never used is rested, and Drop of an id
// past the end is harmless.
func TestDenseUnusedIsRested(t *testing.T) {
	d, err := NewDense(Spec{Algorithm: NameGCRA, Rate: 1, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Rested(1000, 0) {
		t.Fatal("an id never used is not rested")
	}
	d.Drop(1000)
	if got := d.Allow(3, 0, 1); !got.Allowed {
		t.Fatalf("a new id's first request: %+v", got)
	}
	if d.Rested(3, 0) {
		t.Fatal("an id with a full bucket of GCRA's one request says it is rested")
	}
	if !d.Rested(2, 0) {
		t.Fatal("an id below a used one, never used itself, is not rested")
	}
}

// TestDenseResetIsNew: after Reset, a used Dense decides the same
// requests as a new one of its spec, ids past its old ones included.
func TestDenseResetIsNew(t *testing.T) {
	for _, spec := range keySpecs {
		t.Run(spec.String(), func(t *testing.T) {
			used, _ := NewDense(spec)
			keys := []string{"a", "b", "c", "d"}
			reqs := newKeyRequests(spec, keys, 2)
			for range 5000 {
				key, now, cost := reqs.next()
				used.Allow(int32(key[0]-'a'), now, cost)
			}
			used.Reset()
			fresh, _ := NewDense(spec)
			reqs = newKeyRequests(spec, append(keys, "e", "f"), 3)
			for i := range 5000 {
				key, now, cost := reqs.next()
				id := int32(key[0] - 'a')
				if got, want := used.Allow(id, now, cost), fresh.Allow(id, now, cost); got != want {
					t.Fatalf("request %d (id %d, cost %d, at %v) after Reset: %+v, a new Dense %+v", i, id, cost, now, got, want)
				}
			}
		})
	}
}
