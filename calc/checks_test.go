package calc_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/calc"
)

type checkCase struct {
	name     string
	in       calc.Input
	id       string
	subject  string // "" matches any
	fire     bool
	severity calc.Severity      // when fired
	numbers  map[string]float64 // when fired, a subset
}

// checkCases make every check fire and not fire, with the numbers behind it
// worked out by hand.
func checkCases() []checkCase {
	report := []calc.Endpoint{{Method: "GET", Path: "/v1/reports", Cost: 8}}
	return []checkCase{
		// usable = 100 × 0.8 = 80; r = 1 × 2 = 2; 100 clients × 2 = 200 → ratio 2.5.
		{"overcommit", calc.Input{Capacity: 100, Clients: 100, P99: 1}, calc.CheckOvercommit, "", true, calc.SeverityWarning,
			map[string]float64{"aggregate": 200, "usable": 80, "ratio": 2.5}},
		// 200 against 1000 × 0.8 = 800.
		{"no overcommit", calc.Input{Capacity: 1000, Clients: 100, P99: 1}, calc.CheckOvercommit, "", false, "", nil},
		// Tiers: 10 × (0.5 × 20) + 10 × (2 × 20) = 100 + 400 = 500 > 80.
		{"overcommit by tiers", calc.Input{Capacity: 100, P99: 10, Tiers: []calc.TierInput{{Name: "a", Clients: 10, Multiplier: 0.5}, {Name: "b", Clients: 10, Multiplier: 2}}},
			calc.CheckOvercommit, "", true, calc.SeverityWarning, map[string]float64{"aggregate": 500, "ratio": 6.25}},

		// 100 clients × p95 1/s = 100 > 80.
		{"undersized", calc.Input{Capacity: 100, Clients: 100, P95: 1, P99: 1}, calc.CheckUndersized, "", true, calc.SeverityError,
			map[string]float64{"demand": 100, "usable": 80, "p95": 1}},
		// p95 = 30/min = 0.5/s: 100 × 0.5 = 50 ≤ 80.
		{"not undersized", calc.Input{Capacity: 100, Clients: 100, P95: 30, P99: 60, PercentileUnit: calc.PerMinute}, calc.CheckUndersized, "", false, "", nil},
		// Without p95, p50: 100 × 1 = 100 > 80.
		{"undersized from p50", calc.Input{Capacity: 100, Clients: 100, P50: 1}, calc.CheckUndersized, "", true, calc.SeverityError,
			map[string]float64{"demand": 100, "p50": 1}},

		// margin 0.5: r = 2.5 < p99 5; fit p50 1, p99 5: share P(X > 2.5) = 0.0927 (by math.Erfc in Python).
		{"limit below p99", calc.Input{Capacity: 1000, Clients: 10, P50: 1, P99: 5, Margin: 0.5}, calc.CheckLimitBelowP99, "rate", true, calc.SeverityWarning,
			map[string]float64{"rate": 2.5, "p99": 5, "share": 0.09267775203190118}},
		{"limit at p99", calc.Input{Capacity: 1000, Clients: 10, P99: 5, Margin: 1}, calc.CheckLimitBelowP99, "", false, "", nil},
		// anonymous 0.25 × 2 = 0.5 < p99 1.
		{"tier below p99", calc.Input{Capacity: 1000, P99: 1, Tiers: []calc.TierInput{{Name: "paid", Clients: 1, Multiplier: 10}, {Name: "anonymous", Clients: 1, Multiplier: 0.25}}},
			calc.CheckLimitBelowP99, "tiers[1]", true, calc.SeverityWarning, map[string]float64{"rate": 0.5, "p99": 1}},

		// r = 100, peak 110 for 1 s: b = ⌈10 + 100/110⌉ = 11 < 100.
		{"burst below rate", calc.Input{Capacity: 1e5, Clients: 1, P99: 50, Peak: 110, PeakSeconds: 1}, calc.CheckBurstBelowRate, "burst", true, calc.SeverityWarning,
			map[string]float64{"burst": 11, "rate": 100}},
		{"burst ten seconds of rate", calc.Input{Capacity: 1e5, Clients: 1, P99: 50}, calc.CheckBurstBelowRate, "", false, "", nil},

		// r = 0.05: b = ⌈0.5⌉ = 1.
		{"burst of one", calc.Input{Capacity: 10, Clients: 10, P99: 0.05, Margin: 1}, calc.CheckBurstOfOne, "burst", true, calc.SeverityWarning,
			map[string]float64{"burst": 1, "rate": 0.05}},
		// r = 0.2: b = 2.
		{"burst of two", calc.Input{Capacity: 10, Clients: 10, P99: 0.1}, calc.CheckBurstOfOne, "", false, "", nil},

		// r = 0.1: L = ⌈6⌉ = 6 < cost 8 (the burst is raised to 8, the limit is not).
		{"limit below cost", calc.Input{Capacity: 10, Clients: 10, P99: 0.05, Endpoints: report}, calc.CheckBurstBelowCost, "limit", true, calc.SeverityError,
			map[string]float64{"limit": 6, "cost": 8}},
		// cost 5 ≤ 6.
		{"limit above cost", calc.Input{Capacity: 10, Clients: 10, P99: 0.05, Endpoints: []calc.Endpoint{{Method: "GET", Path: "/r", Cost: 5}}},
			calc.CheckBurstBelowCost, "", false, "", nil},
		// r = 2, b = 20 on 5 local replicas: ⌈20/5⌉ = 4 < 8; the limit ⌈120/5⌉ = 24 is not.
		{"per-replica burst below cost", calc.Input{Capacity: 100, Clients: 10, P99: 1, Replicas: 5, Enforcement: calc.Local, Endpoints: report},
			calc.CheckBurstBelowCost, "per_replica.burst", true, calc.SeverityError, map[string]float64{"burst": 4, "cost": 8}},
		{"per-replica limit above cost", calc.Input{Capacity: 100, Clients: 10, P99: 1, Replicas: 5, Enforcement: calc.Local, Endpoints: report},
			calc.CheckBurstBelowCost, "per_replica.limit", false, "", nil},
		// r = 2; tier ×0.1: rate 0.2, limit ⌈12⌉ = 12 ≥ 8, but ×0.05: rate 0.1, ⌈6⌉ = 6 < 8.
		{"tier limit below cost", calc.Input{Capacity: 100, P99: 1, Endpoints: report, Tiers: []calc.TierInput{{Name: "a", Clients: 1, Multiplier: 0.1}, {Name: "b", Clients: 1, Multiplier: 0.05}}},
			calc.CheckBurstBelowCost, "tiers[1].limit", true, calc.SeverityError, map[string]float64{"limit": 6}},

		// usable 80; r = 100, b = 1000 > 80.
		{"burst above capacity", calc.Input{Capacity: 100, Clients: 1, P99: 50}, calc.CheckBurstAboveCapacity, "burst", true, calc.SeverityWarning,
			map[string]float64{"burst": 1000, "usable": 80}},
		{"burst within capacity", calc.Input{Capacity: 10000, Clients: 1, P99: 50}, calc.CheckBurstAboveCapacity, "", false, "", nil},

		// r = 2, L = 120 on 5 local replicas: 600 per 60 s, 10/s.
		{"local replicas", calc.Input{Capacity: 100, Clients: 10, P99: 1, Replicas: 5, Enforcement: calc.Local}, calc.CheckLocalReplicas, "replicas", true, calc.SeverityWarning,
			map[string]float64{"replicas": 5, "limit": 120, "total_limit": 600, "total_rate": 10}},
		{"shared replicas", calc.Input{Capacity: 100, Clients: 10, P99: 1, Replicas: 5, Enforcement: calc.Shared}, calc.CheckLocalReplicas, "", false, "", nil},
		{"one local replica", calc.Input{Capacity: 100, Clients: 10, P99: 1, Replicas: 1, Enforcement: calc.Local}, calc.CheckLocalReplicas, "", false, "", nil},

		// r = 2, b = 20, L = 120: 2L = 240 > 20.
		{"fixed window boundary", calc.Input{Capacity: 100, Clients: 10, P99: 1}, calc.CheckFixedWindowBoundary, "fixed_window", true, calc.SeverityWarning,
			map[string]float64{"limit": 120, "boundary": 240, "burst": 20}},
		// W = 1: L = 2, 2L = 4 ≤ 20.
		{"short window", calc.Input{Capacity: 100, Clients: 10, P99: 1, Window: 1}, calc.CheckFixedWindowBoundary, "", false, "", nil},

		// r = 100/60: 100r/m, which nginx keeps as ⌊100 × 1000/60⌋ = 1666 milli-requests/s:
		// 1.666/s, (1.666 − 1.66667)/1.66667 = −0.04 %.
		{"nginx r/m rounding", calc.Input{Capacity: 100, Clients: 10, P99: 50, PercentileUnit: calc.PerMinute}, calc.CheckIntegerRate, "rate", true, calc.SeverityInfo,
			map[string]float64{"nginx_rate": 1.666, "error_percent": -0.04}},
		// r = 1/60: 1r/m runs as 0.016/s, −4 %.
		{"nginx 1r/m", calc.Input{Capacity: 100, Clients: 10, P99: 0.5, PercentileUnit: calc.PerMinute}, calc.CheckIntegerRate, "rate", true, calc.SeverityWarning,
			map[string]float64{"nginx_rate": 0.016, "error_percent": -4}},
		// r = 0.2 r/min = 1/300 r/s rounds to 0r/m.
		{"below nginx's 1r/m", calc.Input{Capacity: 100, Clients: 10, P99: 0.1, PercentileUnit: calc.PerMinute}, calc.CheckIntegerRate, "rate", true, calc.SeverityWarning,
			map[string]float64{"rate": 1.0 / 300}},
		// r = 2: 2r/s exactly.
		{"whole r/s", calc.Input{Capacity: 100, Clients: 10, P99: 1}, calc.CheckIntegerRate, "", false, "", nil},
		// r = 2.5: 150r/m = 150 × 1000/60 = 2500 milli-requests/s exactly.
		{"r/m divisible by 3", calc.Input{Capacity: 100, Clients: 10, P99: 1.25}, calc.CheckIntegerRate, "", false, "", nil},

		{"90 s window", calc.Input{Capacity: 100, Clients: 10, P99: 1, Window: 90}, calc.CheckWindowUnit, "window", true, calc.SeverityInfo,
			map[string]float64{"window": 90}},
		{"sub-second window", calc.Input{Capacity: 100, Clients: 10, P99: 1, Window: 0.5}, calc.CheckWindowUnit, "window", true, calc.SeverityInfo, nil},
		{"hour window", calc.Input{Capacity: 100, Clients: 10, P99: 1, Window: 3600}, calc.CheckWindowUnit, "", false, "", nil},
		// r = 0.002 (p99 0.001): L = ⌈0.002 × 172800⌉ = 346, two days.
		{"two-day window", calc.Input{Capacity: 100, Clients: 10, P99: 0.001, Window: 172800}, calc.CheckWindowOverADay, "window", true, calc.SeverityWarning,
			map[string]float64{"days": 2}},
		{"one-day window", calc.Input{Capacity: 100, Clients: 10, P99: 0.001, Window: 86400}, calc.CheckWindowOverADay, "", false, "", nil},
	}
}

func TestChecks(t *testing.T) {
	for _, tt := range checkCases() {
		t.Run(tt.name, func(t *testing.T) {
			res := mustSize(t, tt.in)
			c, fired := findCheck(res.Checks, tt.id, tt.subject)
			if fired != tt.fire {
				t.Fatalf("%s fired = %v, want %v; checks: %v", tt.id, fired, tt.fire, checkIDs(res.Checks))
			}
			if !fired {
				return
			}
			if c.Severity != tt.severity {
				t.Errorf("severity %s, want %s", c.Severity, tt.severity)
			}
			for k, want := range tt.numbers {
				got, ok := c.Numbers[k]
				if !ok || !near(got, want, 1e-6) {
					t.Errorf("numbers[%s] = %v (present %v), want %v; all: %v", k, got, ok, want, c.Numbers)
				}
			}
			if c.Message == "" || c.Fix == "" {
				t.Errorf("check without message or fix: %+v", c)
			}
		})
	}
}

// A design without problems has no checks, and Checks is never null in JSON.
func TestChecksCleanDesign(t *testing.T) {
	// r = 2, b = 20, L = 2 per 1 s window (2L = 4 ≤ 20), 100 × 2 = 200 ≤ 800.
	res := mustSize(t, calc.Input{Capacity: 1000, Clients: 100, P95: 0.5, P99: 1, Window: 1})
	if len(res.Checks) != 0 {
		t.Errorf("checks on a clean design: %v", checkIDs(res.Checks))
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"checks":[]`) {
		t.Errorf("checks not an empty list in %s", b)
	}
}

// Every check ID is distinct, and TestChecks has a case where it fires and
// one where it does not.
func TestCheckIDs(t *testing.T) {
	ids := []string{calc.CheckOvercommit, calc.CheckUndersized, calc.CheckLimitBelowP99, calc.CheckBurstBelowRate, calc.CheckBurstOfOne,
		calc.CheckBurstBelowCost, calc.CheckBurstAboveCapacity, calc.CheckLocalReplicas, calc.CheckFixedWindowBoundary,
		calc.CheckIntegerRate, calc.CheckWindowUnit, calc.CheckWindowOverADay}
	if len(slices.Compact(slices.Sorted(slices.Values(ids)))) != len(ids) {
		t.Errorf("duplicate check IDs: %v", ids)
	}
	for _, id := range ids {
		var fires, quiet bool
		for _, c := range checkCases() {
			if c.id == id {
				fires, quiet = fires || c.fire, quiet || !c.fire
			}
		}
		if !fires || !quiet {
			t.Errorf("%s: a case that fires %v, one that does not %v", id, fires, quiet)
		}
	}
}
