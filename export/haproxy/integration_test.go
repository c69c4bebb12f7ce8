package haproxy

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/internal/integration"
	"github.com/ratelab/ratelab/policy"
)

// oddPolicy has names HAProxy must quote, two endpoints on one path,
// every key and a cost.
func oddPolicy() policy.Policy {
	return policy.Policy{
		Metadata: policy.Metadata{Name: "odd names"},
		Defaults: policy.Defaults{Key: policy.KeyAccount, Limit: algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 5, Burst: 1}},
		Tiers: []policy.Tier{
			{Name: `it's "$HOME" {x}`, Key: policy.KeyIP},
			{Name: "-i"}, {Name: "pa-id"}, {Name: "pa id"},
		},
		Endpoints: []policy.Endpoint{
			{Match: policy.Match{Method: "GET", Path: `/a "b" #c`}, Cost: 3, Limit: algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 1, Burst: 2}},
			{Match: policy.Match{Method: "POST", Path: `/a "b" #c`}, Limit: algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2, Queue: 0}},
			{Match: policy.Match{Method: "GET", Path: "/v1/it's(x)+$y/{id}/z%20w/{n}"}, Cost: 2, Limit: algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 1, Burst: 2}},
		},
		Global: policy.Global{Limit: algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 50, Window: time.Second}},
	}
}

// TestHAProxyAcceptsEveryPolicy runs haproxy -c on the export of every
// test policy: the real parser checks tables, ACLs, fetches, converters,
// actions and the number of stick counters.
func TestHAProxyAcceptsEveryPolicy(t *testing.T) {
	bin := integration.Need(t, "haproxy", "haproxy")
	cases := exporttest.Policies(t)
	cases = append(cases, exporttest.Policy{Name: "odd-names", Policy: oddPolicy()}, exporttest.Policy{Name: "hostile-text", Policy: exporttest.Hostile(t)})
	for _, tp := range cases {
		t.Run(tp.Name, func(t *testing.T) {
			ex, err := Render(tp.Policy, export.Options{Listen: "127.0.0.1:8080"})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), ex.Filename)
			if err := os.WriteFile(path, ex.Body, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Configuration file is valid") {
				t.Fatalf("haproxy -c: %v\n%s\n--- export ---\n%s", err, out, ex.Body)
			}
			if strings.Contains(string(out), "WARNING") {
				t.Errorf("haproxy -c warns:\n%s", out)
			}
		})
	}
}

// startHAProxy runs HAProxy in the foreground with the export on a free
// loopback port until the test ends, and returns its base URL.
func startHAProxy(t *testing.T, p policy.Policy, upstream string) string {
	t.Helper()
	url, _ := startHAProxyWith(t, p, upstream, nil)
	return url
}

// startHAProxyWith is startHAProxy with the config passed through edit
// (nil: as exported); it also returns the file HAProxy's standard output
// and error go to.
func startHAProxyWith(t *testing.T, p policy.Policy, upstream string, edit func([]byte) []byte) (url, logPath string) {
	t.Helper()
	bin := integration.Need(t, "haproxy", "haproxy")
	var out string
	for range 3 {
		addr := integration.Addr(integration.FreePort(t))
		ex, err := Render(p, export.Options{Upstream: upstream, Listen: addr})
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			ex.Body = edit(ex.Body)
		}
		dir := t.TempDir()
		cfg := filepath.Join(dir, ex.Filename)
		if err := os.WriteFile(cfg, ex.Body, 0o644); err != nil {
			t.Fatal(err)
		}
		logf, err := os.Create(filepath.Join(dir, "haproxy.log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-db", "-f", cfg)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); logf.Close(); close(exited) }()
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-exited
			}
		})
		if ready(addr, exited) {
			t.Cleanup(func() {
				if t.Failed() {
					b, _ := os.ReadFile(filepath.Join(dir, "haproxy.log"))
					t.Logf("haproxy output:\n%s\n--- export ---\n%s", b, ex.Body)
				}
			})
			return "http://" + addr, filepath.Join(dir, "haproxy.log")
		}
		b, _ := os.ReadFile(filepath.Join(dir, "haproxy.log"))
		out = string(b)
	}
	t.Fatalf("haproxy did not start:\n%s", out)
	return "", ""
}

// ready waits up to 5 s for addr to accept connections; false if the
// process exited first.
func ready(addr string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// recorder is the protected service: it answers 200 and keeps the
// X-RateLimit-Would-Reject header of each request it receives.
type recorder struct {
	mu     sync.Mutex
	marked []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == "/warm-up" {
		return
	}
	r.mu.Lock()
	r.marked = append(r.marked, req.Header.Get("X-RateLimit-Would-Reject"))
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func upstream(t *testing.T) (string, *recorder) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), rec
}

// shot is one request of a replay: when it was sent since the replay's
// start, and the status.
type shot struct {
	at     time.Duration
	status int
	header http.Header
}

// replay sends GET path with the API key, one request per schedule entry,
// each not before its time, and records when each was really sent. At
// most 100 requests and 20 s.
func replay(t *testing.T, url, path string, schedule []time.Duration) []shot {
	t.Helper()
	if len(schedule) > 100 {
		t.Fatalf("replay: %d requests, at most 100", len(schedule))
	}
	client := &http.Client{Timeout: 3 * time.Second}
	// Warm up with a key of its own, so that the timed requests find
	// HAProxy in its event loop and the connection open: the first request
	// after start-up can wait 100 ms, and it starts the key's period.
	if resp, err := client.Get(url + "/warm-up"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	start := time.Now()
	var out []shot
	for _, at := range schedule {
		if time.Since(start) > 20*time.Second {
			t.Fatal("replay: over 20 s")
		}
		if d := at - time.Since(start); d > 0 {
			time.Sleep(d) // pacing, not an assertion
		}
		req, err := http.NewRequest(http.MethodGet, url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-API-Key", "key-1")
		sent := time.Since(start)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		out = append(out, shot{at: sent, status: resp.StatusCode, header: resp.Header})
	}
	return out
}

// haproxyModel is how many of the requests at times the file admits with
// a counter of limit per window (Counter's model of HAProxy's frequency
// counter), counting only admitted requests — or, with countRejected,
// every request, as http_req_rate would.
func haproxyModel(limit int64, window time.Duration, times []time.Duration, countRejected bool) (admitted int) {
	c := Counter{Limit: limit, Period: window}
	var m Meter
	for _, at := range times {
		ok := !c.Over(m, at, 1)
		if ok {
			admitted++
		}
		if ok || countRejected {
			c.Charge(&m, at, 1)
		}
	}
	return admitted
}

// TestHAProxySlidingWindowLive replays an overload on real HAProxy with
// sliding_window(limit=10, window=2s) per API key and compares what it
// admits with ratelab's sliding window, and with a model of HAProxy's
// counter, over the same send times.
//
// Schedule: one request at 0, then 10/s — five times the limit's 10 per
// 2 s — at 0.05 + 0.1k s for 5.4 s (55 more). Times are measured from the
// first request, where HAProxy starts the key's first period (within a
// millisecond or two); they stay 50 ms away from the period edges (2 s,
// 4 s) and from the moments the previous period's weight crosses a whole
// request (every W/prev = 0.2 s from the edge), so HAProxy's and the
// test's clocks can differ by a few milliseconds without changing a
// decision.
//
// Predictions and tolerances:
//   - the model of HAProxy's counter (truncated weight, periods from the
//     first request, admitted requests counted): within 1;
//   - ratelab's sliding_window (weight rounded up, periods at multiples
//     of W from 0 — the same here): HAProxy may admit one request per
//     period earlier, so within 3, the periods the run touches;
//   - counting rejected requests matters here: with every request
//     counted (what http_req_rate does), 10/s keeps the estimate near 20
//     and almost nothing passes after the first period. The file counts
//     admitted requests only, so HAProxy must admit far more than that
//     model (at least 10 more).
func TestHAProxySlidingWindowLive(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 10, Window: 2 * time.Second}
	p := policy.Policy{Metadata: policy.Metadata{Name: "live"}, Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: spec}}
	addr, _ := upstream(t)
	url := startHAProxy(t, p, addr)

	schedule := []time.Duration{0}
	for k := range 55 {
		schedule = append(schedule, 50*time.Millisecond+time.Duration(k)*100*time.Millisecond)
	}
	shots := replay(t, url, "/v1/items", schedule)
	times := make([]time.Duration, len(shots))
	got := 0
	for i, s := range shots {
		times[i] = s.at - shots[0].at
		switch s.status {
		case http.StatusOK:
			got++
		case http.StatusTooManyRequests:
			// ⌈2 s / 10⌉ = 1 s; the limit as 10 per 2 s.
			if ra, rp := s.header.Get("Retry-After"), s.header.Get("RateLimit-Policy"); ra != "1" || rp != `"default";q=10;w=2` {
				t.Errorf("request %d: Retry-After %q, RateLimit-Policy %q; want 1 and \"default\";q=10;w=2", i, ra, rp)
			}
		default:
			t.Fatalf("request %d: status %d, want 200 or 429", i, s.status)
		}
	}
	lim, err := algorithms.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	ratelab := 0
	for _, at := range times {
		if lim.Allow("k", at, 1).Allowed {
			ratelab++
		}
	}
	model := haproxyModel(spec.Limit, spec.Window, times, false)
	counted := haproxyModel(spec.Limit, spec.Window, times, true)
	t.Logf("HAProxy admitted %d of %d; its counter model %d, ratelab's sliding_window %d, counting rejected requests %d", got, len(shots), model, ratelab, counted)
	if d := got - model; d < -1 || d > 1 {
		t.Errorf("HAProxy admitted %d, the model of its counter %d: more than 1 apart", got, model)
	}
	if d := got - ratelab; d < -3 || d > 3 {
		t.Errorf("HAProxy admitted %d, ratelab's sliding_window %d: more than 3 apart", got, ratelab)
	}
	if got < counted+10 {
		t.Errorf("HAProxy admitted %d, only %d more than if rejected requests counted (%d): are rejections counted?", got, got-counted, counted)
	}
}

// TestHAProxyCostLive: a GET /report costs 3 against 10 per 10 s. Three
// pass (9), the fourth is rejected (9 + 3 > 10) and not counted, and a
// cost-1 request still fits (9 + 1 = 10), after which nothing fits. All
// within milliseconds of a 10 s period, so no timing enters.
func TestHAProxyCostLive(t *testing.T) {
	p := policy.Policy{
		Metadata:  policy.Metadata{Name: "cost"},
		Defaults:  policy.Defaults{Key: policy.KeyAPIKey, Limit: algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 10, Window: 10 * time.Second}},
		Endpoints: []policy.Endpoint{{Match: policy.Match{Method: "GET", Path: "/report"}, Cost: 3}},
	}
	addr, _ := upstream(t)
	url := startHAProxy(t, p, addr)
	steps := []struct {
		path string
		want int
	}{
		{"/report", 200}, {"/report", 200}, {"/report", 200}, {"/report", 429}, {"/other", 200}, {"/other", 429},
	}
	// The same through ratelab's limiter: cost 3, 3, 3, 3, 1, 1.
	lim, _ := algorithms.New(p.Defaults.Limit)
	for i, st := range steps {
		shots := replay(t, url, st.path, []time.Duration{0})
		cost := int64(1)
		if st.path == "/report" {
			cost = 3
		}
		pred := lim.Allow("k", 0, cost).Allowed
		if shots[0].status != st.want || pred != (st.want == 200) {
			t.Errorf("step %d %s: HAProxy %d, ratelab allowed=%v; want %d", i, st.path, shots[0].status, pred, st.want)
		}
	}
}

// TestHAProxyShadowLive: in shadow mode HAProxy forwards every request,
// and those the limit would reject reach the service marked with the
// limit's name — exactly the ones the enforcing model rejects (10 back to
// back against 3 per 10 s: 3 unmarked, 7 marked).
func TestHAProxyShadowLive(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 3, Window: 10 * time.Second}
	p := policy.Policy{Metadata: policy.Metadata{Name: "shadow"}, Defaults: policy.Defaults{Key: policy.KeyAPIKey, Mode: policy.ModeShadow, Limit: spec}}
	addr, rec := upstream(t)
	url := startHAProxy(t, p, addr)
	shots := replay(t, url, "/v1/items", make([]time.Duration, 10))
	lim, _ := algorithms.New(spec)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.marked) != len(shots) {
		t.Fatalf("the service saw %d requests, want all %d", len(rec.marked), len(shots))
	}
	for i, s := range shots {
		if s.status != http.StatusOK {
			t.Errorf("request %d: status %d in shadow mode, want 200", i, s.status)
		}
		want := ""
		if !lim.Allow("k", 0, 1).Allowed {
			want = "default"
		}
		if rec.marked[i] != want {
			t.Errorf("request %d: X-RateLimit-Would-Reject %q, want %q", i, rec.marked[i], want)
		}
	}
}

// TestHAProxyTierLive: a tier whose name needs quoting is selected by the
// tier header, case-blind, and counts apart from the default limit; a
// tier the policy does not know gets the default limit.
func TestHAProxyTierLive(t *testing.T) {
	tier := `It's "$HOME" {x}`
	p := policy.Policy{
		Metadata: policy.Metadata{Name: "tiers"},
		Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: window(2)},
		Tiers:    []policy.Tier{{Name: tier, Key: policy.KeyIP, Limit: window(1)}},
	}
	addr, _ := upstream(t)
	url := startHAProxy(t, p, addr)
	const rp = "RateLimit-Policy" // sent on rejections only
	exporttest.Send(t, url, []exporttest.Step{
		{Key: "key-1", Tier: strings.ToLower(tier), Want: 200, Header: rp},
		{Key: "key-1", Tier: tier, Want: 429, Header: rp, Value: `"tier_it_s___home___x_";q=1;w=10`},
		{Key: "key-1", Want: 200, Header: rp}, // the default limit: 2 per 10 s of its own
		{Key: "key-1", Tier: "unknown", Want: 200, Header: rp},
		{Key: "key-1", Want: 429, Header: rp, Value: `"default";q=2;w=10`},
	})
}

// window is a sliding window of l requests per 10 s.
func window(l int64) algorithms.Spec {
	return algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: l, Window: 10 * time.Second}
}

// TestHAProxyEndpointLive: exporttest.EndpointRouting on HAProxy: the
// endpoint on a template path is a regular expression, the exact one a
// string match.
func TestHAProxyEndpointLive(t *testing.T) {
	p, steps := exporttest.EndpointRouting(window)
	exporttest.Expect(t, p, steps)
	addr, _ := upstream(t)
	exporttest.Send(t, startHAProxy(t, p, addr), steps)
}

// TestHAProxyGlobalLive: the global limit counts all clients together: 2
// per 10 s shared by three API keys.
func TestHAProxyGlobalLive(t *testing.T) {
	p, steps := exporttest.GlobalRouting(window)
	exporttest.Expect(t, p, steps)
	addr, _ := upstream(t)
	exporttest.Send(t, startHAProxy(t, p, addr), steps)
}
