package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// Parameters: rate 4/s → the queue drains one request every T = 250ms;
// queue 2 → one request is released now and two more may wait, so the
// capacity is 3 and the longest delay is 2·T = 500ms. "Backlog" is how long
// the drain is busy from now: a request of cost 1 waits the backlog (its
// Delay) when backlog ≤ 500ms and is rejected otherwise, with RetryAfter =
// backlog − 500ms. Remaining is 1 + ⌊(500ms − backlog)/T⌋ (0 when backlog >
// 500ms); Reset is the backlog.
func TestLeakyBucketLadder(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 4, Queue: 2}
	runLadder(t, spec, []ladderStep{
		// Rested: empty queue, capacity 3.
		0: {at: 0, cost: 0, wantAllowed: true, wantRemaining: 3},
		// An idle client sends 4 at once: released at 0, 250ms and 500ms;
		// the 4th would wait 750ms > 500ms.
		1: {at: 0, cost: 1, wantAllowed: true, wantDelay: 0, wantRemaining: 2, wantReset: 250 * ms},
		2: {at: 0, cost: 1, wantAllowed: true, wantDelay: 250 * ms, wantRemaining: 1, wantReset: 500 * ms},
		3: {at: 0, cost: 1, wantAllowed: true, wantDelay: 500 * ms, wantRemaining: 0, wantReset: 750 * ms},
		4: {at: 0, cost: 1, wantRetryAfter: 250 * ms, wantReset: 750 * ms},
		// At 100ms the backlog is 650ms: 150ms too long.
		5: {at: 100 * ms, cost: 1, wantRetryAfter: 150 * ms, wantReset: 650 * ms},
		// At 250ms it is 500ms: admitted with the longest delay, released
		// at 750ms, right after the one released at 500ms. The rejected
		// requests took no slot. The drain is now busy until 1s.
		6: {at: 250 * ms, cost: 1, wantAllowed: true, wantDelay: 500 * ms, wantRemaining: 0, wantReset: 750 * ms},
		// Cost 4 > capacity 3: never.
		7: {at: 250 * ms, cost: 4, wantRetryAfter: algorithms.Never, wantReset: 750 * ms},
		// At 600ms the backlog is 400ms: room for ⌊100/250⌋ + 1 = 1.
		8: {at: 600 * ms, cost: 0, wantAllowed: true, wantRemaining: 1, wantReset: 400 * ms},
		// Cost 2 takes two slots; its last unit would start at 400 + 250 =
		// 650ms > 500ms: 150ms too soon.
		9: {at: 600 * ms, cost: 2, wantRemaining: 1, wantRetryAfter: 150 * ms, wantReset: 400 * ms},
		// At 750ms the backlog is 250ms, the last unit starts at 500ms:
		// admitted, released at 1s, and the drain is busy until 1.5s.
		10: {at: 750 * ms, cost: 2, wantAllowed: true, wantDelay: 250 * ms, wantRemaining: 0, wantReset: 750 * ms},
		// Another key has its own queue: cost 3 = capacity fits exactly.
		11: {at: 750 * ms, key: "b", cost: 3, wantAllowed: true, wantRemaining: 0, wantReset: 750 * ms},
		// The clock steps back to 500ms: the backlog is 1.5s − 0.5s = 1s,
		// so 500ms too long, which is the same instant (1s) as from 750ms.
		12: {at: 500 * ms, cost: 1, wantRetryAfter: 500 * ms, wantReset: time.Second},
		// At 1s: backlog 500ms → admitted, released at 1.5s.
		13: {at: time.Second, cost: 1, wantAllowed: true, wantDelay: 500 * ms, wantRemaining: 0, wantReset: 750 * ms},
		// Key b's queue (busy until 1.5s) is its own: 250ms at 1.25s.
		14: {at: 1250 * ms, key: "b", cost: 0, wantAllowed: true, wantRemaining: 2, wantReset: 250 * ms},
		// Drained: empty queue, as a new key.
		15: {at: 2 * time.Second, cost: 0, wantAllowed: true, wantRemaining: 3},
	})
}

func TestLeakyBucketNoQueue(t *testing.T) {
	// queue 0, rate 2/s (T = 500ms): a pure spacer. Each request must find
	// the drain free; nothing ever waits.
	spec := algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2}
	runLadder(t, spec, []ladderStep{
		{at: 0, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 500 * ms},
		{at: 0, cost: 1, wantRetryAfter: 500 * ms, wantReset: 500 * ms},
		{at: 499 * ms, cost: 1, wantRetryAfter: 1 * ms, wantReset: 1 * ms},
		{at: 500 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 500 * ms},
		{at: 500 * ms, cost: 2, wantRetryAfter: algorithms.Never, wantReset: 500 * ms},
		{at: 1200 * ms, cost: 0, wantAllowed: true, wantRemaining: 1},
	})
}

func TestLeakyBucketReclaim(t *testing.T) {
	// rate 4/s, queue 2 (T = 250ms): a key is rested when its queue is empty.
	spec := algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 4, Queue: 2}
	lim := runLadder(t, spec, []ladderStep{
		// a: 3 slots from 0 → busy until 750ms.
		{at: 0, key: "a", cost: 3, wantAllowed: true, wantRemaining: 0, wantReset: 750 * ms},
		// b: 1 slot from 100ms → busy until 350ms.
		{at: 100 * ms, key: "b", cost: 1, wantAllowed: true, wantRemaining: 2, wantReset: 250 * ms},
		// c peeks, d asks for more than the capacity: rested state.
		{at: 100 * ms, key: "c", cost: 0, wantAllowed: true, wantRemaining: 3},
		{at: 100 * ms, key: "d", cost: 4, wantRemaining: 3, wantRetryAfter: algorithms.Never},
	})
	runReclaim(t, lim, []reclaimStep{
		{at: 100 * ms, wantDropped: 2, wantKeys: 2},
		{at: 349 * ms, wantDropped: 0, wantKeys: 2},
		{at: 350 * ms, wantDropped: 1, wantKeys: 1},
		{at: 700 * ms, wantDropped: 0, wantKeys: 1},
		{at: 750 * ms, wantDropped: 1, wantKeys: 0},
	})
}

func TestLeakyBucketReclaimKeepsState(t *testing.T) {
	// a is busy until 750ms; a Reclaim at 500ms keeps it, so a request at
	// 500ms waits the remaining 250ms.
	lim := mustNew(t, algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 4, Queue: 2})
	lim.Allow("a", 0, 3)
	if n := lim.Reclaim(500 * ms); n != 0 {
		t.Fatalf("Reclaim(500ms) = %d, want 0", n)
	}
	got := lim.Allow("a", 500*ms, 1)
	want := algorithms.Decision{Allowed: true, Wait: 250 * ms, Remaining: 1, Reset: 500 * ms}
	if got != want {
		t.Errorf("got %s, want %s", fmtDecision(got), fmtDecision(want))
	}
}
