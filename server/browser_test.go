package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/views"
)

// chromiumPath is Debian's chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// browserTimeout bounds a whole browser test; every wait inside is shorter.
const browserTimeout = 90 * time.Second

// waitTimeout bounds one wait for the page.
const waitTimeout = 30 * time.Second

// needChromium skips the test without Chromium, unless the environment says
// integration tests are required (as in CI).
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("RATELAB_INTEGRATION") == "required" {
			t.Fatalf("browser tests need %s (RATELAB_INTEGRATION=required): %v", chromiumPath, err)
		}
		t.Skipf("skipping browser test: %s not found; install Debian's chromium package (apt-get install chromium) to run it", chromiumPath)
	}
}

// browserSession is the real server and one headless Chromium with a fresh
// profile, recording what must not happen: console errors and warnings,
// uncaught exceptions, Content-Security-Policy violations, and requests to
// any host but the server.
type browserSession struct {
	srv  *httptest.Server
	host string
	// also are hosts besides the server the page may load from: a test's
	// own pages (a docs page that frames an embed).
	also map[string]bool
	// failing are the paths a test loads for their error status (an error
	// page): the browser's log of that status is not a problem.
	failing map[string]bool
	ctx     context.Context // the browser's first tab

	mu       sync.Mutex
	problems []string
	requests int
}

// cspReporter turns every Content-Security-Policy violation into a console
// error, which the session records. DevTools injects it, so the page's own
// policy does not apply to it.
const cspReporter = `document.addEventListener("securitypolicyviolation", function (e) {
  console.error("CSP violation: " + e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber);
});`

func newBrowserSession(t *testing.T) *browserSession {
	t.Helper()
	return newBrowserSessionWith(t, testConfig(t))
}

// newBrowserSessionWith is newBrowserSession with a server of cfg.
func newBrowserSessionWith(t *testing.T, cfg config) *browserSession {
	t.Helper()
	needChromium(t)
	s := &browserSession{srv: httptest.NewServer(newServer(cfg))}
	t.Cleanup(s.srv.Close)
	u, err := url.Parse(s.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	s.host = u.Host
	if !strings.HasPrefix(s.host, "127.0.0.1:") {
		t.Fatalf("test server at %s, want 127.0.0.1", s.host)
	}

	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), browserTimeout)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1000),
	)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc, chromedp.WithListener(s.listen))
	t.Cleanup(cancelTab)
	s.ctx = tab
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspReporter}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, p := range s.problems {
			t.Errorf("browser: %s", p)
		}
		if s.requests == 0 {
			t.Error("the browser made no request to the server that the test saw")
		}
	})
	return s
}

// listen runs in the tab's event loop: it only records.
func (s *browserSession) listen(ev any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range ev.Args {
				if a.Value != nil {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			s.problems = append(s.problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(parts, " ")))
		}
	case *runtime.EventExceptionThrown:
		msg := ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			msg += " " + ev.ExceptionDetails.Exception.Description
		}
		s.problems = append(s.problems, "uncaught exception: "+msg)
	case *log.EventEntryAdded:
		if u, err := url.Parse(ev.Entry.URL); err == nil && ev.Entry.Source == log.EntrySourceNetwork && s.failing[u.Path] {
			break
		}
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			s.problems = append(s.problems, fmt.Sprintf("log %s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	case *network.EventRequestWillBeSent:
		u, err := url.Parse(ev.Request.URL)
		switch {
		case err != nil:
			s.problems = append(s.problems, fmt.Sprintf("request to an unparsable URL %q", ev.Request.URL))
		case u.Scheme == "data":
		case u.Host != s.host && !s.also[u.Host]:
			s.problems = append(s.problems, "request to another host: "+ev.Request.URL)
		default:
			s.requests++
		}
	}
}

// do runs steps, failing the test with what.
func (s *browserSession) do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// clearField empties an input without an input event; typing then fires
// the events a user's typing does.
func clearField(id string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`document.getElementById(` + strconv.Quote(id) + `).value = ""`)
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it holds.
func waitFor(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(waitTimeout))); err != nil {
		t.Fatalf("waiting for %s (%s): %v", what, cond, err)
	}
}

// designerCharts is how many charts the default design's page draws: every
// chart an embed can name, and the request timeline, which has no embed.
var designerCharts = len(views.ChartSlugs) + 1

// chartsDrawn is the condition that every chart of the page has a canvas.
var chartsDrawn = fmt.Sprintf(`(function () {
  var all = document.querySelectorAll("[data-chart-option]");
  var drawn = document.querySelectorAll("[data-chart-option][data-chart-drawn] canvas");
  return all.length === %d && drawn.length >= %d;
})()`, designerCharts, designerCharts)

// pageOptions reads every chart's option as the page carries it.
const pageOptions = `Object.fromEntries(Array.from(document.querySelectorAll("[data-chart-option]"),
  function (el) { return [el.id, el.getAttribute("data-chart-option")]; }))`

// drawnSeries reads the series names echarts was given, per chart.
const drawnSeries = `Object.fromEntries(Array.from(document.querySelectorAll("[data-chart-option]"),
  function (el) { return [el.id, echarts.getInstanceByDom(el).getOption().series.map(function (s) { return s.name; })]; }))`

// checkOptionsMatchServer compares the page's chart options with what the
// server computes for the design in the page's URL, and the series echarts
// drew with the options' series.
func checkOptionsMatchServer(t *testing.T, ctx context.Context) {
	t.Helper()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	want := designerView(u.RawQuery).Results.Charts
	got := eval[map[string]string](t, ctx, pageOptions)
	drawn := eval[map[string][]string](t, ctx, drawnSeries)
	if len(got) != len(want) {
		t.Fatalf("page has %d charts, server computes %d for %s", len(got), len(want), loc)
	}
	for _, c := range want {
		var g, w map[string]any
		if err := json.Unmarshal([]byte(got[c.ID]), &g); err != nil {
			t.Fatalf("%s: page option: %v", c.ID, err)
		}
		if err := json.Unmarshal([]byte(c.Option), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: the page's option differs from the server's for %s", c.ID, loc)
		}
		var names []string
		for _, s := range w["series"].([]any) {
			names = append(names, s.(map[string]any)["name"].(string))
		}
		if !reflect.DeepEqual(drawn[c.ID], names) {
			t.Errorf("%s: echarts drew series %q, want %q", c.ID, drawn[c.ID], names)
		}
	}
}

func TestBrowserDesignerUpdatesLive(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx

	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	waitFor(t, ctx, "the charts", chartsDrawn)
	if got := eval[string](t, ctx, `document.querySelector('[data-testid="summary-rate"]').textContent`); got != "10 requests/s" {
		t.Fatalf("example design rate: got %q, want 10 requests/s", got)
	}
	checkOptionsMatchServer(t, ctx)
	// Mark the document: a live update must not reload it.
	eval[bool](t, ctx, `(window.__sameDocument = true)`)

	// Typing p99 = 10 doubles the rate: rate = p99 × margin = 20.
	s.do(t, ctx, "type p99",
		clearField("f-p99"),
		chromedp.SendKeys(chromedp.ID("f-p99"), "10"),
	)
	waitFor(t, ctx, "the results to update", `document.querySelector('[data-testid="summary-rate"]').textContent === "20 requests/s"`)
	waitFor(t, ctx, "the charts to be drawn again", chartsDrawn)
	waitFor(t, ctx, "the address to become the design", `location.search.indexOf("p99=10") >= 0`)
	if !eval[bool](t, ctx, `window.__sameDocument === true`) {
		t.Error("the page reloaded; want htmx to swap the results in place")
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(loc); u.Path != "/" {
		t.Errorf("pushed URL %s: want the page's path /, not the fragment's", loc)
	}
	// The download link follows the design.
	if got, want := eval[string](t, ctx, `document.querySelector('[data-testid="export-link"]').getAttribute("href")`),
		exportPath+eval[string](t, ctx, `location.search`); got != want {
		t.Errorf("export link after the update: got %q, want %q", got, want)
	}
	checkOptionsMatchServer(t, ctx)

	// A bad value gets its message next to the field, live.
	s.do(t, ctx, "type a bad capacity",
		clearField("f-capacity"),
		chromedp.SendKeys(chromedp.ID("f-capacity"), "-1"),
	)
	waitFor(t, ctx, "the capacity message", `document.getElementById("msg-capacity").textContent.indexOf("capacity") === 0`)
	waitFor(t, ctx, "the list of problems", `document.querySelector('[data-testid="problems"]') !== null`)
	s.do(t, ctx, "fix the capacity",
		clearField("f-capacity"),
		chromedp.SendKeys(chromedp.ID("f-capacity"), "2000"),
	)
	waitFor(t, ctx, "the message to clear", `document.getElementById("msg-capacity").textContent === "" && document.querySelector('[data-testid="summary-rate"]') !== null`)
	waitFor(t, ctx, "the charts after the fix", chartsDrawn)

	// The design URL reloads to the same state.
	loc, err = chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	before := eval[map[string]string](t, ctx, pageOptions)
	s.do(t, ctx, "reload the design URL", chromedp.Navigate(loc))
	waitFor(t, ctx, "the charts after reload", chartsDrawn)
	if got, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("f-p99"))); err != nil || got != "10" {
		t.Errorf("p99 after reload: got %q (%v), want 10", got, err)
	}
	if got, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("f-capacity"))); err != nil || got != "2000" {
		t.Errorf("capacity after reload: got %q (%v), want 2000", got, err)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-testid="summary-rate"]').textContent`); got != "20 requests/s" {
		t.Errorf("rate after reload: got %q, want 20 requests/s", got)
	}
	if after := eval[map[string]string](t, ctx, pageOptions); !reflect.DeepEqual(after, before) {
		t.Error("chart options after reloading the design URL differ from before")
	}
	checkOptionsMatchServer(t, ctx)
}

// TestBrowserDesignerWithoutJavaScript uses the page with scripts disabled:
// every number renders, the charts' tables are there, and the form submits
// as a plain GET whose URL is the design.
func TestBrowserDesignerWithoutJavaScript(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("disable scripts: %v", err)
	}

	doc := func() *goquery.Document {
		t.Helper()
		html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
		if err != nil {
			t.Fatal(err)
		}
		d, err := goquery.NewDocumentFromReader(strings.NewReader(html))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"), chromedp.WaitReady(chromedp.CSS(`[data-testid="results"]`)))
	d := doc()
	if got := d.Find(`[data-testid="summary-rate"]`).Text(); got != "10 requests/s" {
		t.Errorf("rate without JavaScript: got %q, want 10 requests/s", got)
	}
	if n := d.Find(`[data-testid="algorithms"] article`).Length(); n != 6 {
		t.Errorf("algorithm cards: got %d, want 6", n)
	}
	if n := d.Find(`[data-testid="chart-admitted-table"] tbody tr`).Length(); n == 0 {
		t.Error("the admitted chart's data table is empty")
	}
	if n := d.Find("canvas, [data-chart-drawn]").Length(); n != 0 {
		t.Errorf("found %d drawn charts with scripts disabled", n)
	}

	// Fill in a peak and submit with the button: a plain GET of the form.
	s.do(t, ctx, "type a peak",
		chromedp.SendKeys(chromedp.ID("f-peak"), "300"),
		chromedp.SendKeys(chromedp.ID("f-peak_seconds"), "2"),
	)
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(`[data-testid="submit"]`)))); err != nil {
		t.Fatalf("submit: %v", err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/" || u.Query().Get("peak") != "300" || u.Query().Get("peak_seconds") != "2" || u.Query().Get("p99") != "5" {
		t.Fatalf("submitted URL %s: want / with the whole design, peak=300 and peak_seconds=2", loc)
	}
	in := calc.Input{Capacity: 2000, Clients: 200, P50: 1, P95: 3, P99: 5, Peak: 300, PeakSeconds: 2}
	want, err := calc.Size(in)
	if err != nil {
		t.Fatal(err)
	}
	d = doc()
	if got, w := d.Find(`[data-testid="summary-burst"]`).Text(), fmt.Sprintf("%d requests", int(want.Burst.Value)); got != w {
		t.Errorf("burst after submitting a peak: got %q, want %q", got, w)
	}
	if got := d.Find(`#f-peak`).AttrOr("value", ""); got != "300" {
		t.Errorf("peak field after submit: got %q, want 300", got)
	}

	// Paste a policy into the import form and submit it: the designer
	// shows the policy's design, its own algorithm included; its numbers
	// are the calculator's proposal (p99 4 × margin 2 = 8/s, 10 s of it
	// as burst), so they are not pinned, and it has no global limit.
	pasted := "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: pasted}\nservice: {capacity: 3000}\n" +
		"defaults: {limit: {algorithm: gcra, rate: 8, burst: 80}}\nsizing: {clients: 30, p99: 4}\n"
	s.do(t, ctx, "paste a policy", chromedp.SendKeys(chromedp.ID("import-yaml"), pasted))
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(`[data-testid="import-submit"]`)))); err != nil {
		t.Fatalf("import: %v", err)
	}
	loc, err = chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if want := s.srv.URL + "/?name=pasted&capacity=3000&clients=30&p99=4&limit.algorithm=gcra&global.limit.algorithm=none"; loc != want {
		t.Errorf("after the import: at %s, want %s", loc, want)
	}
	d = doc()
	if got := d.Find(`#f-capacity`).AttrOr("value", ""); got != "3000" {
		t.Errorf("capacity after the import: got %q, want 3000", got)
	}
	if got := d.Find(`#f-limit-algorithm option[selected]`).AttrOr("value", ""); got != "gcra" {
		t.Errorf("default limit's algorithm after the import: got %q, want gcra", got)
	}
}

// visibleParams lists, for each limit prefix, the limit parameters whose
// fields are shown, as "prefix:param,param".
const visibleParams = `(function () {
  var out = {};
  document.querySelectorAll("[data-limit-param]").forEach(function (el) {
    var name = el.getAttribute("data-testid").replace(/^field-/, "");
    var prefix = name.slice(0, name.lastIndexOf("."));
    out[prefix] = out[prefix] || [];
    if (el.offsetParent !== null) { out[prefix].push(el.getAttribute("data-limit-param")); }
  });
  return Object.keys(out).sort().map(function (k) { return k + ":" + out[k].join(","); }).join(" ");
})()`

// TestBrowserLimitEditors: each limit shows only its algorithm's
// parameters, the blank option meaning its default (token_bucket, or no
// limit for an endpoint); choosing another algorithm brings the form back
// with that algorithm's parameters and the calculator's proposal for them
// as placeholders, and the address keeps the design.
func TestBrowserLimitEditors(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	q := "capacity=2000&p99=5&tiers.0.name=free&tiers.0.clients=180&tiers.1.name=paid&tiers.1.clients=20&tiers.1.limit.algorithm=gcra" +
		"&endpoints.0.method=POST&endpoints.0.path=/v1/orders&endpoints.0.limit.algorithm=sliding_window&endpoints.0.limit.limit=100&endpoints.0.limit.window=60"
	s.do(t, ctx, "load the design", chromedp.Navigate(s.srv.URL+"/?"+q))
	waitFor(t, ctx, "the charts", chartsDrawn)
	want := "endpoints.0.limit:algorithm,limit,window endpoints.1.limit:algorithm global.limit:algorithm,rate,burst " +
		"limit:algorithm,rate,burst tiers.0.limit:algorithm,rate,burst tiers.1.limit:algorithm,rate,burst tiers.2.limit:algorithm,rate,burst"
	if got := eval[string](t, ctx, visibleParams); got != want {
		t.Errorf("shown limit parameters:\n got %s\nwant %s", got, want)
	}

	// The default limit becomes a leaky bucket: rate and queue, the
	// queue's placeholder the calculator's (burst − 1 = 99).
	s.do(t, ctx, "choose leaky_bucket", chromedp.Evaluate[chromedp.Void](
		`(function () { var el = document.getElementById("f-limit-algorithm"); el.value = "leaky_bucket"; el.dispatchEvent(new Event("change", {bubbles: true})); })()`))
	waitFor(t, ctx, "the form for leaky_bucket", `document.getElementById("f-limit-queue") && document.getElementById("f-limit-queue").placeholder === "99" && location.search.indexOf("limit.algorithm=leaky_bucket") >= 0 && location.search.indexOf("=&") < 0`)
	waitFor(t, ctx, "the charts again", chartsDrawn)
	// The form comes back as Update sends it, with a blank row more.
	got := eval[string](t, ctx, visibleParams)
	for _, w := range []string{"endpoints.0.limit:algorithm,limit,window ", "global.limit:algorithm,rate,burst ", " limit:algorithm,rate,queue ",
		"tiers.1.limit:algorithm,rate,burst "} {
		if !strings.Contains(got+" ", w) {
			t.Errorf("shown limit parameters after choosing leaky_bucket: %s, want %q among them", got, w)
		}
	}
	if loc := eval[string](t, ctx, `location.search`); loc != "?"+parseDesignQuery(q+"&limit.algorithm=leaky_bucket&pattern=ramp").query() {
		t.Errorf("address after choosing leaky_bucket: %s, want the canonical design", loc)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-testid="policy-limit"][data-field="defaults.limit"] code').textContent`); !strings.HasPrefix(got, "leaky_bucket(") {
		t.Errorf("the policy's default limit is %q, want a leaky_bucket", got)
	}
}
