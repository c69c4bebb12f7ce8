package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// Parameters: limit 3 per window of 1s; windows are [k s, (k+1) s). A
// request of cost n passes when count + n ≤ 3. A rejected one may retry
// when its window ends, so RetryAfter = time to the end of the window; Reset
// is the same while the window holds any count.
func TestFixedWindowLadder(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 3, Window: time.Second}
	runLadder(t, spec, []ladderStep{
		// Rested: count 0, nothing to reset.
		0: {at: 0, cost: 0, wantAllowed: true, wantRemaining: 3},
		// count 1; the window ends in 900ms.
		1: {at: 100 * ms, cost: 1, wantAllowed: true, wantRemaining: 2, wantReset: 900 * ms},
		// Cost 2: count 3 = limit.
		2: {at: 200 * ms, cost: 2, wantAllowed: true, wantRemaining: 0, wantReset: 800 * ms},
		// Full: wait for the window to end.
		3: {at: 300 * ms, cost: 1, wantRetryAfter: 700 * ms, wantReset: 700 * ms},
		4: {at: 999 * ms, cost: 1, wantRetryAfter: 1 * ms, wantReset: 1 * ms},
		// Cost 4 > limit: never.
		5: {at: 999 * ms, cost: 4, wantRetryAfter: algorithms.Never, wantReset: 1 * ms},
		// At exactly 1s a new window starts with count 0; the rejected
		// requests were not counted anywhere.
		6: {at: time.Second, cost: 2, wantAllowed: true, wantRemaining: 1, wantReset: time.Second},
		// Cost 2 does not fit in the 1 left; it is not split.
		7: {at: 1500 * ms, cost: 2, wantRemaining: 1, wantRetryAfter: 500 * ms, wantReset: 500 * ms},
		8: {at: 1500 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 500 * ms},
		// Key b has its own count.
		9: {at: 1500 * ms, key: "b", cost: 3, wantAllowed: true, wantRemaining: 0, wantReset: 500 * ms},
		// The clock steps back to 900ms, into window 0: the key stays in
		// its window 1 (count 3), so it waits until 2s, 1.1s away. Window
		// 0's count is not given back.
		10: {at: 900 * ms, cost: 1, wantRetryAfter: 1100 * ms, wantReset: 1100 * ms},
		11: {at: 900 * ms, cost: 0, wantAllowed: true, wantRemaining: 0, wantReset: 1100 * ms},
		// Window 2: rested again.
		12: {at: 2200 * ms, cost: 0, wantAllowed: true, wantRemaining: 3},
		13: {at: 2200 * ms, cost: 3, wantAllowed: true, wantRemaining: 0, wantReset: 800 * ms},
		// Key b's count (window 1) is gone in window 2 as well.
		14: {at: 2200 * ms, key: "b", cost: 0, wantAllowed: true, wantRemaining: 3},
	})
}

func TestFixedWindowReclaim(t *testing.T) {
	// limit 3 per 1s: a key is rested once its window has ended.
	spec := algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 3, Window: time.Second}
	lim := runLadder(t, spec, []ladderStep{
		// a counts in window 0, b in window 1.
		{at: 500 * ms, key: "a", cost: 1, wantAllowed: true, wantRemaining: 2, wantReset: 500 * ms},
		{at: 1500 * ms, key: "b", cost: 2, wantAllowed: true, wantRemaining: 1, wantReset: 500 * ms},
		// c peeks, d asks for more than the limit: rested state.
		{at: 1500 * ms, key: "c", cost: 0, wantAllowed: true, wantRemaining: 3},
		{at: 1500 * ms, key: "d", cost: 4, wantRemaining: 3, wantRetryAfter: algorithms.Never},
	})
	runReclaim(t, lim, []reclaimStep{
		// In window 1: a's window has ended; b's has not.
		{at: 1500 * ms, wantDropped: 3, wantKeys: 1},
		{at: 1999 * ms, wantDropped: 0, wantKeys: 1},
		{at: 2000 * ms, wantDropped: 1, wantKeys: 0},
	})
}

func TestFixedWindowReclaimKeepsState(t *testing.T) {
	lim := mustNew(t, algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 3, Window: time.Second})
	lim.Allow("a", 100*ms, 3)
	if n := lim.Reclaim(900 * ms); n != 0 {
		t.Fatalf("Reclaim(900ms) = %d, want 0", n)
	}
	// Window 0 still holds 3: rejected until 1s.
	got := lim.Allow("a", 900*ms, 1)
	want := algorithms.Decision{Wait: 100 * ms, Reset: 100 * ms}
	if got != want {
		t.Errorf("got %s, want %s", fmtDecision(got), fmtDecision(want))
	}
}
