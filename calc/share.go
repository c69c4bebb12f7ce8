package calc

import (
	"fmt"
	"math"
)

// Share is the predicted share of clients whose sustained rate exceeds a
// limit, from a log-normal distribution fitted through two measured
// percentiles: ln(rate) is normal with mean Mu and standard deviation Sigma
// (rates in requests/s).
type Share struct {
	// The fraction of clients above the limit.
	Fraction float64 `json:"fraction"`
	// The expected number of them.
	Clients float64 `json:"clients"`
	// The mean of ln(rate).
	Mu float64 `json:"mu"`
	// The standard deviation of ln(rate).
	Sigma float64 `json:"sigma"`
	// The two percentiles fitted, as ["p50", "p99"].
	From []string `json:"from"`
	// What the prediction assumes.
	Assumption string `json:"assumption"`
	// How the fraction was worked out.
	Reason string `json:"reason"`
}

// Standard normal quantiles of the percentiles.
const (
	z50 = 0.0
	z95 = 1.6448536269514722
	z99 = 2.3263478740408408
)

// percentile is one measured percentile in requests/s.
type percentile struct {
	name string
	z    float64
	rate float64
}

// fitPair picks the two percentiles to fit: p50 and p99, else p95 and p99,
// else p50 and p95. It returns false when fewer than two are measured.
func (in Input) fitPair() (lo, hi percentile, ok bool) {
	u := in.PercentileUnit.seconds()
	p50 := percentile{"p50", z50, in.P50 / u}
	p95 := percentile{"p95", z95, in.P95 / u}
	p99 := percentile{"p99", z99, in.P99 / u}
	switch {
	case in.P50 > 0 && in.P99 > 0:
		return p50, p99, true
	case in.P95 > 0 && in.P99 > 0:
		return p95, p99, true
	case in.P50 > 0 && in.P95 > 0:
		return p50, p95, true
	}
	return percentile{}, percentile{}, false
}

// predictShare fits the log-normal and evaluates P(rate > limit) for a
// limit in requests/s. ok is false without two percentiles.
func (in Input) predictShare(limit float64) (Share, bool) {
	lo, hi, ok := in.fitPair()
	if !ok {
		return Share{}, false
	}
	sigma := (math.Log(hi.rate) - math.Log(lo.rate)) / (hi.z - lo.z)
	mu := math.Log(lo.rate) - sigma*lo.z
	var frac float64
	var z string
	if sigma > 0 {
		zz := (math.Log(limit) - mu) / sigma
		frac = 0.5 * math.Erfc(zz/math.Sqrt2)
		z = fmt.Sprintf("z = (ln %s − μ)/σ = %s; P(rate > limit) = 1 − Φ(z) = %s", num(limit), num(zz), num(frac))
	} else {
		// p_lo = p_hi: every client sends at the same rate.
		if limit < lo.rate {
			frac = 1
		}
		z = fmt.Sprintf("σ = 0: every client sends %s, so the share is %s", perSec(lo.rate), num(frac))
	}
	return Share{
		Fraction: frac,
		Clients:  frac * float64(in.Clients),
		Mu:       mu,
		Sigma:    sigma,
		From:     []string{lo.name, hi.name},
		Assumption: fmt.Sprintf("Per-client rates are assumed log-normal, fitted through %s = %s and %s = %s; "+
			"a client counts when its sustained rate exceeds the limit (bursts within a second are not modelled).",
			lo.name, perSec(lo.rate), hi.name, perSec(hi.rate)),
		Reason: fmt.Sprintf("σ = (ln %s − ln %s)/(z%s − z%s) = %s, μ = ln %s − σ × %s = %s; %s",
			num(hi.rate), num(lo.rate), hi.name[1:], lo.name[1:], num(sigma), num(lo.rate), num(lo.z), num(mu), z),
	}, true
}
