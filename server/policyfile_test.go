package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/design"
	"github.com/ratelab/ratelab/policy"
)

// roundTripDesign is a canonical design query (as the page's links spell
// it) using every section of the form except the chart pattern, which a
// policy does not carry; its rows are numbered from 0, as an import
// numbers them.
const roundTripDesign = "capacity=20000&headroom=0.25&replicas=5&enforcement=local" +
	"&p50=5&p95=30&p99=50&percentile_unit=second&margin=2&peak=300&peak_seconds=2&window=60&max_delay=2" +
	"&tiers.0.name=anonymous&tiers.0.clients=100&tiers.0.multiplier=0.5" +
	"&tiers.1.name=paid&tiers.1.clients=20&tiers.1.multiplier=4" +
	"&endpoints.0.method=GET&endpoints.0.path=%2Fv1%2Freports&endpoints.0.cost=8" +
	"&retry.base=1&retry.factor=2&retry.cap=30&retry.attempts=4&retry.jitter=0.25&retry.jitter_mode=equal"

// do sends a request to the real server.
func do(t *testing.T, method, target, contentType string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(rec, req)
	return rec
}

func TestPolicySchemaIsServed(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		rec := do(t, method, schemaPath, "", nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d", method, rec.Code)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/schema+json" {
			t.Errorf("%s: Content-Type %q", method, ct)
		}
		if method == http.MethodGet && !bytes.Equal(rec.Body.Bytes(), policy.Schema) {
			t.Errorf("body is not policy.Schema")
		}
	}
	var doc struct {
		Schema string `json:"$schema"`
	}
	if err := json.Unmarshal(policy.Schema, &doc); err != nil || !strings.Contains(doc.Schema, "json-schema.org") {
		t.Errorf("schema: %v, $schema %q", err, doc.Schema)
	}
}

func TestCanonicalQueryIsTheRoundTripDesign(t *testing.T) {
	if got := parseDesignQuery(roundTripDesign).query(); got != roundTripDesign {
		t.Fatalf("roundTripDesign is not canonical:\n got %s\nwant %s", got, roundTripDesign)
	}
	p, probs := parseDesignQuery(roundTripDesign).policy()
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if got := design.FromPolicy(p, algorithms.Pattern{}).Query(); got != roundTripDesign {
		t.Errorf("the design of its policy:\n got %s\nwant %s", got, roundTripDesign)
	}
}

func TestExportPolicy(t *testing.T) {
	tests := []struct {
		name, query string
	}{
		{"example design", ""},
		{"every section", roundTripDesign},
		{"with the chart pattern", url.Values(fullDesign).Encode()},
		{"a bad pattern does not matter", "capacity=1000&clients=10&pattern=nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := exportPath + "?" + tt.query
			rec := do(t, http.MethodGet, target, "", nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/yaml; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="design.yaml"` {
				t.Errorf("Content-Disposition %q", cd)
			}
			p, err := policy.Decode(bytes.NewReader(rec.Body.Bytes()))
			if err != nil {
				t.Fatalf("exported YAML does not decode: %v\n%s", err, rec.Body)
			}
			want := parseDesignQuery(tt.query).d.Input()
			if got := p.Design(); !reflect.DeepEqual(got, want) {
				t.Errorf("Design of the export:\n got %+v\nwant %+v", got, want)
			}
			again := do(t, http.MethodGet, target, "", nil)
			if !bytes.Equal(again.Body.Bytes(), rec.Body.Bytes()) {
				t.Errorf("two exports differ:\n%s\n%s", rec.Body, again.Body)
			}
		})
	}
}

func TestExportRejectsADesignWithProblems(t *testing.T) {
	schema := openapiSchema(t, "Problem")
	tests := []struct {
		name, query, field string
	}{
		{"out of range", "capacity=-1&clients=10", "capacity"},
		{"not a number", "capacity=1000&clients=10&tiers.4.name=a&tiers.4.clients=x", "tiers.4.clients"},
		{"calculator's own check", "capacity=1000&clients=10&tiers.2.name=a&tiers.2.clients=-5", "tiers.2.clients"},
		{"not UTF-8", "capacity=1000&clients=10&endpoints.3.method=GET&endpoints.3.path=%2Fa%80", "endpoints.3.path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, http.MethodGet, exportPath+"?"+tt.query, "", nil)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			validate(t, schema, rec.Body.Bytes())
			if !strings.Contains(rec.Body.String(), `"field":"`+tt.field+`"`) {
				t.Errorf("errors do not name %s: %s", tt.field, rec.Body)
			}
		})
	}
	// Hostile queries answer, never with a 500.
	for _, q := range []string{"capacity=%zz", "tiers.100.name=x&capacity=1", "capacity=1e400", strings.Repeat("a=1&", 20000)} {
		if rec := do(t, http.MethodGet, exportPath+"?"+q, "", nil); rec.Code >= 500 {
			t.Errorf("%.40s: status %d", q, rec.Code)
		}
	}
}

func TestPolicyFilename(t *testing.T) {
	tests := []struct{ name, want string }{
		{"design", "design.yaml"},
		{"tiered-api", "tiered-api.yaml"},
		{"", "ratelab-policy.yaml"},
		{`a"b`, "ratelab-policy.yaml"},
		{"../etc/passwd", "ratelab-policy.yaml"},
		{".hidden", "ratelab-policy.yaml"},
	}
	for _, tt := range tests {
		if got := policyFilename(tt.name); got != tt.want {
			t.Errorf("policyFilename(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// lintAnswer is the lint API's answer.
type lintAnswer struct {
	Valid  bool `json:"valid"`
	Errors []struct {
		Line    int    `json:"line"`
		Column  int    `json:"column"`
		Field   string `json:"field"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
	} `json:"errors"`
	Findings []struct {
		Severity string `json:"severity"`
		ID       string `json:"id"`
		Field    string `json:"field"`
		Line     int    `json:"line"`
	} `json:"findings"`
}

func lint(t *testing.T, contentType, body string) lintAnswer {
	t.Helper()
	rec := do(t, http.MethodPost, lintPath, contentType, []byte(body))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	validate(t, openapiSchema(t, "LintResult"), rec.Body.Bytes())
	var a lintAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// billionLaughs nests nine levels of nine aliases: about 387 million nodes
// expanded.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: lol}\nservice: {capacity: 100}\nx0: &a0 [lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x%d: &a%d [", i, i)
		for j := range 9 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestPolicyLintAPI(t *testing.T) {
	tiered, err := os.ReadFile("../policy/testdata/examples/tiered.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range []string{"", "application/yaml", "application/x-yaml", "text/yaml", "text/plain; charset=utf-8"} {
		a := lint(t, ct, string(tiered))
		if !a.Valid || len(a.Errors) != 0 || a.Findings == nil {
			t.Errorf("%q: tiered example: %+v", ct, a)
		}
	}

	// A decodable policy with known findings, each placed in the file.
	doc := "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: x}\n" +
		"service: {capacity: 100, on_store_failure: fail_closed}\n" +
		"defaults:\n  mode: shadow\n  limit: {algorithm: token_bucket, rate: 5, burst: 10}\n"
	a := lint(t, "application/yaml", doc)
	ids := map[string]int{}
	for _, f := range a.Findings {
		ids[f.ID] = f.Line
	}
	if !a.Valid || ids[policy.LintFailClosed] != 4 || ids[policy.LintShadowMode] != 6 {
		t.Errorf("findings: %+v", a)
	}

	// A typo: valid false, the error with its place and a hint.
	a = lint(t, "application/yaml", strings.Replace(doc, "burst: 10", "brust: 10", 1))
	if a.Valid || len(a.Errors) == 0 || len(a.Findings) != 0 {
		t.Fatalf("typo: %+v", a)
	}
	found := false
	for _, e := range a.Errors {
		if e.Field == "defaults.limit.brust" {
			found = true
			if e.Line != 7 || e.Column == 0 || e.Hint != "did you mean `burst`?" {
				t.Errorf("typo: %+v", e)
			}
		}
	}
	if !found {
		t.Errorf("no error names defaults.limit.brust: %+v", a.Errors)
	}

	// Not YAML at all, empty, and a billion laughs: answered, not valid.
	// No timers: a document that expanded would not finish at all.
	for name, body := range map[string]string{"syntax": "a: [", "empty": "", "billion laughs": billionLaughs()} {
		if a := lint(t, "application/yaml", body); a.Valid || len(a.Errors) == 0 {
			t.Errorf("%s: %+v", name, a)
		}
	}
}

func TestPolicyLintAPIRefuses(t *testing.T) {
	schema := openapiSchema(t, "Problem")
	rec := do(t, http.MethodPost, lintPath, "application/json", []byte(`{}`))
	if rec.Code != http.StatusUnsupportedMediaType {
		t.Errorf("JSON body: status %d", rec.Code)
	}
	validate(t, schema, rec.Body.Bytes())

	big := "# " + strings.Repeat("x", policy.MaxSize) + "\n"
	rec = do(t, http.MethodPost, lintPath, "application/yaml", []byte(big))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("1 MiB + body: status %d", rec.Code)
	}
	validate(t, schema, rec.Body.Bytes())
}

// FuzzPolicyLintAPI posts arbitrary documents to the lint: the answer is
// always a 200 with the documented JSON (or 413), never a 500.
func FuzzPolicyLintAPI(f *testing.F) {
	for _, path := range []string{"minimal.yaml", "public-api.yaml", "tiered.yaml"} {
		b, err := os.ReadFile("../policy/testdata/examples/" + path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("a: [")
	f.Add("apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: x}\nservice: {capacity: 1e400}\n")
	f.Add("apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: x}\nservice: {capacity: 100}\ntiers: [{name: a}, {name: a}]\n")
	f.Add("x: &a [*a]\n")
	f.Add("\xff\xfe")
	srv := newServer(config{})
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, lintPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/yaml")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
		var a lintAnswer
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
			t.Fatalf("body is not JSON: %v\n%s", err, rec.Body)
		}
		if rec.Code == http.StatusOK && a.Valid == (len(a.Errors) > 0) {
			t.Fatalf("valid %v with %d errors", a.Valid, len(a.Errors))
		}
	})
}

// upload is a multipart import form with the file field "policy" and the
// textarea "yaml".
func upload(t *testing.T, file, text string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fw, err := w.CreateFormFile("policy", "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write([]byte(file))
	if err := w.WriteField("yaml", text); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), buf.Bytes()
}

// TestImportRoundTrip follows a design from the page through its download
// link, then imports the file by upload and by paste: the designer comes
// back to the very same design URL.
func TestImportRoundTrip(t *testing.T) {
	doc, _ := getDoc(t, "/?"+roundTripDesign)
	href, ok := testid(doc, "export-link").Attr("href")
	if !ok || href != exportPath+"?"+roundTripDesign {
		t.Fatalf("export link %q", href)
	}
	exported := do(t, http.MethodGet, href, "", nil)
	if exported.Code != http.StatusOK {
		t.Fatalf("export: status %d", exported.Code)
	}
	yaml := exported.Body.String()

	ct, body := upload(t, yaml, "")
	pasted := url.Values{"yaml": {yaml}}.Encode()
	for name, req := range map[string]struct {
		ct   string
		body []byte
	}{
		"upload": {ct, body},
		"paste":  {"application/x-www-form-urlencoded", []byte(pasted)},
	} {
		rec := do(t, http.MethodPost, importPath, req.ct, req.body)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("%s: status %d\n%.1000s", name, rec.Code, rec.Body)
		}
		if loc := rec.Header().Get("Location"); loc != "/?"+roundTripDesign {
			t.Errorf("%s: Location\n got %s\nwant /?%s", name, loc, roundTripDesign)
		}
	}

	// The page the import leads to shows that design.
	doc, _ = getDoc(t, "/?"+roundTripDesign)
	if v, _ := doc.Find("#f-tiers-1-name").Attr("value"); v != "paid" {
		t.Errorf("tier 1 name %q", v)
	}
}

func TestImportShowsDecodeErrors(t *testing.T) {
	bad := "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: x}\nservice: {capacity: 100}\n" +
		"defaults:\n  limit: {algorithm: token_bucket, rate: 5, brust: 10}\n"
	ct, body := upload(t, "", bad) // no file: the textarea counts
	tests := []struct {
		name, ct string
		body     []byte
		want     string // in the first error's text
		yaml     string // the textarea's text afterwards
	}{
		{"pasted typo", ct, body, "6:", bad},
		{"nothing", "application/x-www-form-urlencoded", []byte("yaml="), "choose a file", ""},
		{"not YAML", "application/x-www-form-urlencoded", []byte(url.Values{"yaml": {"a: ["}}.Encode()), "", "a: ["},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, http.MethodPost, importPath, tt.ct, tt.body)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d", rec.Code)
			}
			doc, err := goquery.NewDocumentFromReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			errs := testid(doc, "import-error")
			if errs.Length() == 0 || !strings.Contains(errs.First().Text(), tt.want) {
				t.Errorf("errors: %q", errs.Text())
			}
			if got := testid(doc, "import-yaml").Text(); got != tt.yaml {
				t.Errorf("textarea %q, want %q", got, tt.yaml)
			}
			if testid(doc, "results").Length() != 0 {
				t.Error("the failed import shows a design")
			}
			// The errors come first in the page and take the focus.
			box := testid(doc, "import-errors")
			if _, ok := box.Attr("autofocus"); !ok || box.AttrOr("tabindex", "") != "-1" {
				t.Error("the errors carry no autofocus with tabindex -1")
			}
			if !doc.Find(`main form, main [data-testid="import-errors"]`).First().Is(`[data-testid="import-errors"]`) {
				t.Error("the form comes before the errors")
			}
		})
	}
	// The typo names the field and its hint.
	rec := do(t, http.MethodPost, importPath, ct, body)
	doc, _ := goquery.NewDocumentFromReader(rec.Body)
	e := doc.Find(`[data-testid="import-error"][data-field="defaults.limit.brust"]`)
	if !strings.Contains(e.Text(), "6:") || !strings.Contains(e.Text(), "did you mean `burst`?") {
		t.Errorf("typo error: %q", e.Text())
	}
}

func TestPolicyFilePanel(t *testing.T) {
	doc, _ := getDoc(t, "/?"+roundTripDesign)
	form := testid(doc, "import-form")
	if form.Length() != 1 {
		t.Fatal("no import form")
	}
	for attr, want := range map[string]string{"action": importPath, "method": "post", "enctype": "multipart/form-data"} {
		if got, _ := form.Attr(attr); got != want {
			t.Errorf("import form %s=%q, want %q", attr, got, want)
		}
	}
	if n, _ := form.Find(`input[type="file"]`).Attr("name"); n != "policy" {
		t.Errorf("file input name %q", n)
	}
	if n, _ := form.Find("textarea").Attr("name"); n != "yaml" {
		t.Errorf("textarea name %q", n)
	}
	if testid(doc, "import-errors").Length() != 0 {
		t.Error("errors shown before any import")
	}

	// The results fragment carries the download link, so htmx keeps it in
	// step with the design.
	frag, _ := getDoc(t, resultsPath+"?capacity=3000&clients=30")
	if href, _ := testid(frag, "export-link").Attr("href"); href != exportPath+"?capacity=3000&clients=30" {
		t.Errorf("fragment's export link %q", href)
	}
	// A design with problems has nothing to download.
	bad, _ := getDoc(t, "/?capacity=-1&clients=10")
	if testid(bad, "export-link").Length() != 0 {
		t.Error("export link on a design with problems")
	}
}

func TestImportRefusesTooLarge(t *testing.T) {
	ct, body := upload(t, strings.Repeat("x", 2<<20), "")
	for _, length := range []int64{int64(len(body)), -1} { // declared, and chunked
		req := httptest.NewRequest(http.MethodPost, importPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		req.ContentLength = length
		rec := httptest.NewRecorder()
		newServer(config{}).ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("Content-Length %d: status %d", length, rec.Code)
		}
	}
}

// FuzzExportImport holds the export and import to the designer's promise
// on any design URL the page shows results for: the exported file
// decodes, and imports as the same design (rows renumbered from 0, the
// chart pattern dropped).
func FuzzExportImport(f *testing.F) {
	f.Add("")
	f.Add(roundTripDesign)
	f.Add(url.Values(fullDesign).Encode())
	f.Add("capacity=0.001&clients=1&p99=0.0000001&window=0.000000001")
	f.Add("capacity=1e9&tiers.7.name=x%20y&tiers.7.clients=3&endpoints.2.method=get&endpoints.2.path=/a?b&endpoints.2.cost=2")
	f.Fuzz(func(t *testing.T, raw string) {
		d := parseDesignQuery(raw)
		exported, probs := d.policy()
		if len(probs) > 0 {
			return
		}
		var buf bytes.Buffer
		if err := policy.Encode(&buf, exported); err != nil {
			t.Fatal(err)
		}
		p, err := policy.Decode(&buf)
		if err != nil {
			t.Fatalf("export of %q does not decode: %v\n%s", raw, err, buf.String())
		}
		// The import is the same policy, byte for byte.
		again, probs := parseDesignQuery(design.FromPolicy(p, algorithms.Pattern{}).Query()).policy()
		if len(probs) > 0 {
			t.Fatalf("import of %q has problems: %v", raw, probs)
		}
		var a, b bytes.Buffer
		if err := policy.Encode(&a, exported); err != nil {
			t.Fatal(err)
		}
		if err := policy.Encode(&b, again); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Fatalf("import of %q:\n%s\nwant\n%s", raw, b.String(), a.String())
		}
	})
}

// TestExamplesRoundTripThroughTheRoutes: every example policy, imported
// through POST /import and downloaded again from the designer URL it leads
// to (GET /export/policy.yaml), is the same policy, byte for byte after
// canonical encoding, its name included — algorithms, keys, endpoint limits
// and all.
func TestExamplesRoundTripThroughTheRoutes(t *testing.T) {
	files, err := filepath.Glob("../policy/testdata/examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			orig, err := policy.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := policy.Encode(&want, orig); err != nil {
				t.Fatal(err)
			}
			ct, body := upload(t, string(data), "")
			rec := do(t, http.MethodPost, importPath, ct, body)
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("import: status %d\n%.1000s", rec.Code, rec.Body)
			}
			loc, err := url.Parse(rec.Header().Get("Location"))
			if err != nil || loc.Path != designerPath {
				t.Fatalf("import: Location %q", rec.Header().Get("Location"))
			}
			page := do(t, http.MethodGet, loc.String(), "", nil)
			if page.Code != http.StatusOK || strings.Contains(page.Body.String(), `data-testid="problems"`) {
				t.Fatalf("the designer shows problems for %s", loc)
			}
			exported := do(t, http.MethodGet, exportPath+"?"+loc.RawQuery, "", nil)
			if exported.Code != http.StatusOK {
				t.Fatalf("export: status %d: %s", exported.Code, exported.Body)
			}
			if cd, w := exported.Header().Get("Content-Disposition"), `attachment; filename="`+orig.Metadata.Name+`.yaml"`; cd != w {
				t.Errorf("Content-Disposition %q, want %q", cd, w)
			}
			back, err := policy.Decode(bytes.NewReader(exported.Body.Bytes()))
			if err != nil {
				t.Fatalf("export does not decode: %v\n%s", err, exported.Body)
			}
			var got bytes.Buffer
			if err := policy.Encode(&got, back); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("round trip through %s:\n%s\nwant\n%s", loc, got.String(), want.String())
			}
		})
	}
}

// TestBadPolicyInTheURLNamesItsPath: a limit out of range in the design URL
// is a 422 naming the URL's parameter and the field's policy path, whatever
// the row's number in the URL; never a 500.
func TestBadPolicyInTheURLNamesItsPath(t *testing.T) {
	schema := openapiSchema(t, "Problem")
	tests := []struct {
		query, field, path string
	}{
		{"capacity=1000&clients=10&tiers.3.name=paid&tiers.3.clients=10&tiers.3.limit.burst=0", "tiers.3.limit.burst", "tiers[0].limit.burst"},
		{"capacity=1000&clients=10&tiers.1.name=a&tiers.1.clients=5&tiers.4.name=b&tiers.4.clients=5&tiers.4.limit.algorithm=gcra&tiers.4.limit.rate=-2", "tiers.4.limit.rate", "tiers[1].limit.rate"},
		{"capacity=1000&clients=10&global.limit.algorithm=fixed_window&global.limit.window=0.0001", "global.limit.window", "global.limit.window"},
		{"capacity=1000&clients=10&endpoints.2.method=GET&endpoints.2.path=/a&endpoints.2.limit.algorithm=gcra&endpoints.2.limit.rate=1", "endpoints.2.limit.burst", "endpoints[0].limit.burst"},
		{"capacity=1000&clients=10&limit.algorithm=leaky&", "limit.algorithm", "defaults.limit.algorithm"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			rec := do(t, http.MethodGet, exportPath+"?"+tt.query, "", nil)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			validate(t, schema, rec.Body.Bytes())
			var body struct {
				Errors []FieldProblem `json:"errors"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, e := range body.Errors {
				if e.Field == tt.field && e.Path == tt.path && strings.Contains(e.Message, tt.field) {
					found = true
				}
			}
			if !found {
				t.Errorf("no error on %s (%s) naming it: %s", tt.field, tt.path, rec.Body)
			}
		})
	}
}
