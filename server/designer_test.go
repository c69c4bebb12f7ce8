package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/chartset"
	"github.com/ratelab/ratelab/views"
)

// getDoc fetches target from the real server and parses the HTML; the
// status must be 200.
func getDoc(t *testing.T, target string, header ...string) (*goquery.Document, *httptest.ResponseRecorder) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %.200s: status %d, want 200\n%.500s", target, rec.Code, rec.Body.String())
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	return doc, rec
}

func testid(doc *goquery.Document, id string) *goquery.Selection {
	return doc.Find(`[data-testid="` + id + `"]`)
}

// fullDesign uses every section of the form.
var fullDesign = url.Values{
	"capacity": {"20000"}, "headroom": {"0.25"}, "replicas": {"5"}, "enforcement": {"local"},
	"p50": {"5"}, "p95": {"30"}, "p99": {"50"}, "percentile_unit": {"second"}, "margin": {"2"},
	"peak": {"300"}, "peak_seconds": {"2"}, "window": {"60"}, "max_delay": {"2"},
	"tiers.0.name": {"anonymous"}, "tiers.0.clients": {"100"}, "tiers.0.multiplier": {"0.5"},
	"tiers.3.name": {"paid"}, "tiers.3.clients": {"20"}, "tiers.3.multiplier": {"4"},
	"endpoints.0.method": {"GET"}, "endpoints.0.path": {"/v1/reports"}, "endpoints.0.cost": {"8"},
	"retry.base": {"1"}, "retry.factor": {"2"}, "retry.cap": {"30"}, "retry.attempts": {"4"}, "retry.jitter": {"0.25"}, "retry.jitter_mode": {"equal"},
	"pattern": {"periodic_bursts"}, "pattern.count": {"300"}, "pattern.period": {"10"}, "pattern.duration": {"30"}, "pattern.cost": {"1"},
}

// TestDesignURLRoundTrips loads a design URL and finds every value in its
// input, and the canonical query (the pushed URL) gives the same form.
func TestDesignURLRoundTrips(t *testing.T) {
	doc, _ := getDoc(t, "/?"+fullDesign.Encode())
	for name, vs := range fullDesign {
		field := doc.Find(`[name="` + name + `"]`)
		if field.Length() != 1 {
			t.Errorf("%s: %d fields, want 1", name, field.Length())
			continue
		}
		got := field.AttrOr("value", "")
		if goquery.NodeName(field) == "select" {
			got = field.Find("option[selected]").AttrOr("value", "")
		}
		if got != vs[0] {
			t.Errorf("%s: field shows %q, want %q", name, got, vs[0])
		}
	}
	if n := testid(doc, "problem").Length(); n != 0 {
		t.Errorf("the full design has %d problems: %s", n, testid(doc, "problems").Text())
	}
	if n := doc.Find(".field-msg:not(:empty)").Length(); n != 0 {
		t.Errorf("%d field messages on a valid design", n)
	}

	// The link in the results is the canonical URL, which parses to the
	// same design.
	link := testid(doc, "design-link").AttrOr("href", "")
	u, err := url.Parse(link)
	if err != nil || u.Path != "/" {
		t.Fatalf("design link %q", link)
	}
	if got := u.Query(); !equalValues(got, fullDesign) {
		t.Errorf("canonical query %q differs from the design", u.RawQuery)
	}
	want, _ := calc.Size(parseDesignQuery(fullDesign.Encode()).d.Input())
	again := parseDesignQuery(u.RawQuery)
	got, err := calc.Size(again.d.Input())
	if err != nil || got.Rate != want.Rate || got.Burst != want.Burst || len(got.Tiers) != 2 {
		t.Errorf("the canonical URL sizes differently: %v", err)
	}
}

func equalValues(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if len(b[k]) == 0 || b[k][0] != v[0] {
			return false
		}
	}
	return true
}

func TestEmptyQueryIsTheExampleDesign(t *testing.T) {
	doc, _ := getDoc(t, "/")
	if got := doc.Find("#f-capacity").AttrOr("value", ""); got != "2000" {
		t.Errorf("capacity: got %q, want the example's 2000", got)
	}
	if got := testid(doc, "summary-rate").Text(); got != "10 requests/s" {
		t.Errorf("rate: got %q, want 10 requests/s", got)
	}
	if n := doc.Find(`[data-testid="algorithms"] article`).Length(); n != 6 {
		t.Errorf("algorithm cards: got %d, want 6", n)
	}
	if n := doc.Find("[data-chart-option]").Length(); n != designerCharts {
		t.Errorf("charts: got %d, want %d", n, designerCharts)
	}
	for _, id := range []string{"checks", "headers", "backoff", "share"} {
		if testid(doc, id).Length() != 1 {
			t.Errorf("no %s", id)
		}
	}
	// Nine patterns to choose from.
	if n := doc.Find(`#f-pattern option`).Length(); n != len(algorithms.Patterns) {
		t.Errorf("pattern options: got %d, want %d", n, len(algorithms.Patterns))
	}
}

func TestResultsFragment(t *testing.T) {
	q := "capacity=2000&clients=200&p99=5&p99=7&unknown=1&pattern=idle_then_burst&pattern.count=300"
	frag, rec := getDoc(t, "/designer/results?"+q, "HX-Request", "true")
	if got, want := rec.Header().Get("HX-Push-Url"), "/?capacity=2000&clients=200&p99=5&pattern=idle_then_burst&pattern.count=300"; got != want {
		t.Errorf("HX-Push-Url: got %q, want %q", got, want)
	}
	body := rec.Body.String()
	if strings.Contains(body, "<html") || strings.Contains(body, "<form") {
		t.Error("the fragment holds more than the results")
	}
	if n := testid(frag, "results").Length(); n != 1 {
		t.Fatalf("results: got %d", n)
	}
	if frag.Find(`#field-messages[hx-swap-oob="true"] [data-msg-for="msg-capacity"]`).Length() != 1 {
		t.Error("no out-of-band message for capacity")
	}

	// The fragment leaves its data tables out; each panel's page holds
	// the table (lazy.js puts it in place when the panel opens). Put them
	// in place as it does.
	e := newServer(config{})
	lazy := frag.Find("details.chart-data[data-lazy-src]")
	if lazy.Length() == 0 || frag.Find("table").Length() > 3 {
		t.Errorf("fragment: %d data panels fetched on opening and %d tables; want the charts' tables left out", lazy.Length(), frag.Find("table").Length())
	}
	lazy.Each(func(_ int, d *goquery.Selection) {
		body := lazyPanel(t, e, frag, d.AttrOr("id", ""), "")
		html, err := body.Html()
		if err != nil {
			t.Fatal(err)
		}
		d.Find("[data-lazy-body]").ReplaceWithHtml(html)
	})

	// The page renders the same results component for the same design.
	page, _ := getDoc(t, "/?"+q)
	for _, sel := range []string{`[data-testid="summary"] .value`, `[data-testid="check"]`, `[data-testid="algorithms"] .value`, "[data-chart-option]", "table"} {
		a, b := page.Find(`[data-testid="results"] `+sel), frag.Find(`[data-testid="results"] `+sel)
		if a.Length() != b.Length() || a.Text() != b.Text() {
			t.Errorf("%s: page and fragment differ (%d vs %d elements)", sel, a.Length(), b.Length())
		}
	}
	pageIDs, fragIDs := testids(page.Find(`[data-testid="results"]`)), testids(frag.Find(`[data-testid="results"]`))
	if strings.Join(pageIDs, " ") != strings.Join(fragIDs, " ") {
		t.Errorf("page results %v, fragment results %v", pageIDs, fragIDs)
	}
}

func testids(s *goquery.Selection) []string {
	var ids []string
	s.Find("[data-testid]").Each(func(_ int, e *goquery.Selection) { ids = append(ids, e.AttrOr("data-testid", "")) })
	return ids
}

// TestBadInputShowsNextToItsField: each bad value gets a message in the
// element beside its input, the input is marked invalid, and the problems
// list links to it.
func TestBadInputShowsNextToItsField(t *testing.T) {
	tests := []struct {
		query, field, want string
	}{
		{"capacity=abc&clients=10", "capacity", "not a number"},
		{"capacity=-1&clients=10", "capacity", "out of range"},
		{"capacity=1000&clients=2.5", "clients", "not a whole number"},
		{"capacity=1000&clients=10&p95=9&p99=3", "p99", "percentiles cannot decrease"},
		{"capacity=1000&clients=10&enforcement=sideways", "enforcement", "shared"},
		{"capacity=1000&tiers.0.name=paid&tiers.4.name=free&tiers.4.clients=0", "tiers.4.clients", "tiers.4.clients"},
		{"capacity=1000&tiers.0.clients=10", "tiers.0.name", "name"},
		{"capacity=1000&clients=10&endpoints.2.method=G E T&endpoints.2.path=/x", "endpoints.2.method", "HTTP method"},
		{"capacity=1000&clients=10&retry.attempts=50", "retry.attempts", "[1, 20]"},
		{"capacity=1000&clients=10&pattern=nope", "pattern", "not a pattern"},
		{"capacity=1000&clients=10&pattern=steady&pattern.rate=0", "pattern.rate", "out of range"},
		{"capacity=1000&clients=10&pattern=periodic_bursts&pattern.period=100&pattern.duration=10", "pattern.period", "no longer than duration"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q, _ := url.ParseQuery(tt.query)
			for _, path := range []string{"/", "/designer/results"} {
				doc, _ := getDoc(t, path+"?"+q.Encode())
				msg := testid(doc, "msg-"+tt.field)
				if msg.Length() != 1 {
					t.Fatalf("%s: %d message elements for %s", path, msg.Length(), tt.field)
				}
				if got := msg.Text(); !strings.Contains(got, tt.want) || !strings.HasPrefix(got, tt.field) {
					t.Errorf("%s: message %q, want it to name %s and say %q", path, got, tt.field, tt.want)
				}
				if path == "/" {
					if in := doc.Find("#" + fieldID(tt.field)); in.AttrOr("aria-invalid", "") != "true" {
						t.Errorf("input %s is not marked invalid", fieldID(tt.field))
					}
				}
			}
			doc, _ := getDoc(t, "/?"+q.Encode())
			if strings.HasPrefix(tt.field, "pattern") {
				if got := testid(doc, "charts-error").Text(); !strings.Contains(got, tt.field) {
					t.Errorf("charts error %q, want it to name %s", got, tt.field)
				}
				if testid(doc, "summary").Length() != 1 {
					t.Error("a bad pattern hides the limits; want only the charts gone")
				}
				return
			}
			link := doc.Find(`[data-testid="problem"][data-field="` + tt.field + `"] a`)
			if got := link.AttrOr("href", ""); got != "#"+fieldID(tt.field) {
				t.Errorf("problem link: got %q, want #%s", got, fieldID(tt.field))
			}
			if testid(doc, "summary").Length() != 0 {
				t.Error("results shown for a bad design")
			}
		})
	}
}

// TestHostileQueriesAnswer200 sends what no form would: every query gets a
// page (never a 500) with the offending field's message.
func TestHostileQueriesAnswer200(t *testing.T) {
	manyTiers := url.Values{"capacity": {"1000"}}
	for i := range 4_000 { // 8001 parameters: net/url reads up to 10000
		manyTiers.Set(fmt.Sprintf("tiers.%d.name", i), fmt.Sprintf("t%d", i))
		manyTiers.Set(fmt.Sprintf("tiers.%d.clients", i), "1")
	}
	tests := []struct {
		name, query, field string
	}{
		{"NaN", "capacity=NaN&clients=10", "capacity"},
		{"Inf", "capacity=Inf&clients=10", "capacity"},
		{"minus Inf", "capacity=1000&clients=10&p99=-Inf", "p99"},
		{"1e400", "capacity=1e400&clients=10", "capacity"},
		{"negative", "capacity=-1&clients=10", "capacity"},
		{"negative headroom", "capacity=1000&clients=10&headroom=-1", "headroom"},
		{"huge clients", "capacity=1000&clients=99999999999999999999", "clients"},
		{"huge replicas", "capacity=1000&clients=10&replicas=1e300", "replicas"},
		{"huge window", "capacity=1000&clients=10&window=1e300", "window"},
		{"huge cost", "capacity=1000&clients=10&endpoints.0.method=GET&endpoints.0.path=/x&endpoints.0.cost=1e18", "endpoints.0.cost"},
		{"4k tiers", manyTiers.Encode(), "tiers"},
		{"row index past the form", "capacity=1000&tiers.100.name=x&tiers.100.clients=1", "tiers"},
		{"unknown pattern", "capacity=1000&clients=10&pattern=%3Cscript%3E", "pattern"},
		{"arrival cap", "capacity=1000&clients=10&pattern=idle_then_burst&pattern.count=1000000", "pattern"},
		{"retry storm cap", "capacity=1000&clients=10&pattern=retry_storm&pattern.clients=100000", "pattern.clients"},
		{"endless pattern", "capacity=1000&clients=10&pattern=steady&pattern.rate=1000000&pattern.duration=86400", "pattern"},
		{"huge duration", "capacity=1000&clients=10&pattern=steady&pattern.duration=1e300", "pattern.duration"},
		{"NaN jitter", "capacity=1000&clients=10&pattern=retry_storm&pattern.jitter=NaN", "pattern.jitter"},
		{"negative seed", "capacity=1000&clients=10&pattern=poisson&pattern.seed=-1", "pattern.seed"},
		{"bad key_by", "capacity=1000&clients=10&pattern=shared_ip&pattern.key_by=mac", "pattern.key_by"},
		{"long value", "capacity=" + strings.Repeat("9", 5000) + "&clients=10", "capacity"},
		{"bad escapes", "capacity=%zz&clients=10&p99=%ff%fe", "p99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/", "/designer/results"} {
				start := time.Now()
				doc, _ := getDoc(t, path+"?"+tt.query)
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("%s took %v", path, d)
				}
				if got := testid(doc, "msg-"+tt.field).Text(); got == "" {
					t.Errorf("%s: no message for %s", path, tt.field)
				}
				if n := doc.Find("script:not([src])").Length(); n != 0 {
					t.Errorf("%s: %d inline scripts", path, n)
				}
			}
		})
	}
}

// TestTenThousandTiers: net/url refuses a query of more than 10000
// parameters, and the page says so instead of guessing.
func TestTenThousandTiers(t *testing.T) {
	q := url.Values{"capacity": {"1000"}}
	for i := range 10_000 {
		q.Set(fmt.Sprintf("tiers.%d.name", i), fmt.Sprintf("t%d", i))
		q.Set(fmt.Sprintf("tiers.%d.clients", i), "1")
	}
	for _, path := range []string{"/", "/designer/results"} {
		doc, _ := getDoc(t, path+"?"+q.Encode())
		if got := testid(doc, "problems").Text(); !strings.Contains(got, "cannot be read") {
			t.Errorf("%s: problems %q, want the query refused", path, got)
		}
		if testid(doc, "summary").Length() != 0 {
			t.Errorf("%s: results for an unreadable query", path)
		}
	}
}

func TestPatternCapNamesTheCap(t *testing.T) {
	doc, _ := getDoc(t, "/?capacity=1000&clients=10&pattern=idle_then_burst&pattern.count=1000000")
	if got := testid(doc, "msg-pattern").Text(); !strings.Contains(got, fmt.Sprint(chartset.MaxArrivals)) {
		t.Errorf("message %q, want it to name the cap %d", got, chartset.MaxArrivals)
	}
}

// TestPageHasNoInlineScriptAndVersionedAssets: no <script> without src, no
// inline style, and every asset URL is versioned and served.
func TestPageHasNoInlineScriptAndVersionedAssets(t *testing.T) {
	doc, _ := getDoc(t, "/?"+fullDesign.Encode())
	if n := doc.Find("script:not([src]), style, [style]").Length(); n != 0 {
		t.Errorf("%d inline scripts or styles", n)
	}
	var assets []string
	doc.Find("script[src], link[href]").Each(func(_ int, s *goquery.Selection) {
		if v, ok := s.Attr("src"); ok {
			assets = append(assets, v)
		} else {
			assets = append(assets, s.AttrOr("href", ""))
		}
	})
	if len(assets) < 5 {
		t.Errorf("assets: %q", assets)
	}
	for _, a := range assets {
		if !strings.HasPrefix(a, "/static/") || !strings.Contains(a, "?v=") {
			t.Errorf("asset %q: want a versioned /static/ URL", a)
			continue
		}
		rec := serve(t, newServer(config{}), http.MethodGet, a)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d", a, rec.Code)
		}
	}
}

// chartOption is the part of an echarts option the tests read.
type chartOption struct {
	Series []struct {
		Name string       `json:"name"`
		Data [][2]float64 `json:"data"`
	} `json:"series"`
}

func pageCharts(t *testing.T, doc *goquery.Document) map[string]chartOption {
	t.Helper()
	out := map[string]chartOption{}
	doc.Find("[data-chart-option]").Each(func(_ int, s *goquery.Selection) {
		var o chartOption
		if err := json.Unmarshal([]byte(s.AttrOr("data-chart-option", "")), &o); err != nil {
			t.Fatalf("%s: %v", s.AttrOr("id", ""), err)
		}
		out[s.AttrOr("id", "")] = o
	})
	return out
}

func seriesValues(t *testing.T, o chartOption, name string) []float64 {
	t.Helper()
	for _, s := range o.Series {
		if s.Name == name {
			v := make([]float64, len(s.Data))
			for i, d := range s.Data {
				v[i] = d[1]
			}
			return v
		}
	}
	t.Fatalf("no series %q", name)
	return nil
}

// TestChartOptionsMatchAnIndependentSimulation parses the page's chart
// options and checks them against algorithms.Simulate run here on the
// calculator's parameters for the same design.
func TestChartOptionsMatchAnIndependentSimulation(t *testing.T) {
	q := "capacity=2000&clients=200&p99=5&replicas=3&enforcement=local&pattern=idle_then_burst&pattern.count=300&pattern.idle=2"
	doc, _ := getDoc(t, "/?"+q)
	charts := pageCharts(t, doc)
	if len(charts) != designerCharts {
		t.Fatalf("charts: got %d, want %d", len(charts), designerCharts)
	}

	res, err := calc.Size(calc.Input{Capacity: 2000, Clients: 200, P99: 5, Replicas: 3, Enforcement: calc.Local})
	if err != nil {
		t.Fatal(err)
	}
	p := algorithms.DefaultPattern(algorithms.PatternIdleThenBurst)
	p.Count, p.Idle = 300, 2*time.Second
	tr, err := p.Generate(1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	var lanes []algorithms.Lane
	for _, name := range algorithms.Names {
		pr, _ := res.Params(name)
		lanes = append(lanes, algorithms.Lane{Spec: pr.Spec()})
	}
	// The designer follows the run 2 s past the last arrival.
	sim, err := algorithms.Simulate(algorithms.Simulation{Lanes: lanes, Traffic: tr, Until: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range sim.Lanes {
		name := string(l.Lane.Spec.Algorithm)
		adm := seriesValues(t, charts[views.ChartAdmitted], name)
		rej := seriesValues(t, charts[views.ChartRejected], name)
		if len(adm) != len(l.Series) {
			t.Fatalf("%s: %d points, want %d bins", name, len(adm), len(l.Series))
		}
		for i, b := range l.Series {
			if adm[i] != float64(b.Admitted) || rej[i] != float64(b.Rejected) {
				t.Fatalf("%s bin %d: page admitted %g rejected %g, simulation %d and %d", name, i, adm[i], rej[i], b.Admitted, b.Rejected)
			}
		}
	}
	// The token bucket admits its burst of 100 of the 300.
	if got := seriesValues(t, charts[views.ChartCumulative], "token_bucket"); got[len(got)-1] != 100 {
		t.Errorf("token bucket admits %g in total, want the burst, 100", got[len(got)-1])
	}

	// Replicas: three local token buckets each with the full burst admit
	// three bursts; the per-replica split admits about one.
	tb := res.Spec(algorithms.NameTokenBucket)
	local := algorithms.Replicas{Count: 3, Balance: algorithms.RoundRobin}
	rs, err := algorithms.Simulate(algorithms.Simulation{Lanes: []algorithms.Lane{
		{Spec: tb}, {Spec: tb, Replicas: local}, {Spec: res.PerReplica.Spec(algorithms.NameTokenBucket), Replicas: local},
	}, Traffic: tr, Until: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"shared", "local ×3, full limit each", "local ×3, per-replica split"} {
		got := seriesValues(t, charts[views.ChartReplicas], name)
		if want := float64(rs.Lanes[i].Summary.Admitted); got[len(got)-1] != want {
			t.Errorf("%s: admits %g, simulation %g", name, got[len(got)-1], want)
		}
	}
	if got := seriesValues(t, charts[views.ChartReplicas], "local ×3, full limit each"); got[len(got)-1] != 300 {
		t.Errorf("local ×3 admits %g, want 3 × 100 = 300", got[len(got)-1])
	}

	// Retry storm: 2 × burst = 200 clients against the token bucket, in
	// lockstep, with the design's retry jitter (proportional, 0.5 by
	// default), and with full, equal and decorrelated jitter, each its own
	// run on the same arrivals, in bins of half the first wait (the
	// furthest run, decorrelated jitter's 3 + 9 + 27 + 30 + 30 s of waits,
	// stays within 240 such bins).
	sp := algorithms.DefaultPattern(algorithms.PatternRetryStorm)
	sp.Clients, sp.Seed = 200, p.Seed
	st, _ := sp.Generate(1_000_000)
	storm := func(mode algorithms.JitterMode, jitter float64, bin time.Duration) algorithms.Result {
		t.Helper()
		r := algorithms.RetryPolicy{Attempts: 5, Base: time.Second, Factor: 2, Cap: 30 * time.Second, Jitter: jitter, JitterMode: mode, Seed: p.Seed}
		res, err := algorithms.Simulate(algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: tb}}, Traffic: algorithms.Traffic{Arrivals: st.Arrivals, Retry: &r}, Bin: bin})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	bin := time.Second / 2
	stormLanes := []struct {
		name string
		run  algorithms.Result
	}{
		{views.StormNoJitter, storm(algorithms.JitterProportional, 0, bin)},
		{"design's: proportional 50 %", storm(algorithms.JitterProportional, 0.5, bin)},
		{views.StormFull, storm(algorithms.JitterFull, 0.5, bin)},
		{views.StormEqual, storm(algorithms.JitterEqual, 0.5, bin)},
		{views.StormDecorrelated, storm(algorithms.JitterDecorrelated, 0.5, bin)},
	}
	for _, tt := range stormLanes {
		for _, what := range []string{views.SeriesStormOffered, views.SeriesStormAdmitted} {
			name := views.StormSeries(what, tt.name)
			got := seriesValues(t, charts[views.ChartRetryStorm], name)
			sum := 0.0
			for i, v := range got {
				sum += v
				want := int64(0)
				if i < len(tt.run.Lanes[0].Series) {
					want = tt.run.Lanes[0].Series[i].Offered
					if what == views.SeriesStormAdmitted {
						want = tt.run.Lanes[0].Series[i].Admitted
					}
				}
				if v != float64(want) {
					t.Fatalf("%s bin %d: page %g, simulation %d", name, i, v, want)
				}
			}
			want := tt.run.Lanes[0].Summary.Offered
			if what == views.SeriesStormAdmitted {
				want = tt.run.Lanes[0].Summary.Admitted
			}
			if sum != float64(want) {
				t.Errorf("%s: %g in all, simulation %d", name, sum, want)
			}
		}
	}
}

// TestQueryParser covers the format's corners as the server reads them.
func TestQueryParser(t *testing.T) {
	q := url.Values{
		"capacity": {" 1e3 "}, "clients": {"10.0"}, "headroom": {"0"},
		"tiers.2.name": {"b"}, "tiers.2.clients": {"5"}, "tiers.0.name": {"a"}, "tiers.0.clients": {"5"},
		"tiers.1.name": {""}, "tiers.007.name": {"ignored"}, "tiers.x.name": {"ignored"},
		"pattern": {"steady"}, "pattern.idle": {"junk"}, // steady does not read idle
	}
	d := parseDesignQuery(q.Encode())
	if probs := d.problems(); len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	in := d.d.Input()
	if in.Capacity != 1000 || in.Clients != 10 || in.Headroom == nil || *in.Headroom != 0 {
		t.Errorf("input: %+v", in)
	}
	if len(in.Tiers) != 2 || in.Tiers[0].Name != "a" || in.Tiers[1].Name != "b" {
		t.Errorf("tiers: %+v", in.Tiers)
	}
	if got := d.d.ParamOf("tiers[1].clients"); got != "tiers.2.clients" {
		t.Errorf("ParamOf: got %q, want tiers.2.clients", got)
	}
	if got := d.query(); got != "capacity=1e3&headroom=0&clients=10.0&tiers.0.name=a&tiers.0.clients=5&tiers.2.name=b&tiers.2.clients=5&pattern=steady&pattern.idle=junk" {
		t.Errorf("query: %q", got)
	}
	if p, ok := d.pattern(); !ok || p.Name != algorithms.PatternSteady || p.Rate != algorithms.DefaultPattern(algorithms.PatternSteady).Rate {
		t.Errorf("pattern: %+v", p)
	}
}

// BenchmarkDesignerRecompute is the work of one keystroke for the example
// design: calc, six algorithms and the replica and retry-storm runs over
// the pattern, and every chart option.
func BenchmarkDesignerRecompute(b *testing.B) {
	for _, bc := range []struct{ name, query string }{
		{"example", ""},
		// The README's tiered example.
		{"tiered", "capacity=2000&p99=5&tiers.0.name=free&tiers.0.clients=180&tiers.1.name=paid&tiers.1.clients=20&tiers.1.multiplier=4&pattern=idle_then_burst&pattern.count=300"},
		{"largest", largestDesign()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v := designerView(bc.query)
				if len(v.Results.Charts) == 0 {
					b.Fatal("no charts")
				}
			}
		})
	}
}

// largestDesign is a design as large as the designer takes: 16 tiers and
// 100 endpoints, each endpoint with a limit of its own, so 117 classes of
// clients for the policy's charts.
func largestDesign() string {
	q := []string{"capacity=20000&p99=5"}
	for i := range calc.MaxTiers {
		q = append(q, fmt.Sprintf("tiers.%d.name=t%d&tiers.%d.clients=%d&tiers.%d.multiplier=%d", i, i, i, 10+i, i, 1+i%4))
	}
	for i := range calc.MaxEndpoints {
		q = append(q, fmt.Sprintf("endpoints.%d.method=GET&endpoints.%d.path=%%2Fv1%%2Fr%d%%2F%%7Bid%%7D&endpoints.%d.cost=%d"+
			"&endpoints.%d.limit.algorithm=gcra&endpoints.%d.limit.rate=%d&endpoints.%d.limit.burst=%d", i, i, i, i, 1+i%5, i, i, 5+i, i, 10+i))
	}
	return strings.Join(q, "&")
}

// TestPolicyChartsShowEveryTier: the designer's own-policy charts have a
// line for every tier with its limit, and each line is what that tier's
// limit alone admits on the pattern (algorithms.Simulate, the
// single-limiter harness, run here), since the global limit at the usable
// rate is far from binding for 300 requests.
func TestPolicyChartsShowEveryTier(t *testing.T) {
	q := "capacity=2000&p99=5&tiers.0.name=free&tiers.0.clients=180&tiers.1.name=paid&tiers.1.clients=20&tiers.1.multiplier=4&pattern=idle_then_burst&pattern.count=300&pattern.idle=2"
	doc, _ := getDoc(t, "/?"+q)
	charts := pageCharts(t, doc)
	res, err := calc.Size(calc.Input{Capacity: 2000, P99: 5, Tiers: []calc.TierInput{
		{Name: "free", Clients: 180}, {Name: "paid", Clients: 20, Multiplier: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	p := algorithms.DefaultPattern(algorithms.PatternIdleThenBurst)
	p.Count, p.Idle = 300, 2*time.Second
	tr, err := p.Generate(1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	for i, tier := range []string{"free", "paid"} {
		spec := res.Tiers[i].Spec(algorithms.NameTokenBucket)
		name := "tier " + tier + ": " + spec.String()
		sim, err := algorithms.Simulate(algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: spec}}, Traffic: tr, Until: 4 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		adm := seriesValues(t, charts[views.ChartPolicyAdmitted], name)
		cum := seriesValues(t, charts[views.ChartPolicyCumulative], name)
		total := 0.0
		for j, b := range sim.Lanes[0].Series {
			total += float64(b.Admitted)
			if adm[j] != float64(b.Admitted) || cum[j] != total {
				t.Fatalf("%s bin %d: page %g (so far %g), limit alone %d (so far %g)", name, j, adm[j], cum[j], b.Admitted, total)
			}
		}
		// Each tier admits its burst of the 300 at once, or all of them.
		if want := float64(min(spec.Burst, 300)); cum[len(cum)-1] != want {
			t.Errorf("%s admits %g in all, want %g", name, cum[len(cum)-1], want)
		}
	}
}

// TestDesignerRecomputeBudget holds the recompute of the README's tiered
// design to its allocation budget, a deterministic stand-in for its cost
// that a test can check without timers: 1.5 × the 15 727 allocations it
// took before the designer charted the whole policy (BenchmarkDesignerRecompute
// has the times).
func TestDesignerRecomputeBudget(t *testing.T) {
	const tiered = "capacity=2000&p99=5&tiers.0.name=free&tiers.0.clients=180&tiers.1.name=paid&tiers.1.clients=20&tiers.1.multiplier=4&pattern=idle_then_burst&pattern.count=300"
	allocs := testing.AllocsPerRun(3, func() { designerView(tiered) })
	if budget := 1.5 * 15727; allocs > budget {
		t.Errorf("the tiered design's recompute makes %.0f allocations, over its budget of %.0f", allocs, budget)
	}
}

// BenchmarkDesignerResultsRequest is one live update as the server sees
// it: the results fragment of the default design with p99 changed,
// requested as htmx does, computed, rendered and brotli-compressed,
// through the whole middleware chain; "new" is a design the page cache
// has not seen (every update of a reader typing), "cached" the same design
// again.
func BenchmarkDesignerResultsRequest(b *testing.B) {
	for _, bc := range []struct {
		name  string
		cache int64
	}{{"new", -1}, {"cached", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := config{addr: "127.0.0.1:0", logger: slog.New(slog.NewTextHandler(io.Discard, nil)), pageCache: bc.cache}
			e := newServer(cfg)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				req := httptest.NewRequest(http.MethodGet, "/designer/results?capacity=2000&clients=200&p50=1&p95=3&p99="+strconv.Itoa(5+i%8)+"&pattern=ramp", nil)
				req.Header.Set("HX-Request", "true")
				req.Header.Set("Accept-Encoding", "br")
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "br" {
					b.Fatalf("status %d, encoding %q", rec.Code, rec.Header().Get("Content-Encoding"))
				}
			}
		})
	}
}

// BenchmarkDesignerPage is GET / of the default design as a browser asks
// for it (Accept-Encoding as sent by the encoding sub-benchmark), through
// the real handler and the whole middleware chain: "new design" with the
// page cache off, so every request resolves, simulates, renders and
// compresses the page; "repeat" with the default cache, so every request
// after the first is answered from it. ns/op is the server's CPU time per
// page (one request at a time).
func BenchmarkDesignerPage(b *testing.B) {
	for _, bc := range []struct {
		name  string
		cache int64
	}{{"new design", -1}, {"repeat", 0}} {
		for _, enc := range []string{"br", "gzip"} {
			b.Run(bc.name+"/"+enc, func(b *testing.B) {
				cfg := config{addr: "127.0.0.1:0", logger: slog.New(slog.NewTextHandler(io.Discard, nil)), pageCache: bc.cache}
				e := newServer(cfg)
				b.ReportAllocs()
				var n int
				for b.Loop() {
					req := httptest.NewRequest(http.MethodGet, "/", nil)
					req.Header.Set("Accept-Encoding", enc)
					rec := httptest.NewRecorder()
					e.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != enc {
						b.Fatalf("status %d, encoding %q", rec.Code, rec.Header().Get("Content-Encoding"))
					}
					n = rec.Body.Len()
				}
				b.ReportMetric(float64(n), "bytes/page")
			})
		}
	}
}

// TestDesignerPageCacheEncodings: the designer page from the cache comes
// in each coding a client asks for, decoding to the same HTML, with a
// strong ETag per representation that a conditional request turns into a
// 304, and Vary: Accept-Encoding on every answer; the cache counts each
// compressed body it keeps against its bound.
func TestDesignerPageCacheEncodings(t *testing.T) {
	e := newServer(testConfig(t))
	plain := get(t, e, "/")
	if plain.Code != http.StatusOK || plain.Header().Get("ETag") == "" {
		t.Fatalf("GET /: %d, ETag %q", plain.Code, plain.Header().Get("ETag"))
	}
	tags := map[string]string{"": plain.Header().Get("ETag")}
	for _, tt := range []struct{ accept, coding string }{
		{"br", "br"},
		{"gzip", "gzip"},
		{"gzip, deflate, br", "br"},
		{"identity", ""},
	} {
		t.Run(tt.accept, func(t *testing.T) {
			for i := range 2 { // the miss in this coding, then the copy
				rec := get(t, e, "/", "Accept-Encoding", tt.accept)
				if rec.Code != http.StatusOK {
					t.Fatalf("request %d: status %d", i, rec.Code)
				}
				if got := rec.Header().Get(echo.HeaderContentEncoding); got != tt.coding {
					t.Fatalf("request %d: Content-Encoding %q, want %q", i, got, tt.coding)
				}
				if !hasVaryAcceptEncoding(rec.Header()) {
					t.Errorf("request %d: Vary %q", i, rec.Header().Values("Vary"))
				}
				if got := decodeBody(t, tt.coding, rec.Body.Bytes()); !bytes.Equal(got, plain.Body.Bytes()) {
					t.Fatalf("request %d: decodes to %d bytes, not the page's %d", i, len(got), plain.Body.Len())
				}
				tag := rec.Header().Get("ETag")
				if want, ok := tags[tt.coding]; ok && tag != want {
					t.Errorf("request %d: ETag %s, want %s as before", i, tag, want)
				}
				tags[tt.coding] = tag
				nm := get(t, e, "/", "Accept-Encoding", tt.accept, "If-None-Match", `"other", `+tag)
				if nm.Code != http.StatusNotModified || nm.Body.Len() != 0 {
					t.Errorf("If-None-Match %s: %d with %d bytes, want 304 and none", tag, nm.Code, nm.Body.Len())
				}
			}
		})
	}
	if len(tags) != 3 || tags[""] == tags["br"] || tags["br"] == tags["gzip"] {
		t.Errorf("ETags %v: want one per coding, all different", tags)
	}
}

// TestPageCacheEncodingBound: compressed bodies count against the cache's
// bound, an encoding that would make its entry too large is not kept, and
// one for a render the cache no longer holds is dropped.
func TestPageCacheEncodingBound(t *testing.T) {
	r := rendered{contentType: "text/html", body: bytes.Repeat([]byte("a"), 500), etag: `"x"`}
	for _, tt := range []struct {
		name    string
		etag    string // of the render the encoding was made from
		enc     int    // bytes of the encoding
		kept    bool
		entries int
	}{
		{"added", `"x"`, 300, true, 2},
		{"too large for an eighth", `"x"`, 1500, false, 2},
		{"made from another render", `"y"`, 300, false, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pc := newPageCache(16 * 1000)
			pc.put("other", rendered{body: make([]byte, 500)})
			pc.put("k", r)
			_, before, _, _ := pc.stats()
			enc := encodedBody{coding: "br", body: make([]byte, tt.enc), etag: `"e"`}
			pc.addEncoding("k", tt.etag, enc)
			got, _ := pc.get("k")
			_, kept := got.encoding("br")
			n, after, _, _ := pc.stats()
			if kept != tt.kept || n != tt.entries {
				t.Fatalf("kept %t with %d entries, want %t with %d", kept, n, tt.kept, tt.entries)
			}
			if want := before + int64(len(enc.coding)+len(enc.body)+len(enc.etag)); kept && after != want {
				t.Errorf("size %d after the encoding, want %d", after, want)
			}
			if !kept && after != before {
				t.Errorf("size %d, want %d as before", after, before)
			}
		})
	}
	// Compressed bytes can push older entries out.
	pc := newPageCache(16 * 1000)
	for _, k := range "abcdefghijklmnop" {
		pc.put(string(k), rendered{body: make([]byte, 1000-pageEntryOverhead-1-3), etag: `"t"`})
	}
	pc.addEncoding("p", `"t"`, encodedBody{coding: "br", body: make([]byte, 900)})
	if _, ok := pc.get("a"); ok {
		t.Error("a, the least recently used, was kept past the bound")
	}
	if r, ok := pc.get("p"); !ok || len(r.encoded) != 1 {
		t.Error("p lost its encoding or its entry")
	}
	if _, size, _, _ := pc.stats(); size > 16000 {
		t.Errorf("size %d, over the bound of 16000", size)
	}
}

// lazyPanel fetches the content of the page's lazily loaded panel id (its
// data-lazy-src, what static/js/lazy.js fetches on opening it) from e with
// Host host ("" for httptest's), and returns the panel page's
// [data-panel-body].
func lazyPanel(t *testing.T, e http.Handler, page *goquery.Document, id, host string) *goquery.Selection {
	t.Helper()
	src, ok := page.Find(`details#` + id).Attr("data-lazy-src")
	if !ok {
		t.Fatalf("panel %s: no data-lazy-src", id)
	}
	if href, _ := page.Find(`details#` + id + ` [data-lazy-body] a`).Attr("href"); href != src {
		t.Errorf("panel %s: link %q, want the panel's page %q for readers without JavaScript", id, href, src)
	}
	req := httptest.NewRequest(http.MethodGet, src, nil)
	if host != "" {
		req.Host = host
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %.300s", src, rec.Code, rec.Body.String())
	}
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	body := doc.Find("[data-panel-body]")
	if body.Length() != 1 {
		t.Fatalf("GET %s: %d [data-panel-body]", src, body.Length())
	}
	return body
}

// TestDesignerLazyPanels: the page holds the docs panel and the charts'
// snippets closed, with only their summary and a link to their content;
// each panel's page answers with it, and an unknown panel is a 404.
func TestDesignerLazyPanels(t *testing.T) {
	e := newServer(config{})
	page, _ := getDoc(t, "/")
	if n := page.Find(`[data-testid="results"] textarea`).Length(); n != 0 {
		t.Errorf("the page renders %d snippet fields; want them fetched when their panel opens", n)
	}
	for _, tt := range []struct{ panel, field string }{
		{"docs-panel", "docs-markdown"},
		{"chart-admitted-snippets", "chart-admitted-markdown"},
		{"chart-policy-load-snippets", "chart-policy-load-iframe"},
	} {
		t.Run(tt.panel, func(t *testing.T) {
			body := lazyPanel(t, e, page, tt.panel, "")
			if body.Find(`textarea[data-testid="`+tt.field+`"]`).Length() != 1 {
				t.Errorf("no %s field in the panel", tt.field)
			}
		})
	}
	for _, target := range []string{views.DocsPanelPath + "nope", views.DocsPanelPath + "chart-timeline-snippets",
		views.DocsPanelPath + "chart-nope-data", views.DocsPanelPath + "chart-Admitted-data", views.DocsPanelPath + "chart--data",
		views.DocsPanelPath + "chart-" + strings.Repeat("a", 41) + "-data"} {
		if rec := get(t, e, target); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", target, rec.Code)
		}
	}
}
