package nginx

import (
	"bufio"
	"cmp"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/internal/integration"
	"github.com/ratelab/ratelab/policy"
)

// logFormat is the access log the differential tests read back: nginx's
// own request start (msec − request_time, both in ms of its cached clock),
// the status and the request's id.
const logFormat = `$msec $request_time $status $http_x_req`

// runLogged runs one nginx with the exports included side by side in one
// http {} block and an access log in dir, until the test ends. It returns
// the log's path; the caller waits for each export's listen address.
func runLogged(t *testing.T, bodies ...[]byte) (dir string) {
	t.Helper()
	bin := integration.Need(t, "nginx", "nginx")
	dir = t.TempDir()
	var inc strings.Builder
	for i, b := range bodies {
		name := fmt.Sprintf("export%d.conf", i)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&inc, "    include %s/%s;\n", dir, name)
	}
	conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 512; }
http {
    log_format ratelab_test '%[2]s';
    access_log %[1]s/access.log ratelab_test;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
%[3]s}
`, dir, logFormat, inc.String())
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	return dir
}

// waitListen waits (at most 5 s) until nginx answers on base.
func waitListen(t *testing.T, dir, base string) {
	t.Helper()
	client := &http.Client{Timeout: 200 * time.Millisecond}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodGet, base+"/ratelab-warm-up", nil)
		req.Header.Set("X-API-Key", "warm-up")
		req.Header.Set("X-Req", "-1")
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
	t.Fatalf("nginx did not answer on %s within 5 s:\n%s", base, b)
}

// req is one request of a differential case: when to send it (since the
// case's start) and what it is.
type req struct {
	at                      time.Duration
	method, path, key, tier string
}

// logged is one access-log line: nginx's start time of the request in
// milliseconds and its status.
type logged struct {
	startMs int64
	status  int
	id      int
}

// readLog reads the access log back: one line per request, by id; the
// warm-ups (which the global limit counts too) get ids below 0.
func readLog(t *testing.T, path string) map[int]logged {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]logged{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 4 {
			t.Fatalf("access log line %q: want 4 fields", sc.Text())
		}
		id, err := strconv.Atoi(fs[3])
		if err != nil {
			t.Fatalf("access log line %q: bad id", sc.Text())
		}
		if id < 0 {
			id = -1 - len(out) // each warm-up a row of its own: it counts in the global limit
		}
		msec, err1 := strconv.ParseFloat(fs[0], 64)
		took, err2 := strconv.ParseFloat(fs[1], 64)
		status, err3 := strconv.Atoi(fs[2])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("access log line %q: bad number", sc.Text())
		}
		// Both are whole ms of nginx's clock written with 3 decimals.
		out[id] = logged{startMs: int64(msec*1000+0.5) - int64(took*1000+0.5), status: status, id: id}
	}
	return out
}

// sendAll sends the schedule to base: one after the other (each not before
// its time), or each in its own goroutine at its time when concurrent (a
// leaky bucket holds the requests it delays). At most 400 requests, 20 s.
func sendAll(t *testing.T, base string, rs []req, concurrent bool) {
	t.Helper()
	if len(rs) > 400 {
		t.Fatalf("%d requests, at most 400", len(rs))
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var wg sync.WaitGroup
	errs := make([]error, len(rs))
	start := time.Now()
	for i, r := range rs {
		if time.Since(start) > 20*time.Second {
			t.Fatal("the schedule ran over 20 s")
		}
		if d := r.at - time.Since(start); d > 0 {
			time.Sleep(d) // pacing, not an assertion
		}
		do := func() {
			hr, err := http.NewRequest(r.method, base+r.path, nil)
			if err != nil {
				errs[i] = err
				return
			}
			hr.Header.Set("X-API-Key", r.key)
			if r.tier != "" {
				hr.Header.Set("X-Tier", r.tier)
			}
			hr.Header.Set("X-Req", strconv.Itoa(i))
			resp, err := client.Do(hr)
			if err != nil {
				errs[i] = err
				return
			}
			resp.Body.Close()
		}
		if concurrent {
			wg.Add(1)
			go func() { defer wg.Done(); do() }()
		} else {
			do()
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// enforced is the policy as the export says nginx enforces it: every
// endpoint whose cost the export maps as not expressible (each request
// counts 1) at cost 1. The test checks that mapping is there.
func enforced(t *testing.T, p policy.Policy, ex export.Export) policy.Policy {
	t.Helper()
	q := p
	q.Endpoints = slices.Clone(p.Endpoints)
	for i := range q.Endpoints {
		if q.Endpoints[i].Cost > 1 {
			if !hasMapping(ex, fmt.Sprintf("endpoints[%d].cost", i), export.NotExpressible) {
				t.Fatalf("endpoints[%d] has cost %d and no not_expressible mapping for it", i, q.Endpoints[i].Cost)
			}
			q.Endpoints[i].Cost = 0
		}
	}
	return q
}

// order is the requests in nginx's order: by nginx's start time; within
// one millisecond sequential requests keep their sending order, and
// concurrent ones (all alike in a case) put the admitted first, as the
// engine admits the earliest of simultaneous equal requests.
func order(rs []req, got map[int]logged, concurrent bool) []logged {
	out := make([]logged, 0, len(got))
	for _, l := range got {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b logged) int { return cmp.Compare(a.id, b.id) })
	slices.SortStableFunc(out, func(a, b logged) int {
		if c := cmp.Compare(a.startMs, b.startMs); c != 0 || !concurrent {
			return c
		}
		return cmp.Compare(a.status, b.status)
	})
	return out
}

// rowReq is the request of a log row (the warm-up for ids below 0).
func rowReq(rs []req, l logged) req {
	if l.id < 0 {
		return req{method: http.MethodGet, path: "/ratelab-warm-up", key: "warm-up"}
	}
	return rs[l.id]
}

// decide replays the requests in nginx's order through the engine at
// nginx's times, request k at shift[k] more; it returns admitted per row.
func decide(t *testing.T, p policy.Policy, rs []req, rows []logged, upto int, shift []time.Duration) []bool {
	t.Helper()
	e, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	t0 := rows[0].startMs
	out := make([]bool, upto+1)
	for k := 0; k <= upto; k++ {
		r := rowReq(rs, rows[k])
		at := max(0, time.Duration(rows[k].startMs-t0)*time.Millisecond+shift[k])
		out[k] = e.Decide(engine.Request{At: at, Key: r.key, Tier: r.tier, Method: r.method, Path: r.path}).Allowed
	}
	return out
}

// diffCase is one policy and schedule of the differential suite.
type diffCase struct {
	name       string
	policy     policy.Policy
	schedule   []req
	concurrent bool
	// check, when set, looks at the whole run with the policy itself
	// (costs included) decided by the engine at nginx's times.
	check func(t *testing.T, nginxAdmitted, policyAdmitted int)
}

// compare runs one attempt: it returns the timing disagreements (engine
// and nginx differ, but moving that request by at most tol — 2 ms, plus
// the leak the export's Why bounds for approximate rates — makes them
// agree) and fails the test on any other.
func compare(t *testing.T, c diffCase, p policy.Policy, rows []logged, lossMs float64) (timing int, nginxAdmitted int) {
	t.Helper()
	shift := make([]time.Duration, len(rows))
	want := decide(t, p, c.schedule, rows, len(rows)-1, shift)
	admitted := 0
	for k, row := range rows {
		if row.status != http.StatusOK && row.status != http.StatusTooManyRequests {
			t.Fatalf("request %d: status %d, want 200 or 429", row.id, row.status)
		}
		ok := row.status == http.StatusOK
		if ok {
			admitted++
		}
		if ok == want[k] {
			continue
		}
		tol := 2*time.Millisecond + time.Duration(float64(admitted)*lossMs*float64(time.Millisecond))
		agrees := false
		for d := time.Millisecond; d <= tol+time.Millisecond-1 && !agrees; d += time.Millisecond {
			for _, s := range []time.Duration{-d, d} {
				shift[k] = s
				if decide(t, p, c.schedule, rows, k, shift)[k] == ok {
					agrees = true
					break
				}
				shift[k] = 0
			}
		}
		r := rowReq(c.schedule, row)
		if !agrees {
			t.Errorf("request %d (%s %s key %q tier %q) at %d ms: nginx %d, the engine admitted=%v, and no shift within %v changes that: a systematic mismatch",
				row.id, r.method, r.path, r.key, r.tier, row.startMs-rows[0].startMs, row.status, want[k], tol)
			return timing, admitted
		}
		t.Logf("request %d at %d ms: nginx %d, the engine admitted=%v; moved by %v it agrees: timing", row.id, row.startMs-rows[0].startMs, row.status, want[k], shift[k])
		// The engine goes on from nginx's state: that request moved.
		timing++
		want = decide(t, p, c.schedule, rows, len(rows)-1, shift)
	}
	return timing, admitted
}

// TestNginxDifferentialLive: for each policy and schedule, nginx's every
// decision equals the engine's for the policy as the export maps it,
// decided at nginx's own request times (its access log). A disagreement
// that moving that request by at most 2 ms explains (nginx logs its wall
// clock and limits by its monotonic one, each truncated to ms) is timing:
// the engine goes on with the request moved, and an attempt with more
// than a few reruns, up to 3 times. Any other disagreement fails at once;
// so does a schedule that never rejects or never admits.
func TestNginxDifferentialLive(t *testing.T) {
	// An attempt with more timing disagreements than this reruns.
	const maxTiming = 3
	tb := func(r float64, b int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: r, Burst: b}
	}
	every := func(n int, step time.Duration, f func(i int) req) []req {
		out := make([]req, n)
		for i := range out {
			out[i] = f(i)
			out[i].at = time.Duration(i) * step
			if out[i].method == "" {
				out[i].method = http.MethodGet
			}
		}
		return out
	}
	tierNames := []string{"", "PAID", "paid", "Paid", "pAiD", "other"}
	cases := []diffCase{
		{
			name: "tiers in mixed case, requests without a key, and a global limit",
			policy: policy.Policy{
				Metadata: policy.Metadata{Name: "diff tiers"},
				Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: tb(10, 10)},
				Tiers:    []policy.Tier{{Name: "paid", Limit: algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 20, Burst: 2}}},
				Global:   policy.Global{Limit: tb(30, 10)},
			},
			schedule: every(150, 15*time.Millisecond, func(i int) req {
				// Every third request without a key: only the global limit.
				return req{path: "/v1/x", key: []string{"k1", "k2", ""}[i%3], tier: tierNames[i%len(tierNames)]}
			}),
		},
		{
			// k1 gets its burst and 2/s; the requests without a key pass
			// only the global limit, which admits them all.
			name: "requests without a key",
			policy: policy.Policy{
				Metadata: policy.Metadata{Name: "diff keyless"},
				Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: tb(2, 2)},
				Global:   policy.Global{Limit: tb(100, 100)},
			},
			schedule: every(40, 25*time.Millisecond, func(i int) req {
				return req{path: "/v1/x", key: []string{"k1", ""}[i%2]}
			}),
		},
		{
			name: "overlapping templated endpoints with costs",
			policy: policy.Policy{
				Metadata: policy.Metadata{Name: "diff endpoints"},
				Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: tb(20, 100)},
				Endpoints: []policy.Endpoint{
					{Match: policy.Match{Method: "GET", Path: "/v1/items/{id}"}, Cost: 2, Limit: tb(5, 2)},
					{Match: policy.Match{Method: "GET", Path: "/v1/items/special"}, Cost: 4, Limit: tb(100, 100)},
					{Match: policy.Match{Method: "POST", Path: "/v1/orders/{id}/lines"}, Limit: tb(2, 1)},
				},
			},
			schedule: every(120, 20*time.Millisecond, func(i int) req {
				switch i % 4 {
				case 0:
					return req{path: "/v1/items/special", key: "k1"}
				case 1:
					return req{path: "/v1/items/7", key: "k1"}
				case 2:
					return req{method: "POST", path: "/v1/orders/9/lines", key: "k1"}
				}
				return req{path: "/v1/items", key: "k1"}
			}),
			// nginx counts every request as one, as the cost mapping says:
			// with the costs the policy admits fewer.
			check: func(t *testing.T, nginxAdmitted, policyAdmitted int) {
				if policyAdmitted >= nginxAdmitted {
					t.Errorf("with its costs the policy admits %d, nginx %d: the cost mapping says nginx admits more", policyAdmitted, nginxAdmitted)
				}
			},
		},
		{
			name:     "7.5/s, burst 2 (450r/m, approximate)",
			policy:   policy.Policy{Metadata: policy.Metadata{Name: "diff 7.5"}, Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: tb(7.5, 2)}},
			schedule: every(80, 45*time.Millisecond, func(int) req { return req{path: "/", key: "k1"} }),
		},
		{
			name:     "30/min, burst 1 (approximate)",
			policy:   policy.Policy{Metadata: policy.Metadata{Name: "diff 30m"}, Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: tb(0.5, 1)}},
			schedule: every(9, 700*time.Millisecond, func(int) req { return req{path: "/", key: "k1"} }),
		},
		{
			name:     "burst 100 at 50/s",
			policy:   policy.Policy{Metadata: policy.Metadata{Name: "diff burst"}, Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: tb(50, 100)}},
			schedule: every(300, 4*time.Millisecond, func(int) req { return req{path: "/", key: "k1"} }),
		},
		{
			name: "leaky bucket 10/s, queue 2",
			policy: policy.Policy{Metadata: policy.Metadata{Name: "diff leaky"}, Defaults: policy.Defaults{Key: policy.KeyAPIKey,
				Limit: algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 10, Queue: 2}}},
			schedule:   every(40, 35*time.Millisecond, func(int) req { return req{path: "/", key: "k1"} }),
			concurrent: true,
		},
	}
	up := upstream(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var lossMs float64
			for _, l := range c.policy.Limits() {
				spec, _ := export.PerInstance(c.policy, l.Spec)
				_, ms := ParamFor(spec).Rate.LeakLoss()
				lossMs = max(lossMs, ms)
			}
			for attempt := 1; attempt <= 3; attempt++ {
				addr := integration.Addr(integration.FreePort(t))
				ex, err := Render(c.policy, export.Options{Upstream: up, Listen: addr})
				if err != nil {
					t.Fatal(err)
				}
				dir := runLogged(t, ex.Body)
				waitListen(t, dir, "http://"+addr)
				sendAll(t, "http://"+addr, c.schedule, c.concurrent)
				time.Sleep(50 * time.Millisecond) // let nginx write the last lines
				got := readLog(t, filepath.Join(dir, "access.log"))
				if len(got) < len(c.schedule) {
					t.Fatalf("the access log has %d of the %d requests", len(got), len(c.schedule))
				}
				rows := order(c.schedule, got, c.concurrent)
				timing, admitted := compare(t, c, enforced(t, c.policy, ex), rows, lossMs)
				if t.Failed() {
					return
				}
				want := decide(t, c.policy, c.schedule, rows, len(rows)-1, make([]time.Duration, len(rows)))
				policyAdmitted := 0
				for _, ok := range want {
					if ok {
						policyAdmitted++
					}
				}
				rejected := len(rows) - admitted
				t.Logf("attempt %d: nginx admitted %d of %d (the policy with its costs: %d), %d timing disagreements", attempt, admitted, len(rows), policyAdmitted, timing)
				if rejected == 0 || admitted == 0 {
					t.Fatalf("nginx admitted %d of %d: the schedule must both pass and reject to test anything", admitted, len(rows))
				}
				if c.check != nil {
					c.check(t, admitted, policyAdmitted)
				}
				if timing <= maxTiming {
					return
				}
			}
			t.Errorf("3 attempts, each with more than %d disagreements within 2 ms of a refill", maxTiming)
		})
	}
}

// TestNginxTwoExportsLive: two policies' exports in one nginx: each limits
// on its own address with its own zones (no "already bound" names).
func TestNginxTwoExportsLive(t *testing.T) {
	up := upstream(t)
	mk := func(name string, burst int64) policy.Policy {
		return policy.Policy{
			Metadata:  policy.Metadata{Name: name},
			Defaults:  policy.Defaults{Key: policy.KeyAPIKey, Limit: slow(burst)},
			Tiers:     []policy.Tier{{Name: "paid", Limit: slow(1)}},
			Endpoints: []policy.Endpoint{{Match: policy.Match{Method: "GET", Path: "/v1/items/{id}"}, Limit: slow(burst)}},
			Global:    policy.Global{Limit: slow(10)},
		}
	}
	// "a b" and "a_b" are the same to policy.Ident.
	tests := []struct {
		p    policy.Policy
		addr string
	}{{p: mk("a b", 1)}, {p: mk("a_b", 2)}}
	var bodies [][]byte
	for i := range tests {
		tests[i].addr = integration.Addr(integration.FreePort(t))
		ex, err := Render(tests[i].p, export.Options{Upstream: up, Listen: tests[i].addr})
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, ex.Body)
	}
	dir := runLogged(t, bodies...)
	for _, tt := range tests {
		waitListen(t, dir, "http://"+tt.addr)
	}
	for _, tt := range tests {
		// The same key on both: each policy counts it apart, as its engine does.
		var rs []req
		for range 4 {
			rs = append(rs, req{method: "GET", path: "/v1/items/1", key: "k"})
		}
		e, err := engine.New(tt.p)
		if err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Timeout: 3 * time.Second}
		for i, r := range rs {
			hr, _ := http.NewRequest(r.method, "http://"+tt.addr+r.path, nil)
			hr.Header.Set("X-API-Key", r.key)
			resp, err := client.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := e.Decide(engine.Request{At: time.Duration(i) * time.Millisecond, Key: r.key, Method: r.method, Path: r.path}).Allowed
			if got := resp.StatusCode == http.StatusOK; got != want {
				t.Errorf("%s request %d: nginx %d, the engine admitted=%v", tt.p.Metadata.Name, i, resp.StatusCode, want)
			}
		}
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "error.log")); strings.Contains(string(log), "emerg") {
		t.Errorf("nginx error log:\n%s", log)
	}
}
