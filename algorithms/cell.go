package algorithms

import (
	"sync"
	"time"
)

// A Cell is one key of a limiter kept on its own: the key's state with the
// spec's decision rule, for callers that hold their keys in a structure of
// their own, such as a concurrent map whose reads take no lock. A Cell
// decides exactly as a Limiter of the same spec decides the one key whose
// requests it gets; its zero state is the rested one, as a new key's.
//
// A Cell carries a mutex that its methods do not take: the caller locks it
// around the decisions that must happen together (a decision and the wait
// until more quota), and keeps a cell to one goroutine at a time.
type Cell interface {
	Lock()
	Unlock()
	// Allow decides a request of cost units at virtual time now, as
	// Limiter.Allow does for the cell's key.
	Allow(now time.Duration, cost int64) Decision
	// Rested reports whether the cell would decide as a new one at now,
	// which is when a Limiter's Reclaim drops a key.
	Rested(now time.Duration) bool
	// Retire marks the cell as dropped by its holder, and Retired reports
	// it, so that a goroutine that found the cell before it was dropped
	// looks the key up again instead of deciding on a cell nobody holds.
	Retire()
	Retired() bool
}

// Cells makes the Cells of one spec; build it with NewCells. Its New is
// safe for concurrent use: the spec's parameters are shared, read only.
type Cells struct {
	spec Spec
	make func() Cell
}

// NewCells returns the cell maker of spec (any algorithm), or the spec's
// error.
func NewCells(spec Spec) (Cells, error) {
	m, err := makersOf(spec)
	if err != nil {
		return Cells{}, err
	}
	return Cells{spec: spec, make: m.cell}, nil
}

// Spec returns the cells' algorithm and parameters.
func (c Cells) Spec() Spec { return c.spec }

// New returns a rested cell.
func (c Cells) New() Cell { return c.make() }

// keyRule is an algorithm's decision rule on one key's state S, shared
// by the cells of a Cells and by a Dense: the limiter itself, whose
// methods a call through the interface reaches directly (a method value
// would add a call through its wrapper to every decision).
type keyRule[S any] interface {
	allow(s *S, now time.Duration, cost int64) Decision
	rested(s *S, now time.Duration) bool
}

// slidingLogRule is a SlidingLog as a keyRule: neither a cell nor a Dense
// has a table whose reclaim needs the latest expiry.
type slidingLogRule struct{ *SlidingLog }

func (r slidingLogRule) allow(s *slidingLogState, now time.Duration, cost int64) Decision {
	return r.SlidingLog.allow(s, now, cost, nil)
}

// makers make the cells and the Dense of one spec.
type makers struct {
	cell  func() Cell
	dense func() Dense
}

// makersOf returns the makers of spec's cells and Dense, which decide by
// the functions spec's Limiter decides by, or the spec's error.
func makersOf(spec Spec) (makers, error) {
	lim, err := New(spec)
	if err != nil {
		return makers{}, err
	}
	switch l := lim.(type) {
	case *TokenBucket:
		return makersFor[tokenBucketState](spec, l), nil
	case *GCRA:
		return makersFor[gcraState](spec, l), nil
	case *LeakyBucket:
		return makersFor[leakyState](spec, l), nil
	case *FixedWindow:
		return makersFor[fixedWindowState](spec, l), nil
	case *SlidingLog:
		return makersFor[slidingLogState](spec, slidingLogRule{l}), nil
	default:
		return makersFor[slidingWindowState](spec, lim.(*SlidingWindow)), nil
	}
}

func makersFor[S any](spec Spec, rule keyRule[S]) makers {
	return makers{
		cell:  func() Cell { return &cell[S]{rule: rule} },
		dense: func() Dense { return &dense[S]{spec: spec, rule: rule} },
	}
}

// cell is a Cell of state S: the lock beside the state, in one object, so
// that a decision writes one allocation's lines.
type cell[S any] struct {
	sync.Mutex
	retired bool
	rule    keyRule[S]
	state   S
}

func (c *cell[S]) Allow(now time.Duration, cost int64) Decision {
	return c.rule.allow(&c.state, now, cost)
}
func (c *cell[S]) Rested(now time.Duration) bool { return c.rule.rested(&c.state, now) }
func (c *cell[S]) Retire()                       { c.retired = true }
func (c *cell[S]) Retired() bool                 { return c.retired }
