package algorithms

import (
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
