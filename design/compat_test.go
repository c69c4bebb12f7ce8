package design

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// TestOldURLs: every design URL the designer accepted before limits were
// part of the URL gives the same calculator input and chart pattern. The
// URLs come from the designer's tests; the inputs are what its parser gave.
func TestOldURLs(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	pat := func(name algorithms.PatternName, change func(*algorithms.Pattern)) algorithms.Pattern {
		p := algorithms.DefaultPattern(name)
		if change != nil {
			change(&p)
		}
		return p
	}
	full := "capacity=20000&headroom=0.25&replicas=5&enforcement=local" +
		"&p50=5&p95=30&p99=50&percentile_unit=second&margin=2&peak=300&peak_seconds=2&window=60&max_delay=2" +
		"&tiers.0.name=anonymous&tiers.0.clients=100&tiers.0.multiplier=0.5" +
		"&tiers.3.name=paid&tiers.3.clients=20&tiers.3.multiplier=4" +
		"&endpoints.0.method=GET&endpoints.0.path=%2Fv1%2Freports&endpoints.0.cost=8" +
		"&retry.base=1&retry.factor=2&retry.cap=30&retry.attempts=4&retry.jitter=0.25" +
		"&pattern=periodic_bursts&pattern.count=300&pattern.period=10&pattern.duration=30&pattern.cost=1"
	fullInput := calc.Input{
		Capacity: 20000, Headroom: f(0.25), Replicas: 5, Enforcement: calc.Local,
		P50: 5, P95: 30, P99: 50, PercentileUnit: calc.PerSecond, Margin: 2, Peak: 300, PeakSeconds: 2, Window: 60, MaxDelay: f(2),
		Tiers:     []calc.TierInput{{Name: "anonymous", Clients: 100, Multiplier: 0.5}, {Name: "paid", Clients: 20, Multiplier: 4}},
		Endpoints: []calc.Endpoint{{Method: "GET", Path: "/v1/reports", Cost: 8}},
		Retry:     calc.Retry{Base: 1, Factor: 2, Cap: 30, Attempts: 4, Jitter: f(0.25)},
	}
	tests := []struct {
		name, query string
		input       calc.Input
		pattern     algorithms.Pattern
		problems    []string // the fields with problems, if any
	}{
		{"empty: the example", "",
			calc.Input{Capacity: 2000, Clients: 200, P50: 1, P95: 3, P99: 5}, pat(algorithms.PatternRamp, nil), nil},
		{"only unknown parameters: the example", "utm_source=x&tiers.100.name=y",
			calc.Input{Capacity: 2000, Clients: 200, P50: 1, P95: 3, P99: 5}, pat(algorithms.PatternRamp, nil), nil},
		{"every section", full, fullInput,
			pat(algorithms.PatternPeriodicBursts, func(p *algorithms.Pattern) { p.Count = 300 }), nil},
		{"first value wins, unknown ignored", "capacity=2000&clients=200&p99=5&p99=7&unknown=1&pattern=idle_then_burst&pattern.count=300",
			calc.Input{Capacity: 2000, Clients: 200, P99: 5},
			pat(algorithms.PatternIdleThenBurst, func(p *algorithms.Pattern) { p.Count = 300 }), nil},
		{"window and a pattern's durations", "capacity=2000&clients=200&p99=5&window=30&pattern=periodic_bursts&pattern.count=80&pattern.period=4&pattern.duration=20",
			calc.Input{Capacity: 2000, Clients: 200, P99: 5, Window: 30},
			pat(algorithms.PatternPeriodicBursts, func(p *algorithms.Pattern) {
				p.Count, p.Period, p.Duration = 80, 4*time.Second, 20*time.Second
			}), nil},
		{"spellings, blank and odd rows", "capacity=+1e3+&clients=1000.0&headroom=0&tiers.2.name=b&tiers.2.clients=5&tiers.0.name=a&tiers.0.clients=5" +
			"&tiers.1.name=&tiers.007.name=ignored&tiers.x.name=ignored&pattern=steady&pattern.idle=junk",
			calc.Input{Capacity: 1000, Clients: 1000, Headroom: f(0), Tiers: []calc.TierInput{{Name: "a", Clients: 5}, {Name: "b", Clients: 5}}},
			pat(algorithms.PatternSteady, nil), []string{"clients"}},
		{"replicas and idle", "capacity=2000&clients=200&p99=5&replicas=3&enforcement=local&pattern=idle_then_burst&pattern.count=300&pattern.idle=2",
			calc.Input{Capacity: 2000, Clients: 200, P99: 5, Replicas: 3, Enforcement: calc.Local},
			pat(algorithms.PatternIdleThenBurst, func(p *algorithms.Pattern) { p.Count, p.Idle = 300, 2*time.Second }), nil},
		{"embed", "capacity=500&clients=20&p99=3&pattern=idle_then_burst",
			calc.Input{Capacity: 500, Clients: 20, P99: 3}, pat(algorithms.PatternIdleThenBurst, nil), nil},
		{"browser", "capacity=3000&clients=30&p99=4", calc.Input{Capacity: 3000, Clients: 30, P99: 4}, pat(algorithms.PatternRamp, nil), nil},
		{"per minute, peak", "capacity=100&clients=3&p50=2&p95=3&p99=3&percentile_unit=minute&peak=3&peak_seconds=1",
			calc.Input{Capacity: 100, Clients: 3, P50: 2, P95: 3, P99: 3, PercentileUnit: calc.PerMinute, Peak: 3, PeakSeconds: 1},
			pat(algorithms.PatternRamp, nil), nil},
		{"a bad row value", "capacity=1000&tiers.0.name=a&tiers.0.clients=5&tiers.7.name=b&tiers.7.clients=x",
			calc.Input{Capacity: 1000, Tiers: []calc.TierInput{{Name: "a", Clients: 5}, {Name: "b"}}},
			pat(algorithms.PatternRamp, nil), []string{"tiers.7.clients"}},
		{"fine durations", "capacity=100&clients=3&window=0.001&max_delay=0&retry.base=0.25&retry.cap=1.5",
			calc.Input{Capacity: 100, Clients: 3, Window: 0.001, MaxDelay: f(0), Retry: calc.Retry{Base: 0.25, Cap: 1.5}},
			pat(algorithms.PatternRamp, nil), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ParseQuery(tt.query)
			r := d.Resolve()
			if got := r.Policy.Design(); !reflect.DeepEqual(got, tt.input) {
				t.Errorf("input:\n got %s\nwant %s", js(got), js(tt.input))
			}
			if got, ok := d.Pattern(); !ok || got != tt.pattern {
				t.Errorf("pattern: got %+v (%v), want %+v", got, ok, tt.pattern)
			}
			var fields []string
			for _, p := range r.Problems {
				fields = append(fields, p.Field)
			}
			if strings.Join(fields, " ") != strings.Join(tt.problems, " ") {
				t.Errorf("problems: got %v, want %v (%v)", fields, tt.problems, r.Problems)
			}
			// Today's limits: token buckets from the proposal, a global
			// limit at the usable rate.
			if len(tt.problems) == 0 {
				res, err := calc.Size(tt.input)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := r.Policy.Defaults.Limit, res.Spec(algorithms.NameTokenBucket); got != want {
					t.Errorf("default limit %v, want %v", got, want)
				}
				if got := r.Policy.Global.Limit; got.Algorithm != algorithms.NameTokenBucket || got.Rate != res.Usable.Value {
					t.Errorf("global limit %v, want a token bucket at %v/s", got, res.Usable.Value)
				}
			}
		})
	}
}

// TestCanonicalQuery: the canonical query orders the parameters as the form
// does, trims values, leaves out blanks, and parses to the same design.
func TestCanonicalQuery(t *testing.T) {
	q := url.Values{
		"pattern": {"steady"}, "capacity": {" 1e3 "}, "tiers.2.name": {"b"}, "tiers.2.clients": {"5"},
		"tiers.0.limit.rate": {"3"}, "tiers.0.name": {"a"}, "tiers.1.name": {""}, "headers": {"ietf,x"},
		"limit.algorithm": {"gcra"}, "name": {"orders"}, "p99": {""}, "utm": {"x"},
	}
	d := Parse(q)
	want := "name=orders&capacity=1e3&limit.algorithm=gcra&tiers.0.name=a&tiers.0.limit.rate=3&tiers.2.name=b&tiers.2.clients=5&headers=ietf%2Cx&pattern=steady"
	if got := d.Query(); got != want {
		t.Errorf("query:\n got %s\nwant %s", got, want)
	}
	if got := ParseQuery(want).Query(); got != want {
		t.Errorf("not stable: %s", got)
	}
	if got := d.Values().Encode(); got != "capacity=1e3&headers=ietf%2Cx&limit.algorithm=gcra&name=orders&pattern=steady&tiers.0.limit.rate=3&tiers.0.name=a&tiers.2.clients=5&tiers.2.name=b" {
		t.Errorf("values: %s", got)
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
