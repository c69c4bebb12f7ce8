package measure

import (
	"encoding/binary"
	"hash/maphash"
	"unsafe"
)

// clientIndex numbers clients by key: 0, 1, 2, … in the order they are
// added. It is an open-addressing hash table of 8-byte entries (the top
// 32 bits of the key's hash beside the client's number), probed linearly
// and at most 3/4 full, over the keys in number order.
//
// It stands in for a map[string]int32 because the parallel pipeline's
// parsers already hash every key (hash/maphash) to pick its shard: a
// shard looks the key up by that hash instead of hashing it again, which
// took about 3 % off a line of BenchmarkMeasureVsAwk on one core.
type clientIndex struct {
	seed    maphash.Seed // the hash of a key the caller does not pass
	entries []uint64     // hash>>32<<32 | number+1; 0 is empty
	keys    []string     // by number
}

func newClientIndex(seed maphash.Seed) clientIndex { return clientIndex{seed: seed} }

// hash is the hash find and add take for k, and hashString for a key
// held as a string.
func (x *clientIndex) hash(k []byte) uint64       { return maphash.Bytes(x.seed, k) }
func (x *clientIndex) hashString(k string) uint64 { return maphash.String(x.seed, k) }

// find returns k's number; ok is false when k was never added. h is
// x.hash(k).
func (x *clientIndex) find(k []byte, h uint64) (n int32, ok bool) {
	if len(x.entries) == 0 {
		return 0, false
	}
	mask := uint32(len(x.entries) - 1)
	top := uint32(h >> 32)
	for p := top & mask; ; p = (p + 1) & mask {
		e := x.entries[p]
		if e == 0 {
			return 0, false
		}
		if uint32(e>>32) == top {
			if n := int32(uint32(e)) - 1; sameKey(x.keys[n], k) {
				return n, true
			}
		}
	}
}

// add numbers k, which is not in x and whose hash is h, and returns its
// number.
func (x *clientIndex) add(k string, h uint64) int32 {
	if 4*(len(x.keys)+1) > 3*len(x.entries) {
		old := x.entries
		x.entries = make([]uint64, max(16, 2*len(old)))
		for _, e := range old {
			if e != 0 {
				x.insert(e)
			}
		}
	}
	n := int32(len(x.keys))
	x.keys = append(x.keys, k)
	x.insert(h>>32<<32 | uint64(uint32(n)+1))
	return n
}

// insert puts entry e in the first free place from its hash's.
func (x *clientIndex) insert(e uint64) {
	mask := uint32(len(x.entries) - 1)
	p := uint32(e>>32) & mask
	for x.entries[p] != 0 {
		p = (p + 1) & mask
	}
	x.entries[p] = e
}

// sameKey reports whether a and b hold the same bytes; keys of 8 to 16
// bytes (IPv4 addresses, most API keys) are compared as two words that
// cover them, without a call.
func sameKey(a string, b []byte) bool {
	n := len(b)
	if len(a) != n {
		return false
	}
	if n >= 8 && n <= 16 {
		w := unsafe.Slice(unsafe.StringData(a), n)
		return binary.LittleEndian.Uint64(w) == binary.LittleEndian.Uint64(b) &&
			binary.LittleEndian.Uint64(w[n-8:]) == binary.LittleEndian.Uint64(b[n-8:])
	}
	return a == string(b)
}
