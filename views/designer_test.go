package views

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(t.Context(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatalf("parse HTML: %v", err)
	}
	return doc
}

func byTestID(doc *goquery.Document, id string) *goquery.Selection {
	return doc.Find(`[data-testid="` + id + `"]`)
}

// fullInput uses every section of the results: tiers, endpoints, local
// replicas, and two percentiles for the predicted share.
func fullInput() calc.Input {
	return calc.Input{
		Capacity: 20000, P50: 5, P95: 30, P99: 50, Peak: 300, PeakSeconds: 2, Replicas: 5, Enforcement: calc.Local,
		Tiers:     []calc.TierInput{{Name: "anonymous", Clients: 100, Multiplier: 0.5}, {Name: "paid", Clients: 20, Multiplier: 4}},
		Endpoints: []calc.Endpoint{{Method: "GET", Path: "/v1/reports", Cost: 8}},
	}
}

func sampleView(t *testing.T, in calc.Input) DesignerView {
	t.Helper()
	res, err := calc.Size(in)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := algorithms.DefaultPattern(algorithms.PatternIdleThenBurst).Generate(1000)
	if err != nil {
		t.Fatal(err)
	}
	var lanes []algorithms.Lane
	for _, p := range res.Algorithms {
		lanes = append(lanes, algorithms.Lane{Spec: p.Spec()})
	}
	sim, err := algorithms.Simulate(algorithms.Simulation{Lanes: lanes, Traffic: tr})
	if err != nil {
		t.Fatal(err)
	}
	tb := res.Spec(algorithms.NameTokenBucket)
	return DesignerView{
		Title: "ratelab test",
		Form: FormView{Action: "/", ResultsURL: "/designer/results", Sections: []Section{
			{ID: "service", Legend: "Service", Fields: []Field{
				{Name: "capacity", ID: "f-capacity", Label: "Capacity", Value: "20000", Numeric: true, Help: "requests/s"},
				{Name: "enforcement", ID: "f-enforcement", Label: "Enforcement", Value: "local",
					Options: []Option{{Value: "shared", Label: "shared"}, {Value: "local", Label: "local"}}},
			}},
			{ID: "tiers", Legend: "Tiers", Message: Field{Name: "tiers", ID: "f-tiers"}, Rows: []Row{
				{Label: "Tier 1", Fields: []Field{{Name: "tiers.0.name", ID: "f-tiers-0-name", Label: "Name", Value: "anonymous"}}},
				{Label: "Tier 2", Added: true, Fields: []Field{{Name: "tiers.1.name", ID: "f-tiers-1-name", Label: "Name"}}},
			}},
		}},
		Results: ResultsView{
			Policy: &PolicyView{Name: "sample", Limits: []LimitView{
				{Label: "default limit", Field: "defaults.limit", Spec: tb.String(), Proposal: tb.String()},
				{Label: "tier paid", Field: "tiers[0].limit", Spec: "gcra(rate=40/s, burst=40)", Proposal: "gcra(rate=40/s, burst=400)",
					Params: []LimitParamView{{Name: "burst", Value: "40", Proposal: "400", Pinned: true, Note: "pinned 40, proposal 400: a burst below the proposal rejects the designed peak"}}},
			}},
			Result:  &res,
			Query:   "capacity=20000",
			Pattern: PatternView{Name: "idle_then_burst", Shape: "silence, then a burst", Shows: "burst capacity", Arrivals: len(tr.Arrivals), Params: []ParamValue{{"count", "100"}}},
			Charts:  PatternCharts(sim, "client-1", IdealLine{Rate: tb.Rate, Burst: float64(tb.Burst), Keys: 1}),
		},
	}
}

func TestDesignerRendersEverySection(t *testing.T) {
	doc := render(t, Designer(sampleView(t, fullInput())))
	for _, id := range []string{
		"layout", "designer", "designer-title", "design-form", "results", "summary", "checks", "algorithms",
		"tiers", "endpoints", "per-replica", "replica-caveat", "share", "share-assumption", "headers", "backoff", "charts",
		"section-service", "section-tiers", "design-link", "policy-limits", "pin", "pin-note",
	} {
		if n := byTestID(doc, id).Length(); n != 1 {
			t.Errorf(`[data-testid=%q]: got %d elements, want 1`, id, n)
		}
	}
	for _, name := range algorithms.Names {
		card := byTestID(doc, "algo-"+string(name))
		if card.Length() != 1 {
			t.Errorf("no card for %s", name)
			continue
		}
		if card.Find(".reason").Length() == 0 {
			t.Errorf("%s: no reasons", name)
		}
		if byTestID(doc, "headers-"+string(name)).Length() != 1 {
			t.Errorf("no header preview for %s", name)
		}
	}
	if got := byTestID(doc, "summary-rate").Text(); got != "100 requests/s" {
		t.Errorf("rate: got %q, want p99 × margin = 50 × 2 = 100 requests/s", got)
	}
	if got := byTestID(doc, "token_bucket-burst").Text(); got != "401 requests" {
		t.Errorf("token bucket burst: got %q, want 401 requests", got)
	}
	if got := doc.Find(`[data-testid="algo-gcra"] [data-testid="gcra-tolerance"]`).Text(); got == "" {
		t.Error("GCRA card has no tolerance")
	}
	if n := byTestID(doc, "tier-row").Length(); n != 2 {
		t.Errorf("tier rows: got %d, want 2", n)
	}
	if n := byTestID(doc, "endpoint-row").Length(); n != 1 {
		t.Errorf("endpoint rows: got %d, want 1", n)
	}
	if n := byTestID(doc, "backoff-row").Length(); n != calc.DefaultRetryAttempts {
		t.Errorf("backoff rows: got %d, want %d", n, calc.DefaultRetryAttempts)
	}
	if got := byTestID(doc, "response-rejected").First().Text(); !strings.Contains(got, "429") || !strings.Contains(got, "Retry-After:") {
		t.Errorf("rejected response preview: %q", got)
	}
	if got := doc.Find("title").Text(); got != "ratelab test" {
		t.Errorf("title: got %q", got)
	}
}

func TestChecksShowSeverityNumbersAndFix(t *testing.T) {
	// 200 clients × 10/s = 2000/s against 1600/s usable: overcommitted.
	v := sampleView(t, calc.Input{Capacity: 2000, Clients: 200, P50: 1, P95: 3, P99: 5})
	doc := render(t, Results(v.Results))
	check := doc.Find(`[data-check-id="overcommit"]`)
	if check.Length() != 1 {
		t.Fatalf("overcommit check: got %d, want 1", check.Length())
	}
	if got := check.AttrOr("data-severity", ""); got != "warning" {
		t.Errorf("severity: got %q", got)
	}
	if got := check.Find(".severity").Text(); got != "warning" {
		t.Errorf("severity label: got %q", got)
	}
	if got := check.Find(`[data-testid="check-numbers"]`).Text(); !strings.Contains(got, "ratio = 1.25") {
		t.Errorf("numbers: got %q, want ratio = 1.25", got)
	}
	if got := check.Find(`[data-testid="check-fix"]`).Text(); !strings.HasPrefix(got, "Fix:") {
		t.Errorf("fix: got %q", got)
	}
}

func TestChartFiguresCarryOptionAndTable(t *testing.T) {
	v := sampleView(t, fullInput())
	doc := render(t, Results(v.Results))
	for _, c := range v.Results.Charts {
		fig := byTestID(doc, c.ID)
		if fig.Length() != 1 {
			t.Fatalf("%s: no figure", c.ID)
		}
		div := fig.Find(".chart[data-chart-option]")
		raw, ok := div.Attr("data-chart-option")
		if !ok {
			t.Fatalf("%s: no option", c.ID)
		}
		var got, want any
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("%s: option attribute is not JSON: %v", c.ID, err)
		}
		if err := json.Unmarshal([]byte(c.Option), &want); err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(got, want) {
			t.Errorf("%s: the attribute does not carry the option", c.ID)
		}
		table := byTestID(doc, c.ID+"-table")
		if n := table.Find("tbody tr").Length(); n != len(c.Table.Rows) {
			t.Errorf("%s: table rows %d, want %d", c.ID, n, len(c.Table.Rows))
		}
		if got := table.Find("thead th").Length(); got != len(c.Table.Columns) {
			t.Errorf("%s: table columns %d, want %d", c.ID, got, len(c.Table.Columns))
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestFormFieldsKeepTheirValuesAndMessages(t *testing.T) {
	v := sampleView(t, fullInput())
	v.Form.Sections[0].Fields[0].Value = `"><script>alert(1)</script>`
	v.Form.Sections[0].Fields[0].Error = "capacity: not a number"
	doc := render(t, DesignForm(v.Form))
	form := byTestID(doc, "design-form")
	if form.AttrOr("method", "") != "get" || form.AttrOr("action", "") != "/" {
		t.Errorf("form: method %q action %q, want a GET form to /", form.AttrOr("method", ""), form.AttrOr("action", ""))
	}
	if got := form.AttrOr("hx-get", ""); got != "/designer/results" {
		t.Errorf("hx-get: got %q", got)
	}
	if form.AttrOr("hx-push-url", "") != "true" || form.AttrOr("hx-target", "") != "#results" {
		t.Error("form must push the URL and target #results")
	}
	in := doc.Find("#f-capacity")
	if got := in.AttrOr("value", ""); got != `"><script>alert(1)</script>` {
		t.Errorf("value: got %q, want the typed value back", got)
	}
	if in.AttrOr("aria-invalid", "") != "true" || in.AttrOr("inputmode", "") != "decimal" {
		t.Error("capacity: want aria-invalid and inputmode=decimal")
	}
	if got := byTestID(doc, "msg-capacity").Text(); got != "capacity: not a number" {
		t.Errorf("message: got %q", got)
	}
	if got := in.AttrOr("aria-describedby", ""); !strings.Contains(got, "msg-capacity") {
		t.Errorf("aria-describedby: got %q, want the message", got)
	}
	if n := doc.Find("script").Length(); n != 0 {
		t.Errorf("typed value escaped into %d script elements", n)
	}
	if got := doc.Find(`#f-enforcement option[selected]`).AttrOr("value", ""); got != "local" {
		t.Errorf("selected enforcement: got %q, want local", got)
	}
	if n := byTestID(doc, "row-tiers-0").Length() + byTestID(doc, "row-tiers-1").Length(); n != 2 {
		t.Errorf("tier rows: got %d, want 2", n)
	}
}

func TestResultsUpdateSwapsMessagesOutOfBand(t *testing.T) {
	v := sampleView(t, fullInput())
	v.Form.Sections[0].Fields[0].Error = "capacity: bad"
	doc := render(t, ResultsUpdate(v))
	if n := byTestID(doc, "results").Length(); n != 1 {
		t.Fatalf("results: got %d", n)
	}
	if n := doc.Find("html > body > form, [data-testid=designer]").Length(); n != 0 {
		t.Error("the fragment holds the page")
	}
	// The messages travel in one carrier swapped out of band.
	oob := doc.Find(`#field-messages[hx-swap-oob="true"] [data-msg-for]`)
	ids := map[string]string{}
	oob.Each(func(_ int, s *goquery.Selection) { ids[s.AttrOr("data-msg-for", "")] = s.Text() })
	if ids["msg-capacity"] != "capacity: bad" {
		t.Errorf("capacity message out of band: got %q", ids["msg-capacity"])
	}
	for _, id := range []string{"msg-enforcement", "msg-tiers", "msg-tiers-0-name"} {
		if _, ok := ids[id]; !ok {
			t.Errorf("no out-of-band message %s", id)
		}
	}
	if _, ok := ids["msg-tiers-1-name"]; ok {
		t.Error("an added blank row has an out-of-band message, but the page has no such row")
	}
}

func TestResultsWithProblemsShowNoNumbers(t *testing.T) {
	doc := render(t, Results(ResultsView{Problems: []Problem{
		{Field: "capacity", Anchor: "#f-capacity", Message: "capacity: -1 is out of range"},
		{Message: "something general"},
	}}))
	items := byTestID(doc, "problem")
	if items.Length() != 2 {
		t.Fatalf("problems: got %d, want 2", items.Length())
	}
	if got := items.First().Find("a").AttrOr("href", ""); got != "#f-capacity" {
		t.Errorf("problem link: got %q", got)
	}
	if byTestID(doc, "summary").Length() != 0 || byTestID(doc, "charts").Length() != 0 {
		t.Error("results with problems show numbers")
	}
}

// TestLayoutLoadsOnlyLocalAssets holds the house rule: no inline script or
// style and no CDN, so a strict Content-Security-Policy can hold.
func TestLayoutLoadsOnlyLocalAssets(t *testing.T) {
	doc := render(t, Designer(sampleView(t, fullInput())))
	if n := doc.Find("script:not([src]), style, [style]").Length(); n != 0 {
		t.Errorf("found %d inline script or style elements or attributes, want 0", n)
	}
	if got := doc.Find(`meta[charset]`).AttrOr("charset", ""); !strings.EqualFold(got, "utf-8") {
		t.Errorf("meta charset: got %q, want utf-8", got)
	}
	var srcs []string
	doc.Find("script[src]").Each(func(_ int, s *goquery.Selection) { srcs = append(srcs, s.AttrOr("src", "")) })
	want := []string{"/static/vendor/htmx.min.js?v=", "/static/vendor/echarts.min.js?v=", "/static/js/charts.js?v=", "/static/js/copy.js?v=", "/static/js/lazy.js?v=", "/static/js/upload.js?v=", "/static/js/live.js?v=", "/static/js/sliders.js?v="}
	if len(srcs) != len(want) {
		t.Fatalf("scripts: got %q", srcs)
	}
	for i, w := range want {
		if !strings.HasPrefix(srcs[i], w) {
			t.Errorf("script %d: got %q, want %s…", i, srcs[i], w)
		}
	}
	doc.Find("link[href]").Each(func(_ int, s *goquery.Selection) {
		if href := s.AttrOr("href", ""); !strings.HasPrefix(href, "/static/") || !strings.Contains(href, "?v=") {
			t.Errorf("link href %q: want a versioned /static/ URL", href)
		}
	})
	var cfg map[string]any
	if err := json.Unmarshal([]byte(doc.Find(`meta[name="htmx-config"]`).AttrOr("content", "")), &cfg); err != nil {
		t.Fatalf("htmx-config: %v", err)
	}
	if cfg["includeIndicatorStyles"] != false || cfg["allowEval"] != false {
		t.Errorf("htmx-config %v: want no indicator styles and no eval (CSP)", cfg)
	}
}

func TestDesignerEscapesTitle(t *testing.T) {
	v := sampleView(t, fullInput())
	v.Title = `<script>alert(1)</script>`
	doc := render(t, Designer(v))
	if n := doc.Find("script:not([src])").Length(); n != 0 {
		t.Errorf("title was not escaped: found %d inline script elements", n)
	}
}

func TestNum(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want string
	}{{100, "100"}, {9.983333, "9.983"}, {0.1002, "0.1002"}, {1e-7, "1e-07"}, {2.50, "2.5"}} {
		if got := Num(tt.in); got != tt.want {
			t.Errorf("Num(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestClientCount(t *testing.T) {
	// 200 clients × 0.000437 = 0.087 expected: not a fraction of a client.
	for _, tt := range []struct {
		in   float64
		want string
	}{{0.087, "fewer than one"}, {0.49, "fewer than one"}, {0.5, "about 1"}, {12.4, "about 12"}, {1500, "about 1500"}} {
		if got := clientCount(tt.in); got != tt.want {
			t.Errorf("clientCount(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPolicyExport(t *testing.T) {
	doc := render(t, PolicyExport("/export/policy.yaml?capacity=1000&clients=10"))
	link := byTestID(doc, "export-link")
	if href, _ := link.Attr("href"); href != "/export/policy.yaml?capacity=1000&clients=10" {
		t.Errorf("href %q", href)
	}
	if _, ok := link.Attr("download"); !ok {
		t.Error("the link does not download")
	}
	if byTestID(render(t, PolicyExport("")), "policy-export").Length() != 0 {
		t.Error("an export without a URL renders")
	}
}

func TestPolicyImport(t *testing.T) {
	doc := render(t, PolicyImport(ImportView{Action: "/import"}))
	if byTestID(doc, "policy-file").Length() != 1 || byTestID(doc, "import-errors").Length() != 0 {
		t.Fatal("want the panel without errors")
	}
	form := byTestID(doc, "import-form")
	if a, _ := form.Attr("action"); a != "/import" {
		t.Errorf("action %q", a)
	}
	if e, _ := form.Attr("enctype"); e != "multipart/form-data" {
		t.Errorf("enctype %q", e)
	}

	doc = render(t, PolicyImport(ImportView{Action: "/import", YAML: "a: <b>", Errors: []ImportError{
		{Line: 3, Column: 5, Field: "tiers[1].limit.brust", Message: "unknown field `brust`", Hint: "did you mean `burst`?"},
		{Message: "the document is empty"},
	}}))
	errs := byTestID(doc, "import-error")
	if errs.Length() != 2 {
		t.Fatalf("%d errors, want 2", errs.Length())
	}
	first := errs.First().Text()
	for _, want := range []string{"3:5", "tiers[1].limit.brust", "unknown field `brust`", "did you mean `burst`?"} {
		if !strings.Contains(first, want) {
			t.Errorf("first error %q lacks %q", first, want)
		}
	}
	if f, _ := errs.First().Attr("data-field"); f != "tiers[1].limit.brust" {
		t.Errorf("data-field %q", f)
	}
	if got := byTestID(doc, "import-yaml").Text(); got != "a: <b>" {
		t.Errorf("textarea %q", got)
	}
}
