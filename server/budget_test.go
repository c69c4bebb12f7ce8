package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/design"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/views"
)

const gcraLimiter = `"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}`

// arrivalStream is a simulate body of n copies of one arrival, made as it
// is read, that counts what the server read of it.
type arrivalStream struct {
	head, item, tail string
	n                int
	sent             int
	pending          []byte
	read             int64
}

func newArrivalStream(n int, item string) *arrivalStream {
	return &arrivalStream{head: `{` + gcraLimiter + `, "arrivals": [`, item: item, tail: `]}`, n: n}
}

func (s *arrivalStream) Read(p []byte) (int, error) {
	for len(s.pending) < len(p) && s.sent <= s.n {
		switch {
		case s.sent == 0 && s.pending == nil:
			s.pending = append(s.pending, s.head...)
		case s.sent < s.n:
			if s.sent > 0 {
				s.pending = append(s.pending, ',')
			}
			s.pending = append(s.pending, s.item...)
			s.sent++
			continue
		}
		if s.sent == s.n {
			s.pending = append(s.pending, s.tail...)
			s.sent++
		}
	}
	if len(s.pending) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	s.read += int64(n)
	return n, nil
}

// allocated runs f and returns the bytes it allocated on the heap (all
// goroutines; tests here run one request at a time).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func postStream(t *testing.T, e http.Handler, body io.Reader) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/simulate", body)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// A body of two million arrivals is refused at the cap, having read only
// the arrivals up to it: the rest of the body is never read, and the heap
// never holds it.
func TestSimulateAPIStopsReadingAtTheCap(t *testing.T) {
	e := newServer(config{maxArrivals: 1000})
	body := newArrivalStream(2_000_000, `{"at":0}`)
	var rec *httptest.ResponseRecorder
	alloc := allocated(func() { rec = postStream(t, e, body) })
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "cap of 1000") {
		t.Fatalf("status %d %s; want 422 naming the cap", rec.Code, rec.Body)
	}
	if body.read > 64<<10 {
		t.Errorf("the server read %d bytes of a %d-arrival body; want it to stop near the 1001st arrival", body.read, body.n)
	}
	if alloc > 8<<20 {
		t.Errorf("the request allocated %d bytes; want under 8 MiB", alloc)
	}
}

// Two million arrivals without a time (64 MiB of {}) at the default cap:
// the times are checked as they come, so the 20th problem ends the read.
func TestSimulateAPIStopsReadingAtTwentyBadArrivals(t *testing.T) {
	e := newServer(config{})
	body := newArrivalStream(2_000_000, `{}`)
	var rec *httptest.ResponseRecorder
	alloc := allocated(func() { rec = postStream(t, e, body) })
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d %s; want 422", rec.Code, rec.Body)
	}
	var got struct{ Errors []FieldProblem }
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.Errors) != maxProblems || got.Errors[19].Field != "arrivals[19].at" {
		t.Fatalf("problems %+v (%v); want the first %d arrivals' missing times", got.Errors, err, maxProblems)
	}
	if body.read > 64<<10 || alloc > 8<<20 {
		t.Errorf("read %d bytes and allocated %d; want under 64 KiB and 8 MiB", body.read, alloc)
	}
}

// A member past its bound is a 413 before the decoder holds it.
func TestSimulateAPIBoundsEachMember(t *testing.T) {
	big := `{"policy": {"metadata": {"description": "` + strings.Repeat("x", 2*policyBodyLimit) + `"}}, "arrivals": []}`
	rec := postTo(t, config{}, "/api/v1/simulate", big)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "policy") {
		t.Errorf("a policy over 256 KiB: status %d %s; want 413 naming the policy", rec.Code, rec.Body)
	}
	twice := `{` + gcraLimiter + `, ` + gcraLimiter + `, "arrivals": []}`
	if rec := postTo(t, config{}, "/api/v1/simulate", twice); rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "twice") {
		t.Errorf("a member twice: status %d %s; want 422", rec.Code, rec.Body)
	}
}

// A pattern of 8.64e15 arrivals is refused from its parameters: nothing
// is generated (Generate would have built a million arrivals first).
func TestSimulateAPIRefusesAHugePatternBeforeGenerating(t *testing.T) {
	e := newServer(config{})
	body := `{` + gcraLimiter + `, "pattern": {"name": "steady", "rate": 1000000, "duration": 86400, "clients": 100000}}`
	var rec *httptest.ResponseRecorder
	alloc := allocated(func() { rec = postStream(t, e, strings.NewReader(body)) })
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "cap of 1000000") {
		t.Fatalf("status %d %s; want 422 naming the cap", rec.Code, rec.Body)
	}
	if alloc > 1<<20 {
		t.Errorf("refusing the pattern allocated %d bytes; want under 1 MiB", alloc)
	}
}

// "decisions": false answers the summary and the series only, in both
// forms; the answer still matches the OpenAPI schema.
func TestSimulateAPIWithoutDecisions(t *testing.T) {
	bodies := map[string]string{
		"limiter": `{` + gcraLimiter + `, "pattern": {"name": "steady", "rate": 5, "duration": 10}, "decisions": false}`,
		"policy":  `{"policy": ` + tieredPolicy("enforce") + `, "pattern": {"name": "steady", "rate": 5, "duration": 10}, "decisions": false}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			rec := postTo(t, config{}, "/api/v1/simulate", body)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			validate(t, openapiSchema(t, "SimulateResponse"), rec.Body.Bytes())
			var got map[string]json.RawMessage
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			for _, m := range []string{"decisions", "arrivals"} {
				if _, ok := got[m]; ok {
					t.Errorf("the answer has %q", m)
				}
			}
			var sum struct{ Offered int64 }
			if err := json.Unmarshal(got["summary"], &sum); err != nil || sum.Offered != 50 || len(got["series"]) < 3 {
				t.Errorf("summary %s, series %s; want 50 offered and a series", got["summary"], got["series"])
			}
		})
	}
	// With decisions (the default), the same run lists all 50.
	out := simulateOK(t, config{}, `{`+gcraLimiter+`, "pattern": {"name": "steady", "rate": 5, "duration": 10}}`)
	if len(out.Decisions) != 50 || len(out.Arrivals) != 50 {
		t.Errorf("%d decisions and %d arrivals; want 50 of each", len(out.Decisions), len(out.Arrivals))
	}
}

// The API's limit charges a simulation 1 + arrivals/25000 requests: a
// 250 000-arrival run takes 11 of the burst of 40, a tiny one 1, and the
// run that the quota cannot pay for is a 429 before it is generated.
func TestSimulateAPIChargesByArrivals(t *testing.T) {
	e, _ := limitedServer(t, algorithms.NameTokenBucket, 0.001, 40)
	post := func(duration int) *httptest.ResponseRecorder {
		return from(t, e, "192.0.2.9", http.MethodPost, "/api/v1/simulate",
			fmt.Sprintf(`{%s, "pattern": {"name": "steady", "rate": 1000, "duration": %d}, "decisions": false}`, gcraLimiter, duration))
	}
	tests := []struct {
		duration   int // seconds at 1000/s
		wantStatus int
		wantLeft   string
	}{
		{1, http.StatusOK, `r=39`},               // 1000 arrivals: 1
		{250, http.StatusOK, `r=28`},             // 250 000 arrivals: 11
		{250, http.StatusOK, `r=17`},             // 11 more
		{250, http.StatusOK, `r=6`},              // 11 more
		{250, http.StatusTooManyRequests, `r=5`}, // 1 taken on arrival, 10 more do not fit
	}
	for i, tt := range tests {
		rec := post(tt.duration)
		if rec.Code != tt.wantStatus || !strings.Contains(rec.Header().Get("RateLimit"), tt.wantLeft) {
			t.Fatalf("step %d: got %d with RateLimit %q (%s); want %d with %s", i, rec.Code, rec.Header().Get("RateLimit"), rec.Body, tt.wantStatus, tt.wantLeft)
		}
	}
	rec := post(250)
	if rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "1 + arrivals/25000") {
		t.Errorf("a refused charge: Retry-After %q, body %s; want a wait and the cost rule", rec.Header().Get("Retry-After"), rec.Body)
	}
}

// heldSimulations starts n simulate requests whose bodies never finish,
// and returns once each holds its heavy slot (its handler is reading);
// release lets them end.
func heldSimulations(t *testing.T, e http.Handler, n int) (release func()) {
	t.Helper()
	var wg sync.WaitGroup
	writers := make([]*io.PipeWriter, n)
	for i := range n {
		pr, pw := io.Pipe()
		writers[i] = pw
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodPost, "/api/v1/simulate", pr)
			req.Header.Set("Content-Type", "application/json")
			// Each from its own client, within its share of the gate.
			req.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", 10+i)
			e.ServeHTTP(httptest.NewRecorder(), req)
		}()
		// The write returns once the handler has read it: the request
		// is past the gate.
		if _, err := pw.Write([]byte(`{"limiter": `)); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, pw := range writers {
			pw.Close()
		}
		wg.Wait()
	}
}

// With 32 heavy slots taken, the 33rd heavy request (a simulation, a
// designer page, an embed, an export) is a 503 with Retry-After; a light
// one is served, and once the slots are free heavy ones are again.
func TestHeavyRequestsBeyondTheCapAre503(t *testing.T) {
	e := newServer(config{maxHeavy: 32, pageCache: -1})
	release := heldSimulations(t, e, 32)
	for _, target := range []string{"/?" + embedDesign, "/embed/admitted?" + embedDesign, "/exports?" + embedDesign} {
		rec := serve(t, e, http.MethodGet, target)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("GET %s with the gate full: %d, Retry-After %q; want 503 and 1", target, rec.Code, rec.Header().Get("Retry-After"))
		}
	}
	if rec := postTo(t, config{}, "/api/v1/simulate", `{`+gcraLimiter+`, "arrivals": []}`); rec.Code != http.StatusOK {
		t.Errorf("another server's simulate: %d", rec.Code)
	}
	rec := postStream(t, e, strings.NewReader(`{`+gcraLimiter+`, "arrivals": []}`))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "retry after 1 s") {
		t.Errorf("the 33rd simulate: %d %s; want 503", rec.Code, rec.Body)
	}
	if rec := serve(t, e, http.MethodGet, "/healthz"); rec.Code != http.StatusOK {
		t.Errorf("/healthz with the gate full: %d", rec.Code)
	}
	release()
	if rec := serve(t, e, http.MethodGet, "/embed/admitted?"+embedDesign); rec.Code != http.StatusOK {
		t.Errorf("an embed after the slots are free: %d", rec.Code)
	}
}

// A million-arrival simulation wants 1 + 4 slots but a client's share is
// half the gate: 4 of 8. Another client may take the other 4; a third
// finds the gate full (503), and the first asking for more is over its
// share (429).
func TestHeavySlotsFollowArrivals(t *testing.T) {
	g := newHeavyGate(8)
	w := &work{gate: g, client: "a", slots: 1}
	g.tryAcquire("a", 1)
	if err := w.arrivals(1_000_000); err != nil || g.inUse() != 4 {
		t.Fatalf("a million arrivals: %v, %d slots in use; want 4", err, g.inUse())
	}
	if r := g.tryAcquire("b", 4); r != admitted {
		t.Fatalf("another client's 4 slots: %v", r)
	}
	if r := g.tryAcquire("c", 1); r != gateFull {
		t.Errorf("a third client with the gate full: %v, want gateFull", r)
	}
	g.release("b", 4)
	if r := g.tryAcquire("a", 1); r != clientFull {
		t.Errorf("the first client past its share: %v, want clientFull", r)
	}
	if r := g.tryAcquire("c", 4); r != admitted {
		t.Errorf("a third client once the second left: %v", r)
	}
}

// TestOneClientCannotFillTheGate: heavy pages from one client beyond its
// share of the gate are 429 with Retry-After, and another client still
// gets its page.
func TestOneClientCannotFillTheGate(t *testing.T) {
	e := newServer(config{maxHeavy: 4, pageCache: -1})
	// Two slots held by one client (the share of a gate of 4).
	var wg sync.WaitGroup
	writers := make([]*io.PipeWriter, 2)
	for i := range writers {
		pr, pw := io.Pipe()
		writers[i] = pw
		wg.Go(func() {
			req := httptest.NewRequest(http.MethodPost, "/api/v1/simulate", pr)
			req.Header.Set("Content-Type", "application/json")
			req.RemoteAddr = "192.0.2.77:1234"
			e.ServeHTTP(httptest.NewRecorder(), req)
		})
		if _, err := pw.Write([]byte(`{"limiter": `)); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/?"+embedDesign, nil)
	req.RemoteAddr = "192.0.2.77:1234"
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("a third heavy request from the same client: %d, Retry-After %q; want 429 with a wait", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := serve(t, e, http.MethodGet, "/?"+embedDesign); rec.Code != http.StatusOK {
		t.Errorf("another client's page: %d, want 200", rec.Code)
	}
	for _, pw := range writers {
		pw.Close()
	}
	wg.Wait()
}

// logLines is a JSON slog handler's output, parsed.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// request returns the "request" line of uri.
func (l *logLines) request(t *testing.T, uri string) map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(l.buf.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "request" && m["uri"] == uri {
			return m
		}
	}
	t.Fatalf("no request line for %s in:\n%s", uri, l.buf.String())
	return nil
}

func (l *logLines) has(level string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Contains(l.buf.String(), `"level":"`+level+`"`)
}

func loggedServer(cfg config) (http.Handler, *logLines) {
	logs := &logLines{}
	cfg.logger = slog.New(slog.NewJSONHandler(logs, nil))
	return newServer(cfg), logs
}

// A designer page whose client has gone stops before its simulations and
// is logged as 499 at INFO, not as a 200; one past its deadline is a 503
// at WARN.
func TestDesignerWorkStopsWithTheRequest(t *testing.T) {
	d := parseDesignQuery(embedDesign)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rv, err := d.resultsOf(ctx)
	if err != context.Canceled || len(rv.Charts) != 0 {
		t.Fatalf("results of a cancelled request: %d charts, %v; want none and context.Canceled", len(rv.Charts), err)
	}

	e, logs := loggedServer(config{pageCache: -1})
	target := "/?" + embedDesign
	req := httptest.NewRequest(http.MethodGet, target, nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Body.Len() != 0 {
		t.Errorf("a gone client got %d bytes", rec.Body.Len())
	}
	line := logs.request(t, target)
	if line["status"] != float64(statusClientClosed) || line["level"] != "INFO" || line["outcome"] != "client closed" {
		t.Errorf("log line %v; want status 499 at INFO, outcome client closed", line)
	}

	past, cancelPast := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancelPast()
	target = "/embed/admitted?" + embedDesign
	req = httptest.NewRequest(http.MethodGet, target, nil).WithContext(past)
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("past the deadline: %d, Retry-After %q; want 503 with one", rec.Code, rec.Header().Get("Retry-After"))
	}
	line = logs.request(t, target)
	if line["status"] != float64(http.StatusServiceUnavailable) || line["level"] != "WARN" || line["outcome"] != "timeout" {
		t.Errorf("log line %v; want 503 at WARN, outcome timeout", line)
	}
	if logs.has("ERROR") {
		t.Errorf("an ERROR line for load:\n%s", logs.buf.String())
	}
}

// cutBody is a request body the client abandons after some bytes.
type cutBody struct{ r io.Reader }

func (b cutBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// An upload the client cuts short is logged as client-closed (499, INFO),
// not as a server error.
func TestAbortedUploadIsClientClosed(t *testing.T) {
	e, logs := loggedServer(config{})
	for _, target := range []string{"/api/v1/simulate", "/api/v1/policy/lint", importPath} {
		body := cutBody{strings.NewReader(`{"limiter": {"algorithm": "gcra", "rate": 1, "burst": 1}, "arrivals": [{"at": 0}, {"at"`)}
		req := httptest.NewRequest(http.MethodPost, target, body)
		switch target {
		case importPath:
			req = httptest.NewRequest(http.MethodPost, target, cutBody{strings.NewReader("--b\r\nContent-Disposition: form-data; name=\"yaml\"\r\n\r\nkind: Rate")})
			req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
		case lintPath:
			req.Header.Set("Content-Type", "application/yaml")
		default:
			req.Header.Set("Content-Type", "application/json")
		}
		e.ServeHTTP(httptest.NewRecorder(), req)
		if line := logs.request(t, target); line["status"] != float64(statusClientClosed) || line["level"] != "INFO" {
			t.Errorf("%s cut short: log line %v; want status 499 at INFO", target, line)
		}
	}
	if logs.has("ERROR") {
		t.Errorf("an ERROR line for a client's abort:\n%s", logs.buf.String())
	}
}

// The cache answers a repeated embed with the same bytes without taking a
// heavy slot, and evicts the least recently used past its size.
func TestPageCache(t *testing.T) {
	e := newServer(config{maxHeavy: 1})
	target := "/embed/admitted.svg?" + embedDesign
	first := serve(t, e, http.MethodGet, target)
	if first.Code != http.StatusOK {
		t.Fatalf("first: %d %s", first.Code, first.Body)
	}
	release := heldSimulations(t, e, 1) // the only slot
	defer release()
	again := serve(t, e, http.MethodGet, target)
	if again.Code != http.StatusOK || !bytes.Equal(again.Body.Bytes(), first.Body.Bytes()) || again.Header().Get("ETag") != first.Header().Get("ETag") {
		t.Errorf("a hit with the gate full: %d, same bytes %t; want 200 and the same bytes", again.Code, bytes.Equal(again.Body.Bytes(), first.Body.Bytes()))
	}
	// The same design spelled differently is the same entry.
	if rec := serve(t, e, http.MethodGet, "/embed/admitted.svg?pattern=idle_then_burst&p99=3&clients=20&capacity=500"); rec.Code != http.StatusOK {
		t.Errorf("the canonical design's entry: %d (a miss would need the full gate)", rec.Code)
	}
	if rec := serve(t, e, http.MethodGet, "/embed/admitted.svg?"+embedDesign+"&theme=dark"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("another theme is another render: %d; want 503 with the gate full", rec.Code)
	}

	pc := newPageCache(8 * 1000)
	body := func(b byte) []byte { return bytes.Repeat([]byte{b}, 1000-pageEntryOverhead-1-len("image/svg+xml")) }
	for _, k := range "abcdefgh" {
		pc.put(string(k), rendered{contentType: "image/svg+xml", body: body(byte(k))})
	}
	if n, size, _, _ := pc.stats(); n != 8 || size != 8000 {
		t.Fatalf("8 entries of 1000 bytes: %d entries, %d bytes", n, size)
	}
	pc.get("a") // a is now the most recently used, b the least
	pc.put("i", rendered{contentType: "image/svg+xml", body: body('i')})
	if _, ok := pc.get("b"); ok {
		t.Error("b, the least recently used, was kept past the bound")
	}
	if r, ok := pc.get("a"); !ok || !bytes.Equal(r.body, body('a')) {
		t.Error("a, recently used, was evicted or changed")
	}
	pc.put("huge", rendered{body: make([]byte, 2000)})
	if _, ok := pc.get("huge"); ok {
		t.Error("an entry over an eighth of the cache was kept")
	}
	if n, size, hits, _ := pc.stats(); n != 8 || size > 8000 || hits != 2 {
		t.Errorf("%d entries, %d bytes, %d hits; want 8, at most 8000, 2", n, size, hits)
	}
}

// longDesign is a valid design whose canonical URL is over 4 KiB: forty
// endpoints with long paths.
func longDesign(t *testing.T) string {
	t.Helper()
	p, probs := parseDesignQuery(embedDesign).policy()
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	for i := range 40 {
		p.Endpoints = append(p.Endpoints, policy.Endpoint{
			Match: policy.Match{Method: "GET", Path: fmt.Sprintf("/v1/organisations/{org}/projects/{project}/reports/%d/{id}", i)}, Cost: 2})
	}
	q := design.FromPolicy(p, algorithms.DefaultPattern(algorithms.PatternIdleThenBurst)).Query()
	if len(q) <= 4096 {
		t.Fatalf("the long design is %d bytes; want over 4 KiB", len(q))
	}
	if probs := parseDesignQuery(q).designProblems(); len(probs) > 0 {
		t.Fatalf("the long design has problems: %v", probs)
	}
	return q
}

// headerBytes is the size of a response's header block.
func headerBytes(h http.Header) int {
	var buf bytes.Buffer
	h.Write(&buf)
	return buf.Len()
}

// Headers stay under nginx's 4 KiB proxy buffer: a long design has no
// HX-Push-Url, and /import renders its page instead of a Location.
func TestHeadersStayUnder4KiB(t *testing.T) {
	long := longDesign(t)
	e := newServer(config{})
	for _, target := range []string{resultsPath + "?" + long, "/?" + long} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("HX-Request", "true")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || rec.Header().Get("HX-Push-Url") != "" || headerBytes(rec.Header()) > 4096 {
			t.Errorf("GET %.40s…: %d, HX-Push-Url %d bytes, headers %d bytes; want 200, none, under 4 KiB",
				target, rec.Code, len(rec.Header().Get("HX-Push-Url")), headerBytes(rec.Header()))
		}
	}
	short := httptest.NewRequest(http.MethodGet, resultsPath+"?"+embedDesign, nil)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, short)
	if got := rec.Header().Get("HX-Push-Url"); !strings.HasPrefix(got, "/?") {
		t.Errorf("a short design's HX-Push-Url %q; want its canonical URL", got)
	}

	p, _ := parseDesignQuery(long).policy()
	var yaml bytes.Buffer
	if err := policy.Encode(&yaml, p); err != nil {
		t.Fatal(err)
	}
	rec = postForm(t, e, importPath, "yaml", yaml.String())
	if rec.Code != http.StatusOK || rec.Header().Get("Location") != "" || headerBytes(rec.Header()) > 4096 {
		t.Fatalf("import of a long design: %d, Location %d bytes; want 200 with the page", rec.Code, len(rec.Header().Get("Location")))
	}
	if !strings.Contains(rec.Body.String(), "/v1/organisations/{org}/projects/{project}/reports/39/{id}") {
		t.Error("the imported page does not show the design's last endpoint")
	}
}

// postForm posts one multipart field.
func postForm(t *testing.T, e http.Handler, target, field, value string) *httptest.ResponseRecorder {
	t.Helper()
	body := "--b\r\nContent-Disposition: form-data; name=\"" + field + "\"\r\n\r\n" + value + "\r\n--b--\r\n"
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
	req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// -public-url, not the request's Host, makes the snippets' absolute links.
func TestPublicURLInSnippets(t *testing.T) {
	e := newServer(config{publicURL: "https://ratelab.example.com"})
	req := httptest.NewRequest(http.MethodGet, "/?"+embedDesign, nil)
	req.Host = "evil.example"
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	page, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	snippets, _ := lazyPanel(t, e, page, "chart-admitted-snippets", "evil.example").Html()
	if !strings.Contains(snippets, "https://ratelab.example.com/embed/") || strings.Contains(snippets, "evil.example") {
		t.Errorf("snippets: public URL present %t, request Host present %t; want the public URL only",
			strings.Contains(snippets, "https://ratelab.example.com/embed/"), strings.Contains(snippets, "evil.example"))
	}
	for _, bad := range []string{"ratelab.example.com", "ftp://x", "https://x/?a=1", "https://u@x"} {
		if _, err := parsePublicURL(bad); err == nil {
			t.Errorf("parsePublicURL(%q): no error", bad)
		}
	}
	if got, err := parsePublicURL("https://docs.example.com/ratelab/"); err != nil || got != "https://docs.example.com/ratelab" {
		t.Errorf("parsePublicURL with a path: %q, %v", got, err)
	}
}

// The pages have their own per-client limit; the API's does not count
// them, and /import counts against the API's.
func TestPageRateLimit(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig(t)
	cfg.pageLimit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 2}
	cfg.apiLimit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 1}
	cfg.clock = clock.now
	e := newServer(cfg)
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		rec := from(t, e, "192.0.2.1", http.MethodGet, "/embed/admitted.svg?"+embedDesign, "")
		if rec.Code != want {
			t.Fatalf("page %d: %d; want %d", i, rec.Code, want)
		}
		if want == http.StatusTooManyRequests && (rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Header().Get("RateLimit-Policy"), `"pages"`)) {
			t.Errorf("a refused page: Retry-After %q, policy %q", rec.Header().Get("Retry-After"), rec.Header().Get("RateLimit-Policy"))
		}
	}
	// The designer's docs panels, fetched as they open, share the pages'
	// limit.
	if rec := from(t, e, "192.0.2.1", http.MethodGet, views.DocsPanelPath+"docs-panel?"+embedDesign, ""); rec.Code != http.StatusTooManyRequests {
		t.Errorf("a docs panel after the pages' limit: %d; want 429", rec.Code)
	}
	if rec := from(t, e, "192.0.2.1", http.MethodPost, "/api/v1/calc", calcBody); rec.Code != http.StatusOK {
		t.Errorf("the API after the pages' limit: %d", rec.Code)
	}
	req := httptest.NewRequest(http.MethodPost, importPath, strings.NewReader("yaml=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = "192.0.2.1:40000"
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusTooManyRequests {
		t.Errorf("/import after the API's burst: %d; want 429", rec.Code)
	}
}

// A compare page charts two designs, so it holds two heavy slots: with
// three of four taken it is a 503 with Retry-After (a designer page, which
// holds one, is served), and with two taken it is served.
func TestCompareHoldsTwoSlots(t *testing.T) {
	e := newServer(config{maxHeavy: 4, pageCache: -1})
	target := comparePath + "?" + url.Values{"a": {embedDesign}, "b": {embedDesign + "&limit.algorithm=gcra"}}.Encode()
	release := heldSimulations(t, e, 3)
	if rec := serve(t, e, http.MethodGet, target); rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("compare with one slot free: %d; want 503 with Retry-After", rec.Code)
	}
	if rec := serve(t, e, http.MethodGet, "/?"+embedDesign); rec.Code != http.StatusOK {
		t.Errorf("a designer page with one slot free: %d; want 200", rec.Code)
	}
	release()
	release = heldSimulations(t, e, 2)
	defer release()
	if rec := serve(t, e, http.MethodGet, target); rec.Code != http.StatusOK {
		t.Errorf("compare with two slots free: %d; want 200", rec.Code)
	}
}
