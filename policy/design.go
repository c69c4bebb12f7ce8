package policy

import (
	"time"

	"github.com/ratelab/ratelab/calc"
)

// Design is the calculator input the policy was sized from: its service,
// sizing, the tiers' clients and multipliers and the endpoints' costs. The
// limits themselves are not part of it (package design proposes them from
// it).
func (p Policy) Design() calc.Input {
	s := p.Sizing
	in := calc.Input{
		Capacity: p.Service.Capacity, Headroom: p.Service.Headroom, Clients: s.Clients,
		P50: s.P50, P95: s.P95, P99: s.P99, PercentileUnit: s.PercentileUnit, Margin: s.Margin,
		Peak: s.Peak, PeakSeconds: s.PeakSeconds, Window: secondsOf(s.Window),
		Replicas: p.Service.Replicas, Enforcement: p.Service.Enforcement,
		Retry: calc.Retry{Base: secondsOf(s.Retry.Base), Factor: s.Retry.Factor, Cap: secondsOf(s.Retry.Cap),
			Attempts: s.Retry.Attempts, Jitter: s.Retry.Jitter, JitterMode: s.Retry.JitterMode},
	}
	if s.MaxDelay != nil {
		in.MaxDelay = new(secondsOf(*s.MaxDelay))
	}
	for _, t := range p.Tiers {
		in.Tiers = append(in.Tiers, calc.TierInput{Name: t.Name, Clients: t.Clients, Multiplier: t.Multiplier})
	}
	for _, e := range p.Endpoints {
		in.Endpoints = append(in.Endpoints, calc.Endpoint{Method: e.Match.Method, Path: e.Match.Path, Cost: e.Cost})
	}
	return in
}

// Sized reports whether the policy carries a design the calculator can
// size: a client count, directly or on the tiers.
func (p Policy) Sized() bool {
	if p.Sizing.Clients != 0 {
		return true
	}
	for _, t := range p.Tiers {
		if t.Clients != 0 {
			return true
		}
	}
	return false
}

// secondsOf is d in seconds, the exact inverse of seconds for a number of
// seconds with at most nine decimals (time.Duration.Seconds adds whole and
// fractional seconds separately, which can be off by an ulp).
func secondsOf(d time.Duration) float64 { return float64(d) / 1e9 }
