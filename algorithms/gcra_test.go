package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// Parameters: rate 10/s → emission interval T = 100ms; burst 4 → tolerance
// τ = 3T = 300ms, so a request is admitted when TAT' − now ≤ τ + T = 400ms,
// where TAT' = max(TAT, now) + cost·T. With TAT ahead of now by a,
// Remaining = ⌊(400ms − a)/T⌋, Reset = a and a rejected request's
// RetryAfter = TAT' − now − 400ms.
func TestGCRALadder(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 4}
	runLadder(t, spec, []ladderStep{
		// Rested: TAT = now, ⌊400/100⌋ = 4 left.
		0: {at: 0, cost: 0, wantAllowed: true, wantRemaining: 4},
		// Cost 4 = burst: TAT' = 400ms, 400 − 0 ≤ 400 → admitted; 0 left.
		1: {at: 0, cost: 4, wantAllowed: true, wantRemaining: 0, wantReset: 400 * ms},
		// TAT' = 500ms → 100ms over.
		2: {at: 0, cost: 1, wantRetryAfter: 100 * ms, wantReset: 400 * ms},
		// At 50ms: 500 − 50 − 400 = 50ms over; TAT is 350ms ahead.
		3: {at: 50 * ms, cost: 1, wantRetryAfter: 50 * ms, wantReset: 350 * ms},
		// At 100ms: 500 − 100 = 400 → admitted. The two rejections did
		// not move TAT, or this would wait. TAT = 500ms.
		4: {at: 100 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 400 * ms},
		// Cost 5 > burst: never; TAT stays 500ms.
		5: {at: 100 * ms, cost: 5, wantRetryAfter: algorithms.Never, wantReset: 400 * ms},
		// At 330ms TAT is 170ms ahead: ⌊230/100⌋ = 2 left.
		6: {at: 330 * ms, cost: 0, wantAllowed: true, wantRemaining: 2, wantReset: 170 * ms},
		// Cost 3: TAT' = 800ms, 800 − 330 − 400 = 70ms over.
		7: {at: 330 * ms, cost: 3, wantRemaining: 2, wantRetryAfter: 70 * ms, wantReset: 170 * ms},
		// Cost 2: TAT' = 700ms, 370 ≤ 400 → admitted; ⌊30/100⌋ = 0 left.
		8: {at: 330 * ms, cost: 2, wantAllowed: true, wantRemaining: 0, wantReset: 370 * ms},
		// Key b has its own TAT: 330 + 100 = 430ms; ⌊300/100⌋ = 3 left.
		9: {at: 330 * ms, key: "b", cost: 1, wantAllowed: true, wantRemaining: 3, wantReset: 100 * ms},
		// The clock steps back to 200ms: TAT (700ms) is 500ms ahead, so
		// TAT' = 800ms is 200ms over, which is the same instant (400ms)
		// as from 330ms. Nothing is re-credited.
		10: {at: 200 * ms, cost: 1, wantRetryAfter: 200 * ms, wantReset: 500 * ms},
		11: {at: 200 * ms, cost: 0, wantAllowed: true, wantRemaining: 0, wantReset: 500 * ms},
		// At 400ms: TAT' = 800 − 400 = 400 → admitted; TAT = 800ms.
		12: {at: 400 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 400 * ms},
		// Key a was not slowed by b: b at 400ms is 30ms ahead, ⌊370/100⌋ = 3.
		13: {at: 400 * ms, key: "b", cost: 0, wantAllowed: true, wantRemaining: 3, wantReset: 30 * ms},
		// Rested again once now ≥ TAT.
		14: {at: 800 * ms, cost: 0, wantAllowed: true, wantRemaining: 4},
		15: {at: time.Second, cost: 4, wantAllowed: true, wantRemaining: 0, wantReset: 400 * ms},
	})
}

func TestGCRAReclaim(t *testing.T) {
	// rate 10/s, burst 4 (T = 100ms); a key is rested when TAT ≤ now.
	spec := algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 4}
	lim := runLadder(t, spec, []ladderStep{
		// a: TAT = 0 + 3·100 = 300ms.
		{at: 0, key: "a", cost: 3, wantAllowed: true, wantRemaining: 1, wantReset: 300 * ms},
		// b: TAT = 100 + 100 = 200ms.
		{at: 100 * ms, key: "b", cost: 1, wantAllowed: true, wantRemaining: 3, wantReset: 100 * ms},
		// c peeks, d asks for too much: state, but rested.
		{at: 100 * ms, key: "c", cost: 0, wantAllowed: true, wantRemaining: 4},
		{at: 100 * ms, key: "d", cost: 5, wantRemaining: 4, wantRetryAfter: algorithms.Never},
	})
	runReclaim(t, lim, []reclaimStep{
		{at: 100 * ms, wantDropped: 2, wantKeys: 2},
		// At 199ms b's TAT (200ms) is still ahead.
		{at: 199 * ms, wantDropped: 0, wantKeys: 2},
		{at: 200 * ms, wantDropped: 1, wantKeys: 1},
		{at: 300 * ms, wantDropped: 1, wantKeys: 0},
	})
}

func TestGCRAReclaimKeepsState(t *testing.T) {
	// a's TAT is 300ms; after a Reclaim at 250ms that must keep it, a
	// request of cost 2 at 250ms needs TAT' = 500ms − 250ms ≤ 400ms → passes
	// with ⌊(400 − 250)/100⌋ = 1 left; a forgotten key would have 2 left.
	lim := mustNew(t, algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 4})
	lim.Allow("a", 0, 3)
	if n := lim.Reclaim(250 * ms); n != 0 {
		t.Fatalf("Reclaim(250ms) = %d, want 0", n)
	}
	got := lim.Allow("a", 250*ms, 2)
	want := algorithms.Decision{Allowed: true, Remaining: 1, Reset: 250 * ms}
	if got != want {
		t.Errorf("got %s, want %s", fmtDecision(got), fmtDecision(want))
	}
}
