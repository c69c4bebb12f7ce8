package algorithms

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestKeyByContent: a key is its bytes, whatever string holds them. The
// same random requests, from keys of equal and unequal lengths, go to a
// Limiter given one string per key, to a Limiter given a fresh copy of
// the key on every request, and to a Dense with an id per key, which has
// no table; all three must decide alike, so the table's cache of the last
// key, which knows a string by its address, never takes one key for
// another and never misses a key it holds.
func TestKeyByContent(t *testing.T) {
	keys := []string{"ab", "ac", "b", "abc"}
	for _, spec := range keySpecs {
		t.Run(spec.String(), func(t *testing.T) {
			one, _ := New(spec)
			copies, _ := New(spec)
			ref, _ := NewDense(spec)
			id := map[string]int32{}
			for i, k := range keys {
				id[k] = int32(i)
			}
			reqs := newKeyRequests(spec, keys, 3)
			for i := range 20_000 {
				key, now, cost := reqs.next()
				want := ref.Allow(id[key], now, cost)
				if got := one.Allow(key, now, cost); got != want {
					t.Fatalf("request %d (key %s, cost %d, at %v): %+v, want %+v", i, key, cost, now, got, want)
				}
				if got := copies.Allow(strings.Clone(key), now, cost); got != want {
					t.Fatalf("request %d (key %s, cost %d, at %v): given a copy of the key %+v, want %+v", i, key, cost, now, got, want)
				}
			}
		})
	}
}

// TestHashShortSpreads: the 32 bits the index keeps of hashShort, over a
// million keys of every length up to 16 (client names, IPv4 addresses,
// keys of one byte value in every position), collide about as often as
// random bits would (a million in 2^32: about 116 pairs), another seed
// gives other bits, and every bit of the key counts.
func TestHashShortSpreads(t *testing.T) {
	var keys []string
	for i := range 500_000 {
		keys = append(keys, "client-"+strconv.Itoa(i))
		keys = append(keys, fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	for n := 1; n <= 16; n++ {
		for pos := range n {
			for v := range 256 {
				b := make([]byte, n)
				b[pos] = byte(v)
				keys = append(keys, string(b))
			}
		}
	}
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	for _, seed := range []uint64{1, 0x9e3779b97f4a7c15} {
		seen := make(map[uint32]int, len(keys))
		for _, k := range keys {
			seen[uint32(hashShort(seed, k)>>32)]++
		}
		pairs := len(keys) - len(seen)
		// Expected about n²/2^33; allow three times that.
		if want := 3 * len(keys) * len(keys) >> 33; pairs > want {
			t.Errorf("seed %#x: %d colliding hashes among %d keys, want at most %d", seed, pairs, len(keys), want)
		}
	}
	same := 0
	for _, k := range keys[:10_000] {
		if hashShort(1, k) == hashShort(2, k) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d of 10 000 keys hash alike under two seeds", same)
	}
}
