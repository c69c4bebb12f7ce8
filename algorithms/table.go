package algorithms

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"time"
	"unsafe"
)

// table maps keys to per-key state, laid out for many keys.
//
// An index from key to a slot in one slice of state structs holds every
// key: states are contiguous and hold no pointers of their own, so the
// collector never walks them. The index is an open-addressing hash table of
// 8-byte entries (32 bits of the key's hash beside its slot), probed
// linearly and at most 3/4 full: a lookup hashes the key once, reads one or
// two adjacent entries (a cache line holds eight), compares the key of the
// first whose hash bits match, and reads the state. A new key gets the zero S, which every algorithm defines as
// its rested state; a reclaimed key's slot is reused. The last key looked up
// is cached, so a run that stays on one key skips the map: it is known
// by its string's address and length, not its bytes (a key string is
// never changed, as the table keeps it), which costs nothing when the
// keys take turns; the same key in another string is looked up in full.
//
// For reclaiming, every key is filed in a schedule under a time before
// which it cannot be rested, and only keys whose time has come are looked
// at: Reclaim costs in proportion to the keys it visits, not to the keys
// held.
type table[S any] struct {
	seed    maphash.Seed
	seed64  uint64   // for hashShort, drawn from seed
	index   []uint64 // hash entries: hash>>32 << 32 | slot+1; 0 is empty
	held    int      // keys held
	states  []S      // by slot
	keys    []string // by slot; "" for a free slot
	free    []int32  // free slots, reused last in first out
	lastKey string
	last    int32 // slot of lastKey; -1 when none is cached
	sched   schedule
	// latest is the latest time at which a state may have become rested
	// before its due time, by a request that changed it without admitting
	// anything (sliding_log's expiry); reclaim also looks at every slot
	// due by then.
	latest time.Duration
}

// newTable returns an empty table whose reclaim schedule files keys in
// buckets of about horizon/1024, horizon being the longest time a key can
// take to become rested after its last request.
func newTable[S any](horizon time.Duration) table[S] {
	seed := maphash.MakeSeed()
	var h maphash.Hash
	h.SetSeed(seed)
	return table[S]{seed: seed, seed64: h.Sum64(), last: -1, sched: newSchedule(horizon), latest: rested}
}

// slot returns key's slot, creating its rested state on first use; fresh
// reports that it did, and then the caller must file the slot (file) once
// it has decided.
func (t *table[S]) slot(key string) (i int32, fresh bool) {
	if t.last >= 0 && len(key) == len(t.lastKey) && unsafe.StringData(key) == unsafe.StringData(t.lastKey) {
		return t.last, false
	}
	var h uint32
	if n := len(key); n >= 8 && n <= 16 {
		h = uint32(hashWords(t.seed64, key) >> 32) // t.hash, inlined for the common key
	} else {
		h = t.hash(key)
	}
	if len(t.index) > 0 {
		mask := uint32(len(t.index) - 1)
		for p := h & mask; ; p = (p + 1) & mask {
			e := t.index[p]
			if e == 0 {
				break
			}
			if uint32(e>>32) == h {
				// The same string (a caller that keeps its keys, as the
				// table does) is known by its address without a call to
				// compare bytes.
				i := int32(uint32(e)) - 1
				if k := t.keys[i]; len(k) == len(key) && (unsafe.StringData(k) == unsafe.StringData(key) || k == key) {
					t.lastKey, t.last = key, i
					return i, false
				}
			}
		}
	}
	i = t.add(key, h)
	t.lastKey, t.last = key, i
	return i, true
}

// hash is the 32 hash bits of key the index keeps.
func (t *table[S]) hash(key string) uint32 {
	if len(key) <= 16 {
		return uint32(hashShort(t.seed64, key) >> 32)
	}
	return uint32(maphash.String(t.seed, key) >> 32)
}

// hashShort hashes a key of at most 16 bytes (IP addresses, API keys'
// ids, client names) with seed: wyhash's construction, its 64-bit
// multiply-and-fold mixing two words that cover the key, with a seed
// drawn at random for each table, as Go's runtime hashes strings where
// the processor has no AES instructions. Written here because through
// hash/maphash the hash was about a fifth of a token_bucket decision at
// 10 000 keys (BenchmarkDecide: 46.8 ns, 35.9 with this), where this
// costs about one ns; longer keys still go through hash/maphash.
func hashShort(seed uint64, s string) uint64 {
	n := len(s)
	if n >= 8 {
		return hashWords(seed, s)
	}
	b := unsafe.Slice(unsafe.StringData(s), n)
	var a, c uint64
	switch {
	case n >= 4:
		a, c = uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[n-4:]))
	case n > 0:
		a = uint64(b[0])<<16 | uint64(b[n>>1])<<8 | uint64(b[n-1])
	}
	return mixShort(seed, n, a, c)
}

// hashWords is hashShort of a key of 8 to 16 bytes, small enough to be
// inlined where a lookup hashes its key.
func hashWords(seed uint64, s string) uint64 {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	return mixShort(seed, len(s), binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[len(b)-8:]))
}

// mixShort is hashShort's mixing of the words a and c of a key of n bytes.
func mixShort(seed uint64, n int, a, c uint64) uint64 {
	const k0, k1 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	return foldMul(k1^uint64(n), foldMul(a^k0, c^seed))
}

// foldMul is the 128-bit product of a and b, its halves xored.
func foldMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// add gives key, whose hash bits are h, a slot holding the zero S.
func (t *table[S]) add(key string, h uint32) int32 {
	if 4*(t.held+1) > 3*len(t.index) {
		t.growIndex()
	}
	var i int32
	if n := len(t.free); n > 0 {
		i = t.free[n-1]
		t.free = t.free[:n-1]
		t.keys[i] = key
	} else {
		if len(t.states) == math.MaxInt32 {
			panic("algorithms: more than 2^31-1 keys")
		}
		i = int32(len(t.states))
		var zero S
		t.states = append(t.states, zero)
		t.keys = append(t.keys, key)
		t.sched.next = append(t.sched.next, -1)
	}
	t.insert(h, i)
	t.held++
	return i
}

// insert adds the entry of slot i, whose key's hash bits are h, to the
// index, which has room.
func (t *table[S]) insert(h uint32, i int32) {
	mask := uint32(len(t.index) - 1)
	p := h & mask
	for t.index[p] != 0 {
		p = (p + 1) & mask
	}
	t.index[p] = uint64(h)<<32 | uint64(uint32(i)+1)
}

// growIndex doubles the index (to 8 entries at first).
func (t *table[S]) growIndex() {
	old := t.index
	if len(old) >= 1<<31 {
		panic("algorithms: more than 2^31 keys")
	}
	t.index = make([]uint64, max(8, 2*len(old)))
	for _, e := range old {
		if e != 0 {
			t.insert(uint32(e>>32), int32(uint32(e))-1)
		}
	}
}

// remove deletes slot i's entry from the index, shifting back the entries
// after it that would no longer be found (no tombstones).
func (t *table[S]) remove(i int32) {
	mask := uint32(len(t.index) - 1)
	h := t.hash(t.keys[i])
	p := h & mask
	for uint32(t.index[p]) != uint32(i)+1 {
		p = (p + 1) & mask
	}
	// Entry q, at distance d from its home, may move to the hole at p
	// when p is no further than d back from q.
	for q := (p + 1) & mask; ; q = (q + 1) & mask {
		e := t.index[q]
		if e == 0 {
			break
		}
		if home := uint32(e>>32) & mask; (q-home)&mask >= (q-p)&mask {
			t.index[p] = e
			p = q
		}
	}
	t.index[p] = 0
	t.held--
}

// len returns how many keys hold state.
func (t *table[S]) len() int { return t.held }

// file schedules slot i to be looked at by the first reclaim at or after
// due, which must not be later than the first time its state is rested,
// except that a request at time t may rest it sooner if it then raises
// latest to t.
func (t *table[S]) file(i int32, due time.Duration) { t.sched.file(i, due) }

// reclaim drops every state that is rested at now. It looks only at the
// slots filed under a time up to now: rested(s) reports whether s is rested
// at now, and due(s) the earliest time s can be rested, at which a slot
// that is not is filed again.
func (t *table[S]) reclaim(now time.Duration, rested func(*S) bool, due func(*S) time.Duration) int {
	again := t.sched.take(max(now, t.latest))
	n := 0
	for i := again; i >= 0; {
		next := t.sched.next[i]
		s := &t.states[i]
		if rested(s) {
			t.remove(i)
			t.keys[i] = ""
			var zero S
			*s = zero
			t.free = append(t.free, i)
			n++
		} else {
			t.sched.file(i, due(s))
		}
		i = next
	}
	t.lastKey, t.last = "", -1
	return n
}

// schedule files slots in buckets of 2^shift nanoseconds of their due
// time: one singly linked list per bucket (a slot's link is next[slot]) and
// a min-heap of the buckets that hold a list. Filing and taking are O(1) per
// slot plus O(log buckets) per bucket.
type schedule struct {
	shift uint
	next  []int32         // by slot: the next slot in its bucket's list, -1 at the end
	lists map[int64]int32 // bucket → first slot of its list
	heap  []int64         // buckets of lists, a min-heap
}

func newSchedule(horizon time.Duration) schedule {
	shift := 0
	if n := bits.Len64(uint64(max(horizon, 0))); n > 10 {
		shift = n - 10
	}
	return schedule{shift: uint(shift), lists: make(map[int64]int32)}
}

// file adds slot i to the list of due's bucket.
func (q *schedule) file(i int32, due time.Duration) {
	b := int64(due) >> q.shift
	head, ok := q.lists[b]
	if !ok {
		head = -1
		q.push(b)
	}
	q.next[i] = head
	q.lists[b] = i
}

// take removes every bucket that starts at or before now and returns their
// slots as one list.
func (q *schedule) take(now time.Duration) int32 {
	last := int64(now) >> q.shift
	all := int32(-1)
	for len(q.heap) > 0 && q.heap[0] <= last {
		b := q.pop()
		head := q.lists[b]
		delete(q.lists, b)
		// Append all to the end of this bucket's list.
		i := head
		for q.next[i] >= 0 {
			i = q.next[i]
		}
		q.next[i] = all
		all = head
	}
	return all
}

func (q *schedule) push(b int64) {
	h := append(q.heap, b)
	for j := len(h) - 1; j > 0; {
		p := (j - 1) / 2
		if h[p] <= h[j] {
			break
		}
		h[p], h[j] = h[j], h[p]
		j = p
	}
	q.heap = h
}

func (q *schedule) pop() int64 {
	h := q.heap
	b := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for j := 0; ; {
		c := 2*j + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1] < h[c] {
			c++
		}
		if h[j] <= h[c] {
			break
		}
		h[j], h[c] = h[c], h[j]
		j = c
	}
	q.heap = h
	return b
}

// rested is the due time of a state that is rested at any time.
const rested = time.Duration(math.MinInt64)

// addSat is t + d, saturating at the ends of time.Duration.
func addSat(t, d time.Duration) time.Duration {
	s := t + d
	switch {
	case d > 0 && s < t:
		return time.Duration(math.MaxInt64)
	case d < 0 && s > t:
		return rested
	}
	return s
}

// dueBefore converts a time in float64 nanoseconds to a Duration a little
// before it, so that float rounding in a rested test cannot make a state
// rested before its due time.
func dueBefore(ns float64) time.Duration {
	ns -= math.Abs(ns)*1e-12 + 4
	switch {
	case ns <= math.MinInt64:
		return rested
	case ns >= math.MaxInt64:
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}
