package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ratelab/ratelab/policy"
)

// Simulation is traffic through a whole policy, in virtual time.
type Simulation struct {
	// Requests are decided in time order (ties in the order given); their
	// order here need not be sorted.
	Requests []Request
	// Bin is the width of one series bin; 0 picks a round width that
	// gives about 100 bins over the run.
	Bin time.Duration
	// Until extends the series to at least this time.
	Until time.Duration
	// Focus is the key whose remaining quota the series tracks; "" means
	// the key of the first request.
	Focus string
	// Decisions keeps one Decision per request, in the order given.
	Decisions bool
}

// Limits of a simulation's size.
const (
	MaxRequests = 1_000_000
	MaxBins     = 100_000
)

// Result is what the policy did to the traffic.
type Result struct {
	// Limits are the policy's limits, which RejectedBy and Checked index.
	Limits    []policy.Limit
	Bin       time.Duration
	Series    []Bin
	Summary   Summary
	Decisions []Decision
}

// Bin is one slice of the series: the requests that arrived in
// [Start, Start+Bin), and the focus key's state at its end.
type Bin struct {
	Start                       time.Duration
	Offered, Admitted, Rejected int64
	// RejectedBy counts the bin's rejections by the limit named first.
	RejectedBy []int64
	// Remaining is the fewest requests the focus key could still send
	// after its last decision so far (what its RateLimit-Remaining header
	// would say); -1 before its first request.
	Remaining int64
}

// Summary is the totals of a run.
type Summary struct {
	Offered, Admitted, Rejected int64
	OfferedCost, AdmittedCost   int64
	// Checked counts, by limit, the requests it applied to; RejectedBy
	// those it was the first to reject.
	Checked, RejectedBy []int64
	// FirstRejection is when the first request was rejected, or -1.
	FirstRejection time.Duration
	// Delayed counts the admitted requests that waited in a leaky
	// bucket's queue, and MaxDelay is the longest wait.
	Delayed  int64
	MaxDelay time.Duration
	// Tiers counts the requests by the tier whose limit applied:
	// Tiers[0] the default limit's (no tier, or an unknown one),
	// Tiers[1+i] the policy's tier i.
	Tiers []TierCount
}

// TierCount is one tier's requests: offered, admitted, rejected.
type TierCount struct {
	Offered, Admitted, Rejected int64
}

// Simulate decides every request of s by p.
func Simulate(p policy.Policy, s Simulation) (Result, error) {
	return SimulateContext(context.Background(), p, s)
}

// checkEvery is how many requests SimulateContext decides between looks
// at its context.
const checkEvery = 4096

// SimulateContext is Simulate stopped by ctx: once ctx has ended it
// returns ctx.Err() within checkEvery requests, so a caller's deadline
// bounds a run whose requests each cost more than most (a million
// arrivals sent with paths of their own through templates that one path
// reaches many nodes of: see routeMemo).
func SimulateContext(ctx context.Context, p policy.Policy, s Simulation) (Result, error) {
	if err := s.check(); err != nil {
		return Result{}, err
	}
	e, err := New(p)
	if err != nil {
		return Result{}, err
	}
	return e.Simulate(ctx, s)
}

// check is the error of a simulation too large or with a negative bin.
func (s *Simulation) check() error {
	if len(s.Requests) > MaxRequests {
		return fmt.Errorf("requests: %d is out of range; want at most %d", len(s.Requests), MaxRequests)
	}
	if s.Bin < 0 {
		return errors.New("bin: want a duration of at least 0")
	}
	return nil
}

// Simulate is SimulateContext through e, from its fresh state (Reset): a
// caller that runs one policy many times (the designer's classes of
// clients) builds its engine once. It leaves e in the state after the
// last request.
func (e *Engine) Simulate(ctx context.Context, s Simulation) (Result, error) {
	if err := s.check(); err != nil {
		return Result{}, err
	}
	e.Reset()
	if e.routes.nodes != nil {
		e.routes.memo = routeMemo{}
		defer func() { e.routes.memo = nil }() // its strings are the caller's for the call only
	}
	n := len(e.Limits())
	res := Result{Limits: e.Limits(), Summary: Summary{Checked: make([]int64, n), RejectedBy: make([]int64, n), FirstRejection: -1,
		Tiers: make([]TierCount, 1+len(e.tierLimit))}}
	order := make([]int, len(s.Requests))
	for i := range order {
		order[i] = i
	}
	// Requests usually come in time order already; checking costs one
	// pass, sorting them again a stable merge sort.
	if !slices.IsSortedFunc(s.Requests, func(a, b Request) int { return cmp.Compare(a.At, b.At) }) {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.Requests[a].At, s.Requests[b].At) })
	}

	last := s.Until
	for _, q := range s.Requests {
		if q.At < 0 {
			return Result{}, fmt.Errorf("requests: a time of %v is out of range; want at least 0", q.At)
		}
		last = max(last, q.At)
	}
	res.Bin = s.Bin
	if res.Bin == 0 {
		res.Bin = roundBin(last / 100)
	}
	bins := int(last/res.Bin) + 1
	if bins > MaxBins {
		return Result{}, fmt.Errorf("bin: %v over %v makes %d bins; want at most %d", res.Bin, last, bins, MaxBins)
	}
	res.Series = make([]Bin, bins)
	counts := make([]int64, bins*n)
	for i := range res.Series {
		res.Series[i].Start = time.Duration(i) * res.Bin
		res.Series[i].RejectedBy = counts[i*n : (i+1)*n : (i+1)*n]
		res.Series[i].Remaining = -1
	}
	if s.Decisions {
		res.Decisions = make([]Decision, len(s.Requests))
	}
	focus := s.Focus
	if focus == "" && len(order) > 0 {
		focus = s.Requests[order[0]].Key
	}
	sum := &res.Summary
	for j, i := range order {
		if j%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return Result{}, err
			}
		}
		q := s.Requests[i]
		d := e.Decide(q)
		b := &res.Series[q.At/res.Bin]
		b.Offered++
		sum.Offered++
		sum.OfferedCost += d.Cost
		for _, l := range d.Limits[:d.N] {
			sum.Checked[l]++
		}
		tier := &sum.Tiers[d.Tier+1]
		tier.Offered++
		if d.Allowed {
			b.Admitted++
			sum.Admitted++
			sum.AdmittedCost += d.Cost
			tier.Admitted++
			if d.Delay > 0 {
				sum.Delayed++
				sum.MaxDelay = max(sum.MaxDelay, d.Delay)
			}
		} else {
			b.Rejected++
			sum.Rejected++
			tier.Rejected++
			if d.Rejected >= 0 {
				b.RejectedBy[d.Rejected]++
				sum.RejectedBy[d.Rejected]++
			}
			if sum.FirstRejection < 0 {
				sum.FirstRejection = q.At
			}
		}
		if q.Key == focus {
			b.Remaining = d.Remaining
		}
		if s.Decisions {
			res.Decisions[i] = d
		}
	}
	// The focus key's state holds between its requests.
	prev := int64(-1)
	for i := range res.Series {
		if res.Series[i].Remaining < 0 {
			res.Series[i].Remaining = prev
		}
		prev = res.Series[i].Remaining
	}
	return res, nil
}

// roundBin rounds a bin width up to 1, 2 or 5 times a power of ten of
// milliseconds, at least 1 ms.
func roundBin(d time.Duration) time.Duration {
	step := time.Millisecond
	for {
		for _, m := range []time.Duration{1, 2, 5} {
			if m*step >= d {
				return m * step
			}
		}
		step *= 10
	}
}
