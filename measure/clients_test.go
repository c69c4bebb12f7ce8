package measure

import (
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestClientIndexAsMap numbers random keys against a map, with the hashes
// of some keys forced equal (and their top bits equal) so that keys share
// probe chains and the key comparison decides.
func TestClientIndexAsMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := newClientIndex(maphash.MakeSeed())
	want := map[string]int32{}
	hashOf := func(k string) uint64 {
		if k[len(k)-1] == 'z' {
			return 0xdeadbeef00000000 | uint64(len(k)) // collides with every such key of its length
		}
		return x.hash([]byte(k))
	}
	for range 50_000 {
		k := strconv.FormatUint(rng.Uint64N(20_000), 36)
		n, ok := x.find([]byte(k), hashOf(k))
		if w, seen := want[k]; ok != seen || ok && n != w {
			t.Fatalf("find(%q) = %d, %v; want %d, %v", k, n, ok, w, seen)
		}
		if !ok {
			if got := x.add(k, hashOf(k)); got != int32(len(want)) {
				t.Fatalf("add(%q) = %d, want the next number %d", k, got, len(want))
			}
			want[k] = int32(len(want))
		}
	}
	if len(x.keys) != len(want) {
		t.Fatalf("%d keys, want %d", len(x.keys), len(want))
	}
	for k, w := range want {
		if x.keys[w] != k {
			t.Fatalf("keys[%d] = %q, want %q", w, x.keys[w], k)
		}
	}
}

// TestSameKey compares keys of every length up to 24 with themselves and
// with a copy that differs in one byte, at every position.
func TestSameKey(t *testing.T) {
	for n := range 25 {
		a := make([]byte, n)
		for i := range a {
			a[i] = byte('a' + i)
		}
		if !sameKey(string(a), a) {
			t.Errorf("sameKey(%q, %q) = false", a, a)
		}
		if sameKey(string(a), append(a[:n:n], 'z')) {
			t.Errorf("sameKey(%q, %q+z) = true", a, a)
		}
		for i := range n {
			b := slices.Clone(a)
			b[i] ^= 0x20
			if sameKey(string(a), b) {
				t.Errorf("sameKey(%q, %q) = true", a, b)
			}
		}
	}
}
