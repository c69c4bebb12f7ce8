package calc_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/calc"
)

// TestValidation: each bad field gives an error naming it, its value and
// the allowed range.
func TestValidation(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := calc.Input{Capacity: 1000, Clients: 10}
	with := func(f func(*calc.Input)) calc.Input {
		in := ok
		f(&in)
		return in
	}
	tests := []struct {
		name  string
		in    calc.Input
		field string
		value string // the value as the error shows it
	}{
		{"capacity NaN", with(func(in *calc.Input) { in.Capacity = nan }), "capacity", "NaN"},
		{"capacity +Inf", with(func(in *calc.Input) { in.Capacity = inf }), "capacity", "+Inf"},
		{"capacity negative", with(func(in *calc.Input) { in.Capacity = -5 }), "capacity", "-5"},
		{"capacity missing", with(func(in *calc.Input) { in.Capacity = 0 }), "capacity", "0"},
		{"capacity absurd", with(func(in *calc.Input) { in.Capacity = 1e12 }), "capacity", "1000000000000"},
		{"headroom negative", with(func(in *calc.Input) { in.Headroom = new(-0.1) }), "headroom", "-0.1"},
		{"headroom as percent", with(func(in *calc.Input) { in.Headroom = new(20.0) }), "headroom", "20"},
		{"headroom NaN", with(func(in *calc.Input) { in.Headroom = new(nan) }), "headroom", "NaN"},
		{"clients missing", with(func(in *calc.Input) { in.Clients = 0 }), "clients", "0"},
		{"clients negative", with(func(in *calc.Input) { in.Clients = -3 }), "clients", "-3"},
		{"clients absurd", with(func(in *calc.Input) { in.Clients = 2e8 }), "clients", "200000000"},
		{"tier name empty", with(func(in *calc.Input) { in.Clients = 0; in.Tiers = []calc.TierInput{{Name: " ", Clients: 1}} }), "tiers[0].name", `" "`},
		{"tier name twice", with(func(in *calc.Input) {
			in.Clients = 0
			in.Tiers = []calc.TierInput{{Name: "a", Clients: 1}, {Name: "a", Clients: 1}}
		}), "tiers[1].name", `"a"`},
		{"tier clients", with(func(in *calc.Input) { in.Clients = 0; in.Tiers = []calc.TierInput{{Name: "a", Clients: 0}} }), "tiers[0].clients", "0"},
		{"tier multiplier negative", with(func(in *calc.Input) {
			in.Clients = 0
			in.Tiers = []calc.TierInput{{Name: "a", Clients: 1, Multiplier: -1}}
		}), "tiers[0].multiplier", "-1"},
		{"tier multiplier NaN", with(func(in *calc.Input) {
			in.Clients = 0
			in.Tiers = []calc.TierInput{{Name: "a", Clients: 1}, {Name: "b", Clients: 1, Multiplier: nan}}
		}), "tiers[1].multiplier", "NaN"},
		{"tier multiplier absurd", with(func(in *calc.Input) {
			in.Clients = 0
			in.Tiers = []calc.TierInput{{Name: "a", Clients: 1, Multiplier: 1e6}}
		}), "tiers[0].multiplier", "1000000"},
		{"clients disagree with tiers", with(func(in *calc.Input) { in.Clients = 5; in.Tiers = []calc.TierInput{{Name: "a", Clients: 3}} }), "clients", "5"},
		{"too many tiers", with(func(in *calc.Input) {
			in.Clients = 0
			for i := range 17 {
				in.Tiers = append(in.Tiers, calc.TierInput{Name: string(rune('a' + i)), Clients: 1})
			}
		}), "tiers", "17 tiers"},
		{"p50 NaN", with(func(in *calc.Input) { in.P50 = nan }), "p50", "NaN"},
		{"p95 negative", with(func(in *calc.Input) { in.P95 = -1 }), "p95", "-1"},
		{"p99 -Inf", with(func(in *calc.Input) { in.P99 = math.Inf(-1) }), "p99", "-Inf"},
		{"p99 absurd", with(func(in *calc.Input) { in.P99 = 1e7 }), "p99", "10000000"},
		{"p99 below p95", with(func(in *calc.Input) { in.P95, in.P99 = 10, 5 }), "p99", "5"},
		{"p95 below p50", with(func(in *calc.Input) { in.P50, in.P95 = 10, 5 }), "p95", "5"},
		{"p99 below p50 without p95", with(func(in *calc.Input) { in.P50, in.P99 = 10, 5 }), "p99", "5"},
		{"percentile unit", with(func(in *calc.Input) { in.PercentileUnit = "hour" }), "percentile_unit", `"hour"`},
		{"margin negative", with(func(in *calc.Input) { in.Margin = -2 }), "margin", "-2"},
		{"margin absurd", with(func(in *calc.Input) { in.Margin = 1000 }), "margin", "1000"},
		{"margin NaN", with(func(in *calc.Input) { in.Margin = nan }), "margin", "NaN"},
		{"peak without seconds", with(func(in *calc.Input) { in.Peak = 300 }), "peak_seconds", "0"},
		{"seconds without peak", with(func(in *calc.Input) { in.PeakSeconds = 2 }), "peak", "0"},
		{"peak NaN", with(func(in *calc.Input) { in.Peak, in.PeakSeconds = nan, 2 }), "peak", "NaN"},
		{"peak seconds absurd", with(func(in *calc.Input) { in.Peak, in.PeakSeconds = 300, 1e6 }), "peak_seconds", "1000000"},
		{"window negative", with(func(in *calc.Input) { in.Window = -60 }), "window", "-60"},
		{"window NaN", with(func(in *calc.Input) { in.Window = nan }), "window", "NaN"},
		{"window +Inf", with(func(in *calc.Input) { in.Window = inf }), "window", "+Inf"},
		{"window over a year", with(func(in *calc.Input) { in.Window = 1e9 }), "window", "1000000000"},
		{"max_delay negative", with(func(in *calc.Input) { in.MaxDelay = new(-1.0) }), "max_delay", "-1"},
		{"max_delay NaN", with(func(in *calc.Input) { in.MaxDelay = new(nan) }), "max_delay", "NaN"},
		{"replicas negative", with(func(in *calc.Input) { in.Replicas = -1 }), "replicas", "-1"},
		{"replicas absurd", with(func(in *calc.Input) { in.Replicas = 5000 }), "replicas", "5000"},
		{"enforcement", with(func(in *calc.Input) { in.Enforcement = "global" }), "enforcement", `"global"`},
		{"endpoint method", with(func(in *calc.Input) { in.Endpoints = []calc.Endpoint{{Method: "G T", Path: "/"}} }), "endpoints[0].method", `"G T"`},
		{"endpoint path", with(func(in *calc.Input) {
			in.Endpoints = []calc.Endpoint{{Method: "GET", Path: "/"}, {Method: "GET", Path: "v1"}}
		}), "endpoints[1].path", `"v1"`},
		// The policy file keys routes by upper-cased method and exact path,
		// so "get /a" after "GET /a" is the same route twice.
		{"endpoint route twice", with(func(in *calc.Input) {
			in.Endpoints = []calc.Endpoint{{Method: "GET", Path: "/a"}, {Method: "POST", Path: "/a"}, {Method: "get", Path: "/a"}}
		}), "endpoints[2].path", `"/a"`},
		{"endpoint cost negative", with(func(in *calc.Input) { in.Endpoints = []calc.Endpoint{{Method: "GET", Path: "/", Cost: -8}} }), "endpoints[0].cost", "-8"},
		{"endpoint cost absurd", with(func(in *calc.Input) { in.Endpoints = []calc.Endpoint{{Method: "GET", Path: "/", Cost: 1e7}} }), "endpoints[0].cost", "10000000"},
		{"retry base", with(func(in *calc.Input) { in.Retry.Base = -1 }), "retry.base", "-1"},
		{"retry factor", with(func(in *calc.Input) { in.Retry.Factor = 0.5 }), "retry.factor", "0.5"},
		{"retry cap below base", with(func(in *calc.Input) { in.Retry.Base, in.Retry.Cap = 10, 5 }), "retry.cap", "5"},
		{"retry cap NaN", with(func(in *calc.Input) { in.Retry.Cap = nan }), "retry.cap", "NaN"},
		{"retry attempts", with(func(in *calc.Input) { in.Retry.Attempts = 50 }), "retry.attempts", "50"},
		{"retry jitter", with(func(in *calc.Input) { in.Retry.Jitter = new(2.0) }), "retry.jitter", "2"},
		{"retry jitter mode", with(func(in *calc.Input) { in.Retry.JitterMode = "none" }), "retry.jitter_mode", `"none"`},

		// Fields fine alone whose derived parameters leave the engine's ranges.
		// r = 1e6 × 100 = 1e8/s, L = 1e8 × 3e7 = 3e15 > 1e9.
		{"limit too large", with(func(in *calc.Input) { in.P99, in.Margin, in.Window = 1e6, 100, 3e7 }), "window", "30000000"},
		// b = (1e9 − 2) × 86400 ≈ 8.6e13 > 1e9.
		{"burst too large", with(func(in *calc.Input) { in.P99, in.Peak, in.PeakSeconds = 1, 1e9, 86400 }), "peak_seconds", "86400"},
		// fair share = 0.001 × 0.05 / 1e8 = 5e-13/s < 1e-6.
		{"fair share too small", calc.Input{Capacity: 0.001, Headroom: new(0.95), Clients: 1e8}, "clients", "100000000"},
		// q = 86400 × 1e8 ≈ 8.6e12 > 1e9.
		{"queue too large", with(func(in *calc.Input) { in.P99, in.Margin, in.MaxDelay = 1e6, 100, new(86400.0) }), "max_delay", "86400"},
		// r = 1e-5 × 0.1 = 1e-6; cost 1e6 refills in 1e12 s > 100 years.
		{"cost takes a century", with(func(in *calc.Input) {
			in.P99, in.Margin = 1e-5, 0.1
			in.Endpoints = []calc.Endpoint{{Method: "GET", Path: "/", Cost: 1e6}}
		}), "endpoints", "largest cost 1000000"},
		// r = 1e6 × 10 = 1e7 (L = 6e8 is fine); the tier's 1e7 × 1000 = 1e10 > 1e9.
		{"tier rate too large", with(func(in *calc.Input) {
			in.Clients, in.P99, in.Margin = 0, 1e6, 10
			in.Tiers = []calc.TierInput{{Name: "a", Clients: 1, Multiplier: 1000}}
		}), "tiers[0].multiplier", "1000"},
		// r = 1e-6, per replica 1e-9 < 1e-6.
		{"per-replica rate too small", with(func(in *calc.Input) { in.P99, in.Margin, in.Replicas, in.Enforcement = 1e-5, 0.1, 1000, calc.Local }), "replicas", "1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := calc.Size(tt.in)
			if err == nil {
				t.Fatal("no error")
			}
			var fe *calc.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("%v is not a *calc.FieldError", err)
			}
			got := fields(err)
			if !slices.Contains(got, tt.field) {
				t.Fatalf("error names %v, want %s: %v", got, tt.field, err)
			}
			var es calc.Errors
			errors.As(err, &es)
			for _, e := range es {
				if e.Field != tt.field {
					continue
				}
				if e.Value != tt.value {
					t.Errorf("value %q, want %q", e.Value, tt.value)
				}
				msg := e.Error()
				if e.Want == "" || !strings.HasPrefix(msg, tt.field+": "+tt.value) || !strings.Contains(msg, "want ") {
					t.Errorf("message %q does not name field, value and range", msg)
				}
			}
			if err := tt.in.Validate(); err == nil {
				t.Errorf("Validate accepts what Size rejects")
			}
		})
	}
}

// All bad fields are reported at once, in input order.
func TestValidationReportsEveryField(t *testing.T) {
	_, err := calc.Size(calc.Input{Capacity: -1, Clients: 10, P95: 10, P99: 5, Window: math.NaN(), Retry: calc.Retry{Attempts: 99}})
	want := []string{"capacity", "p99", "window", "retry.attempts"}
	if got := fields(err); !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v (%v)", got, want, err)
	}
	if n := strings.Count(err.Error(), "; want"); n != 4 {
		t.Errorf("%q has %d messages, want 4", err, n)
	}
}

// Zero fields take their defaults, and explicit zeros stay zero where they
// mean something.
func TestDefaults(t *testing.T) {
	res := mustSize(t, calc.Input{Capacity: 100, Clients: 10})
	in := res.Input
	if *in.Headroom != 0.2 || in.Margin != 2 || in.Window != 60 || in.Replicas != 1 || in.Enforcement != calc.Shared ||
		in.PercentileUnit != calc.PerSecond || in.MaxDelay != nil {
		t.Errorf("defaults: %+v", in)
	}
	if r := in.Retry; r.Base != 1 || r.Factor != 2 || r.Cap != 30 || r.Attempts != 5 || *r.Jitter != 0.5 || r.JitterMode != "proportional" {
		t.Errorf("retry defaults: %+v", r)
	}
	// headroom 0: usable = capacity; max_delay 0: a queue of ⌊0 × r⌋ = 0.
	res = mustSize(t, calc.Input{Capacity: 100, Clients: 10, Headroom: new(0.0), MaxDelay: new(0.0), Retry: calc.Retry{Jitter: new(0.0)}})
	checkNear(t, "usable", res.Usable.Value, 100)
	checkNear(t, "queue", res.Queue.Value, 0)
	if a := res.Backoff.Attempts[0]; a.Min != a.Max {
		t.Errorf("jitter 0: range [%v, %v)", a.Min, a.Max)
	}
}
