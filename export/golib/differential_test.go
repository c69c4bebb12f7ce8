package golib_test

// The generated middleware of each Go library target, compiled unchanged
// and run in real time, decides every request of a schedule as the engine
// does for the same policy, fed the instants the middleware's limiter
// decided at.
//
// The driver is a test in the generated package: it serves the middleware
// on an httptest server on loopback, sends the schedule's requests one at
// a time at their offsets, and records for each what the server saw
// (method, r.URL.Path, tier and key headers), its status, and the time:
// for xtime-rate and throttled the instant the limiter read its clock
// (their Now, read once per request), for redis-rate (Redis TIME, which
// the process cannot read) the times before and after the middleware
// ran. This test replays the records through engine.Decide.
//
// A disagreement is timing when the engine itself decides that request
// differently at some instant within 2 ms of the time it was fed (for
// redis-rate: from 2 ms before the middleware started to 2 ms after it
// ended): a refill boundary lies there, and the target may have decided
// on its other side. Then the schedule runs again, up to 3 more times.
// Any other disagreement fails at once.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/golib"
	"github.com/ratelab/ratelab/export/redis/redistest"
	"github.com/ratelab/ratelab/policy"
)

// diffPolicy has a default limit of burst b, a tier named in mixed case
// (Paid) and one without its own limit (free, which has the default's),
// a templated endpoint listed before a literal one it overlaps, both with
// costs and limits, a templated endpoint with a limit, a costly endpoint
// without one, and a global limit of burst 2b + 2. Every interval is a
// whole number of µs, so every limit is exact in all three libraries.
func diffPolicy(b int64) string {
	return fmt.Sprintf(`apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: diff-%[1]d}
service: {capacity: 100}
defaults:
  key: api_key
  response: {status: 429, headers: [ietf], retry_after: true}
  limit: {algorithm: token_bucket, rate: 1, burst: %[1]d}
tiers:
  - {name: Paid, limit: {algorithm: gcra, rate: 10, burst: 10}}
  - {name: free}
endpoints:
  - {match: {method: GET, path: "/v1/items/{id}"}, cost: 2, limit: {algorithm: gcra, rate: 5, burst: 4}}
  - {match: {method: GET, path: /v1/items/special}, cost: 4, limit: {algorithm: token_bucket, rate: 1, burst: 1}}
  - {match: {method: POST, path: "/v1/items/{id}/tags/{tag}"}, limit: {algorithm: token_bucket, rate: 2, burst: 2}}
  - {match: {method: GET, path: /v1/reports}, cost: 3}
global: {limit: {algorithm: token_bucket, rate: 16, burst: %[2]d}}
`, b, 2*b+2)
}

// diffBursts are the default limit's bursts, one policy each.
var diffBursts = []int64{1, 2, 10}

// driveStep is one request of a schedule.
type driveStep struct {
	At     time.Duration // offset from the driver's start
	Method string
	Target string // what the client sends: path, maybe percent-encoded
	Path   string // r.URL.Path the server must see
	Tier   string // the X-Tier header, "" for none
	Key    string // the X-API-Key header
}

// driveRecord is what the driver saw for one request.
type driveRecord struct {
	Method, Path, Tier, Key string
	// Before and After bracket the middleware; Seen is the instant its
	// limiter read its clock, -1 when it has no clock of ours (Redis);
	// Sent is when the request's first command went to Redis, -1
	// without Redis. All are ns since the driver started.
	Before, Seen, Sent, After int64
	Status                    int
}

// diffSchedule is n requests over about 2 s from four clients: a names
// its tier Paid in varying case, b names none, c names free, d names an
// unknown tier; the paths hit the templated endpoints (with ids, the
// overlapping literal, a lower-case method), miss them (a trailing slash,
// an encoded slash, which decodes to an extra segment) or match nothing.
func diffSchedule(seed uint64) []driveStep {
	rng := rand.New(rand.NewPCG(seed, 7))
	type req struct{ method, target, path string }
	reqs := []req{
		{"GET", "/v1/items/42", "/v1/items/42"},
		{"GET", "/v1/items/7", "/v1/items/7"},
		{"GET", "/v1/items/special", "/v1/items/special"},
		{"get", "/v1/items/9", "/v1/items/9"},
		{"POST", "/v1/items/5/tags/red", "/v1/items/5/tags/red"},
		{"POST", "/v1/items/5/tags/", "/v1/items/5/tags/"},
		{"GET", "/v1/reports", "/v1/reports"},
		{"GET", "/v1/items/", "/v1/items/"},
		{"GET", "/v1/items/a%2Fb", "/v1/items/a/b"},
		{"GET", "/other", "/other"},
	}
	clients := []struct {
		key   string
		tiers []string
	}{
		{"a", []string{"PAID", "paid", "Paid", "pAID"}},
		{"b", []string{""}},
		{"c", []string{"free", "FREE", "Free"}},
		{"d", []string{"Gold"}},
	}
	var out []driveStep
	at := 100 * time.Millisecond
	for i := 0; i < 80; i++ {
		switch x := rng.IntN(10); {
		case x < 3:
			at += time.Duration(rng.IntN(5)) * time.Millisecond
		case x < 8:
			at += time.Duration(10+rng.IntN(30)) * time.Millisecond
		default:
			at += time.Duration(50+rng.IntN(100)) * time.Millisecond
		}
		// a sends two requests in five, the others one each.
		c := clients[max(0, rng.IntN(len(clients)+1)-1)]
		q := reqs[rng.IntN(len(reqs))]
		out = append(out, driveStep{At: at, Method: q.method, Target: q.target, Path: q.path, Tier: c.tiers[rng.IntN(len(c.tiers))], Key: c.key})
	}
	return out
}

func engineRequest(r driveRecord, at time.Duration) engine.Request {
	return engine.Request{At: at, Key: r.Key, Tier: r.Tier, Method: r.Method, Path: r.Path}
}

// decidedAt is the engine's decision for request i at instant at, after
// requests 0 … i−1 at their times.
func decidedAt(t *testing.T, p policy.Policy, reqs []engine.Request, i int, at time.Duration) bool {
	e, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range reqs[:i] {
		e.Decide(q)
	}
	q := reqs[i]
	q.At = at
	return e.Decide(q).Allowed
}

// diffOutcome is one run's comparison with the engine.
type diffOutcome struct {
	admitted, rejected int
	// timings counts the disagreements a boundary within the request's
	// window explains; the comparison carries on with the engine at the
	// instant that agrees.
	timings int
	// mismatch is the first disagreement that is not timing, or the last
	// timing one when there were more than maxTimings; "" for none.
	mismatch string
	timing   bool
}

// maxTimings is how many timing disagreements one run may have before it
// is run again.
const maxTimings = 3

// compare replays recs through the engine at the times the target decided
// at. A disagreement is timing when the engine decides as the target did
// somewhere within the request's window (for redis-rate also with every
// earlier request at the late end of its window: Redis decides at its
// TIME, between the first command and the middleware's return, and
// charges a round trip after the peek); the replay then carries on with
// the request at that instant. It returns the first disagreement that is
// not timing, or gives up after maxTimings of them.
func compare(t *testing.T, p policy.Policy, recs []driveRecord) diffOutcome {
	const margin = 2 * time.Millisecond
	reqs := make([]engine.Request, len(recs))
	lo, hi := make([]time.Duration, len(recs)), make([]time.Duration, len(recs))
	for i, r := range recs {
		at := time.Duration(r.Seen)
		lo[i], hi[i] = at-margin, at+margin
		if r.Seen < 0 {
			at = time.Duration(r.Sent)
			lo[i], hi[i] = at-margin, time.Duration(r.After)+margin
		}
		reqs[i] = engineRequest(r, at)
	}
	e := mustEngine(t, p)
	var o diffOutcome
	for i, r := range recs {
		if r.Status != 200 && r.Status != 429 {
			t.Fatalf("request %d (%s %s): status %d, want 200 or 429", i, r.Method, r.Path, r.Status)
		}
		got := r.Status == 200
		if got {
			o.admitted++
		} else {
			o.rejected++
		}
		d := e.Decide(reqs[i])
		if got == d.Allowed {
			continue
		}
		o.mismatch = fmt.Sprintf("request %d (%s %s, key %s, tier %q, at %v, window %v…%v): status %d, the engine allowed=%t (limits %v, cost %d, rejected by %d)",
			i, r.Method, r.Path, r.Key, r.Tier, reqs[i].At, lo[i], hi[i], r.Status, d.Allowed, d.Limits[:d.N], d.Cost, d.Rejected)
		// Candidate replays that agree: request i at an end of its window,
		// and for redis-rate the earlier requests late in theirs.
		var fixed []engine.Request
		for _, at := range []time.Duration{lo[i], hi[i]} {
			if decidedAt(t, p, reqs, i, at) == got {
				fixed = slices.Clone(reqs)
				fixed[i].At = at
				break
			}
		}
		if fixed == nil && r.Seen < 0 {
			late := slices.Clone(reqs)
			for k := range i {
				late[k].At = time.Duration(recs[k].After)
			}
			for _, at := range []time.Duration{hi[i], lo[i]} {
				if decidedAt(t, p, late, i, at) == got {
					fixed = late
					fixed[i].At = at
					break
				}
			}
		}
		if fixed == nil {
			o.timing = false
			return o
		}
		o.timings++
		o.timing = true
		if o.timings > maxTimings {
			return o
		}
		// Carry on from the agreeing replay.
		reqs = fixed
		e = mustEngine(t, p)
		for k := range i + 1 {
			e.Decide(reqs[k])
		}
		o.mismatch = ""
	}
	return o
}

func mustEngine(t *testing.T, p policy.Policy) *engine.Engine {
	t.Helper()
	e, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// driveTest is the driver for target, a test in the generated package;
// rdb is redis-rate's client (redisClient or redisClusterClient).
func driveTest(target, rdb string) string {
	setup := map[string]string{
		"xtime-rate": `lim := NewLimiter()
	lim.Now = clock`,
		"throttled": `lim, err := NewLimiter()
	if err != nil {
		t.Fatal(err)
	}
	lim.Now = clock`,
		"redis-rate": `rdb := ` + rdb + `
	defer rdb.Close()
	// Redis TIME is read by each script; the nearest this process sees
	// is when it sends the request's first command.
	rdb.AddHook(sendHook{func() {
		mu.Lock()
		if sent < 0 {
			sent = int64(time.Since(start))
		}
		mu.Unlock()
	}})
	lim := NewLimiter(rdb)
	_ = clock`,
	}[target]
	imports := `"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"`
	hook := ""
	if target == "redis-rate" {
		imports = `"context"
	` + imports + "\n\n\t\"github.com/redis/go-redis/v9\""
		hook = `
// sendHook calls sent before each command goes to Redis.
type sendHook struct{ sent func() }

func (h sendHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h sendHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.sent()
		return next(ctx, cmd)
	}
}

func (h sendHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
`
	}
	return `package ratelimit

import (
	` + imports + `
)

type driveStep struct {
	At                               time.Duration
	Method, Target, Path, Tier, Key string
}

type driveRecord struct {
	Method, Path, Tier, Key   string
	Before, Seen, Sent, After int64
	Status                    int
}
` + hook + `
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// TestDrive sends the schedule in DRIVE_SCHEDULE through the middleware
// in real time and writes what it saw to DRIVE_OUT.
func TestDrive(t *testing.T) {
	data, err := os.ReadFile(os.Getenv("DRIVE_SCHEDULE"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []driveStep
	if err := json.Unmarshal(data, &steps); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var mu sync.Mutex
	seen, sent := int64(-1), int64(-1)
	clock := func() time.Time {
		now := time.Now()
		mu.Lock()
		seen = int64(now.Sub(start))
		mu.Unlock()
		return now
	}
	` + setup + `
	mw := lim.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	var recs []driveRecord
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		mu.Lock()
		seen, sent = -1, -1
		mu.Unlock()
		before := time.Since(start)
		mw.ServeHTTP(sw, r)
		after := time.Since(start)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		mu.Lock()
		recs = append(recs, driveRecord{Method: r.Method, Path: r.URL.Path, Tier: r.Header.Get("X-Tier"), Key: r.Header.Get("X-API-Key"),
			Before: int64(before), Seen: seen, Sent: sent, After: int64(after), Status: sw.status})
		mu.Unlock()
	}))
	defer srv.Close()
	client := srv.Client()
	client.Timeout = 10 * time.Second
	for i, s := range steps {
		time.Sleep(time.Until(start.Add(s.At)))
		req, err := http.NewRequest(s.Method, srv.URL+s.Target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-API-Key", s.Key)
		if s.Tier != "" {
			req.Header.Set("X-Tier", s.Tier)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	out, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("DRIVE_OUT"), out, 0o644); err != nil {
		t.Fatal(err)
	}
}
`
}

// TestGoExportsDecideAsTheEngine runs every Go library target's generated
// middleware for each diffPolicy against the engine, decision for
// decision.
func TestGoExportsDecideAsTheEngine(t *testing.T) {
	addr := redistest.Start(t)
	rdb := redistest.Client(t, addr)
	runs, bin := buildDiffRuns(t, golib.Targets, redisClient)
	for _, r := range runs {
		t.Run(fmt.Sprintf("%s/burst=%d", r.target, r.burst), func(t *testing.T) {
			r.run(t, bin, addr, func(ctx context.Context) error { return rdb.FlushDB(ctx).Err() })
		})
	}
}

// The redis-rate driver's client, a Go expression of the generated
// package reading REDIS_ADDR: one Redis server, or a Redis Cluster found
// from the master at that address (go-redis reads the others' addresses
// and slots from it).
const (
	redisClient        = `redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")})`
	redisClusterClient = `redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{os.Getenv("REDIS_ADDR")}})`
)

// diffRun is one target's middleware for one diffPolicy, compiled in the
// test binary of package pkg.
type diffRun struct {
	target, pkg string
	burst       int64
	p           policy.Policy
}

// buildDiffRuns renders each target for each diffPolicy, checks that
// every mapping says it is exact, and compiles each generated file
// unchanged with its driver (redis-rate's on the client rdb, a Go
// expression) into a test binary in the returned directory.
func buildDiffRuns(t *testing.T, targets []export.Target, rdb string) ([]diffRun, string) {
	t.Helper()
	var runs []diffRun
	files := map[string]string{}
	for _, tg := range targets {
		for _, b := range diffBursts {
			p, err := policy.Decode(strings.NewReader(diffPolicy(b)))
			if err != nil {
				t.Fatal(err)
			}
			ex, err := tg.Render(p, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The premise: the export says it is exact. Every mapping
			// that is must hold decision for decision.
			for _, m := range ex.Mappings {
				if m.Fidelity != export.Exact {
					t.Fatalf("%s, burst %d: %s is %s (%s); the schedule is meant for exact exports", tg.Name, b, m.Field, m.Fidelity, m.Why)
				}
			}
			pkg := fmt.Sprintf("%s_b%d", ident(tg.Name), b)
			files["diff/"+pkg+"/"+ex.Filename] = string(ex.Body)
			files["diff/"+pkg+"/drive_test.go"] = driveTest(tg.Name, rdb)
			runs = append(runs, diffRun{tg.Name, pkg, b, p})
		}
	}
	dir := redistest.Compile(t, files)
	bin := filepath.Join(dir, "bin")
	redistest.Go(t, dir, nil, "test", "-c", "-o", bin+string(filepath.Separator), "./diff/...")
	return runs, bin
}

// run drives r's schedule through its compiled middleware (in bin) on the
// Redis at redisAddr, emptied by flush before each attempt, and compares
// every decision with the engine's, running again on timing.
func (r diffRun) run(t *testing.T, bin, redisAddr string, flush func(context.Context) error) {
	t.Helper()
	const attempts = 4 // the first run and up to 3 reruns
	for attempt := 1; attempt <= attempts; attempt++ {
		// A rerun moves each request by up to 5 ms, so that one
		// that fell near a boundary is unlikely to again.
		steps := diffSchedule(uint64(r.burst))
		jitter := rand.New(rand.NewPCG(uint64(attempt), 11))
		for i := range steps {
			if attempt > 1 {
				steps[i].At += time.Duration(jitter.IntN(5000)) * time.Microsecond
			}
		}
		sched, err := json.Marshal(steps)
		if err != nil {
			t.Fatal(err)
		}
		schedFile := filepath.Join(t.TempDir(), "schedule.json")
		if err := os.WriteFile(schedFile, sched, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		recs := drive(t, filepath.Join(bin, r.pkg+".test"), schedFile, redisAddr)
		if len(recs) != len(steps) {
			t.Fatalf("the driver recorded %d requests, the schedule has %d", len(recs), len(steps))
		}
		for i, s := range steps {
			rc := recs[i]
			if rc.Method != s.Method || rc.Path != s.Path || rc.Tier != s.Tier || rc.Key != s.Key {
				t.Fatalf("request %d: the server saw %s %s tier %q key %q; the schedule sent %s %s (as %s) tier %q key %q",
					i, rc.Method, rc.Path, rc.Tier, rc.Key, s.Method, s.Path, s.Target, s.Tier, s.Key)
			}
			if (rc.Seen < 0) != (r.target == "redis-rate") || (rc.Sent < 0) != (r.target != "redis-rate") {
				t.Fatalf("request %d: the limiter's clock reading is %d, the first Redis command at %d", i, rc.Seen, rc.Sent)
			}
		}
		o := compare(t, r.p, recs)
		if o.mismatch == "" {
			if o.admitted == 0 || o.rejected == 0 {
				t.Fatalf("%d admitted, %d rejected: not both answers", o.admitted, o.rejected)
			}
			t.Logf("attempt %d: %d requests, %d admitted, %d rejected, every one as the engine decides (%d within a boundary's timing)", attempt, len(recs), o.admitted, o.rejected, o.timings)
			return
		}
		if !o.timing {
			t.Fatalf("attempt %d: %s; the engine decides the same within the whole window, so this is not timing", attempt, o.mismatch)
		}
		t.Logf("attempt %d: timing, a refill boundary is within the window: %s", attempt, o.mismatch)
	}
	t.Fatalf("a timing disagreement on each of %d runs", attempts)
}

// TestDiffSchedulesExercise: the schedules exercise what they are meant
// to. By the engine over their nominal times, in each policy the client,
// endpoint and global limits are each the first to reject some request,
// and some requests pass.
func TestDiffSchedulesExercise(t *testing.T) {
	for _, b := range diffBursts {
		p, err := policy.Decode(strings.NewReader(diffPolicy(b)))
		if err != nil {
			t.Fatal(err)
		}
		e, err := engine.New(p)
		if err != nil {
			t.Fatal(err)
		}
		by := map[policy.Scope]int{}
		admitted := 0
		for _, s := range diffSchedule(uint64(b)) {
			d := e.Decide(engine.Request{At: s.At, Key: s.Key, Tier: s.Tier, Method: s.Method, Path: s.Path})
			if d.Allowed {
				admitted++
			} else {
				by[e.Limits()[d.Rejected].Scope]++
			}
		}
		t.Logf("burst %d, nominal times: %d admitted, first rejected by %v", b, admitted, by)
		if admitted == 0 || by[policy.ScopeEndpoint] == 0 || by[policy.ScopeGlobal] == 0 || by[policy.ScopeDefault] == 0 || by[policy.ScopeTier] == 0 {
			t.Errorf("burst %d: the schedule does not exercise every limit: %d admitted, first rejected by %v", b, admitted, by)
		}
	}
}

// drive runs the compiled driver once and returns its records.
func drive(t *testing.T, bin, schedFile, redisAddr string) []driveRecord {
	t.Helper()
	out := filepath.Join(t.TempDir(), "records.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestDrive$", "-test.count=1", "-test.timeout=90s")
	cmd.Env = append(os.Environ(), "DRIVE_SCHEDULE="+schedFile, "DRIVE_OUT="+out, "REDIS_ADDR="+redisAddr)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the driver failed: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var recs []driveRecord
	if err := json.Unmarshal(data, &recs); err != nil {
		t.Fatal(err)
	}
	return recs
}
