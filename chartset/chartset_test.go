package chartset

import (
	"errors"
	"testing"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
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
