package design_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/design"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/policy"
)

// TestProposedPolicyPassesTheDesignedPeak: the articles' peak example, a
// client at 100/s (p99 50 × margin 2) that must be able to send 300/s for
// 2 s, on a service whose usable rate is 100/s. The proposed policy as a
// whole — the client's limit and the global limit — lets all 600 requests
// of that peak through; a global bucket of one second of the usable rate
// (burst 100) would let through only ⌊100 + 100·599/300⌋ = 299, and lint
// says so when one is pinned.
func TestProposedPolicyPassesTheDesignedPeak(t *testing.T) {
	const q = "capacity=125&clients=1&p99=50&peak=300&peak_seconds=2"
	peak := func(p policy.Policy) int {
		e, err := engine.New(p)
		if err != nil {
			t.Fatal(err)
		}
		admitted := 0
		for k := range 600 {
			if e.Decide(engine.Request{At: time.Duration(k) * time.Second / 300, Key: "c"}).Allowed {
				admitted++
			}
		}
		return admitted
	}
	p, err := design.ParseQuery(q).Policy()
	if err != nil {
		t.Fatal(err)
	}
	if p.Global.Limit.Rate != 100 {
		t.Fatalf("global limit %v, want the usable 100/s", p.Global.Limit)
	}
	if got := peak(p); got != 600 {
		t.Errorf("the proposed policy admits %d of the 600 peak requests (%v, global %v), want all", got, p.Defaults.Limit, p.Global.Limit)
	}
	for _, f := range policy.Lint(p) {
		if f.ID == policy.LintGlobalBelowClient {
			t.Errorf("lint on the proposed policy: %s", f.Message)
		}
	}

	pinned, err := design.ParseQuery(q + "&global.limit.burst=100").Policy()
	if err != nil {
		t.Fatal(err)
	}
	if got := peak(pinned); got != 299 {
		t.Errorf("with a global burst of 100 the policy admits %d, want 299", got)
	}
	found := false
	for _, f := range policy.Lint(pinned) {
		found = found || f.ID == policy.LintGlobalBelowClient
	}
	if !found {
		t.Error("lint says nothing of a global burst that cuts the designed peak")
	}
}
