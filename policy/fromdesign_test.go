package policy

import (
	"math"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// The tests build sized policies from calculator inputs the way the
// designer's first versions did: every input in its place and the
// calculator's token buckets as the limits. Package design owns the real
// conversion; these only make test documents.

// FromDesign is a policy for a designer's design: every field of in in
// its place (capacity, headroom, replicas and enforcement under service;
// the tiers' clients and multipliers on the tiers; the endpoints' costs on
// the endpoints; the rest under sizing), so that Design gives in back, and
// the limits the calculator derives from it as token buckets: the default
// per-client limit, each tier's, and a global limit at the usable rate
// with a second of it as burst. A design the calculator refuses gets no
// limits (lint then reports why).
//
// Durations are kept to the nanosecond: a window or delay given with finer
// precision is rounded, the one way the round trip can lose anything.
func FromDesign(in calc.Input) Policy {
	p := fromInput(in)
	res, err := calc.Size(in)
	if err != nil {
		return p
	}
	return withLimits(p, res)
}

// fromInput is the policy of a design without its limits.
func fromInput(in calc.Input) Policy {
	p := Policy{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata:   Metadata{Name: "design"},
		Service: Service{
			Capacity: in.Capacity, Headroom: in.Headroom, Replicas: in.Replicas,
			Enforcement: in.Enforcement, OnStoreFailure: FailOpen,
		},
		Defaults: Defaults{
			Key: KeyAPIKey, Mode: ModeEnforce,
			Response: Response{Status: 429, Headers: []HeaderStyle{HeadersIETF}, RetryAfter: new(true)},
		},
		Sizing: Sizing{
			Clients: in.Clients, P50: in.P50, P95: in.P95, P99: in.P99, PercentileUnit: in.PercentileUnit,
			Margin: in.Margin, Peak: in.Peak, PeakSeconds: in.PeakSeconds, Window: seconds(in.Window),
			Retry: Retry{Base: seconds(in.Retry.Base), Factor: in.Retry.Factor, Cap: seconds(in.Retry.Cap),
				Attempts: in.Retry.Attempts, Jitter: in.Retry.Jitter, JitterMode: in.Retry.JitterMode},
		},
	}
	if in.MaxDelay != nil {
		p.Sizing.MaxDelay = new(seconds(*in.MaxDelay))
	}
	for _, t := range in.Tiers {
		p.Tiers = append(p.Tiers, Tier{Name: t.Name, Clients: t.Clients, Multiplier: t.Multiplier})
	}
	for _, e := range in.Endpoints {
		p.Endpoints = append(p.Endpoints, Endpoint{Match: Match{Method: e.Method, Path: e.Path}, Cost: e.Cost})
	}
	return p
}

// FromSized is FromDesign for a design the caller has already sized: res
// must be calc.Size(in)'s result without error. It saves sizing twice.
func FromSized(in calc.Input, res calc.Result) Policy {
	return withLimits(fromInput(in), res)
}

// withLimits sets the limits the calculator derived (res) on p.
func withLimits(p Policy, res calc.Result) Policy {
	p.Defaults.Limit = res.Spec(algorithms.NameTokenBucket)
	for i, t := range res.Tiers {
		p.Tiers[i].Limit = t.Spec(algorithms.NameTokenBucket)
	}
	u := res.Usable.Value
	global := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: u, Burst: int64(math.Max(1, math.Ceil(u)))}
	if global.Validate() == nil {
		p.Global.Limit = global
	}
	return p
}

// seconds converts seconds to a Duration, to the nearest nanosecond,
// saturating beyond ±292 years and mapping NaN to 0.
func seconds(s float64) time.Duration {
	ns := math.Round(s * 1e9)
	switch {
	case math.IsNaN(ns):
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(ns)
}
