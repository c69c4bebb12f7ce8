package algorithms

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestRetryQueueOrder: retries come out by time, ties in the order they
// were scheduled, however pushes and pops interleave; checked against a
// sort of everything pushed.
func TestRetryQueueOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	var q retryQueue
	var pushed, popped []pending
	seq := int64(0)
	byTime := func(a, b pending) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) }
	for range 5000 {
		if len(q) == 0 || r.IntN(3) != 0 {
			seq++
			// Few distinct times, so many ties.
			p := pending{at: time.Duration(r.IntN(50)) * time.Millisecond, seq: seq}
			q.push(p)
			pushed = append(pushed, p)
			continue
		}
		p := q.pop()
		for _, e := range q {
			if byTime(e, p) < 0 {
				t.Fatalf("popped %+v while %+v was due first", p, e)
			}
		}
		popped = append(popped, p)
	}
	for len(q) > 0 {
		popped = append(popped, q.pop())
	}
	// Every push comes out exactly once.
	if len(popped) != len(pushed) {
		t.Fatalf("%d popped, %d pushed", len(popped), len(pushed))
	}
	got, want := slices.Clone(popped), slices.Clone(pushed)
	slices.SortFunc(got, byTime)
	slices.SortFunc(want, byTime)
	if !slices.Equal(got, want) {
		t.Fatal("the pops are not the pushes")
	}
	// Pushes all at once, then pops: exactly the sorted order.
	q = q[:0]
	for _, p := range pushed {
		q.push(p)
	}
	for i, w := range want {
		if p := q.pop(); p != w {
			t.Fatalf("pop %d: %+v, want %+v", i, p, w)
		}
	}
}
