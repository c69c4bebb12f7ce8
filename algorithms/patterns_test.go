package algorithms_test

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

func generate(t *testing.T, p algorithms.Pattern) algorithms.Traffic {
	t.Helper()
	tr, err := p.Generate(1_000_000)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", p, err)
	}
	return tr
}

func TestPatternsAllNineGenerateSortedAndReproducible(t *testing.T) {
	if len(algorithms.Patterns) != 9 {
		t.Fatalf("got %d patterns, want the nine of DESIGN.md §3", len(algorithms.Patterns))
	}
	for _, info := range algorithms.Patterns {
		t.Run(string(info.Name), func(t *testing.T) {
			p := algorithms.DefaultPattern(info.Name)
			a := generate(t, p)
			if len(a.Arrivals) == 0 {
				t.Fatal("no arrivals")
			}
			if !slices.IsSortedFunc(a.Arrivals, func(x, y algorithms.Arrival) int { return int(x.At - y.At) }) {
				t.Error("arrivals are not sorted by time")
			}
			for i, ar := range a.Arrivals {
				if ar.Cost != 1 || ar.Key == "" || ar.At < 0 {
					t.Fatalf("arrival %d = %+v; want cost 1, a key, a time ≥ 0", i, ar)
				}
			}
			if b := generate(t, p); !reflect.DeepEqual(a, b) {
				t.Error("the same pattern generated different traffic")
			}
			if _, ok := algorithms.PatternByName(info.Name); !ok {
				t.Error("PatternByName does not find it")
			}
		})
	}
}

func TestPatternShapes(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * 1e9) }
	tests := []struct {
		name  string
		p     algorithms.Pattern
		check func(t *testing.T, as []algorithms.Arrival)
	}{
		{
			name: "steady: rate × duration per client, evenly spaced, clients interleaved",
			p:    algorithms.Pattern{Name: algorithms.PatternSteady, Rate: 4, Duration: 10 * time.Second, Clients: 2},
			check: func(t *testing.T, as []algorithms.Arrival) {
				// 4 r/s × 10 s = 40 per client; client 1 at (k+¼)/4 s, client 2 at (k+¾)/4 s.
				if len(as) != 80 {
					t.Fatalf("got %d arrivals, want 80", len(as))
				}
				if as[0].At != sec(0.0625) || as[0].Key != "client-1" || as[1].At != sec(0.1875) || as[1].Key != "client-2" {
					t.Errorf("first two = %+v, %+v; want client-1 at 62.5ms, client-2 at 187.5ms", as[0], as[1])
				}
				if as[2].At-as[0].At != 250*time.Millisecond {
					t.Errorf("client-1 spacing %v, want 250ms", as[2].At-as[0].At)
				}
			},
		},
		{
			name: "idle_then_burst: count requests at the end of the idle time",
			p:    algorithms.Pattern{Name: algorithms.PatternIdleThenBurst, Idle: 3 * time.Second, Count: 50},
			check: func(t *testing.T, as []algorithms.Arrival) {
				if len(as) != 50 {
					t.Fatalf("got %d, want 50", len(as))
				}
				for _, a := range as {
					if a.At != 3*time.Second {
						t.Fatalf("arrival at %v, want 3s", a.At)
					}
				}
			},
		},
		{
			name: "periodic_bursts: count every period within duration",
			p:    algorithms.Pattern{Name: algorithms.PatternPeriodicBursts, Count: 5, Period: 4 * time.Second, Duration: 10 * time.Second},
			check: func(t *testing.T, as []algorithms.Arrival) {
				// Bursts at 0, 4 and 8 s: 3 × 5.
				want := map[time.Duration]int{0: 5, 4 * time.Second: 5, 8 * time.Second: 5}
				got := map[time.Duration]int{}
				for _, a := range as {
					got[a.At]++
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("bursts %v, want %v", got, want)
				}
			},
		},
		{
			name: "window_boundary: count within W/20 before the edge, count within W/20 after, none on it",
			p:    algorithms.Pattern{Name: algorithms.PatternWindowBoundary, Count: 10, Window: 20 * time.Second},
			check: func(t *testing.T, as []algorithms.Arrival) {
				before, after := 0, 0
				for _, a := range as {
					switch {
					case a.At >= 19*time.Second && a.At < 20*time.Second:
						before++
					case a.At > 20*time.Second && a.At < 21*time.Second:
						after++
					default:
						t.Fatalf("arrival at %v outside (19s, 21s) or on the edge", a.At)
					}
				}
				if before != 10 || after != 10 {
					t.Errorf("before %d, after %d; want 10 and 10", before, after)
				}
			},
		},
		{
			name: "ramp: (rate + to)/2 × duration requests, spacing shrinking",
			p:    algorithms.Pattern{Name: algorithms.PatternRamp, Rate: 2, To: 18, Duration: 10 * time.Second},
			check: func(t *testing.T, as []algorithms.Arrival) {
				// N(10 s) = 2·10 + 16·100/20 = 100; arrivals at N(t) = k + ½ → k = 0…99.
				if len(as) != 100 {
					t.Fatalf("got %d, want 100", len(as))
				}
				first, last := as[1].At-as[0].At, as[99].At-as[98].At
				if first <= 3*last {
					t.Errorf("first gap %v, last gap %v; want the rate to rise about 9×", first, last)
				}
			},
		},
		{
			name: "offline_batch: a flush of count 1 ms apart after idle, then live traffic",
			p:    algorithms.Pattern{Name: algorithms.PatternOfflineBatch, Idle: 5 * time.Second, Count: 30, Rate: 1, Duration: 10 * time.Second},
			check: func(t *testing.T, as []algorithms.Arrival) {
				// 30 flushed from 5 s to 5.029 s, then 1 r/s at 5.030 + (k + ½) s while < 15 s: k = 0…9.
				if len(as) != 40 {
					t.Fatalf("got %d, want 40", len(as))
				}
				if as[0].At != 5*time.Second || as[29].At != 5*time.Second+29*time.Millisecond {
					t.Errorf("flush from %v to %v; want 5s to 5.029s", as[0].At, as[29].At)
				}
				if as[30].At != 5*time.Second+530*time.Millisecond {
					t.Errorf("first live request at %v, want 5.53s", as[30].At)
				}
			},
		},
		{
			name: "shared_ip by ip: one key for everyone",
			p:    algorithms.Pattern{Name: algorithms.PatternSharedIP, Clients: 20, Rate: 1, Duration: 10 * time.Second, KeyBy: "ip", Seed: 3},
			check: func(t *testing.T, as []algorithms.Arrival) {
				for _, a := range as {
					if a.Key != algorithms.SharedIPAddress {
						t.Fatalf("key %q, want %q", a.Key, algorithms.SharedIPAddress)
					}
				}
			},
		},
		{
			name: "shared_ip by api_key: one key per user",
			p:    algorithms.Pattern{Name: algorithms.PatternSharedIP, Clients: 20, Rate: 1, Duration: 10 * time.Second, KeyBy: "api_key", Seed: 3},
			check: func(t *testing.T, as []algorithms.Arrival) {
				keys := map[string]bool{}
				for _, a := range as {
					keys[a.Key] = true
				}
				// 20 users at 1 r/s for 10 s: each sends ~10, so all 20 appear.
				if len(keys) != 20 {
					t.Errorf("%d keys, want 20", len(keys))
				}
			},
		},
		{
			name: "cost applies to every request",
			p:    algorithms.Pattern{Name: algorithms.PatternIdleThenBurst, Count: 3, Cost: 8},
			check: func(t *testing.T, as []algorithms.Arrival) {
				for _, a := range as {
					if a.Cost != 8 {
						t.Fatalf("cost %d, want 8", a.Cost)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, generate(t, tt.p).Arrivals) })
	}
}

func TestPatternPoissonMeanRate(t *testing.T) {
	p := algorithms.Pattern{Name: algorithms.PatternPoisson, Rate: 8, Duration: 100 * time.Second, Clients: 10, Seed: 42}
	as := generate(t, p).Arrivals
	// Expected 8 × 100 × 10 = 8000 with standard deviation √8000 ≈ 89; allow 4σ.
	if d := math.Abs(float64(len(as)) - 8000); d > 4*math.Sqrt(8000) {
		t.Errorf("got %d arrivals, want 8000 ± %.0f", len(as), 4*math.Sqrt(8000))
	}
	q := p
	q.Seed = 43
	if reflect.DeepEqual(as, generate(t, q).Arrivals) {
		t.Error("a different seed gave the same arrivals")
	}
}

func TestPatternRetryStormCarriesItsRetryPolicy(t *testing.T) {
	for _, jitter := range []float64{0, 1} {
		p := algorithms.Pattern{Name: algorithms.PatternRetryStorm, Clients: 30, Jitter: jitter}
		tr := generate(t, p)
		if len(tr.Arrivals) != 30 || tr.Retry == nil {
			t.Fatalf("got %d arrivals, retry %v; want 30 and a policy", len(tr.Arrivals), tr.Retry)
		}
		if tr.Retry.Jitter != jitter || tr.Retry.Attempts < 1 {
			t.Errorf("retry %+v; want jitter %v", *tr.Retry, jitter)
		}
		if err := tr.Retry.Validate(); err != nil {
			t.Error(err)
		}
	}
}

func TestPatternValidate(t *testing.T) {
	ok := algorithms.DefaultPattern
	tests := []struct {
		name  string
		p     algorithms.Pattern
		field string
	}{
		{"unknown name", algorithms.Pattern{Name: "bursty"}, "pattern"},
		{"rate NaN", func() algorithms.Pattern { p := ok(algorithms.PatternSteady); p.Rate = math.NaN(); return p }(), "rate"},
		{"rate +Inf", func() algorithms.Pattern { p := ok(algorithms.PatternSteady); p.Rate = math.Inf(1); return p }(), "rate"},
		{"rate negative", func() algorithms.Pattern { p := ok(algorithms.PatternPoisson); p.Rate = -1; return p }(), "rate"},
		{"duration zero", func() algorithms.Pattern { p := ok(algorithms.PatternSteady); p.Duration = 0; return p }(), "duration"},
		{"count zero", func() algorithms.Pattern { p := ok(algorithms.PatternIdleThenBurst); p.Count = 0; return p }(), "count"},
		{"clients too many", func() algorithms.Pattern { p := ok(algorithms.PatternSteady); p.Clients = 1e6; return p }(), "clients"},
		{"jitter above 1", func() algorithms.Pattern { p := ok(algorithms.PatternRetryStorm); p.Jitter = 2; return p }(), "jitter"},
		{"key_by unknown", func() algorithms.Pattern { p := ok(algorithms.PatternSharedIP); p.KeyBy = "cookie"; return p }(), "key_by"},
		{"period longer than duration", func() algorithms.Pattern {
			p := ok(algorithms.PatternPeriodicBursts)
			p.Period = time.Hour
			return p
		}(), "period"},
		{"ramp to zero", func() algorithms.Pattern { p := ok(algorithms.PatternRamp); p.To = 0; return p }(), "to"},
		{"window too short", func() algorithms.Pattern {
			p := ok(algorithms.PatternWindowBoundary)
			p.Window = time.Millisecond
			return p
		}(), "window"},
		{"cost negative", func() algorithms.Pattern { p := ok(algorithms.PatternSteady); p.Cost = -2; return p }(), "cost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.p.Generate(1000)
			var pe *algorithms.ParamError
			if !errors.As(err, &pe) || pe.Field != tt.field {
				t.Fatalf("got %v; want a ParamError for %q", err, tt.field)
			}
			if !strings.Contains(err.Error(), tt.field) || !strings.Contains(err.Error(), pe.Value) {
				t.Errorf("message %q does not name the field and value", err)
			}
		})
	}
}

func TestPatternCapOnArrivals(t *testing.T) {
	p := algorithms.Pattern{Name: algorithms.PatternSteady, Rate: 1000, Duration: time.Hour, Clients: 10}
	_, err := p.Generate(10_000)
	var tm *algorithms.TooManyArrivalsError
	if !errors.As(err, &tm) || tm.Max != 10_000 || !strings.Contains(err.Error(), "10000") {
		t.Fatalf("got %v; want TooManyArrivalsError naming 10000", err)
	}
}

// Size bounds what Generate makes for every deterministic pattern, and is
// near the count for the random ones, without generating.
func TestPatternSize(t *testing.T) {
	for _, info := range algorithms.Patterns {
		t.Run(string(info.Name), func(t *testing.T) {
			p := algorithms.DefaultPattern(info.Name)
			n := float64(len(generate(t, p).Arrivals))
			switch info.Name {
			case algorithms.PatternPoisson, algorithms.PatternSharedIP:
				if s := p.Size(); math.Abs(s-n) > 4*math.Sqrt(s) {
					t.Errorf("Size %g; generated %g, more than four standard deviations away", s, n)
				}
			default:
				if s := p.Size(); n > s || s > n+float64(max(1, p.Clients)) {
					t.Errorf("Size %g; generated %g, want Size in [generated, generated+clients]", s, n)
				}
			}
		})
	}
	huge := algorithms.Pattern{Name: algorithms.PatternSteady, Rate: 1e6, Duration: 24 * time.Hour, Clients: 100_000}
	if s := huge.Size(); s < 8e15 {
		t.Errorf("Size of a day at 1e6/s from 100000 clients: %g; want about 8.64e15", s)
	}
	if s := (algorithms.Pattern{Name: "tsunami"}).Size(); s != 0 {
		t.Errorf("Size of an invalid pattern: %g; want 0", s)
	}
}
