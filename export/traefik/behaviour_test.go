package traefik

import (
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
)

// traefikAdmits replays Traefik's rateLimit decision on an x/time/rate
// limiter built from the parsed middleware, as its source does: reserve
// one token, cancel and reject when the wait exceeds maxDelay, else admit
// (after the wait).
func traefikAdmits(lim *rate.Limiter, at time.Time, maxDelay time.Duration) bool {
	res := lim.ReserveN(at, 1)
	if !res.OK() {
		return false
	}
	if res.DelayFrom(at) > maxDelay {
		res.CancelAt(at)
		return false
	}
	return true
}

// TestBehaviour runs the parsed middlewares on x/time/rate (Traefik's
// limiter) against the policy's own algorithm. Without Traefik's delay
// they admit exactly the same requests over an irregular arrival sequence;
// with it, Traefik admits a request the policy rejects — why the mapping
// says approximate.
func TestBehaviour(t *testing.T) {
	tests := []struct {
		policy, mw string
		spec       algorithms.Spec
	}{
		{"minimal", "default", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 100}},
		{"every-algorithm", "tier_partner", algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 0.5, Burst: 3}},
		{"every-algorithm", "endpoint_2", algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 7.5, Burst: 15}},
	}
	for _, tt := range tests {
		t.Run(tt.policy+"/"+tt.mw, func(t *testing.T) {
			e, err := Dynamic.Render(exporttest.Named(t, tt.policy), export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := Validate(e.Body)
			if err != nil {
				t.Fatal(err)
			}
			rl := c.HTTP.Middlewares[tt.mw].RateLimit
			r := float64(rl.Average*int64(time.Second)) / float64(rl.Period)
			base := time.Unix(1_700_000_000, 0)

			// Plain token bucket: x/time/rate's AllowN against the policy.
			lim := rate.NewLimiter(rate.Limit(r), int(rl.Burst))
			pol, err := algorithms.New(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			// Bursts of 7 every 1.37 refill intervals, 400 requests.
			step := time.Duration(1.37 * float64(time.Second) / r)
			var now time.Duration
			admitted := 0
			for i := range 400 {
				if i%7 == 0 {
					now += step
				}
				want := pol.Allow("k", now, 1).Allowed
				if got := lim.AllowN(base.Add(now), 1); got != want {
					t.Fatalf("request %d at %s: x/time/rate %v, policy %v", i, now, got, want)
				}
				if want {
					admitted++
				}
			}
			if admitted == 0 || admitted == 400 {
				t.Fatalf("%d of 400 admitted: the sequence does not exercise the limit", admitted)
			}

			// Traefik's delay: drain the bucket, then ask maxDelay/2 before
			// the next token is back. The policy rejects; Traefik waits
			// maxDelay/2 and admits.
			lim = rate.NewLimiter(rate.Limit(r), int(rl.Burst))
			pol, _ = algorithms.New(tt.spec)
			for range rl.Burst {
				if !traefikAdmits(lim, base, maxDelay(r)) || !pol.Allow("k", 0, 1).Allowed {
					t.Fatal("a full bucket rejected")
				}
			}
			early := time.Duration(float64(time.Second)/r) - maxDelay(r)/2
			if pol.Allow("k", early, 1).Allowed {
				t.Fatal("policy admits before a whole token is back")
			}
			if !traefikAdmits(lim, base.Add(early), maxDelay(r)) {
				t.Error("Traefik rejects a request whose wait is within maxDelay")
			}
		})
	}
}
