package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// Parameters: limit 3 per window of 1s. A request at t of cost n passes
// when the cost admitted in (t − 1s, t] plus n is at most 3. An admitted
// request at s leaves the window at s + 1s (it is outside at exactly s + 1s),
// so a rejected one waits until the oldest entries holding enough cost have
// left. Reset is the time until the newest entry leaves.
func TestSlidingLogLadder(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 3, Window: time.Second}
	runLadder(t, spec, []ladderStep{
		// Rested: an empty log.
		0: {at: 0, cost: 0, wantAllowed: true, wantRemaining: 3},
		// Log: 1 at 100ms.
		1: {at: 100 * ms, cost: 1, wantAllowed: true, wantRemaining: 2, wantReset: time.Second},
		// Log: 1 at 100ms, 2 at 400ms: full.
		2: {at: 400 * ms, cost: 2, wantAllowed: true, wantRemaining: 0, wantReset: time.Second},
		// Cost 1 needs the entry at 100ms gone: at 1.1s, 600ms away. Reset:
		// the entry at 400ms leaves at 1.4s, 900ms away.
		3: {at: 500 * ms, cost: 1, wantRetryAfter: 600 * ms, wantReset: 900 * ms},
		// Cost 2 needs 2 units gone: the 1 at 100ms is not enough, so
		// wait for the 2 at 400ms too: 1.4s, 900ms away.
		4: {at: 500 * ms, cost: 2, wantRetryAfter: 900 * ms, wantReset: 900 * ms},
		// Cost 4 > limit: never.
		5: {at: 500 * ms, cost: 4, wantRetryAfter: algorithms.Never, wantReset: 900 * ms},
		// At 1099ms the 100ms entry is still in (99ms, 1099ms].
		6: {at: 1099 * ms, cost: 1, wantRetryAfter: 1 * ms, wantReset: 301 * ms},
		// At 1.1s it is out of (100ms, 1.1s]: 2 used, so cost 1 passes.
		// The rejections above were not logged. Log: 2 at 400ms, 1 at 1.1s.
		7: {at: 1100 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: time.Second},
		// Full again: the 400ms entry leaves at 1.4s.
		8: {at: 1100 * ms, cost: 1, wantRetryAfter: 300 * ms, wantReset: time.Second},
		// At 1.4s: 1 used, cost 2 fits. Log: 1 at 1.1s, 2 at 1.4s.
		9: {at: 1400 * ms, cost: 2, wantAllowed: true, wantRemaining: 0, wantReset: time.Second},
		// Key b has its own log.
		10: {at: 1400 * ms, key: "b", cost: 3, wantAllowed: true, wantRemaining: 0, wantReset: time.Second},
		// The clock steps back to 1.2s: treated as 1.4s, the latest entry,
		// so nothing leaves early. The 1.1s entry leaves at 2.1s, 900ms
		// after 1.2s; the 1.4s entry at 2.4s, 1.2s after.
		11: {at: 1200 * ms, cost: 1, wantRetryAfter: 900 * ms, wantReset: 1200 * ms},
		12: {at: 1200 * ms, cost: 0, wantAllowed: true, wantRemaining: 0, wantReset: 1200 * ms},
		// At 2.1s the 1.1s entry has left. Log: 2 at 1.4s, 1 at 2.1s.
		13: {at: 2100 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: time.Second},
		// Requests at the same instant share an entry: at 2.4s the 1.4s
		// entry leaves; 1 + 1 at 2.4s fill it back to 3 with the one at 2.1s.
		14: {at: 2400 * ms, cost: 1, wantAllowed: true, wantRemaining: 1, wantReset: time.Second},
		15: {at: 2400 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: time.Second},
		// At 3.1s the 2.1s entry leaves, freeing 1: the 2 at 2.4s stay
		// until 3.4s.
		16: {at: 3100 * ms, cost: 2, wantRemaining: 1, wantRetryAfter: 300 * ms, wantReset: 300 * ms},
		// Long idle: empty.
		17: {at: 5 * time.Second, cost: 0, wantAllowed: true, wantRemaining: 3},
		18: {at: 5 * time.Second, cost: 1, wantAllowed: true, wantRemaining: 2, wantReset: time.Second},
		// Back to 4.5s: logged at 5s, the newest entry, so it leaves at 6s,
		// 1.5s away.
		19: {at: 4500 * ms, cost: 1, wantAllowed: true, wantRemaining: 1, wantReset: 1500 * ms},
		// At 5.9s both are still in (4.9s, 5.9s]; logged at 4.5s, one
		// would have left.
		20: {at: 5900 * ms, cost: 0, wantAllowed: true, wantRemaining: 1, wantReset: 100 * ms},
	})
}

func TestSlidingLogReclaim(t *testing.T) {
	// limit 3 per 1s: a key is rested once its newest entry has left.
	spec := algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 3, Window: time.Second}
	lim := runLadder(t, spec, []ladderStep{
		// a logs at 0 and 800ms: rested at 1.8s. b logs at 300ms: rested at 1.3s.
		{at: 0, key: "a", cost: 1, wantAllowed: true, wantRemaining: 2, wantReset: time.Second},
		{at: 300 * ms, key: "b", cost: 1, wantAllowed: true, wantRemaining: 2, wantReset: time.Second},
		{at: 800 * ms, key: "a", cost: 1, wantAllowed: true, wantRemaining: 1, wantReset: time.Second},
		// c peeks, d asks for more than the limit: rested state.
		{at: 800 * ms, key: "c", cost: 0, wantAllowed: true, wantRemaining: 3},
		{at: 800 * ms, key: "d", cost: 4, wantRemaining: 3, wantRetryAfter: algorithms.Never},
	})
	runReclaim(t, lim, []reclaimStep{
		{at: 800 * ms, wantDropped: 2, wantKeys: 2},
		// At 1.2s a's entry at 0 has left but the one at 800ms has not.
		{at: 1200 * ms, wantDropped: 0, wantKeys: 2},
		{at: 1300 * ms, wantDropped: 1, wantKeys: 1},
		{at: 1799 * ms, wantDropped: 0, wantKeys: 1},
		{at: 1800 * ms, wantDropped: 1, wantKeys: 0},
	})
}

func TestSlidingLogReclaimKeepsState(t *testing.T) {
	lim := mustNew(t, algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 3, Window: time.Second})
	lim.Allow("a", 0, 1)
	lim.Allow("a", 800*ms, 2)
	if n := lim.Reclaim(1200 * ms); n != 0 {
		t.Fatalf("Reclaim(1.2s) = %d, want 0", n)
	}
	// The 2 at 800ms are still logged: 1 left, and cost 2 waits until 1.8s.
	got := lim.Allow("a", 1200*ms, 2)
	want := algorithms.Decision{Remaining: 1, Wait: 600 * ms, Reset: 600 * ms}
	if got != want {
		t.Errorf("got %s, want %s", fmtDecision(got), fmtDecision(want))
	}
}
