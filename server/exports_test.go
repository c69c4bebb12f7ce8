package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/targets"
	"github.com/ratelab/ratelab/policy"
)

// designInput is the calculator input of the round-trip design, parsed
// the way the server parses it.
func designPolicy(t *testing.T, query string) policy.Policy {
	t.Helper()
	p, probs := parseDesignQuery(query).policy()
	if len(probs) > 0 {
		t.Fatalf("design %s has problems: %v", query, probs)
	}
	return p
}

// TestExportTargetMatchesRender: every target's download is byte for byte
// what targets.Render makes of the design's policy (the command line's
// code path), with its file name and fidelity in the headers.
func TestExportTargetMatchesRender(t *testing.T) {
	p := designPolicy(t, roundTripDesign)
	for _, tg := range targets.All {
		t.Run(tg.Name, func(t *testing.T) {
			want, err := targets.Render(tg.Name, p, export.Options{})
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			rec := do(t, http.MethodGet, "/export/"+tg.Name+"?"+roundTripDesign, "", nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if !bytes.Equal(rec.Body.Bytes(), want.Body) {
				t.Errorf("body differs from targets.Render's")
			}
			if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="`+want.Filename+`"` {
				t.Errorf("Content-Disposition %q, want the file name %q", cd, want.Filename)
			}
			if f := rec.Header().Get("X-Ratelab-Fidelity"); f != string(want.Fidelity) {
				t.Errorf("X-Ratelab-Fidelity %q, want %q", f, want.Fidelity)
			}
			if ct := rec.Header().Get("Content-Type"); ct != want.MediaType {
				t.Errorf("Content-Type %q, want %q", ct, want.MediaType)
			}
		})
	}
}

// TestExportPolicyTarget: the policy target is the policy file itself,
// and decodes back to the design.
func TestExportPolicyTarget(t *testing.T) {
	rec := do(t, http.MethodGet, "/export/policy?"+roundTripDesign, "", nil)
	p, err := policy.Decode(rec.Body)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got, want := p.Design(), designPolicy(t, roundTripDesign).Design(); !equalJSON(got, want) {
		t.Errorf("design after export: %+v, want %+v", got, want)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestExportTargetRefusals: an unknown target, a bad design, an option
// that cannot go into a config file and a tier name that cannot be a
// header value each get their status and name the parameter.
func TestExportTargetRefusals(t *testing.T) {
	tests := []struct {
		name   string
		target string
		status int
		field  string
		msg    string
	}{
		{"unknown target", "/export/nope?" + roundTripDesign, http.StatusNotFound, "", "the targets are " + strings.Join(targets.Names(), ", ")},
		{"bad design", "/export/policy?capacity=-1&clients=3", http.StatusUnprocessableEntity, "capacity", "capacity"},
		{"header option", "/export/policy?" + roundTripDesign + "&export.api_key_header=" + url.QueryEscape("X-Key\r\nX: y"),
			http.StatusUnprocessableEntity, "export.api_key_header", "header name"},
		{"upstream option", "/export/policy?" + roundTripDesign + "&export.upstream=localhost", http.StatusUnprocessableEntity, "export.upstream", "host:port"},
		{"tier name", "/export/policy?capacity=100&tiers.0.name=" + url.QueryEscape(`a"b`) + "&tiers.0.clients=3",
			http.StatusUnprocessableEntity, "tiers.0.name", "header value"},
		{"path", "/export/policy?capacity=100&clients=3&endpoints.0.method=GET&endpoints.0.path=" + url.QueryEscape("/a;b{") + "&endpoints.0.cost=1",
			http.StatusUnprocessableEntity, "endpoints.0.path", "RFC 3986"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, http.MethodGet, tt.target, "", nil)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), tt.msg) {
				t.Errorf("body %s does not mention %q", rec.Body, tt.msg)
			}
			if tt.field == "" {
				return
			}
			var body struct{ Errors []FieldProblem }
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Errors) == 0 {
				t.Fatalf("not a JSON error list: %s", rec.Body)
			}
			if body.Errors[0].Field != tt.field {
				t.Errorf("field %q, want %q", body.Errors[0].Field, tt.field)
			}
		})
	}
}

// TestExportsPage: the page lists every target with its fidelity and
// mappings as targets.Render gives them, and every download link works
// and carries the options.
func TestExportsPage(t *testing.T) {
	query := roundTripDesign + "&export.tier_header=X-Plan"
	doc, rec := getDoc(t, "/exports?"+query)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	p := designPolicy(t, roundTripDesign)
	items := doc.Find(`[data-testid="export-item"]`)
	if items.Length() != len(targets.All) {
		t.Fatalf("%d items, want one per target (%d)", items.Length(), len(targets.All))
	}
	for i, tg := range targets.All {
		item := items.Eq(i)
		want, err := targets.Render(tg.Name, p, export.Options{TierHeader: "X-Plan"})
		if err != nil {
			t.Fatalf("%s: %v", tg.Name, err)
		}
		if got, _ := item.Attr("data-target"); got != tg.Name {
			t.Errorf("item %d is %q, want %q", i, got, tg.Name)
		}
		if got, _ := item.Attr("data-fidelity"); got != string(want.Fidelity) {
			t.Errorf("%s: fidelity %q, want %q", tg.Name, got, want.Fidelity)
		}
		if rows := item.Find(`[data-testid="mappings"] tbody tr`).Length(); rows != len(want.Mappings) {
			t.Errorf("%s: %d mapping rows, want %d", tg.Name, rows, len(want.Mappings))
		}
		if got := item.Find(`[data-testid="export-preview"]`).Text(); got != string(want.Body) {
			t.Errorf("%s: preview differs from the export", tg.Name)
		}
		href, _ := item.Find(`[data-testid="export-download"]`).Attr("href")
		if !strings.Contains(href, "export.tier_header=X-Plan") {
			t.Errorf("%s: download %q loses the tier header option", tg.Name, href)
		}
		dl := do(t, http.MethodGet, href, "", nil)
		if dl.Code != http.StatusOK || !bytes.Equal(dl.Body.Bytes(), want.Body) {
			t.Errorf("%s: download %s: status %d, same body %v", tg.Name, href, dl.Code, bytes.Equal(dl.Body.Bytes(), want.Body))
		}
	}
	if v, _ := testid(doc, "export.tier_header").Attr("value"); v != "X-Plan" {
		t.Errorf("tier header field shows %q, want X-Plan", v)
	}
	// The page's answer comes first: every target at a glance, in the
	// same order, with the same fidelity and file, linked to its section.
	glance := doc.Find(`[data-testid="glance-row"]`)
	if glance.Length() != len(targets.All) {
		t.Fatalf("%d targets at a glance, want %d", glance.Length(), len(targets.All))
	}
	if first, items := doc.Find(`[data-testid="exports-glance"], [data-testid="export-item"]`).First(), "exports-glance"; first.AttrOr("data-testid", "") != items {
		t.Error("the targets at a glance do not come before the targets' sections")
	}
	for i, tg := range targets.All {
		row, item := glance.Eq(i), items.Eq(i)
		if got := row.AttrOr("data-target", ""); got != tg.Name {
			t.Errorf("row %d at a glance is %q, want %q", i, got, tg.Name)
		}
		href := row.Find("th a").AttrOr("href", "")
		if id := item.AttrOr("id", ""); href != "#"+id || id == "" {
			t.Errorf("%s: at a glance links to %q, its section is #%s", tg.Name, href, id)
		}
		if got, want := row.Find(`[data-testid="glance-fidelity"]`).Text(), item.Find(`[data-testid="fidelity"]`).Text(); got != want || got == "" {
			t.Errorf("%s: at a glance %q, its section says %q", tg.Name, got, want)
		}
		if got, want := row.Find(`[data-testid="glance-download"]`).AttrOr("href", "?"), item.Find(`[data-testid="export-download"]`).AttrOr("href", "!"); got != want {
			t.Errorf("%s: at a glance downloads %q, its section %q", tg.Name, got, want)
		}
		// And each section links back to them, the way to the next target.
		back := item.Find(`[data-testid="export-to-glance"]`).AttrOr("href", "")
		if id := doc.Find(`[data-testid="exports-glance"] h2`).AttrOr("id", ""); back != "#"+id || id == "" {
			t.Errorf("%s: its section links back to %q, the targets at a glance are #%s", tg.Name, back, id)
		}
	}
}

// TestExportsPageProblems: a bad option is shown beside its field with a
// 422; a design with problems is a page that says so and links back.
func TestExportsPageProblems(t *testing.T) {
	page := func(target string) (*goquery.Document, *httptest.ResponseRecorder) {
		rec := do(t, http.MethodGet, target, "", nil)
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(rec.Body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		return doc, rec
	}
	doc, rec := page("/exports?" + roundTripDesign + "&export.listen=99999")
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422", rec.Code)
	}
	msg := doc.Find(`#export\.listen-msg`).Text()
	if !strings.Contains(msg, "listen") || !strings.Contains(msg, "99999") {
		t.Errorf("message beside the listen field = %q, want one naming the field and value", msg)
	}
	if n := doc.Find(`[data-testid="export-item"]`).Length(); n != 0 {
		t.Errorf("%d exports shown despite the bad option", n)
	}

	doc, rec = page("/exports?capacity=100")
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("bad design: status %d, want 422", rec.Code)
	}
	if !strings.Contains(testid(doc, "export-error").Text(), "clients") {
		t.Errorf("bad design: error %q does not name clients", testid(doc, "export-error").Text())
	}
	if n := doc.Find(`[data-testid="export-options"] input[name^="export."]`).Length(); n != len(exportOptionParams) {
		t.Errorf("bad design: %d option fields, want all %d", n, len(exportOptionParams))
	}
	if href, _ := testid(doc, "back-to-design").Attr("href"); href != "/?capacity=100" {
		t.Errorf("back link %q, want /?capacity=100", href)
	}
}

// TestDesignerLinksToExports: the results link to the exports page with
// the same design.
func TestDesignerLinksToExports(t *testing.T) {
	doc, _ := getDoc(t, "/?"+roundTripDesign)
	href, ok := testid(doc, "exports-link").Attr("href")
	if !ok {
		t.Fatal("no exports link in the results")
	}
	u, err := url.Parse(href)
	if err != nil || u.Path != exportsPath {
		t.Fatalf("exports link %q", href)
	}
	if got, want := mustParse(u.RawQuery), mustParse(roundTripDesign); !equalValues(got, want) {
		t.Errorf("exports link carries %v, want the design %v", got, want)
	}
}

// TestDesignerDocsPanel: the results carry the Markdown section and the
// OpenAPI fragment exactly as their exports render them, each with a copy
// button and a working download.
func TestDesignerDocsPanel(t *testing.T) {
	page, _ := getDoc(t, "/?"+roundTripDesign)
	doc := lazyPanel(t, newServer(config{}), page, "docs-panel", "")
	p := designPolicy(t, roundTripDesign)
	for _, name := range []string{"markdown", "openapi"} {
		want, err := targets.Render(name, p, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := doc.Find(`[data-testid="docs-` + name + `"]`).Text()
		if got != string(want.Body) {
			t.Errorf("%s: panel text differs from the export", name)
		}
		if doc.Find(`button[data-copy="docs-`+name+`"]`).Length() != 1 {
			t.Errorf("%s: no copy button", name)
		}
		href, _ := doc.Find(`a[download="` + want.Filename + `"]`).Attr("href")
		if rec := do(t, http.MethodGet, href, "", nil); rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), want.Body) {
			t.Errorf("%s: download %q: %d", name, href, rec.Code)
		}
	}
}

// TestExportsPageDeterministic: the same URL gives the same page (the
// options form's hidden design fields come in name order).
func TestExportsPageDeterministic(t *testing.T) {
	first := do(t, http.MethodGet, "/exports?"+roundTripDesign, "", nil).Body.String()
	for range 10 {
		if do(t, http.MethodGet, "/exports?"+roundTripDesign, "", nil).Body.String() != first {
			t.Fatal("two requests for the same exports page differ")
		}
	}
}
