package kong

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
)

// kongWindows replays Kong's rate-limiting on one identity: a counter per
// window unit and window start (aligned to time 0, as Kong's UTC calendar
// windows are to the epoch); a request passes when every counter is below
// its limit, and only passing requests are counted.
type kongWindows struct {
	periods []Period
	counts  map[[2]int64]int64 // unit seconds, window index → count
}

func (k *kongWindows) allow(now time.Duration) bool {
	for _, p := range k.periods {
		idx := int64(now / (time.Duration(p.Unit.Seconds) * time.Second))
		if k.counts[[2]int64{p.Unit.Seconds, idx}] >= p.Limit {
			return false
		}
	}
	for _, p := range k.periods {
		idx := int64(now / (time.Duration(p.Unit.Seconds) * time.Second))
		k.counts[[2]int64{p.Unit.Seconds, idx}]++
	}
	return true
}

// TestNoConformingClientRejected checks the claim behind every window
// mapping: a client whose requests the policy admits is never rejected by
// the exported Kong windows. Each limit of every test policy gets 20 000
// arrivals (5·burst when larger) at about 1.2 times its rate (gaps of mean 1/(3r), and about
// once per 2·burst requests a pause of up to 2·burst/r that refills the
// bucket); the requests the policy admits are replayed on the Kong
// windows, which must admit them all.
func TestNoConformingClientRejected(t *testing.T) {
	for _, tp := range exporttest.Policies(t) {
		for _, l := range tp.Policy.Limits() {
			t.Run(tp.Name+"/"+l.Field, func(t *testing.T) {
				ps, _, _ := Periods(l.Spec)
				pol, err := algorithms.New(l.Spec)
				if err != nil {
					t.Fatal(err)
				}
				r, b, _ := export.Bucket(l.Spec)
				rng := rand.New(rand.NewPCG(1, uint64(len(l.Field))))
				k := &kongWindows{periods: ps, counts: map[[2]int64]int64{}}
				var now time.Duration
				admitted, n := 0, max(20000, 5*int(b))
				for i := 0; i < n; i++ {
					if rng.Int64N(2*b) == 0 {
						now += time.Duration(rng.Float64() * 2 * float64(b) / r * float64(time.Second))
					} else {
						now += time.Duration(rng.ExpFloat64() / (3 * r) * float64(time.Second))
					}
					if !pol.Allow("k", now, 1).Allowed {
						continue
					}
					admitted++
					if !k.allow(now) {
						t.Fatalf("request %d at %s: the policy admits it, Kong (%v) rejects it", i, now, ps)
					}
				}
				if admitted == 0 || admitted == n {
					t.Fatalf("%d of %d admitted: the arrivals do not exercise the limit", admitted, n)
				}
			})
		}
	}
}

// TestWindowEdge shows why the bucket mappings are approximate: Kong lets
// twice a second's limit through across a second's edge, where the policy
// admits burst + rate·Δt.
func TestWindowEdge(t *testing.T) {
	s := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 100}
	ps, _, _ := Periods(s)
	k := &kongWindows{periods: ps, counts: map[[2]int64]int64{}}
	pol, _ := algorithms.New(s)
	kong, policy := 0, 0
	for i := range 600 {
		at := 997*time.Millisecond + time.Duration(i)*10*time.Microsecond // 3 ms each side of t = 1 s
		if k.allow(at) {
			kong++
		}
		if pol.Allow("k", at, 1).Allowed {
			policy++
		}
	}
	// Policy: 100 + 10/s × 6 ms = 100.06 → 100. Kong: second=110 before the edge and
	// 110 after it = 220.
	if policy != 100 || kong != 220 {
		t.Errorf("admitted across the edge: kong %d, policy %d; want 220 and 100", kong, policy)
	}
}
