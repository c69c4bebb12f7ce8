package algorithms

// table maps keys to per-key state. A new key gets the zero S, which every
// algorithm defines as its rested state. The last key looked up is cached,
// so a run that stays on one key skips the map.
type table[S any] struct {
	states  map[string]*S
	lastKey string
	last    *S
}

// state returns key's state, creating it on first use.
func (t *table[S]) state(key string) *S {
	if t.last != nil && key == t.lastKey {
		return t.last
	}
	s := t.states[key]
	if s == nil {
		if t.states == nil {
			t.states = make(map[string]*S)
		}
		s = new(S)
		t.states[key] = s
	}
	t.lastKey, t.last = key, s
	return s
}

// len returns how many keys hold state.
func (t *table[S]) len() int { return len(t.states) }

// reclaim deletes every state for which rested returns true.
func (t *table[S]) reclaim(rested func(*S) bool) int {
	n := 0
	for k, s := range t.states {
		if rested(s) {
			delete(t.states, k)
			n++
		}
	}
	t.lastKey, t.last = "", nil
	return n
}
