package server

import (
	"slices"
	"sync"
)

// slicePool keeps big slices of T for the next request. A simulate request
// of a million arrivals reads them into 48 MB of arrivalIn and builds 32 MB
// of algorithms.Arrival from them; fresh from the heap for every request,
// the kernel's zeroing of new pages and the collector's extra cycles made
// the API about a sixth slower (BenchmarkSimulateAPI). sync.Pool lets the
// collector drop what no request has taken back for two cycles, so an idle
// server holds none of it.
type slicePool[T any] struct{ p sync.Pool }

// get returns an empty slice, with room left by an earlier request if
// one is kept. Its elements past its length are zero.
func (p *slicePool[T]) get() []T {
	if s, ok := p.p.Get().(*[]T); ok {
		return (*s)[:0]
	}
	return nil
}

// make returns a slice of n zero elements, in room left by an earlier
// request if one is kept.
func (p *slicePool[T]) make(n int) []T {
	return slices.Grow(p.get(), n)[:n]
}

// put keeps s for get. It zeroes s first, so the pool holds nothing a
// finished request pointed to (its strings alias its body buffer), and
// get's slices are zero past their length.
func (p *slicePool[T]) put(s []T) {
	if cap(s) == 0 {
		return
	}
	clear(s)
	s = s[:0]
	p.p.Put(&s)
}
