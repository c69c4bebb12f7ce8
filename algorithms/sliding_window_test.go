package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// Parameters: limit 4 per window of 1s; windows are aligned, [k s, (k+1) s).
// At e ms into window k the estimate is prev·(1000 − e)/1000 + curr, where
// prev is window k−1's count. A request of cost n passes when estimate + n ≤
// 4. Remaining is 4 − curr − ⌈prev·(1000 − e)/1000⌉. Reset is the end of
// window k+1 while curr > 0 (curr still weighs as prev then), else the end of
// window k while prev > 0.
func TestSlidingWindowLadder(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 4, Window: time.Second}
	runLadder(t, spec, []ladderStep{
		// Rested.
		0: {at: 0, cost: 0, wantAllowed: true, wantRemaining: 4},
		// Window 0: curr 3; it weighs until the end of window 1 (2s).
		1: {at: 200 * ms, cost: 3, wantAllowed: true, wantRemaining: 1, wantReset: 1800 * ms},
		2: {at: 900 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 1100 * ms},
		// curr 4 + 1 > 4 for the rest of window 0. In window 1, prev = 4:
		// 4·(1000 − e)/1000 + 1 ≤ 4 ⇔ e ≥ 250ms, i.e. at 1.25s, 300ms away.
		3: {at: 950 * ms, cost: 1, wantRetryAfter: 300 * ms, wantReset: 1050 * ms},
		// Cost 5 > limit: never.
		4: {at: 950 * ms, cost: 5, wantRetryAfter: algorithms.Never, wantReset: 1050 * ms},
		// At 1.1s (e = 100): 4·0.9 = 3.6, ⌈3.6⌉ = 4 → 0 left; 3.6 + 1 > 4.
		// Wait for e = 250: 150ms. Reset: curr = 0, prev weighs until 2s.
		5: {at: 1100 * ms, cost: 1, wantRetryAfter: 150 * ms, wantReset: 900 * ms},
		// At 1.25s: 4·0.75 + 1 = 4 → admitted (the rejections did not
		// count); curr 1, ⌈3⌉ = 3 → 0 left; curr weighs until 3s.
		6: {at: 1250 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 1750 * ms},
		// At 1.5s: 4·0.5 = 2, 4 − 1 − 2 = 1 left.
		7: {at: 1500 * ms, cost: 0, wantAllowed: true, wantRemaining: 1, wantReset: 1500 * ms},
		// Cost 2: 2 + 1 + 2 = 5 > 4; 4·(1000 − e)/1000 ≤ 1 ⇔ e ≥ 750ms: 250ms away.
		8: {at: 1500 * ms, cost: 2, wantRemaining: 1, wantRetryAfter: 250 * ms, wantReset: 1500 * ms},
		// Cost 1 fits: curr 2, 0 left.
		9: {at: 1500 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 1500 * ms},
		// Key b has its own counters.
		10: {at: 1500 * ms, key: "b", cost: 4, wantAllowed: true, wantRemaining: 0, wantReset: 1500 * ms},
		// The clock steps back to 700ms, into window 0. The key stays in
		// window 1, at its start (e = 0): estimate 4 + 2, nothing
		// re-credited. Cost 1 waits until e ≥ 750ms, i.e. 1.75s, 1.05s
		// after 700ms; curr weighs until 3s, 2.3s after 700ms.
		11: {at: 700 * ms, cost: 1, wantRetryAfter: 1050 * ms, wantReset: 2300 * ms},
		12: {at: 700 * ms, cost: 0, wantAllowed: true, wantRemaining: 0, wantReset: 2300 * ms},
		// At 1.75s: 4·0.25 + 2 + 1 = 4 → admitted; curr 3.
		13: {at: 1750 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 1250 * ms},
		// Window 2, e = 100: prev 3 → 3·0.9 = 2.7, ⌈2.7⌉ = 3 → 1 left.
		14: {at: 2100 * ms, cost: 0, wantAllowed: true, wantRemaining: 1, wantReset: 900 * ms},
		// 2.7 + 2 > 4: 3·(1s − e)/1s ≤ 2 ⇔ e ≥ 1s − 2s/3, and in whole
		// nanoseconds e ≥ 1s − ⌊666,666,666.7ns⌋ = 333,333,334ns, so the
		// wait is 233,333,334ns; at 2.333s it is 333,334ns.
		15: {at: 2100 * ms, cost: 2, wantRemaining: 1, wantRetryAfter: 233_333_334, wantReset: 900 * ms},
		16: {at: 2333 * ms, cost: 2, wantRemaining: 1, wantRetryAfter: 333_334, wantReset: 667 * ms},
		17: {at: 2334 * ms, cost: 2, wantAllowed: true, wantRemaining: 0, wantReset: 1666 * ms},
		// Window 4: window 2's count no longer weighs.
		18: {at: 4 * time.Second, cost: 0, wantAllowed: true, wantRemaining: 4},
		// Key b, last counted in window 1, is rested in window 3.
		19: {at: 3 * time.Second, key: "b", cost: 0, wantAllowed: true, wantRemaining: 4},
	})
}

func TestSlidingWindowReclaim(t *testing.T) {
	// limit 4 per 1s: a key is rested when neither its current nor its
	// previous window holds a count.
	spec := algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 4, Window: time.Second}
	lim := runLadder(t, spec, []ladderStep{
		// a counts in window 0 (weighs until 2s), b in window 1 (until 3s).
		{at: 500 * ms, key: "a", cost: 1, wantAllowed: true, wantRemaining: 3, wantReset: 1500 * ms},
		{at: 1500 * ms, key: "b", cost: 2, wantAllowed: true, wantRemaining: 2, wantReset: 1500 * ms},
		// c peeks, d asks for more than the limit: rested state.
		{at: 1500 * ms, key: "c", cost: 0, wantAllowed: true, wantRemaining: 4},
		{at: 1500 * ms, key: "d", cost: 5, wantRemaining: 4, wantRetryAfter: algorithms.Never},
	})
	runReclaim(t, lim, []reclaimStep{
		// In window 1, a's count still weighs as prev.
		{at: 1500 * ms, wantDropped: 2, wantKeys: 2},
		{at: 1999 * ms, wantDropped: 0, wantKeys: 2},
		{at: 2000 * ms, wantDropped: 1, wantKeys: 1},
		{at: 2999 * ms, wantDropped: 0, wantKeys: 1},
		{at: 3000 * ms, wantDropped: 1, wantKeys: 0},
	})
}

func TestSlidingWindowReclaimKeepsState(t *testing.T) {
	lim := mustNew(t, algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 4, Window: time.Second})
	lim.Allow("a", 500*ms, 4)
	if n := lim.Reclaim(1500 * ms); n != 0 {
		t.Fatalf("Reclaim(1.5s) = %d, want 0", n)
	}
	// At 1.5s prev = 4 weighs 4·0.5 = 2: 2 left, and cost 3 waits until
	// 4·(1000 − e)/1000 ≤ 1 ⇔ e ≥ 750ms: 250ms.
	got := lim.Allow("a", 1500*ms, 3)
	want := algorithms.Decision{Remaining: 2, Wait: 250 * ms, Reset: 500 * ms}
	if got != want {
		t.Errorf("got %s, want %s", fmtDecision(got), fmtDecision(want))
	}
}

func TestSlidingWindowOverSlidingSpan(t *testing.T) {
	// The counter assumes the previous window's requests were spread
	// evenly. When they all came at its end, more than the limit passes in
	// a span of W: 4 at 900ms, then at 1.5s they weigh 4·0.5 = 2, so 2 more
	// pass, 6 in (500ms, 1.5s]. A sliding log would wait until 1.9s.
	spec := algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 4, Window: time.Second}
	runLadder(t, spec, []ladderStep{
		{at: 900 * ms, cost: 4, wantAllowed: true, wantRemaining: 0, wantReset: 1100 * ms},
		{at: 1500 * ms, cost: 1, wantAllowed: true, wantRemaining: 1, wantReset: 1500 * ms},
		{at: 1500 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 1500 * ms},
		// 2 + 2 + 1 > 4: 4·(1s − e)/1s ≤ 1 ⇔ e ≥ 750ms.
		{at: 1500 * ms, cost: 1, wantRetryAfter: 250 * ms, wantReset: 1500 * ms},
	})
}
