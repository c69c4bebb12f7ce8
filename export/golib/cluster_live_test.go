package golib_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/golib"
	"github.com/ratelab/ratelab/export/redis/redistest"
	"github.com/ratelab/ratelab/policy"
	goredis "github.com/redis/go-redis/v9"
)

// TestRedisRateOnClusterDecidesAsTheEngine runs the redis-rate target's
// generated middleware, compiled unchanged, on a three-master Redis
// Cluster through a go-redis ClusterClient (NewLimiter takes a
// redis.UniversalClient), with each diffPolicy (tiers, templated
// endpoints with costs and limits, a global limit) and its schedule, and
// compares every decision with the engine's as
// TestGoExportsDecideAsTheEngine does on one server.
//
// redis_rate runs one script per call on one key ("rate:" + the limit's
// name + ":" + the client key), so the limits of one request may live on
// different masters: the middleware asks each in turn (the peek at cost
// 0, then the charge), which a cluster serves like one server. Before it
// runs, the test checks that the schedule's keys are spread over every
// master, so the cluster's routing is what decides.
func TestRedisRateOnClusterDecidesAsTheEngine(t *testing.T) {
	c := redistest.StartCluster(t)
	rdb := redistest.ClusterClient(t, c)
	runs, bin := buildDiffRuns(t, []export.Target{golib.RedisRate}, redisClusterClient)
	for _, r := range runs {
		t.Run(fmt.Sprintf("burst=%d", r.burst), func(t *testing.T) {
			want := spreadKeys(t, c, rdb, r)
			ctx := context.Background()
			r.run(t, bin, c.Addrs[0], func(ctx context.Context) error {
				// Each attempt starts empty, with the masters' command
				// counts at 0.
				return rdb.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
					if err := m.FlushDB(ctx).Err(); err != nil {
						return err
					}
					return m.ConfigResetStat(ctx).Err()
				})
			})
			// Every master ran redis_rate's script in the last attempt,
			// and holds only keys of the layout (those not yet expired):
			// the file reached each of them through the ClusterClient.
			for i, addr := range c.Addrs {
				m := redistest.Client(t, addr)
				stats, err := m.Info(ctx, "commandstats").Result()
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(stats, "cmdstat_evalsha:calls=") && !strings.Contains(stats, "cmdstat_eval:calls=") {
					t.Errorf("master %d (%s) ran no script:\n%s", i, addr, stats)
				}
				got, err := m.Keys(ctx, "*").Result()
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range got {
					if !want[k] {
						t.Errorf("master %d (%s) holds %q, not a key of the layout rate:<limit>:<client>", i, addr, k)
					}
				}
			}
		})
	}
}

// spreadKeys is the set of redis_rate keys r's schedule uses by the
// engine's Match, "rate:" + limit name + ":" + the generated file's
// client key; it fails unless they lie on every master of c.
func spreadKeys(t *testing.T, c redistest.Cluster, rdb *goredis.ClusterClient, r diffRun) map[string]bool {
	t.Helper()
	ctx := context.Background()
	e := mustEngine(t, r.p)
	keys := map[string]bool{}
	for _, s := range diffSchedule(uint64(r.burst)) {
		a := e.Match(engine.Request{Key: s.Key, Tier: s.Tier, Method: s.Method, Path: s.Path})
		for _, i := range a.Limits[:a.N] {
			l := e.Limits()[i]
			client := "key:" + s.Key // the generated clientKey for api_key
			if l.Scope == policy.ScopeGlobal {
				client = "global"
			}
			keys["rate:"+l.Name+":"+client] = true
		}
	}
	perNode := make([]int, len(c.Addrs))
	for k := range keys {
		n, err := c.Node(ctx, rdb, k)
		if err != nil {
			t.Fatal(err)
		}
		perNode[n]++
	}
	for n, count := range perNode {
		if count == 0 {
			t.Fatalf("none of the schedule's %d keys on master %d (%s): %v", len(keys), n, c.Addrs[n], perNode)
		}
	}
	t.Logf("the schedule's %d redis_rate keys per master: %v", len(keys), perNode)
	return keys
}
