package shadow

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/internal/cputime"
	"github.com/ratelab/ratelab/measure"
	"github.com/ratelab/ratelab/policy"
)

// benchLog is a generated combined log of 300000 lines from 5000 clients
// (shardLog: tiers, keyless and late lines, many a second), built once.
var benchLog = sync.OnceValue(func() string { return shardLog(300_000, 5000, 7) })

// BenchmarkMeasureReplay measures the same log alone and with a shadow
// replay in the same pass, sharded by client (Options.Replay) or on one
// goroutine (Options.Each), for a policy of per-client limits and for one
// with a global limit (replayed on one shard). The replay's cost is its
// time over measure's in the same run. Run one -cpu value per command
// (with a list, each sub-benchmark's first result is taken at the list's
// last value, golang/go#49980; procs reports the GOMAXPROCS of each):
//
//	go test -run '^$' -bench MeasureReplay -cpu 2 -count 5 ./shadow/
func BenchmarkMeasureReplay(b *testing.B) {
	log := benchLog()
	perClient := policy.Policy{
		Defaults: policy.Defaults{Limit: tb(2, 6)},
		Tiers:    []policy.Tier{{Name: "paid", Limit: algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 5, Burst: 10}}},
		Endpoints: []policy.Endpoint{
			{Match: policy.Match{Method: "POST", Path: "/v1/orders/{id}/items"}, Cost: 2,
				Limit: algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 4, Window: 5 * 1e9}},
		},
	}
	global := perClient
	global.Global = policy.Global{Limit: tb(40, 80)}
	cfg := accesslog.Config{TierExtra: 1}
	run := func(b *testing.B, p *policy.Policy, sharded bool) {
		b.SetBytes(int64(len(log)))
		cpu0 := cputime.Self()
		defer func() {
			b.ReportMetric(float64((cputime.Self()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
		}()
		for b.Loop() {
			var x *Replayer
			var mo measure.Options
			if p != nil {
				var err error
				if x, err = New(*p, Options{}); err != nil {
					b.Fatal(err)
				}
				if sharded {
					mo.Replay = x.Sharded()
				} else {
					mo.Each = x.AddRecord
				}
			}
			if _, err := measure.Measure(context.Background(), strings.NewReader(log), cfg, mo); err != nil {
				b.Fatal(err)
			}
			if x != nil {
				if _, err := x.Report(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("measure", func(b *testing.B) { run(b, nil, false) })
	b.Run("replay-sharded", func(b *testing.B) { run(b, &perClient, true) })
	b.Run("replay-each", func(b *testing.B) { run(b, &perClient, false) })
	b.Run("replay-global-sharded", func(b *testing.B) { run(b, &global, true) })
}
