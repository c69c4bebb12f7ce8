package calc_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/ratelab/ratelab/calc"
)

// FuzzSize: Size never panics, and either returns field errors or a result
// whose numbers are all finite (JSON refuses NaN and ±Inf) and whose specs
// the engine accepts.
func FuzzSize(f *testing.F) {
	// capacity, headroom, clients, p50, p95, p99, perMinute, margin, peak, peakSeconds,
	// window, maxDelay, replicas, local, cost, tierMultiplier, tierClients
	f.Add(12500.0, 0.2, 100, 0.0, 0.0, 50.0, false, 0.0, 300.0, 2.0, 0.0, -1.0, 0, false, int64(0), 0.0, 0)
	f.Add(100.0, 0.2, 10, 30.0, 45.0, 60.0, true, 2.0, 0.0, 0.0, 60.0, 0.5, 5, true, int64(8), 0.0, 0)
	f.Add(10.0, 0.0, 10, 0.0, 0.0, 0.05, false, 1.0, 0.0, 0.0, 0.25, 0.0, 3, true, int64(1), 10.0, 5)
	f.Add(1e9, 0.95, 1, 1e6, 1e6, 1e6, false, 100.0, 1e9, 86400.0, 3.16224e7, 86400.0, 1000, true, int64(1e6), 1000.0, 1)
	f.Add(0.001, 0.95, 100000000, 0.0, 0.0, 0.0, false, 0.1, 0.0, 0.0, 0.001, 0.0, 1000, true, int64(1e6), 0.001, 100000000)
	f.Add(-1.0, 2.0, -5, -1.0, 5.0, 1.0, true, -3.0, 1.0, 0.0, -60.0, -2.0, -1, false, int64(-8), -1.0, -1)
	f.Fuzz(func(t *testing.T, capacity, headroom float64, clients int, p50, p95, p99 float64, perMinute bool, margin, peak, peakSeconds,
		window, maxDelay float64, replicas int, local bool, cost int64, tierMultiplier float64, tierClients int) {
		in := calc.Input{Capacity: capacity, Headroom: &headroom, Clients: clients, P50: p50, P95: p95, P99: p99, Margin: margin,
			Peak: peak, PeakSeconds: peakSeconds, Window: window, Replicas: replicas}
		if perMinute {
			in.PercentileUnit = calc.PerMinute
		}
		if maxDelay >= 0 {
			in.MaxDelay = &maxDelay
		}
		if local {
			in.Enforcement = calc.Local
		}
		if cost != 0 {
			in.Endpoints = []calc.Endpoint{{Method: "GET", Path: "/v1/reports", Cost: cost}}
		}
		if tierMultiplier != 0 || tierClients != 0 {
			in.Clients = 0
			in.Tiers = []calc.TierInput{{Name: "paid", Clients: tierClients, Multiplier: tierMultiplier}, {Name: "free", Clients: max(1, clients)}}
		}
		res, err := calc.Size(in)
		// Validate is Size's refusal without the rest of its work.
		if verr := in.Validate(); fmt.Sprint(verr) != fmt.Sprint(err) {
			t.Fatalf("Validate says %v, Size %v", verr, err)
		}
		if err != nil {
			var fe *calc.FieldError
			if !errors.As(err, &fe) || fe.Field == "" || fe.Want == "" {
				t.Fatalf("error %v is not a field error", err)
			}
			return
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("result does not marshal (a NaN or an infinity?): %v", err)
		}
		for _, p := range res.Algorithms {
			if err := p.Spec().Validate(); err != nil {
				t.Fatalf("%s: %v", p.Algorithm, err)
			}
		}
		for _, tier := range res.Tiers {
			if err := tier.Spec("gcra").Validate(); err != nil {
				t.Fatalf("tier %s: %v", tier.Name, err)
			}
		}
		if p := res.PerReplica; p != nil {
			if err := p.Spec("sliding_window").Validate(); err != nil {
				t.Fatalf("per replica: %v", err)
			}
		}
		if len(res.Algorithms) != 6 || len(res.Headers) != 6 || res.Burst.Value < 1 || res.Limit.Value < 1 || res.Pace.Value <= 0 {
			t.Fatalf("incomplete result: %d algorithms, %d header examples, burst %v, limit %v, pace %v",
				len(res.Algorithms), len(res.Headers), res.Burst.Value, res.Limit.Value, res.Pace.Value)
		}
	})
}
