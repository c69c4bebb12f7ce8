package chartset

import (
	"errors"
	"strconv"
	"strings"
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

// TestRetryStormFollowsTheDesign: the storm's clients retry as the
// design's retry policy says: no client retries more than the design's
// attempts, with 2 attempts some give up, more attempts offer more
// retries, and the caption states the policy.
func TestRetryStormFollowsTheDesign(t *testing.T) {
	size := func(attempts int, jitter float64) calc.Result {
		t.Helper()
		res, err := calc.Size(calc.Input{Capacity: 500, Clients: 20, P99: 3,
			Retry: calc.Retry{Attempts: attempts, Base: 0.5, Factor: 3, Cap: 4, Jitter: &jitter}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	chosen := algorithms.DefaultPattern(algorithms.PatternRamp)
	retries := map[int]int64{}
	for _, attempts := range []int{2, 7} {
		res := size(attempts, 0.2)
		tb := res.Spec(algorithms.NameTokenBucket)
		still, jittered, caption, err := stormRuns(res, tb, chosen)
		if err != nil {
			t.Fatal(err)
		}
		s := still.Lanes[0].Summary
		clients := stormPattern(tb, chosen, stormRetry(res, 1)).Clients
		if s.Retries == 0 || s.Retries > int64(attempts*clients) || (attempts == 2 && s.GaveUp == 0) {
			t.Errorf("attempts %d: %d retries and %d gave up from %d clients, want at most %d retries (and with 2 attempts, some giving up)",
				attempts, s.Retries, s.GaveUp, clients, attempts*clients)
		}
		retries[attempts] = s.Retries
		if jittered.Lanes[0].Summary.Retries == 0 {
			t.Errorf("attempts %d: the jittered storm never retried", attempts)
		}
		for _, want := range []string{"after 500 ms", "×3", "at most 4 s", "up to " + strconv.Itoa(attempts) + " attempts", "with 20 % jitter"} {
			if !strings.Contains(caption, want) {
				t.Errorf("attempts %d: caption %q does not say %q", attempts, caption, want)
			}
		}
	}
	if retries[7] <= retries[2] {
		t.Errorf("7 attempts offered %d retries, 2 attempts %d", retries[7], retries[2])
	}
}

// TestRetryStormJitterZero: a design whose clients add no jitter is the
// line without jitter, compared with the calculator's default, and the
// caption says so; a pattern's own jitter is the comparison when given.
func TestRetryStormJitterZero(t *testing.T) {
	zero := 0.0
	res, err := calc.Size(calc.Input{Capacity: 500, Clients: 20, P99: 3, Retry: calc.Retry{Jitter: &zero}})
	if err != nil {
		t.Fatal(err)
	}
	tb := res.Spec(algorithms.NameTokenBucket)
	if r := stormRetry(res, 1); r.Jitter != 0 {
		t.Fatalf("the design's clients retry with jitter %v, want 0", r.Jitter)
	}
	_, _, caption, err := stormRuns(res, tb, algorithms.DefaultPattern(algorithms.PatternRamp))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(caption, "with 50 % jitter") || !strings.Contains(caption, "add no jitter (retry.jitter 0)") {
		t.Errorf("caption %q", caption)
	}
	storm := algorithms.DefaultPattern(algorithms.PatternRetryStorm)
	storm.Jitter = 0.3
	if j, compared := stormJitter(storm, stormRetry(res, 1)); j != 0.3 || compared {
		t.Errorf("pattern jitter 0.3: jitter %v, compared %v", j, compared)
	}
}
