package chartset

import (
	"errors"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/views"
)

func sized(t *testing.T) calc.Result {
	t.Helper()
	res, err := calc.Size(calc.Input{Capacity: 500, Clients: 20, P99: 3})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestBuildOrder: the charts come in the order embed URLs name them, and
// the info counts the pattern's requests: idle_then_burst's default is
// one burst of Count requests from one client.
func TestBuildOrder(t *testing.T) {
	p := algorithms.DefaultPattern(algorithms.PatternIdleThenBurst)
	charts, info, err := Build(sized(t), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != len(views.AlgorithmChartSlugs) {
		t.Fatalf("%d charts, want %d", len(charts), len(views.AlgorithmChartSlugs))
	}
	for i, c := range charts {
		if views.ChartSlug(c.ID) != views.AlgorithmChartSlugs[i] {
			t.Errorf("chart %d is %s, want %s", i, c.ID, views.AlgorithmChartSlugs[i])
		}
	}
	traffic, err := p.Generate(MaxArrivals)
	if err != nil {
		t.Fatal(err)
	}
	if info.Arrivals != len(traffic.Arrivals) || info.Focus != traffic.Arrivals[0].Key {
		t.Errorf("info %+v, want %d arrivals focused on %q", info, len(traffic.Arrivals), traffic.Arrivals[0].Key)
	}
}

func TestBuildPatternErrors(t *testing.T) {
	res := sized(t)
	tooMany := algorithms.DefaultPattern(algorithms.PatternSteady)
	tooMany.Rate, tooMany.Duration = 1e6, 10e9 // 10 million requests
	bad := algorithms.DefaultPattern(algorithms.PatternSteady)
	bad.Rate = -1
	storm := algorithms.DefaultPattern(algorithms.PatternRetryStorm)
	storm.Clients = 100_000 // the most a pattern allows; × (1 + attempts) is over the cap
	tests := []struct {
		name  string
		p     algorithms.Pattern
		param string
	}{
		{"too many requests", tooMany, "pattern"},
		{"bad parameter", bad, ""},
		{"retries over the cap", storm, "pattern.clients"},
	}
	for _, tt := range tests {
		_, _, err := Build(res, tt.p)
		var pe *PatternError
		if !errors.As(err, &pe) || pe.Param != tt.param || pe.Message == "" {
			t.Errorf("%s: err %v, want a PatternError on %q", tt.name, err, tt.param)
		}
	}
}

// TestPolicyChartsEveryLimit: the policy's charts follow the default
// limit, every tier (one inheriting the default), and every endpoint with
// its own limit, on a burst of 300 at once: the default and inheriting
// tier admit their burst of 100, the paid tier its 250, the endpoint its
// fixed window of 20 (the default limit, which it also meets, holds 100).
func TestPolicyChartsEveryLimit(t *testing.T) {
	p := policy.Policy{APIVersion: policy.APIVersion, Kind: policy.Kind, Metadata: policy.Metadata{Name: "all"},
		Service:  policy.Service{Capacity: 1000},
		Defaults: policy.Defaults{Limit: algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 100}},
		Tiers: []policy.Tier{{Name: "free"},
			{Name: "paid", Limit: algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 1, Burst: 250}}},
		Endpoints: []policy.Endpoint{{Match: policy.Match{Method: "POST", Path: "/v1/orders/{id}"},
			Limit: algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 20, Window: time.Hour}}},
	}
	pattern := algorithms.DefaultPattern(algorithms.PatternIdleThenBurst)
	pattern.Count = 300
	charts, _, err := Policy(p, pattern)
	if err != nil {
		t.Fatal(err)
	}
	var cum views.Chart
	for _, c := range charts {
		if c.ID == views.ChartPolicyCumulative {
			cum = c
		}
	}
	want := map[string]string{
		"default: token_bucket(rate=1/s, burst=100)":                           "100",
		"tier free: token_bucket(rate=1/s, burst=100) (the default)":           "100",
		"tier paid: gcra(rate=1/s, burst=250)":                                 "250",
		"endpoint POST /v1/orders/{id}: fixed_window(limit=20, window=60 min)": "20",
	}
	last := cum.Table.Rows[len(cum.Table.Rows)-1]
	for i, col := range cum.Table.Columns[1:] {
		if col == views.SeriesOffered {
			continue
		}
		w, ok := want[col]
		if !ok {
			t.Errorf("unexpected series %q", col)
			continue
		}
		// Within a second of the burst nothing refills at 1/s.
		if got := last[i+1]; got != w && got != w+".0" {
			t.Errorf("%s admitted %s in all, want %s", col, got, w)
		}
		delete(want, col)
	}
	for name := range want {
		t.Errorf("no series %q", name)
	}
}
