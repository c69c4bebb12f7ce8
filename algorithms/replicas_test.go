package algorithms_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

func TestReplicasLocalEnforcementMultipliesTheLimit(t *testing.T) {
	// One client sends 100 r/s for 60 s (at 5 ms, 15 ms, …) against a token
	// bucket of 10 r/s, burst 10. Shared: the burst plus 60 s × 10 r/s =
	// 610. Five local replicas behind round robin each see 20 r/s (every
	// 50 ms) and admit their own 10 + 600 − (the refill lost while the
	// first burst drains, under one request): 5 × ~610 ≈ 3050, about 5×.
	spec := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 10}
	tr := generate(t, algorithms.Pattern{Name: algorithms.PatternSteady, Rate: 100, Duration: time.Minute, Clients: 1})
	for _, balance := range []algorithms.Balance{algorithms.RoundRobin, algorithms.Random} {
		res := simulate(t, algorithms.Simulation{Traffic: tr, Lanes: []algorithms.Lane{
			{Spec: spec},
			{Spec: spec, Replicas: algorithms.Replicas{Count: 5, Balance: balance, Seed: 9}},
		}})
		shared, local := res.Lanes[0].Summary.Admitted, res.Lanes[1].Summary.Admitted
		if shared < 609 || shared > 611 {
			t.Errorf("%s: shared admitted %d, want 610 ± 1", balance, shared)
		}
		ratio := float64(local) / float64(shared)
		// Round robin splits evenly; a random balancer splits 6000 requests
		// unevenly, but every replica still gets far more than its 10 r/s.
		if ratio < 4.95 || ratio > 5.05 {
			t.Errorf("%s: local admitted %d = %.3f × shared; want about 5×", balance, local, ratio)
		}
	}
}

func TestReplicasClockSkewMovesFixedWindowEdges(t *testing.T) {
	// Two replicas, each a fixed window of 10 per 10 s, and a client far
	// over the limit (100 r/s). With synchronised clocks both reset at
	// 10 s, 20 s…, so any aligned 10 s of real time admits at most
	// 2 × 10 = 20. With replica 2 five seconds ahead its windows end at
	// 5 s, 15 s…, so the real window [10 s, 20 s) holds replica 1's 10 and
	// two of replica 2's windows' 10 each: 30.
	spec := algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 10, Window: 10 * time.Second}
	tr := generate(t, algorithms.Pattern{Name: algorithms.PatternSteady, Rate: 100, Duration: 40 * time.Second, Clients: 1})
	maxAligned := func(r algorithms.Replicas) int64 {
		res := simulate(t, algorithms.Simulation{Traffic: tr, Lanes: []algorithms.Lane{{Spec: spec, Replicas: r}}, Bin: 10 * time.Second})
		var best int64
		for _, b := range res.Lanes[0].Series {
			best = max(best, b.Admitted)
		}
		return best
	}
	synced := maxAligned(algorithms.Replicas{Count: 2, Balance: algorithms.RoundRobin})
	skewed := maxAligned(algorithms.Replicas{Count: 2, Balance: algorithms.RoundRobin, Skew: []time.Duration{0, 5 * time.Second}})
	if synced != 20 || skewed != 30 {
		t.Errorf("most admitted in an aligned 10 s: synchronised %d, skewed %d; want 20 and 30", synced, skewed)
	}
}

func TestReplicasOneIsPlainLimiter(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 5, Burst: 3}
	lim, err := algorithms.NewReplicated(spec, algorithms.Replicas{Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lim.(*algorithms.GCRA); !ok {
		t.Errorf("one replica without skew gave %T, want *algorithms.GCRA", lim)
	}
	lim, err = algorithms.NewReplicated(spec, algorithms.Replicas{Count: 3, Balance: algorithms.RoundRobin})
	if err != nil {
		t.Fatal(err)
	}
	// Round robin: requests 1–3 go to three fresh replicas, each with
	// burst 3, so nine requests at once pass and the tenth does not.
	for i := 0; i < 9; i++ {
		if !lim.Allow("a", time.Second, 1).Allowed {
			t.Fatalf("request %d rejected", i)
		}
	}
	if lim.Allow("a", time.Second, 1).Allowed {
		t.Error("request 10 admitted; want 3 replicas × burst 3 = 9")
	}
	if lim.Keys() != 3 || lim.Spec() != spec {
		t.Errorf("Keys %d, Spec %v; want 3 and %v", lim.Keys(), lim.Spec(), spec)
	}
	// At 10 s every bucket is full again and every state can go.
	if n := lim.Reclaim(10 * time.Second); n != 3 || lim.Keys() != 0 {
		t.Errorf("Reclaim = %d, Keys = %d; want 3 and 0", n, lim.Keys())
	}
}

func TestReplicasValidate(t *testing.T) {
	tests := []struct {
		r     algorithms.Replicas
		field string
	}{
		{algorithms.Replicas{Count: -1}, "count"},
		{algorithms.Replicas{Count: 1001}, "count"},
		{algorithms.Replicas{Count: 2}, "balance"},
		{algorithms.Replicas{Count: 2, Balance: algorithms.Random, Skew: []time.Duration{0, 0, 0}}, "skew"},
		{algorithms.Replicas{Count: 2, Balance: algorithms.Random, Skew: []time.Duration{0, 2 * time.Hour}}, "skew[1]"},
	}
	for _, tt := range tests {
		err := tt.r.Validate()
		var pe *algorithms.ParamError
		if !errors.As(err, &pe) || pe.Field != tt.field {
			t.Errorf("%+v: got %v, want a ParamError for %q", tt.r, err, tt.field)
		}
	}
}
