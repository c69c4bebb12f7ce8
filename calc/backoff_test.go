package calc_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

func TestSchedule(t *testing.T) {
	tests := []struct {
		name       string
		retry      calc.Retry
		retryAfter float64
		published  float64
		waits      []float64 // by hand
		jitter     float64
	}{
		// Defaults: 1 × 2^(n−1): 1, 2, 4, 8, 16 s, each up to 50 % longer.
		{"defaults", calc.Retry{}, 0, 0, []float64{1, 2, 4, 8, 16}, 0.5},
		// 1, 3, 9, then 27 capped at 10.
		{"capped", calc.Retry{Base: 1, Factor: 3, Cap: 10, Attempts: 4, Jitter: new(0.0)}, 0, 0, []float64{1, 3, 9, 10}, 0},
		// Retry-After 5 s: max(5, 1), max(5, 2), max(5, 4), 8, 16.
		{"Retry-After wins early", calc.Retry{Jitter: new(0.2)}, 5, 5, []float64{5, 5, 5, 8, 16}, 0.2},
		// Retry-After 0.3 s is published as 1 s: 1, 2, 4.
		{"sub-second Retry-After", calc.Retry{Attempts: 3}, 0.3, 1, []float64{1, 2, 4}, 0.5},
		// base 0.5, factor 1: constant 0.5 s, Retry-After none.
		{"constant", calc.Retry{Base: 0.5, Factor: 1, Attempts: 3, Jitter: new(1.0)}, 0, 0, []float64{0.5, 0.5, 0.5}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := calc.Schedule(tt.retry, tt.retryAfter)
			if err != nil {
				t.Fatal(err)
			}
			checkNear(t, "retry_after", b.RetryAfter, tt.published)
			if len(b.Attempts) != len(tt.waits) {
				t.Fatalf("%d attempts, want %d", len(b.Attempts), len(tt.waits))
			}
			var earliest, latest float64
			for i, w := range tt.waits {
				a := b.Attempts[i]
				earliest += w
				latest += w * (1 + tt.jitter)
				if a.Attempt != i+1 {
					t.Errorf("attempt %d numbered %d", i+1, a.Attempt)
				}
				checkNear(t, "wait", a.Wait, w)
				checkNear(t, "min", a.Min, w)
				checkNear(t, "max", a.Max, w*(1+tt.jitter))
				checkNear(t, "earliest", a.Earliest, earliest)
				checkNear(t, "latest", a.Latest, latest)
				if a.Min < b.RetryAfter {
					t.Errorf("attempt %d may retry at %v, before Retry-After %v", a.Attempt, a.Min, b.RetryAfter)
				}
				if a.Reason == "" {
					t.Errorf("attempt %d has no reason", a.Attempt)
				}
			}
			if !strings.Contains(strings.Join(b.Rules, " "), "Never retry other 4xx") {
				t.Errorf("rules do not say other 4xx are never retried: %q", b.Rules)
			}
		})
	}
}

func TestScheduleErrors(t *testing.T) {
	for _, tt := range []struct {
		retry      calc.Retry
		retryAfter float64
		fields     []string
	}{
		{calc.Retry{Base: -1}, 0, []string{"retry.base"}},
		{calc.Retry{Factor: 20}, 0, []string{"retry.factor"}},
		{calc.Retry{Cap: 1e6}, 0, []string{"retry.cap"}},
		{calc.Retry{Attempts: -1}, 0, []string{"retry.attempts"}},
		{calc.Retry{Jitter: new(math.NaN())}, 0, []string{"retry.jitter"}},
		{calc.Retry{}, -1, []string{"retry_after"}},
		{calc.Retry{}, math.Inf(1), []string{"retry_after"}},
		{calc.Retry{Base: math.NaN(), Attempts: 21}, math.NaN(), []string{"retry.base", "retry.attempts", "retry_after"}},
	} {
		if _, err := calc.Schedule(tt.retry, tt.retryAfter); !slices.Equal(fields(err), tt.fields) {
			t.Errorf("%+v, %v: %v, want errors on %v", tt.retry, tt.retryAfter, err, tt.fields)
		}
	}
}

// The schedule's policy is one the simulator accepts.
func TestRetryPolicy(t *testing.T) {
	res := mustSize(t, calc.Input{Capacity: 100, Clients: 10, Retry: calc.Retry{Base: 0.25, Cap: 4, Attempts: 3}})
	p := res.Input.Retry.Policy(42)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if !p.HonorRetryAfter || p.Attempts != 3 || p.Jitter != 0.5 || p.Seed != 42 {
		t.Errorf("policy %+v", p)
	}
	// r = fair share 100 × 0.8/10 = 8/s: the token bucket publishes ⌈1/8⌉ = 1 s,
	// which beats the first backoff of 0.25 s: 1, then max(1, 0.5) = 1, then 1.
	if res.Backoff.RetryAfter != 1 {
		t.Errorf("backoff honours Retry-After %v, want 1", res.Backoff.RetryAfter)
	}
	for i, w := range []float64{1, 1, 1} {
		checkNear(t, "wait", res.Backoff.Attempts[i].Wait, w)
	}
}

// TestJitterModeValidation: every jitter mode is accepted, blank means
// proportional, and anything else is an error on retry.jitter_mode that
// names the value and every allowed one. The jitter fraction stays
// accepted alongside a mode that ignores it.
func TestJitterModeValidation(t *testing.T) {
	tests := []struct {
		name, mode string
		jitter     *float64
		want       string // the normalized mode; "" for an error
	}{
		{"blank", "", nil, "proportional"},
		{"proportional", "proportional", nil, "proportional"},
		{"full", "full", nil, "full"},
		{"equal", "equal", nil, "equal"},
		{"decorrelated", "decorrelated", nil, "decorrelated"},
		{"full with a fraction it ignores", "full", new(0.3), "full"},
		{"case matters", "Full", nil, ""},
		{"unknown", "random", nil, ""},
		{"padded", " equal", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := calc.Input{Capacity: 100, Clients: 10, Retry: calc.Retry{JitterMode: tt.mode, Jitter: tt.jitter}}
			res, err := calc.Size(in)
			if tt.want != "" {
				if err != nil {
					t.Fatalf("Size: %v", err)
				}
				if got := res.Input.Retry.JitterMode; got != tt.want {
					t.Errorf("jitter mode %q, want %q", got, tt.want)
				}
				return
			}
			var es calc.Errors
			if !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("err %v, want one field error", err)
			}
			e := es[0]
			if e.Field != "retry.jitter_mode" || e.Value != `"`+tt.mode+`"` {
				t.Errorf("error on %s = %s, want retry.jitter_mode = %q", e.Field, e.Value, tt.mode)
			}
			for _, allowed := range []string{`"proportional"`, `"full"`, `"equal"`, `"decorrelated"`} {
				if !strings.Contains(e.Want, allowed) {
					t.Errorf("want %q does not name %s", e.Want, allowed)
				}
			}
			if _, err := calc.Schedule(in.Retry, 0); !slices.Equal(fields(err), []string{"retry.jitter_mode"}) {
				t.Errorf("Schedule: %v, want an error on retry.jitter_mode", err)
			}
		})
	}
}

// TestRetryPolicyJitterMode: Policy passes the mode on to the simulator,
// which accepts it; blank stays blank, the simulator's proportional.
func TestRetryPolicyJitterMode(t *testing.T) {
	for _, tt := range []struct {
		mode string
		want algorithms.JitterMode
	}{
		{"", ""},
		{"proportional", algorithms.JitterProportional},
		{"full", algorithms.JitterFull},
		{"equal", algorithms.JitterEqual},
		{"decorrelated", algorithms.JitterDecorrelated},
	} {
		r := calc.Retry{Base: 1, Factor: 2, Cap: 30, Attempts: 5, Jitter: new(0.25), JitterMode: tt.mode}
		p := r.Policy(9)
		if p.JitterMode != tt.want || p.Jitter != 0.25 || p.Seed != 9 {
			t.Errorf("mode %q: policy %+v, want mode %q, jitter 0.25, seed 9", tt.mode, p, tt.want)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("mode %q: %v", tt.mode, err)
		}
	}
	// Through Size, the default is spelled out.
	res := mustSize(t, calc.Input{Capacity: 100, Clients: 10})
	if p := res.Input.Retry.Policy(1); p.JitterMode != algorithms.JitterProportional {
		t.Errorf("default policy's mode %q, want proportional", p.JitterMode)
	}
}

// TestScheduleJitterModes: each mode's range, by hand, for the defaults
// (exponential waits d = 1, 2, 4, 8, 16 s; cap 30 s).
func TestScheduleJitterModes(t *testing.T) {
	tests := []struct {
		name       string
		retry      calc.Retry
		retryAfter float64
		lo, hi     []float64
		reason     string // in the first attempt's reason
	}{
		// [0, d).
		{"full", calc.Retry{JitterMode: "full"}, 0,
			[]float64{0, 0, 0, 0, 0}, []float64{1, 2, 4, 8, 16}, "[0, 1 s)"},
		// The fraction is the proportional mode's alone.
		{"full ignores the fraction", calc.Retry{JitterMode: "full", Jitter: new(1.0)}, 0,
			[]float64{0, 0, 0, 0, 0}, []float64{1, 2, 4, 8, 16}, "full jitter"},
		// [d/2, d).
		{"equal", calc.Retry{JitterMode: "equal"}, 0,
			[]float64{0.5, 1, 2, 4, 8}, []float64{1, 2, 4, 8, 16}, "[0.5, 1 s)"},
		// [1, min(30, 3^n)): 3, 9, 27, then the cap.
		{"decorrelated", calc.Retry{JitterMode: "decorrelated"}, 0,
			[]float64{1, 1, 1, 1, 1}, []float64{3, 9, 27, 30, 30}, "[1, 3 s)"},
		// Retry-After 3 s floors the draw: [3, 3], [3, 3], [3, 4), [3, 8), [3, 16).
		{"full under Retry-After", calc.Retry{JitterMode: "full"}, 3,
			[]float64{3, 3, 3, 3, 3}, []float64{3, 3, 4, 8, 16}, "always 3 s"},
		// Proportional, for comparison: the floor first, then up to 50 % on
		// top: max(3, d) × [1, 1.5).
		{"proportional under Retry-After", calc.Retry{JitterMode: "proportional"}, 3,
			[]float64{3, 3, 4, 8, 16}, []float64{4.5, 4.5, 6, 12, 24}, "[3, 4.5 s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := calc.Schedule(tt.retry, tt.retryAfter)
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Attempts) != len(tt.lo) {
				t.Fatalf("%d attempts, want %d", len(b.Attempts), len(tt.lo))
			}
			var earliest, latest float64
			for i, a := range b.Attempts {
				earliest += tt.lo[i]
				latest += tt.hi[i]
				checkNear(t, "min", a.Min, tt.lo[i])
				checkNear(t, "max", a.Max, tt.hi[i])
				checkNear(t, "earliest", a.Earliest, earliest)
				checkNear(t, "latest", a.Latest, latest)
			}
			if r := b.Attempts[0].Reason; !strings.Contains(r, tt.reason) {
				t.Errorf("reason %q does not say %q", r, tt.reason)
			}
		})
	}
}
