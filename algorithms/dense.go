package algorithms

import "time"

// A Dense holds one spec's state for keys that the caller has numbered
// itself, 0, 1, 2, …: a caller that already keeps each client in a table
// of its own (package engine, for all of a policy's limits at once) looks
// a client up once per request, not once per limit. Each id's state sits
// in one slice, by id, and is decided by the functions a Limiter of the
// same spec decides by, so an id gets exactly the decisions a Limiter gives
// the key it stands for.
//
// Ids should be small: the slice grows to the largest id used. An id's
// state starts rested, and Drop puts it back so, for the caller to give
// the id to another key. Not safe for concurrent use.
type Dense interface {
	// Allow decides a request of cost units from id at virtual time now,
	// as Limiter.Allow does for a key.
	Allow(id int32, now time.Duration, cost int64) Decision
	// Rested reports whether id would decide as a new key at now: when a
	// Limiter's Reclaim would drop the key.
	Rested(id int32, now time.Duration) bool
	// Drop puts id's state back to rested, freeing what it held.
	Drop(id int32)
	// Reset puts every id's state back to rested, keeping the room the
	// ids took for the next ones.
	Reset()
	// Spec returns the algorithm and its parameters.
	Spec() Spec
}

// NewDense returns an empty Dense of spec (any algorithm), or the spec's
// error.
func NewDense(spec Spec) (Dense, error) {
	m, err := makersOf(spec)
	if err != nil {
		return nil, err
	}
	return m.dense(), nil
}

// dense is a Dense of state S.
type dense[S any] struct {
	spec   Spec
	rule   keyRule[S]
	states []S // by id; ids past the end are rested
}

func (d *dense[S]) Allow(id int32, now time.Duration, cost int64) Decision {
	if int(id) >= len(d.states) {
		d.grow(id)
	}
	return d.rule.allow(&d.states[id], now, cost)
}

// grow makes room for id, every state it adds rested.
func (d *dense[S]) grow(id int32) {
	n := int(id) + 1
	if n > cap(d.states) {
		s := make([]S, n, max(n, 2*cap(d.states), 16))
		copy(s, d.states)
		d.states = s
		return
	}
	d.states = d.states[:n] // the zero states past len stay zero: Drop zeroes
}

func (d *dense[S]) Rested(id int32, now time.Duration) bool {
	return int(id) >= len(d.states) || d.rule.rested(&d.states[id], now)
}

func (d *dense[S]) Drop(id int32) {
	if int(id) < len(d.states) {
		var zero S
		d.states[id] = zero
	}
}

func (d *dense[S]) Reset() {
	clear(d.states)
	d.states = d.states[:0]
}

func (d *dense[S]) Spec() Spec { return d.spec }
