package algorithms_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// mustNew builds a limiter from a spec the test knows to be valid.
func mustNew(t testing.TB, spec algorithms.Spec) algorithms.Limiter {
	t.Helper()
	lim, err := algorithms.New(spec)
	if err != nil {
		t.Fatalf("New(%v): %v", spec, err)
	}
	return lim
}

// fmtDecision prints a decision compactly, with Never spelled out.
func fmtDecision(d algorithms.Decision) string {
	retry := d.RetryAfter().String()
	if d.RetryAfter() == algorithms.Never {
		retry = "Never"
	}
	return fmt.Sprintf("{allowed=%v delay=%v remaining=%d retryAfter=%s reset=%v}",
		d.Allowed, d.Delay(), d.Remaining, retry, d.Reset)
}

func TestValidateErrors(t *testing.T) {
	const (
		tb    = algorithms.NameTokenBucket
		gcra  = algorithms.NameGCRA
		leaky = algorithms.NameLeakyBucket
		fixed = algorithms.NameFixedWindow
		log   = algorithms.NameSlidingLog
		slide = algorithms.NameSlidingWindow
	)
	tests := []struct {
		name      string
		spec      algorithms.Spec
		wantField string
		wantValue string
	}{
		// Rates: NaN, infinities, non-positive, outside [1e-6, 1e9].
		{"rate NaN", algorithms.Spec{Algorithm: tb, Rate: math.NaN(), Burst: 1}, "rate", "NaN"},
		{"rate +Inf", algorithms.Spec{Algorithm: gcra, Rate: math.Inf(1), Burst: 1}, "rate", "+Inf"},
		{"rate -Inf", algorithms.Spec{Algorithm: leaky, Rate: math.Inf(-1)}, "rate", "-Inf"},
		{"rate negative", algorithms.Spec{Algorithm: tb, Rate: -5, Burst: 1}, "rate", "-5"},
		{"rate zero", algorithms.Spec{Algorithm: gcra, Rate: 0, Burst: 1}, "rate", "0"},
		{"rate too small", algorithms.Spec{Algorithm: tb, Rate: 1e-7, Burst: 1}, "rate", "1e-07"},
		{"rate too large", algorithms.Spec{Algorithm: leaky, Rate: 2e9}, "rate", "2e+09"},
		// The rate is checked before the burst.
		{"rate before burst", algorithms.Spec{Algorithm: tb, Rate: -1, Burst: -1}, "rate", "-1"},
		// Bursts in [1, 1e9].
		{"burst zero", algorithms.Spec{Algorithm: tb, Rate: 1, Burst: 0}, "burst", "0"},
		{"burst negative", algorithms.Spec{Algorithm: gcra, Rate: 1, Burst: -3}, "burst", "-3"},
		{"burst too large", algorithms.Spec{Algorithm: gcra, Rate: 1e9, Burst: 1_000_000_001}, "burst", "1000000001"},
		// burst/rate at most 100 years: at 1e-6/s, 100 years (3.1536e9 s)
		// refill 3153.6 tokens, so 3153 is fine and 3154 is not.
		{"burst/rate > 100 years", algorithms.Spec{Algorithm: tb, Rate: 1e-6, Burst: 3154}, "burst", "3154"},
		{"burst/rate > 100 years gcra", algorithms.Spec{Algorithm: gcra, Rate: 1e-6, Burst: 1_000_000}, "burst", "1000000"},
		// Queues in [0, 1e9], and (queue+1)/rate at most 100 years: at
		// 1e-6/s, queue 3152 (3153 slots) is fine and 3153 is not. The
		// message names the queue as the user wrote it.
		{"queue negative", algorithms.Spec{Algorithm: leaky, Rate: 1, Queue: -1}, "queue", "-1"},
		{"queue too large", algorithms.Spec{Algorithm: leaky, Rate: 1e9, Queue: 1_000_000_001}, "queue", "1000000001"},
		{"queue/rate > 100 years", algorithms.Spec{Algorithm: leaky, Rate: 1e-6, Queue: 3153}, "queue", "3153"},
		// Limits in [1, 1e9].
		{"limit zero", algorithms.Spec{Algorithm: fixed, Limit: 0, Window: time.Second}, "limit", "0"},
		{"limit negative", algorithms.Spec{Algorithm: log, Limit: -2, Window: time.Second}, "limit", "-2"},
		{"limit too large", algorithms.Spec{Algorithm: slide, Limit: 1_000_000_001, Window: time.Second}, "limit", "1000000001"},
		// Windows in [1ms, 366 days].
		{"window zero", algorithms.Spec{Algorithm: fixed, Limit: 1}, "window", "0s"},
		{"window negative", algorithms.Spec{Algorithm: log, Limit: 1, Window: -time.Second}, "window", "-1s"},
		{"window too short", algorithms.Spec{Algorithm: slide, Limit: 1, Window: 999 * time.Microsecond}, "window", "999µs"},
		{"window too long", algorithms.Spec{Algorithm: fixed, Limit: 1, Window: algorithms.MaxWindow + time.Nanosecond}, "window", "8784h0m0.000000001s"},
		// Fields the algorithm does not use must be zero.
		{"token_bucket queue", algorithms.Spec{Algorithm: tb, Rate: 1, Burst: 1, Queue: 4}, "queue", "4"},
		{"token_bucket window", algorithms.Spec{Algorithm: tb, Rate: 1, Burst: 1, Window: time.Second}, "window", "1s"},
		{"gcra limit", algorithms.Spec{Algorithm: gcra, Rate: 1, Burst: 1, Limit: 7}, "limit", "7"},
		{"leaky_bucket burst", algorithms.Spec{Algorithm: leaky, Rate: 1, Burst: 5}, "burst", "5"},
		{"leaky_bucket window", algorithms.Spec{Algorithm: leaky, Rate: 1, Window: 3 * time.Second}, "window", "3s"},
		{"fixed_window rate", algorithms.Spec{Algorithm: fixed, Limit: 1, Window: time.Second, Rate: 2.5}, "rate", "2.5"},
		{"sliding_log burst", algorithms.Spec{Algorithm: log, Limit: 1, Window: time.Second, Burst: 6}, "burst", "6"},
		{"sliding_window queue", algorithms.Spec{Algorithm: slide, Limit: 1, Window: time.Second, Queue: 8}, "queue", "8"},
		{"sliding_window rate NaN", algorithms.Spec{Algorithm: slide, Limit: 1, Window: time.Second, Rate: math.NaN()}, "rate", "NaN"},
		// Algorithms.
		{"unknown algorithm", algorithms.Spec{Algorithm: "leaky", Rate: 1}, "algorithm", `"leaky"`},
		{"empty algorithm", algorithms.Spec{}, "algorithm", `""`},
		{"algorithm is case-sensitive", algorithms.Spec{Algorithm: "GCRA", Rate: 1, Burst: 1}, "algorithm", `"GCRA"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if err == nil {
				t.Fatalf("Validate(%+v) = nil, want an error about %s", tt.spec, tt.wantField)
			}
			var pe *algorithms.ParamError
			if !errors.As(err, &pe) {
				t.Fatalf("Validate(%+v) = %v (%T), want a *algorithms.ParamError", tt.spec, err, err)
			}
			if pe.Field != tt.wantField || pe.Value != tt.wantValue {
				t.Errorf("got Field %q, Value %q, want %q, %q", pe.Field, pe.Value, tt.wantField, tt.wantValue)
			}
			if pe.Want == "" {
				t.Errorf("ParamError %v has no allowed range", pe)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantField) || !strings.Contains(msg, tt.wantValue) {
				t.Errorf("message %q does not name the field %q and the value %q", msg, tt.wantField, tt.wantValue)
			}
			// New rejects the same specs with the same error.
			lim, nerr := algorithms.New(tt.spec)
			if lim != nil || nerr == nil || nerr.Error() != msg {
				t.Errorf("New = %v, %v; want nil, %q", lim, nerr, msg)
			}
		})
	}
}

// validSpecs are specs at and inside the edges of every range.
var validSpecs = []struct {
	name         string
	spec         algorithms.Spec
	wantCapacity int64
}{
	{"token_bucket", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 20}, 20},
	{"token_bucket min rate", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: algorithms.MinRate, Burst: 1}, 1},
	// 3153 tokens at 1e-6/s refill in 99.98 years: just inside.
	{"token_bucket refill just under 100 years", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1e-6, Burst: 3153}, 3153},
	{"gcra", algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 0.5, Burst: 1}, 1},
	{"gcra max", algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: algorithms.MaxRate, Burst: algorithms.MaxCount}, algorithms.MaxCount},
	{"leaky_bucket", algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 4, Queue: 2}, 3},
	{"leaky_bucket no queue", algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 1}, 1},
	{"leaky_bucket refill just under 100 years", algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 1e-6, Queue: 3152}, 3153},
	{"fixed_window", algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 100, Window: time.Minute}, 100},
	{"fixed_window min window", algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 1, Window: algorithms.MinWindow}, 1},
	{"sliding_log", algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 3, Window: time.Second}, 3},
	{"sliding_log max", algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: algorithms.MaxCount, Window: algorithms.MaxWindow}, algorithms.MaxCount},
	{"sliding_window", algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 5, Window: 10 * time.Second}, 5},
}

func TestNewValid(t *testing.T) {
	for _, tt := range validSpecs {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.spec.Validate(); err != nil {
				t.Fatalf("Validate(%+v) = %v, want nil", tt.spec, err)
			}
			lim, err := algorithms.New(tt.spec)
			if err != nil {
				t.Fatalf("New(%+v) = %v", tt.spec, err)
			}
			if got := lim.Spec(); got != tt.spec {
				t.Errorf("Spec() = %+v, want %+v", got, tt.spec)
			}
			if got := lim.Keys(); got != 0 {
				t.Errorf("new limiter: Keys() = %d, want 0", got)
			}
		})
	}
}

func TestCapacity(t *testing.T) {
	for _, tt := range validSpecs {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.spec.Capacity()
			if c != tt.wantCapacity {
				t.Fatalf("Capacity() = %d, want %d", c, tt.wantCapacity)
			}
			// The capacity is the largest cost that passes from rest:
			// cost c passes on a new key, cost c+1 never does.
			lim := mustNew(t, tt.spec)
			if d := lim.Allow("k", 0, c); !d.Allowed {
				t.Errorf("Allow(cost = capacity %d) on a new key = %s, want allowed", c, fmtDecision(d))
			}
			if d := lim.Allow("other", 0, c+1); d.Allowed || d.RetryAfter() != algorithms.Never {
				t.Errorf("Allow(cost = capacity+1) on a new key = %s, want rejected with RetryAfter Never", fmtDecision(d))
			}
		})
	}
}

func TestSpecString(t *testing.T) {
	tests := []struct {
		spec algorithms.Spec
		want string
	}{
		{algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 20}, "gcra(rate=10/s, burst=20)"},
		{algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 0.5, Burst: 1}, "token_bucket(rate=0.5/s, burst=1)"},
		{algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 4, Queue: 2}, "leaky_bucket(rate=4/s, queue=2)"},
		{algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 100, Window: time.Minute}, "fixed_window(limit=100, window=1m0s)"},
		{algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 3, Window: time.Second}, "sliding_log(limit=3, window=1s)"},
		{algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 5, Window: 1500 * time.Millisecond}, "sliding_window(limit=5, window=1.5s)"},
	}
	for _, tt := range tests {
		if got := tt.spec.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
