package calc_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/calc"
)

func TestShare(t *testing.T) {
	tests := []struct {
		name string
		in   calc.Input
		from []string
		want float64 // P(rate > r), by hand
	}{
		// The limit at p50: half the clients are above it.
		{"limit at p50", calc.Input{Capacity: 1e4, Clients: 100, P50: 4, P99: 20, Margin: 0.2}, []string{"p50", "p99"}, 0.5},
		// The limit at p99 (margin 1): 1 %, whatever the fit.
		{"limit at p99", calc.Input{Capacity: 1e4, Clients: 100, P50: 4, P99: 20, Margin: 1}, []string{"p50", "p99"}, 0.01},
		// Without p50, the fit runs through p95 and p99: the limit at p95 → 5 %.
		{"limit at p95", calc.Input{Capacity: 1e4, Clients: 100, P95: 8, P99: 20, Margin: 0.4}, []string{"p95", "p99"}, 0.05},
		// Without p99 (rate = fair share = 8000/100 = 80), p50 and p95: 80 = p95 → 5 %.
		{"p50 and p95", calc.Input{Capacity: 1e4, Clients: 100, P50: 10, P95: 80}, []string{"p50", "p95"}, 0.05},
		// p50 = 10, p99 = 50, r = 100: σ = ln 5/z99 = 0.69183, z = ln 10/σ = 3.32825,
		// 1 − Φ(z) = 0.000437 (math.Erfc in Python, not this code).
		{"article 100/s", calc.Input{Capacity: 12500, Clients: 100, P50: 10, P99: 50}, []string{"p50", "p99"}, 0.0004369648675935416},
		// Per minute is the same shape: p50 60/min = 1/s, p99 300/min = 5/s, r = 2.5/s:
		// z = ln 2.5/(ln 5/z99) = 1.3241, 1 − Φ = 0.09268 (Python).
		{"per minute", calc.Input{Capacity: 1e4, Clients: 100, P50: 60, P99: 300, Margin: 0.5, PercentileUnit: calc.PerMinute}, []string{"p50", "p99"}, 0.09267775203190118},
		// Everyone sends 10/s: a limit of 20 catches no one, 5 catches all.
		{"no spread, limit above", calc.Input{Capacity: 1e4, Clients: 100, P50: 10, P99: 10}, []string{"p50", "p99"}, 0},
		{"no spread, limit below", calc.Input{Capacity: 1e4, Clients: 100, P50: 10, P99: 10, Margin: 0.5}, []string{"p50", "p99"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustSize(t, tt.in)
			s := res.Share
			if s == nil {
				t.Fatal("no share")
			}
			if !near(s.Fraction, tt.want, 1e-9) {
				t.Errorf("fraction %v, want %v", s.Fraction, tt.want)
			}
			checkNear(t, "clients", s.Clients, tt.want*float64(res.Input.Clients))
			if !slices.Equal(s.From, tt.from) {
				t.Errorf("fitted %v, want %v", s.From, tt.from)
			}
			if !strings.Contains(s.Assumption, "log-normal") || s.Reason == "" {
				t.Errorf("assumption %q, reason %q", s.Assumption, s.Reason)
			}
		})
	}
	for _, in := range []calc.Input{
		{Capacity: 100, Clients: 10},
		{Capacity: 100, Clients: 10, P99: 5},
		{Capacity: 100, Clients: 10, P50: 1},
	} {
		if res := mustSize(t, in); res.Share != nil {
			t.Errorf("a share from fewer than two percentiles: %+v", res.Share)
		}
	}
}
