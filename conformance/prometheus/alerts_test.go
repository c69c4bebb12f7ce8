package prometheus_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	promqlengine "github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/ratelab/ratelab/export/exporttest"
	prom "github.com/ratelab/ratelab/export/prometheus"
)

// sample is one float sample.
type sample struct {
	t int64 // ms
	f float64
}

func (s sample) T() int64                      { return s.t }
func (s sample) ST() int64                     { return 0 }
func (s sample) F() float64                    { return s.f }
func (s sample) H() *histogram.Histogram       { return nil }
func (s sample) FH() *histogram.FloatHistogram { return nil }
func (s sample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s sample) Copy() chunks.Sample           { return s }

// memSeries is one series in memory.
type memSeries struct {
	lset    labels.Labels
	samples []sample
}

// memStorage is a storage.Queryable over series in memory, for
// Prometheus's PromQL engine.
type memStorage []memSeries

func (m memStorage) Querier(mint, maxt int64) (storage.Querier, error) {
	return &storage.MockQuerier{SelectMockFunction: func(_ bool, h *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
		lo, hi := mint, maxt
		if h != nil {
			lo, hi = h.Start, h.End
		}
		var out []storage.Series
		for _, s := range m {
			ok := true
			for _, mt := range ms {
				ok = ok && mt.Matches(s.lset.Get(mt.Name))
			}
			if !ok {
				continue
			}
			var in []chunks.Sample
			for _, x := range s.samples {
				if x.t >= lo && x.t <= hi {
					in = append(in, x)
				}
			}
			if len(in) > 0 {
				out = append(out, storage.NewListSeries(s.lset, in))
			}
		}
		return &seriesSet{series: out, i: -1}
	}}, nil
}

// seriesSet iterates over series.
type seriesSet struct {
	series []storage.Series
	i      int
}

func (s *seriesSet) Next() bool                        { s.i++; return s.i < len(s.series) }
func (s *seriesSet) At() storage.Series                { return s.series[s.i] }
func (s *seriesSet) Err() error                        { return nil }
func (s *seriesSet) Warnings() annotations.Annotations { return nil }

// series is a counter with labels lset (parsed from a series selector
// such as `m{a="b"}`) sampled every step over [0, span], whose value at t
// is value(t).
func series(t *testing.T, sel string, span, step time.Duration, value func(time.Duration) float64) memSeries {
	t.Helper()
	ms, err := promql.ParseMetricSelector(sel)
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	b := labels.NewBuilder(labels.EmptyLabels())
	for _, m := range ms {
		if m.Type != labels.MatchEqual {
			t.Fatalf("%s: only = matchers", sel)
		}
		b.Set(m.Name, m.Value)
	}
	s := memSeries{lset: b.Labels()}
	for at := time.Duration(0); at <= span; at += step {
		s.samples = append(s.samples, sample{t: at.Milliseconds(), f: value(at)})
	}
	return s
}

// firing evaluates an alerting rule's expression with Prometheus's PromQL
// engine every `every` over [0, end] and applies its `for` as Prometheus's
// rule manager does (an alert is pending from the first evaluation that
// returns its series and fires once it has been pending for `for`; an
// evaluation without it resets it). It reports whether the rule fires at
// end and the first time it fired.
func firing(t *testing.T, st storage.Queryable, expr string, hold, every, end time.Duration) (bool, time.Duration) {
	t.Helper()
	eng := promqlengine.NewEngine(promqlengine.EngineOpts{MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute, Parser: promql})
	active := map[string]time.Duration{}
	first := time.Duration(-1)
	fires := false
	for at := time.Duration(0); at <= end; at += every {
		q, err := eng.NewInstantQuery(context.Background(), st, nil, expr, time.Unix(0, 0).Add(at))
		if err != nil {
			t.Fatal(err)
		}
		res := q.Exec(context.Background())
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		vec, err := res.Vector()
		if err != nil {
			t.Fatal(err)
		}
		q.Close()
		seen := map[string]bool{}
		fires = false
		for _, s := range vec {
			k := s.Metric.String()
			seen[k] = true
			if _, ok := active[k]; !ok {
				active[k] = at
			}
			if at-active[k] >= hold {
				fires = true
			}
		}
		for k := range active {
			if !seen[k] {
				delete(active, k)
			}
		}
		if fires && first < 0 {
			first = at
		}
	}
	return fires, first
}

// TestNeverRejectsNeedsSevenDays evaluates RateLimitNeverRejects over
// series of each gateway's metrics: traffic for 62 minutes must not fire
// it (the alert says 7 days), traffic for 7 days and 2 hours without a
// rejection must, and never before 7 days of data, and the same traffic
// with one rejection 3 days before the end must not. The PromQL is
// evaluated by Prometheus's own engine; only the `for` bookkeeping is
// done here.
func TestNeverRejectsNeedsSevenDays(t *testing.T) {
	gateways := []struct {
		gw, served, rejected string // one client's (route's, limit's) series
	}{
		{"nginx", `nginx_http_response_count_total{tier="free",limit_req_status="PASSED"}`, `nginx_http_response_count_total{tier="free",limit_req_status="REJECTED"}`},
		{"haproxy", `haproxy_frontend_http_requests_total{proxy="api"}`, `haproxy_frontend_http_responses_total{proxy="api",code="4xx"}`},
		{"envoy-ratelimit", `envoy_cluster_ratelimit_ok{envoy_cluster_name="api"}`, `envoy_cluster_ratelimit_over_limit{envoy_cluster_name="api"}`},
		{"traefik", `traefik_router_requests_total{router="api",code="200"}`, `traefik_router_requests_total{router="api",code="429"}`},
		{"kong", `kong_http_requests_total{consumer="c1",code="200",source="service"}`, `kong_http_requests_total{consumer="c1",code="429",source="kong"}`},
		{"xtime-rate", `ratelab_ratelimit_decisions_total{limit="default",decision="allowed"}`, `ratelab_ratelimit_decisions_total{limit="default",decision="rejected"}`},
	}
	const day = 24 * time.Hour
	const week = 7 * day
	tests := []struct {
		name string
		// span is how long the series have data, from time 0, one
		// sample per step; rejectAt, when not 0, is when the one
		// rejection is counted.
		span, step, rejectAt time.Duration
		want                 bool
	}{
		{"62 minutes", 62 * time.Minute, time.Minute, 0, false},
		{"7 days 2 hours", week + 2*time.Hour, 5 * time.Minute, 0, true},
		{"7 days 2 hours, one rejection 3 days ago", week + 2*time.Hour, 5 * time.Minute, week + 2*time.Hour - 3*day, false},
	}
	p := exporttest.Named(t, "public-api")
	for _, g := range gateways {
		a := alerts(t, render(t, p, g.gw).Body)
		r, ok := a[prom.AlertNeverRejects]
		if !ok {
			t.Fatalf("%s: no %s", g.gw, prom.AlertNeverRejects)
		}
		share := a[prom.AlertRejectedShare]
		for _, tt := range tests {
			t.Run(g.gw+"/"+tt.name, func(t *testing.T) {
				st := memStorage{
					series(t, g.served, tt.span, tt.step, func(at time.Duration) float64 { return 10 * float64(at/tt.step) }),
					series(t, g.rejected, tt.span, tt.step, func(at time.Duration) float64 {
						if tt.rejectAt > 0 && at >= tt.rejectAt {
							return 1
						}
						return 0
					}),
				}
				every := min(tt.span/62, 30*time.Minute)
				got, first := firing(t, st, r.Expr, time.Duration(r.For), every, tt.span)
				if got != tt.want {
					t.Errorf("firing after %s of data: %v, want %v\n%s", tt.span, got, tt.want, r.Expr)
				}
				if first >= 0 && first < week {
					t.Errorf("fired at %s, with less than 7 days of data\n%s", first, r.Expr)
				}
				// The share alert evaluates on the same series (one
				// rejection in thousands stays below its threshold).
				if got, _ := firing(t, st, share.Expr, time.Duration(share.For), every, tt.span); got {
					t.Errorf("%s fires\n%s", prom.AlertRejectedShare, share.Expr)
				}
			})
		}
	}
}
