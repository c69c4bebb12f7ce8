package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// ladderStep is one row of a time-ladder test, in the style of
// golang.org/x/time/rate's rate_test.go: a request (key, cost) at a virtual
// time and the whole decision it must get. An empty key means "a".
type ladderStep struct {
	at             time.Duration
	key            string
	cost           int64
	wantAllowed    bool
	wantDelay      time.Duration // leaky_bucket only
	wantRemaining  int64
	wantRetryAfter time.Duration
	wantReset      time.Duration
}

// runLadder feeds the steps, in order, to one limiter built from spec and
// compares every decision field by field.
func runLadder(t *testing.T, spec algorithms.Spec, steps []ladderStep) algorithms.Limiter {
	t.Helper()
	lim := mustNew(t, spec)
	for i, s := range steps {
		key := s.key
		if key == "" {
			key = "a"
		}
		got := lim.Allow(key, s.at, s.cost)
		// Delay belongs to admitted requests, RetryAfter to rejected ones.
		wait := s.wantRetryAfter
		if s.wantAllowed {
			wait = s.wantDelay
			if s.wantRetryAfter != 0 {
				t.Fatalf("step %d: a row cannot be allowed with a RetryAfter", i)
			}
		} else if s.wantDelay != 0 {
			t.Fatalf("step %d: a row cannot be rejected with a Delay", i)
		}
		want := algorithms.Decision{Allowed: s.wantAllowed, Wait: wait, Remaining: s.wantRemaining, Reset: s.wantReset}
		if got != want {
			t.Errorf("step %d: Allow(%q, %v, %d): got %s, want %s", i, key, s.at, s.cost, fmtDecision(got), fmtDecision(want))
		}
	}
	return lim
}

// reclaimStep drops rested keys at a time and checks how many went and how
// many are left.
type reclaimStep struct {
	at          time.Duration
	wantDropped int
	wantKeys    int
}

func runReclaim(t *testing.T, lim algorithms.Limiter, steps []reclaimStep) {
	t.Helper()
	for i, s := range steps {
		if got := lim.Reclaim(s.at); got != s.wantDropped {
			t.Errorf("reclaim step %d: Reclaim(%v) = %d, want %d", i, s.at, got, s.wantDropped)
		}
		if got := lim.Keys(); got != s.wantKeys {
			t.Errorf("reclaim step %d: Keys() = %d after Reclaim(%v), want %d", i, got, s.at, s.wantKeys)
		}
	}
}

const ms = time.Millisecond

// Parameters: rate 2/s → one token every T = 500ms; burst 3. A key starts
// with a full bucket of 3 tokens and tokens(t) = min(3, tokens + 2·Δt).
// Below, "deficit" is 3 − tokens; Reset is deficit/rate and the RetryAfter
// of a rejected cost n is (deficit + n − 3)/rate.
func TestTokenBucketLadder(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 2, Burst: 3}
	runLadder(t, spec, []ladderStep{
		// A new key is rested: full bucket, nothing to reset. A peek takes nothing.
		0: {at: 0, cost: 0, wantAllowed: true, wantRemaining: 3},
		1: {at: 0, cost: 0, wantAllowed: true, wantRemaining: 3},
		// Take 1: 2 left; the missing token comes back in 1/2 s.
		2: {at: 0, cost: 1, wantAllowed: true, wantRemaining: 2, wantReset: 500 * ms},
		// Cost 2 takes the last two tokens: deficit 3 → full again in 1.5s.
		3: {at: 0, cost: 2, wantAllowed: true, wantRemaining: 0, wantReset: 1500 * ms},
		// Exhausted: one more token needs (3 + 1 − 3)/2 = 500ms.
		4: {at: 0, cost: 1, wantRetryAfter: 500 * ms, wantReset: 1500 * ms},
		// At 100ms the bucket holds 0 + 2·0.1 = 0.2: still short 0.8 → 400ms.
		// The rejected request at step 4 took nothing, so the wait is
		// measured from the same deficit.
		5: {at: 100 * ms, cost: 1, wantRetryAfter: 400 * ms, wantReset: 1400 * ms},
		// At 500ms it holds exactly 1.0: admitted, deficit back to 3.
		6: {at: 500 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 1500 * ms},
		// Cost 4 > burst 3 can never pass; nothing changes.
		7: {at: 500 * ms, cost: 4, wantRetryAfter: algorithms.Never, wantReset: 1500 * ms},
		// At 1250ms the bucket holds 0 + 2·0.75 = 1.5: one whole token,
		// deficit 1.5 → 750ms to full.
		8: {at: 1250 * ms, cost: 0, wantAllowed: true, wantRemaining: 1, wantReset: 750 * ms},
		// Cost 2 is short 0.5 token → 250ms. Cost 2 is not split.
		9: {at: 1250 * ms, cost: 2, wantRemaining: 1, wantRetryAfter: 250 * ms, wantReset: 750 * ms},
		// Another key has its own full bucket: it takes all 3.
		10: {at: 1250 * ms, key: "b", cost: 3, wantAllowed: true, wantRemaining: 0, wantReset: 1500 * ms},
		// Key a is untouched by b: 1.5 − 1 = 0.5 left, deficit 2.5 → 1.25s.
		11: {at: 1250 * ms, cost: 1, wantAllowed: true, wantRemaining: 0, wantReset: 1250 * ms},
		// The clock steps back to 1s. It is treated as 1250ms (no tokens
		// come back): short 0.5 → 250ms after 1250ms, i.e. 500ms from 1s;
		// Reset is 250ms + 1.25s.
		12: {at: 1000 * ms, cost: 1, wantRetryAfter: 500 * ms, wantReset: 1500 * ms},
		13: {at: 1000 * ms, cost: 0, wantAllowed: true, wantRemaining: 0, wantReset: 1500 * ms},
		// At 2s: deficit 2.5 − 2·0.75 = 1 → 2 tokens. Cost 3 is short one
		// token → 500ms, which is also the time to full.
		14: {at: 2000 * ms, cost: 3, wantRemaining: 2, wantRetryAfter: 500 * ms, wantReset: 500 * ms},
		// At 2.5s the bucket is full: cost 3 = burst passes and empties it.
		15: {at: 2500 * ms, cost: 3, wantAllowed: true, wantRemaining: 0, wantReset: 1500 * ms},
		// Long idle: full again, whatever happened before.
		16: {at: 10 * time.Second, cost: 0, wantAllowed: true, wantRemaining: 3},
		// Deficit 1 at 10s.
		17: {at: 10 * time.Second, cost: 1, wantAllowed: true, wantRemaining: 2, wantReset: 500 * ms},
		// Back to 9s: decided as at 10s (2 tokens), so cost 2 passes and
		// the deficit is 3 as of 10s; Reset is 1s of lag + 3/2 s.
		18: {at: 9 * time.Second, cost: 2, wantAllowed: true, wantRemaining: 0, wantReset: 2500 * ms},
		// At 10.5s the bucket has refilled 2·0.5 = 1 since 10s, not since
		// 9s: deficit 2, 1 token.
		19: {at: 10500 * ms, cost: 0, wantAllowed: true, wantRemaining: 1, wantReset: time.Second},
	})
}

func TestTokenBucketReclaim(t *testing.T) {
	// rate 2/s, burst 3: an emptied bucket is full again 1.5s later.
	spec := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 2, Burst: 3}
	lim := runLadder(t, spec, []ladderStep{
		// a: deficit 3 at 0 → full at 1.5s.
		{at: 0, key: "a", cost: 3, wantAllowed: true, wantReset: 1500 * ms},
		// b: deficit 1 at 1s → full at 1.5s too; then 2 more at 1.2s:
		// deficit 1 − 0.4 + 2 = 2.6 → full at 1.2 + 1.3 = 2.5s.
		{at: 1000 * ms, key: "b", cost: 1, wantAllowed: true, wantRemaining: 2, wantReset: 500 * ms},
		{at: 1200 * ms, key: "b", cost: 2, wantAllowed: true, wantRemaining: 0, wantReset: 1300 * ms},
		// c only peeks and d asks for more than the burst: both hold
		// state, and both are rested.
		{at: 1200 * ms, key: "c", cost: 0, wantAllowed: true, wantRemaining: 3},
		{at: 1200 * ms, key: "d", cost: 9, wantRemaining: 3, wantRetryAfter: algorithms.Never},
	})
	runReclaim(t, lim, []reclaimStep{
		// At 1.2s: c and d are rested; a (deficit 3 − 2.4 = 0.6) and b are not.
		{at: 1200 * ms, wantDropped: 2, wantKeys: 2},
		// At 2s: a is full (since 1.5s), b has deficit 2.6 − 1.6 = 1.
		{at: 2000 * ms, wantDropped: 1, wantKeys: 1},
		{at: 2000 * ms, wantDropped: 0, wantKeys: 1},
		// At 3s b is full too.
		{at: 3000 * ms, wantDropped: 1, wantKeys: 0},
	})
	// A dropped key decides as a new one: full bucket.
	if got := lim.Allow("a", 3000*ms, 3); !got.Allowed || got.Remaining != 0 {
		t.Errorf("after reclaim: got %s, want allowed with 0 remaining", fmtDecision(got))
	}
}

func TestTokenBucketReclaimKeepsState(t *testing.T) {
	// A key that is not rested keeps its state across Reclaim: rate 1/s,
	// burst 2, 2 taken at 0, so at 500ms the bucket holds 0.5.
	lim := mustNew(t, algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 2})
	lim.Allow("a", 0, 2)
	if n := lim.Reclaim(500 * ms); n != 0 {
		t.Fatalf("Reclaim(500ms) = %d, want 0", n)
	}
	// Short 0.5 token → 500ms.
	got := lim.Allow("a", 500*ms, 1)
	want := algorithms.Decision{Wait: 500 * ms, Reset: 1500 * ms}
	if got != want {
		t.Errorf("got %s, want %s", fmtDecision(got), fmtDecision(want))
	}
}
