package haproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// The differential suite runs timed schedules through real HAProxy and
// compares every decision with the prediction, computed from the times
// HAProxy itself logged for each request:
//
//   - which limits apply and the cost (the composition rule, exact in the
//     file) come from package engine's Match;
//   - each limit's arithmetic (approximate in the file) from the Counter
//     model of HAProxy's frequency counter: admitted when no applicable
//     counter's estimate plus the cost is over its limit, then every one
//     of them charged.
//
// HAProxy's clock (now_ms, which the counters read) and the date it logs
// (date(0,us)) tick together but may round a millisecond apart, and the
// model cannot know which even millisecond HAProxy started a period on. So
// a mismatch on a request whose predicted decision changes when its time
// moves by 2 ms either way counts as timing: the model takes HAProxy's
// decision there and goes on. More than maxTiming of them runs the case
// again, at most three times.
//
// A mismatch that no 2 ms shift explains (systematic) also runs the case
// again: on a loaded machine an earlier request's clock may lag by more
// than the slack, which moves the period a counter started and so every
// later estimate. The schedule is the same in every attempt, so a model
// that is wrong fails all three; a systematic mismatch in every attempt
// fails the case.
//
// HAProxy runs one thread here: its counters read the clock shared by the
// threads (global_now_ms) while date(0,us) is the thread's own, and with
// more threads the two drift apart by however long the other thread last
// ran, which would be noise in a comparison of the arithmetic.

// logEdit makes HAProxy log, for each request, the X-Ratelab-Seq header,
// its clock when the rules ran (µs) and the status, to standard output.
func logEdit(body []byte) []byte {
	s := string(body)
	s = strings.Replace(s, "\nglobal\n", "\nglobal\n    nbthread 1\n    log stdout format raw local0\n", 1)
	s = strings.Replace(s, "\ndefaults\n", "\ndefaults\n    log global\n", 1)
	i := strings.Index(s, "\nfrontend ratelab\n")
	j := i + len("\nfrontend ratelab\n") + strings.Index(s[i+len("\nfrontend ratelab\n"):], "\n") + 1
	return []byte(s[:j] +
		"    log-format \"ratelab-log %[var(txn.test_seq)] %[var(txn.test_at)] %ST\"\n" +
		"    http-request set-var(txn.test_at) date(0,us)\n" +
		"    http-request set-var(txn.test_seq) req.hdr(x-ratelab-seq)\n" +
		s[j:])
}

// probe is one request of a schedule: when to send it since the start,
// and what.
type probe struct {
	at           time.Duration
	method, path string
	key, tier    string
}

// request is the probe as the engine sees it at HAProxy's time at: the
// path without the query.
func (pr probe) request(at time.Duration) engine.Request {
	path, _, _ := strings.Cut(pr.path, "?")
	return engine.Request{At: at, Key: pr.key, Tier: pr.tier, Method: pr.method, Path: path}
}

// logged is what HAProxy logged of one request.
type logged struct {
	at     time.Duration // HAProxy's date, since the schedule's first request
	status int
}

// sendSchedule sends the probes one after the other, each not before its
// time (pacing only: what counts is the time HAProxy logs), numbered by
// X-Ratelab-Seq, after a warm-up request that opens the connection and
// finds HAProxy in its event loop. The warm-up is probe 0, so that the
// prediction counts it too (a global limit does). At most 300 requests
// and 15 s.
func sendSchedule(t *testing.T, url string, probes []probe) {
	t.Helper()
	if len(probes) > 300 {
		t.Fatalf("schedule: %d requests, at most 300", len(probes))
	}
	client := &http.Client{Timeout: 3 * time.Second}
	start := time.Now()
	for i, pr := range probes {
		if time.Since(start) > 15*time.Second {
			t.Fatal("schedule: over 15 s")
		}
		if d := pr.at - time.Since(start); d > 0 {
			time.Sleep(d)
		}
		req, err := http.NewRequest(pr.method, url+pr.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Ratelab-Seq", strconv.Itoa(i))
		if pr.key != "" {
			req.Header.Set("X-API-Key", pr.key)
		}
		if pr.tier != "" {
			req.Header.Set("X-Tier", pr.tier)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
}

// readLog waits up to 3 s for the log lines of n requests and returns
// them by sequence number, times from the first request's.
func readLog(t *testing.T, path string, n int) []logged {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		out, ok := parseLog(t, path, n)
		if ok {
			return out
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(path)
			t.Fatalf("HAProxy logged fewer than %d requests:\n%s", n, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func parseLog(t *testing.T, path string, n int) ([]logged, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	us := make([]int64, n)
	out := make([]logged, n)
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "ratelab-log" || f[1] == "-" {
			continue
		}
		seq, err1 := strconv.Atoi(f[1])
		at, err2 := strconv.ParseInt(f[2], 10, 64)
		status, err3 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || err3 != nil || seq < 0 || seq >= n {
			t.Fatalf("log line %q: want ratelab-log <seq> <µs> <status>", sc.Text())
		}
		if out[seq].status == 0 {
			seen++
		}
		us[seq], out[seq].status = at, status
	}
	if seen < n {
		return nil, false
	}
	for i := range out {
		out[i].at = time.Duration(us[i]-us[0]) * time.Microsecond
	}
	return out, true
}

// counterModel predicts the file's decisions: the engine's Match for what
// applies, a Counter per limit for the arithmetic.
type counterModel struct {
	eng      *engine.Engine
	counters []Counter // by index in eng.Limits()
	meters   map[string]*Meter
}

func newCounterModel(t *testing.T, p policy.Policy) *counterModel {
	t.Helper()
	eng, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	m := &counterModel{eng: eng, meters: map[string]*Meter{}}
	for _, l := range eng.Limits() {
		c, ok := CounterFor(l.Spec)
		if !ok {
			t.Fatalf("%s: not expressible: %s", l.Field, c.Why)
		}
		m.counters = append(m.counters, c)
	}
	return m
}

func (m *counterModel) meter(i int, key string) *Meter {
	if m.eng.Limits()[i].Scope == policy.ScopeGlobal {
		key = ""
	}
	k := fmt.Sprintf("%d/%s", i, key)
	if m.meters[k] == nil {
		m.meters[k] = &Meter{}
	}
	return m.meters[k]
}

// decide is the file's decision for q at q.At, charging when admitted
// and commit is set.
func (m *counterModel) decide(q engine.Request, commit bool) bool {
	a := m.eng.Match(q)
	for _, i := range a.Limits[:a.N] {
		if m.counters[i].Over(*m.meter(i, q.Key), q.At, a.Cost) {
			return false
		}
	}
	if commit {
		for _, i := range a.Limits[:a.N] {
			m.counters[i].Charge(m.meter(i, q.Key), q.At, a.Cost)
		}
	}
	return true
}

// charge counts q on every limit that applies to it, as HAProxy does
// for a request it admitted.
func (m *counterModel) charge(q engine.Request) {
	a := m.eng.Match(q)
	for _, i := range a.Limits[:a.N] {
		m.counters[i].Charge(m.meter(i, q.Key), q.At, a.Cost)
	}
}

// explain is what the model reads for q: each applicable limit's
// estimate against its limit, and the cost.
func (m *counterModel) explain(q engine.Request) string {
	a := m.eng.Match(q)
	var b strings.Builder
	fmt.Fprintf(&b, "cost %d", a.Cost)
	for _, i := range a.Limits[:a.N] {
		c := m.counters[i]
		fmt.Fprintf(&b, "; %s %s: estimate %d", m.eng.Limits()[i].Name, c.To(), c.Estimate(*m.meter(i, q.Key), q.At))
	}
	return b.String()
}

// timingSlack is how far HAProxy's counter clock and its logged date may
// be apart, with the period start's rounding to an even millisecond.
const timingSlack = 2 * time.Millisecond

// maxTiming is how many timing disagreements one run may have: a loaded
// machine delays HAProxy's clock updates against its logged date now and
// then, but a model that is off near every boundary has many.
const maxTiming = 3

// mismatch is a decision HAProxy made that the model did not predict;
// timing is set when the prediction changes within timingSlack.
type mismatch struct {
	i      int
	want   bool
	timing bool
	why    string // what the model read
}

// compare predicts each logged request. A disagreement within
// timingSlack of a boundary (timing) is noted and the model follows
// HAProxy's decision, charging only when HAProxy admitted, so one
// ambiguous instant does not throw the rest of the run off; compare
// returns those, and the first other disagreement (systematic) with
// whatever timing ones came before it.
func compare(t *testing.T, p policy.Policy, probes []probe, got []logged) (timing []mismatch, systematic *mismatch) {
	t.Helper()
	m := newCounterModel(t, p)
	code := p.Defaults.Response.Code()
	for i, pr := range probes {
		q := pr.request(got[i].at)
		want := m.decide(q, false)
		early, late := q, q
		early.At -= timingSlack
		late.At += timingSlack
		near := m.decide(early, false) != want || m.decide(late, false) != want
		why := m.explain(q)
		switch {
		case got[i].status == http.StatusOK && want, got[i].status == code && !want:
			m.decide(q, true)
		case got[i].status != http.StatusOK && got[i].status != code:
			t.Fatalf("request %d: status %d, want 200 or %d", i, got[i].status, code)
		case near:
			timing = append(timing, mismatch{i: i, want: want, timing: true, why: why})
			if got[i].status == http.StatusOK {
				m.charge(q)
			}
		default:
			return timing, &mismatch{i: i, want: want, why: why}
		}
	}
	return timing, nil
}

// differentialCase is one policy and a schedule.
type differentialCase struct {
	name   string
	policy policy.Policy
	probes []probe
	// bound, when set, also checks the logged decisions against the
	// engine within what the mapping's Why states.
	bound func(t *testing.T, p policy.Policy, probes []probe, got []logged)
}

// every is n probes of the template from start, one per gap.
func every(n int, start, gap time.Duration, pr probe) []probe {
	out := make([]probe, n)
	for i := range out {
		out[i] = pr
		out[i].at = start + time.Duration(i)*gap
	}
	return out
}

func get(path, key, tier string) probe {
	return probe{method: http.MethodGet, path: path, key: key, tier: tier}
}

// merge is the probes of all schedules, by time.
func merge(schedules ...[]probe) []probe {
	var out []probe
	for _, s := range schedules {
		out = append(out, s...)
	}
	// A stable insertion sort keeps same-time probes in schedule order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].at < out[j-1].at; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func differentialCases() []differentialCase {
	ms := time.Millisecond
	tb := func(rate float64, burst int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: rate, Burst: burst}
	}
	gcra := func(rate float64, burst int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: rate, Burst: burst}
	}
	win := func(a algorithms.Name, limit int64, w time.Duration) algorithms.Spec {
		return algorithms.Spec{Algorithm: a, Limit: limit, Window: w}
	}
	one := func(name string, s algorithms.Spec) policy.Policy {
		return policy.Policy{Metadata: policy.Metadata{Name: name}, Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: s}}
	}
	return []differentialCase{
		{
			// token_bucket(4, 1) at 10/s for 3 s: the policy admits every
			// third request (250 ms ≤ 300 ms); a counter of 1 per 250 ms
			// would admit every fifth.
			name:   "token bucket burst 1",
			policy: one("burst-1", tb(4, 1)),
			probes: every(30, 0, 100*ms, get("/v1/items", "key-1", "")),
			bound:  boundOfOne,
		},
		{
			// sliding_log(1, 400 ms) and gcra(2.5, 1) at 7/s, two keys.
			name: "limits of 1",
			policy: policy.Policy{Metadata: policy.Metadata{Name: "ones"},
				Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: win(algorithms.NameSlidingLog, 1, 400*ms)},
				Tiers:    []policy.Tier{{Name: "Slow", Limit: gcra(2.5, 1)}},
			},
			probes: merge(every(20, 3*ms, 143*ms, get("/", "a", "")), every(20, 71*ms, 143*ms, get("/", "a", "SLOW"))),
		},
		{
			// Tiers by header in mixed case, limits 1, 2, 10 and 100:
			// each tier's own table; an unknown tier and none get the
			// default.
			name: "tiers",
			policy: policy.Policy{Metadata: policy.Metadata{Name: "tiers"},
				Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: gcra(5, 2)},
				Tiers: []policy.Tier{
					{Name: "free", Limit: win(algorithms.NameFixedWindow, 1, 600*ms)},
					{Name: "Paid", Limit: win(algorithms.NameSlidingWindow, 10, time.Second)},
					{Name: "bulk", Limit: tb(50, 100)},
				},
			},
			probes: merge(
				every(12, 0, 130*ms, get("/", "k", "FREE")),
				every(12, 20*ms, 130*ms, get("/", "k", "free")),
				every(20, 40*ms, 77*ms, get("/", "k", "PAID")),
				every(20, 60*ms, 77*ms, get("/", "k", "paid")),
				every(15, 10*ms, 110*ms, get("/", "k", "")),
				every(10, 30*ms, 160*ms, get("/", "k", "Gold")),
				every(120, 1600*ms, 2*ms, get("/", "k", "BuLk")),
			),
		},
		{
			// Overlapping and templated endpoints with costs, a
			// lower-case method, paths of the wrong depth, two keys and a
			// global limit of 100.
			name: "endpoints and global",
			policy: policy.Policy{Metadata: policy.Metadata{Name: "routes"},
				Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: tb(25, 10)},
				Endpoints: []policy.Endpoint{
					{Match: policy.Match{Method: "GET", Path: "/v1/items/{id}"}, Cost: 2, Limit: win(algorithms.NameSlidingWindow, 10, time.Second)},
					{Match: policy.Match{Method: "GET", Path: "/v1/items/special"}, Cost: 4, Limit: win(algorithms.NameSlidingWindow, 4, time.Second)},
					{Match: policy.Match{Method: "POST", Path: "/v1/items/{id}"}, Cost: 3},
					{Match: policy.Match{Method: "GET", Path: "/v1/open/{id}"}},
					{Match: policy.Match{Method: "GET", Path: "/v1/open/special"}, Cost: 5, Limit: gcra(1, 1)},
				},
				Global: policy.Global{Limit: gcra(30, 100)},
			},
			probes: func() []probe {
				paths := []probe{
					get("/v1/items/7", "", ""), get("/v1/items/special", "", ""), get("/v1/items/a/b", "", ""),
					get("/v1/items/", "", ""), {method: "POST", path: "/v1/items/9"}, {method: "get", path: "/v1/items/3"},
					get("/v1/open/special", "", ""), get("/v1/open/special?x=1", "", ""),
				}
				var out []probe
				for i := range 100 {
					pr := paths[i%len(paths)]
					pr.key = []string{"k1", "k2"}[i/len(paths)%2]
					pr.at = time.Duration(i)*23*ms + 5*ms
					out = append(out, pr)
				}
				return out
			}(),
		},
		{
			// Requests without X-API-Key among keyed ones: they pass only
			// the global limit (the engine's rule), however many come
			// from one address, on the default, a tier and an endpoint
			// with a cost; the keyed ones meet their per-client limits,
			// and all of them share the global limit, which fills.
			name: "requests without a key",
			policy: policy.Policy{Metadata: policy.Metadata{Name: "keyless"},
				Defaults:  policy.Defaults{Key: policy.KeyAPIKey, Limit: win(algorithms.NameSlidingWindow, 5, time.Second)},
				Tiers:     []policy.Tier{{Name: "paid", Limit: win(algorithms.NameSlidingWindow, 10, time.Second)}},
				Endpoints: []policy.Endpoint{{Match: policy.Match{Method: "GET", Path: "/v1/items/{id}"}, Cost: 2, Limit: win(algorithms.NameSlidingWindow, 6, time.Second)}},
				Global:    policy.Global{Limit: win(algorithms.NameSlidingWindow, 40, time.Second)},
			},
			probes: merge(
				every(57, 0, 53*ms, get("/", "", "")),
				every(31, 7*ms, 97*ms, get("/v1/items/7", "", "paid")),
				every(12, 13*ms, 251*ms, get("/", "", "Gold")),
				every(25, 19*ms, 121*ms, get("/", "k1", "")),
				every(20, 29*ms, 149*ms, get("/v1/items/8", "k2", "PAID")),
				every(15, 37*ms, 199*ms, get("/", "k2", "paid")),
			),
		},
	}
}

// boundOfOne checks a one-limit policy of 1 per I against the engine
// within the Why of CounterFor: HAProxy never admits a request the policy
// rejects after the same admitted requests, and rejects only requests the
// policy also rejects the Why's milliseconds earlier (timing slack
// included both ways).
func boundOfOne(t *testing.T, p policy.Policy, probes []probe, got []logged) {
	c, _ := CounterFor(p.Defaults.Limit)
	m := regexp.MustCompile(`at most (\d+) ms after`).FindStringSubmatch(c.Why)
	if m == nil {
		t.Fatalf("the Why %q states no bound", c.Why)
	}
	late, _ := strconv.ParseInt(m[1], 10, 64)
	var admitted []engine.Request
	admits := func(q engine.Request) bool {
		e, err := engine.New(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range admitted {
			e.Decide(a)
		}
		return e.Decide(q).Allowed
	}
	for i, pr := range probes {
		q := pr.request(got[i].at)
		if got[i].status == http.StatusOK {
			if at := q; !func() bool { at.At += timingSlack; return admits(at) }() {
				t.Errorf("request %d at %s: HAProxy admitted it, the policy would not even %s later", i, q.At, timingSlack)
			}
			admitted = append(admitted, q)
			continue
		}
		at := q
		at.At -= time.Duration(late)*time.Millisecond + timingSlack
		if admits(at) {
			t.Errorf("request %d at %s: HAProxy rejected it, the policy admits it %s earlier, more than the Why's %d ms", i, q.At, q.At-at.At, late)
		}
	}
}

// TestHAProxyDifferentialLive runs the differential suite: every decision
// equals the prediction (see the comment at the top of this file).
func TestHAProxyDifferentialLive(t *testing.T) {
	for _, tc := range differentialCases() {
		t.Run(tc.name, func(t *testing.T) {
			warm := get("/warm-up", "warm-up", "")
			for i := range tc.probes {
				tc.probes[i].at += 50 * time.Millisecond
			}
			tc.probes = append([]probe{warm}, tc.probes...)
			if _, err := Render(tc.policy, export.Options{}); err != nil {
				t.Fatal(err)
			}
			for attempt := 1; ; attempt++ {
				addr, _ := upstream(t)
				url, logPath := startHAProxyWith(t, tc.policy, addr, logEdit)
				sendSchedule(t, url, tc.probes)
				got := readLog(t, logPath, len(tc.probes))
				timing, sys := compare(t, tc.policy, tc.probes, got)
				describe := func(mm mismatch) string {
					pr := tc.probes[mm.i]
					return fmt.Sprintf("request %d (%s %s, key %q, tier %q) at %s: HAProxy %d, the model admits=%v (%s)",
						mm.i, pr.method, pr.path, pr.key, pr.tier, got[mm.i].at, got[mm.i].status, mm.want, mm.why)
				}
				for _, mm := range timing {
					t.Logf("attempt %d: timing (within %s of a boundary), the model follows HAProxy: %s", attempt, timingSlack, describe(mm))
				}
				if sys != nil {
					if attempt == 3 {
						t.Fatalf("a systematic mismatch in each of 3 attempts, the last: %s", describe(*sys))
					}
					t.Logf("attempt %d: systematic mismatch: %s; running again", attempt, describe(*sys))
					continue
				}
				if len(timing) <= maxTiming {
					admitted := 0
					for _, g := range got {
						if g.status == http.StatusOK {
							admitted++
						}
					}
					t.Logf("attempt %d: %d of %d decisions as predicted, %d within %s of a boundary (%d admitted)",
						attempt, len(got)-len(timing), len(got), len(timing), timingSlack, admitted)
					if tc.bound != nil {
						tc.bound(t, tc.policy, tc.probes, got)
					}
					return
				}
				if attempt == 3 {
					t.Fatalf("%d timing disagreements in each of 3 attempts, more than %d", len(timing), maxTiming)
				}
				msg := fmt.Sprintf("%d timing disagreements, more than %d", len(timing), maxTiming)
				t.Logf("attempt %d: %s; running again", attempt, msg)
			}
		})
	}
}
