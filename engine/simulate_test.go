package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestSimulateIsDecide: Simulate decides requests given out of order or
// in order as Decide does in time order, and its series and summary add up to the
// decisions.
func TestSimulateIsDecide(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	delays := 0 // policies whose requests waited in a queue
	for n := range 20 {
		p := randomPolicy(r)
		var reqs []Request
		now := time.Duration(0)
		for range 400 {
			now += time.Duration(r.ExpFloat64() * float64(50*time.Millisecond))
			reqs = append(reqs, randomRequest(r, now))
		}
		// Give them shuffled (ties keep their order), or every other
		// policy in time order, which Simulate takes without sorting.
		shuffled := make([]Request, len(reqs))
		perm := r.Perm(len(reqs))
		if n%2 == 0 {
			for i := range perm {
				perm[i] = i
			}
		}
		for i, j := range perm {
			shuffled[j] = reqs[i]
		}
		res, err := Simulate(p, Simulation{Requests: shuffled, Bin: 250 * time.Millisecond, Decisions: true})
		if err != nil {
			t.Fatal(err)
		}
		e := mustEngine(t, p)
		var admitted, rejected, delayed int64
		var maxDelay time.Duration
		byLimit := make([]int64, len(e.Limits()))
		byTier := make([]TierCount, 1+len(p.Tiers))
		for i, q := range reqs {
			want := e.Decide(q)
			if got := res.Decisions[perm[i]]; got != want {
				t.Fatalf("policy %d request %d: got %+v, want %+v", n, i, got, want)
			}
			tc := &byTier[want.Tier+1]
			tc.Offered++
			if want.Allowed {
				admitted++
				tc.Admitted++
				if want.Delay > 0 {
					delayed++
					maxDelay = max(maxDelay, want.Delay)
				}
			} else {
				rejected++
				byLimit[want.Rejected]++
				tc.Rejected++
			}
		}
		if !slices.Equal(res.Summary.Tiers, byTier) {
			t.Errorf("policy %d: by tier %+v, want %+v", n, res.Summary.Tiers, byTier)
		}
		var binAdmitted, binRejected int64
		binBy := make([]int64, len(byLimit))
		for i, b := range res.Series {
			if b.Start != time.Duration(i)*250*time.Millisecond {
				t.Fatalf("bin %d starts at %v", i, b.Start)
			}
			binAdmitted += b.Admitted
			binRejected += b.Rejected
			for j, c := range b.RejectedBy {
				binBy[j] += c
			}
		}
		s := res.Summary
		if s.Admitted != admitted || s.Rejected != rejected || binAdmitted != admitted || binRejected != rejected || s.Offered != int64(len(reqs)) {
			t.Errorf("policy %d: summary %d/%d, bins %d/%d, want %d/%d", n, s.Admitted, s.Rejected, binAdmitted, binRejected, admitted, rejected)
		}
		for j := range byLimit {
			if s.RejectedBy[j] != byLimit[j] || binBy[j] != byLimit[j] {
				t.Errorf("policy %d limit %d: rejected %d (bins %d), want %d", n, j, s.RejectedBy[j], binBy[j], byLimit[j])
			}
		}
		if s.Delayed != delayed || s.MaxDelay != maxDelay {
			t.Errorf("policy %d: %d delayed, up to %v; want %d, up to %v", n, s.Delayed, s.MaxDelay, delayed, maxDelay)
		}
		if delayed > 0 {
			delays++
		}
	}
	if delays == 0 {
		t.Error("no policy delayed a request: the delay counts were not checked")
	}
}

// TestSimulateContextStops: a run whose context has ended stops with the
// context's error instead of deciding its requests; with a live context
// it is Simulate's run.
func TestSimulateContextStops(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	p := randomPolicy(r)
	var reqs []Request
	for i := range 3 * checkEvery {
		reqs = append(reqs, randomRequest(r, time.Duration(i)*time.Millisecond))
	}
	sim := Simulation{Requests: reqs, Decisions: true}
	ctx, cancel := context.WithCancel(context.Background())
	want, err := Simulate(p, sim)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SimulateContext(ctx, p, sim)
	if err != nil || !slices.Equal(got.Decisions, want.Decisions) || !reflect.DeepEqual(got.Summary, want.Summary) {
		t.Fatalf("with a live context: error %v, %d decisions, summary %+v; want Simulate's %+v", err, len(got.Decisions), got.Summary, want.Summary)
	}
	cancel()
	if got, err := SimulateContext(ctx, p, sim); !errors.Is(err, context.Canceled) || got.Decisions != nil {
		t.Fatalf("with an ended context: error %v and %d decisions, want context.Canceled and none", err, len(got.Decisions))
	}
}

// TestEngineSimulateStartsFresh: an engine's Simulate, run again and
// again, decides each run as a new engine does (SimulateContext).
func TestEngineSimulateStartsFresh(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for n := range 10 {
		p := randomPolicy(r)
		e := mustEngine(t, p)
		for run := range 3 {
			var reqs []Request
			for i := range 300 {
				reqs = append(reqs, randomRequest(r, time.Duration(i)*20*time.Millisecond))
			}
			sim := Simulation{Requests: reqs, Decisions: true}
			got, err := e.Simulate(context.Background(), sim)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Simulate(p, sim)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("policy %d run %d: the engine's %+v, a new engine's %+v", n, run, got.Summary, want.Summary)
			}
		}
	}
}
