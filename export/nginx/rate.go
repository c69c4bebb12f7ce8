package nginx

import (
	"fmt"
	"math"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
)

// Rate is a rate as limit_req_zone writes it: N whole requests per second
// ("5r/s") or per minute ("100r/m"). nginx keeps it as an integer number of
// milli-requests per second, truncated: N r/s is N·1000 and N r/m is
// ⌊N·1000/60⌋, so 1r/m is enforced as 0.016 r/s.
type Rate struct {
	N         int64
	PerMinute bool
}

// String is the rate as written in limit_req_zone: "5r/s", "100r/m".
func (r Rate) String() string {
	if r.PerMinute {
		return fmt.Sprintf("%dr/m", r.N)
	}
	return fmt.Sprintf("%dr/s", r.N)
}

// Milli is what nginx enforces, in milli-requests per second.
func (r Rate) Milli() int64 {
	if r.PerMinute {
		return r.N * 1000 / 60
	}
	return r.N * 1000
}

// PerSecond is what nginx enforces, in requests per second.
func (r Rate) PerSecond() float64 { return float64(r.Milli()) / 1000 }

// RateFor is the nginx rate that enforces the rate closest to perSecond
// (requests per second, > 0), and its relative error
// (enforced − wanted)/wanted, 0 when nginx enforces exactly perSecond. It
// tries the whole numbers just below and above perSecond per second and
// per minute, never 0; on a tie it prefers r/s, then the smaller number.
func RateFor(perSecond float64) (Rate, float64) {
	var cands []Rate
	for _, n := range []float64{math.Floor(perSecond), math.Ceil(perSecond)} {
		cands = append(cands, Rate{N: max(1, int64(n))})
	}
	for _, n := range []float64{math.Floor(perSecond * 60), math.Ceil(perSecond * 60)} {
		cands = append(cands, Rate{N: max(1, int64(n)), PerMinute: true})
	}
	best, bestErr := cands[0], relErr(cands[0], perSecond)
	for _, c := range cands[1:] {
		if e := relErr(c, perSecond); math.Abs(e) < math.Abs(bestErr) {
			best, bestErr = c, e
		}
	}
	return best, bestErr
}

// relErr is (enforced − wanted)/wanted for rate r, snapped to 0 when the
// two differ only by float rounding of the wanted rate (0.1·1000).
func relErr(r Rate, perSecond float64) float64 {
	want := perSecond * 1000
	got := float64(r.Milli())
	if math.Abs(got-want) <= 1e-9*want {
		return 0
	}
	return (got - want) / want
}

// Param is one limit as limit_req enforces it: the zone's rate and the
// limit_req line's burst and nodelay, with the mapping's fidelity and why.
type Param struct {
	Rate Rate
	// Burst is limit_req's burst= (0: left out, nginx's default). nginx
	// admits a request when its excess — GCRA's (TAT − now)/T − 1, in
	// requests — stays at most Burst, so a rested key passes Burst+1
	// requests at once.
	Burst int64
	// NoDelay rejects beyond the burst at once; without it, requests
	// over the rate wait (a shaper), up to Burst of them.
	NoDelay  bool
	Fidelity export.Fidelity
	Why      string
}

// To is the mapping's To: the zone's rate and the limit_req parameters.
func (p Param) To() string {
	s := "rate=" + p.Rate.String()
	if p.Burst > 0 {
		s += fmt.Sprintf(" burst=%d", p.Burst)
	}
	if p.NoDelay {
		s += " nodelay"
	}
	return s
}

// args is the limit_req line's parameters after the zone.
func (p Param) args() string {
	s := ""
	if p.Burst > 0 {
		s += fmt.Sprintf(" burst=%d", p.Burst)
	}
	if p.NoDelay {
		s += " nodelay"
	}
	return s
}

// RetryAfter is the whole seconds after which a key this limit rejected
// (and that sends nothing meanwhile) is admitted again: one request's
// worth of excess drains in 1/rate, rounded up, at least 1 s.
func (p Param) RetryAfter() int64 {
	m := p.Rate.Milli()
	return max(1, (1000+m-1)/m)
}

// ParamFor maps one limit (already divided over replicas when it must be)
// to limit_req:
//
//	token_bucket, gcra (r, b)  rate=r burst=b−1 nodelay   exact if r is whole per second
//	leaky_bucket (r, q)        rate=r burst=q             the queue: nginx delays, exact likewise
//	windows (L, W)             rate=L/W burst=L−1 nodelay approximate (export.Bucket)
//
// A rate nginx cannot write exactly is rounded to the nearest whole r/s or
// r/m and the mapping is approximate, with the relative error. A rate
// written per minute that is not a whole number per second (7.5/s as
// 450r/m) is approximate too: nginx's leak drifts by up to
// [Rate.LeakLoss] at each admitted request.
func ParamFor(s algorithms.Spec) Param {
	var p Param
	var why []string
	fid := export.Exact
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		p.Burst, p.NoDelay = s.Burst-1, true
		why = append(why, fmt.Sprintf("burst = %d − 1: nginx passes burst+1 requests from a rested key (its excess starts at 0), the policy's %d", s.Burst, s.Burst))
	case algorithms.NameLeakyBucket:
		p.Burst = s.Queue
		why = append(why, fmt.Sprintf("without nodelay nginx is the queue: a request over the rate waits until its turn (1/rate apart), up to burst = queue = %d waiting, beyond that rejected", s.Queue))
	default:
		_, b, w := export.Bucket(s)
		p.Burst, p.NoDelay = b-1, true
		fid = export.Approximate
		why = append(why, w, fmt.Sprintf("burst = %d − 1 (nginx passes burst+1 from a rested key)", b))
	}
	r, _, _ := export.Bucket(s)
	rate, e := RateFor(r)
	p.Rate = rate
	if e != 0 {
		fid = export.Worst(fid, export.Approximate)
		why = append(why, fmt.Sprintf("nginx takes whole requests per second or minute and keeps milli-requests/s: %s/s is written %s, enforced as %s/s (%+.3g %%)",
			fmtFloat(r), rate, fmtFloat(rate.PerSecond()), 100*e))
	}
	if loss, ms := rate.LeakLoss(); loss > 0 {
		fid = export.Worst(fid, export.Approximate)
		why = append(why, fmt.Sprintf("%s is %d milli-requests/s, not a whole number of requests per second: at each admitted request nginx leaks ⌊%d·Δms/1000⌋ milli-requests and drops the rest, up to %s milli-request (%s ms of refill) each time; the loss adds up while the key's excess stays above 0, so after n admitted requests without the bucket refilling completely nginx refills up to n·%s ms later than the policy (%s ms after 100) and rejects a request arriving that close to its refill",
			rate, rate.Milli(), rate.Milli(), fmtFloat(loss), fmtMs(ms), fmtMs(ms), fmtMs(100*ms)))
	}
	p.Fidelity = fid
	p.Why = join(why)
	return p
}

// LeakLoss bounds what nginx's integer leak loses at each admitted
// request: nginx leaks ⌊R·Δms/1000⌋ milli-requests for R milli-requests/s
// and Δms whole milliseconds since the key's last update, and drops the
// remainder. The remainder is a multiple of g/1000 milli-requests, g =
// gcd(R, 1000), so it is at most loss = (1000−g)/1000 milli-requests, ms =
// (1000−g)/R milliseconds of refill. Both are 0 for whole requests per
// second (R a multiple of 1000), where the leak is exact.
func (r Rate) LeakLoss() (loss, ms float64) {
	m := r.Milli()
	if m <= 0 || m%1000 == 0 {
		return 0, 0
	}
	g := gcd(m, 1000)
	return float64(1000-g) / 1000, float64(1000-g) / float64(m)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// fmtMs is a duration in milliseconds to 3 significant digits.
func fmtMs(ms float64) string { return fmt.Sprintf("%.3g", ms) }

func fmtFloat(f float64) string { return fmt.Sprint(f) }

func join(parts []string) string {
	out := ""
	for _, s := range parts {
		if s == "" {
			continue
		}
		if out != "" {
			out += "; "
		}
		out += s
	}
	return out
}
