package redis_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/redis"
	"github.com/ratelab/ratelab/export/redis/redistest"
	"github.com/ratelab/ratelab/policy"
)

// TestCluster runs the redis-lua export on a three-master Redis Cluster
// through a go-redis ClusterClient.
func TestCluster(t *testing.T) {
	c := redistest.StartCluster(t)
	rdb := redistest.ClusterClient(t, c)
	t.Run("scripts", func(t *testing.T) { testClusterScripts(t, c, rdb) })
	t.Run("generated file", func(t *testing.T) { testClusterFile(t, c, rdb) })
}

// testClusterScripts: every script decides as package algorithms, decision
// for decision, at the given Redis-side times (ARGV[4]), with the
// sequences' client keys spread over all three masters and every key of
// one decision (sliding_log's log and meta) on one master. The sequences
// are drawn as for TestScriptsMatchAlgorithms, from other seeds.
func testClusterScripts(t *testing.T, c redistest.Cluster, rdb *goredis.ClusterClient) {
	ctx := context.Background()
	for ai, name := range algorithms.Names {
		t.Run(string(name), func(t *testing.T) {
			script := goredis.NewScript(redis.Script(name))
			// Each master keeps its own script cache.
			if err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
				return script.Load(ctx, m).Err()
			}); err != nil {
				t.Fatalf("loading the script: %v", err)
			}
			rng := rand.New(rand.NewPCG(20261201, uint64(ai)))
			seqs := make([]sequence, scriptSequences)
			perNode := make([]int, len(c.Addrs))
			for i := range seqs {
				seqs[i] = randomSequence(rng, name, i)
				node := -1
				for _, k := range seqs[i].key {
					n, err := c.Node(ctx, rdb, k)
					if err != nil {
						t.Fatal(err)
					}
					if node >= 0 && n != node {
						t.Fatalf("the keys %q of one decision are on masters %d and %d", seqs[i].key, node, n)
					}
					node = n
				}
				perNode[node]++
			}
			for n, count := range perNode {
				if count == 0 {
					t.Fatalf("no sequence's key on master %d (%s): %v", n, c.Addrs[n], perNode)
				}
			}
			replay(t, rdb, script, seqs)
			t.Logf("sequences per master: %v", perNode)
		})
	}
}

// clusterDriver runs inside the generated package: it sends the requests
// of the JSON file $STEPS through NewLimiter(a ClusterClient of
// $REDIS_ADDRS).Middleware, and writes to $OUT, for each, the status, the
// headers, and Redis TIME (µs, from the master of the global key) just
// before and just after it, for the outer test to compare with the engine.
const clusterDriver = `package ratelimit

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

type step struct{ Method, Path, Key, Tier string }

type result struct {
	Before, After                      int64
	Status                             int
	RateLimit, Remaining, RetryAfter string
}

func TestCluster(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(os.Getenv("REDIS_ADDRS"), ",")})
	defer rdb.Close()
	data, err := os.ReadFile(os.Getenv("STEPS"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	if err := json.Unmarshal(data, &steps); err != nil {
		t.Fatal(err)
	}
	clock, err := rdb.MasterForKey(ctx, keyPrefix+"{global:global}")
	if err != nil {
		t.Fatal(err)
	}
	now := func() int64 {
		tm, err := clock.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMicro()
	}
	h := NewLimiter(rdb).Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	var out []result
	for _, s := range steps {
		r := httptest.NewRequest(s.Method, s.Path, nil)
		r.Header.Set("X-API-Key", s.Key)
		if s.Tier != "" {
			r.Header.Set("X-Tier", s.Tier)
		}
		w := httptest.NewRecorder()
		before := now()
		h.ServeHTTP(w, r)
		out = append(out, result{Before: before, After: now(), Status: w.Code, RateLimit: w.Header().Get("RateLimit"),
			Remaining: w.Header().Get("RateLimit-Remaining"), RetryAfter: w.Header().Get("Retry-After")})
	}
	data, err = json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("OUT"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
`

// clusterStep is one request of the generated file's cluster test.
type clusterStep struct{ Method, Path, Key, Tier string }

// clusterResult is what clusterDriver saw for one request.
type clusterResult struct {
	Before, After int64 // Redis TIME, µs
	clusterAnswer
}

// clusterAnswer is a response's status and headers.
type clusterAnswer struct {
	Status                           int
	RateLimit, Remaining, RetryAfter string
}

// clusterSteps: clients a to h, whose keys lie on all three masters; a
// runs out of its default limit, b's costly request is rejected and
// charges nothing, c names its tier in any ASCII case and runs out of it,
// d is rejected by its endpoint's limit, which charges neither d's default
// limit nor the global one, and an unknown tier has the default limit.
var clusterSteps = []clusterStep{
	{"GET", "/x", "a", ""}, {"GET", "/x", "a", ""}, {"GET", "/x", "a", ""}, {"GET", "/x", "a", ""},
	{"GET", "/heavy", "b", ""}, {"GET", "/heavy", "b", ""}, {"GET", "/x", "b", ""},
	{"GET", "/x", "c", "gold"}, {"GET", "/x", "c", "GOLD"}, {"GET", "/x", "c", "Gold"}, {"GET", "/x", "c", "gold"},
	{"GET", "/x", "c", "gold"}, {"GET", "/x", "c", "gold"},
	{"POST", "/orders", "d", ""}, {"POST", "/orders", "d", ""}, {"GET", "/x", "d", ""},
	{"GET", "/x", "e", "silver"}, {"POST", "/orders", "e", ""}, {"GET", "/heavy", "f", ""}, {"GET", "/heavy", "f", ""},
	{"GET", "/x", "g", ""}, {"POST", "/orders", "g", ""}, {"POST", "/orders", "h", "gold"}, {"POST", "/orders", "h", "gold"},
}

// testClusterFile compiles the redis-lua target's Go file unchanged, with
// a test (clusterDriver) that passes NewLimiter a *redis.ClusterClient and
// sends clusterSteps through its middleware, starting with every master's
// script cache empty, and compares every answer
// with the engine's decision for the same request at the Redis TIME just
// before it and just after it (the scripts read TIME in between; the
// policy's rates are slow, so the two rarely differ): the status, the
// limit that rejected, RateLimit-Remaining when admitted and Retry-After
// when rejected. Then the global limit's key holds exactly the cost the
// engine admitted.
func testClusterFile(t *testing.T, c redistest.Cluster, rdb *goredis.ClusterClient) {
	ctx := context.Background()
	p, err := policy.Decode(strings.NewReader(strings.Replace(e2ePolicy, "%MODE%", "enforce", 1)))
	if err != nil {
		t.Fatal(err)
	}
	probe, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	// The client keys the requests' limits use, as the generated file
	// names them, must lie on every master.
	perNode := make([]int, len(c.Addrs))
	for _, s := range clusterSteps {
		a := probe.Match(engine.Request{Key: s.Key, Tier: s.Tier, Method: s.Method, Path: s.Path})
		for _, i := range a.Limits[:a.N] {
			l := probe.Limits()[i]
			if l.Scope == policy.ScopeGlobal {
				continue
			}
			for _, k := range redis.Keys(l.Spec.Algorithm, l.Name, "key:"+s.Key) {
				n, err := c.Node(ctx, rdb, k)
				if err != nil {
					t.Fatal(err)
				}
				perNode[n]++
			}
		}
	}
	for n, count := range perNode {
		if count == 0 {
			t.Fatalf("no client key on master %d (%s): %v", n, c.Addrs[n], perNode)
		}
	}

	// No master knows the scripts yet: the file must load them (EVALSHA
	// answers NOSCRIPT on each master, then EVAL) through the cluster.
	if err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
		return m.ScriptFlush(ctx).Err()
	}); err != nil {
		t.Fatal(err)
	}
	ex, err := redis.Render(p, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := redistest.Compile(t, map[string]string{"e2ecluster/" + ex.Filename: string(ex.Body), "e2ecluster/cluster_test.go": clusterDriver})
	steps, err := json.Marshal(clusterSteps)
	if err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(dir, "steps.json"), filepath.Join(dir, "out.json")
	if err := os.WriteFile(in, steps, 0o644); err != nil {
		t.Fatal(err)
	}
	redistest.Go(t, dir, []string{"REDIS_ADDRS=" + strings.Join(c.Addrs, ","), "STEPS=" + in, "OUT=" + out}, "test", "-count=1", "./e2ecluster/")
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []clusterResult
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(clusterSteps) {
		t.Fatalf("%d results for %d requests", len(got), len(clusterSteps))
	}

	// Two engines: one fed the times before each request, one the times
	// after.
	early, _ := engine.New(p)
	late, _ := engine.New(p)
	var admittedCost int64
	for i, s := range clusterSteps {
		q := engine.Request{Key: s.Key, Tier: s.Tier, Method: s.Method, Path: s.Path}
		q.At = time.Duration(got[i].Before) * time.Microsecond
		de := early.Decide(q)
		q.At = time.Duration(got[i].After) * time.Microsecond
		dl := late.Decide(q)
		we, wl := clusterExpect(early, de), clusterExpect(late, dl)
		// What the comparison covers of the answer.
		g := clusterAnswer{Status: got[i].Status, RetryAfter: got[i].RetryAfter}
		if g.Status == 200 {
			g.Remaining = got[i].Remaining
		} else {
			g.RateLimit, _, _ = strings.Cut(got[i].RateLimit, ";")
		}
		if g != we && g != wl {
			t.Errorf("step %d (%s %s as %s, tier %q): got %+v (RateLimit %q, remaining %q), want %+v (the engine at the time before) or %+v (after)",
				i, s.Method, s.Path, s.Key, s.Tier, g, got[i].RateLimit, got[i].Remaining, we, wl)
		}
		if de.Allowed != dl.Allowed {
			t.Logf("step %d: the engine's decision changes between %d µs and %d µs", i, got[i].Before, got[i].After)
		}
		if g.Status == 200 {
			admittedCost += de.Cost
		}
	}
	// Every master decided some request, so the file loaded a script on
	// each of them.
	var shas []string
	for _, n := range algorithms.Names {
		shas = append(shas, goredis.NewScript(redis.Script(n)).Hash())
	}
	for i, addr := range c.Addrs {
		exists, err := redistest.Client(t, addr).ScriptExists(ctx, shas...).Result()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(exists, true) {
			t.Errorf("master %d (%s) has none of the scripts: the file did not load them through the cluster", i, addr)
		}
	}
	global := p.Limits()[len(p.Limits())-1]
	if global.Scope != policy.ScopeGlobal {
		t.Fatalf("the policy's last limit is %s, not the global one", global.Field)
	}
	d, err := rdb.HGet(ctx, redis.Keys(global.Spec.Algorithm, global.Name, "global")[0], "d").Float64()
	if err != nil {
		t.Fatal(err)
	}
	// The global bucket refills 0.001 tokens/s: what it lacks rounds to
	// what it was charged.
	if math.Round(d) != float64(admittedCost) {
		t.Errorf("global bucket: %g tokens taken, want %d (the cost of the admitted requests; rejected ones charge nothing)", d, admittedCost)
	}
}

// clusterExpect is what the generated middleware answers for the engine's
// decision d: the status, for a rejection the rejecting limit (named in
// RateLimit) and Retry-After in whole seconds rounded up, and for an
// admission the least remaining.
func clusterExpect(e *engine.Engine, d engine.Decision) clusterAnswer {
	if d.Allowed {
		return clusterAnswer{Status: 200, Remaining: strconv.FormatInt(d.Remaining, 10)}
	}
	r := clusterAnswer{Status: 429, RateLimit: strconv.Quote(e.Limits()[d.Rejected].Name)}
	if d.RetryAfter != algorithms.Never {
		r.RetryAfter = strconv.FormatInt(int64((d.RetryAfter+time.Second-1)/time.Second), 10)
	}
	return r
}
