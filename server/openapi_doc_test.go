package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// docSchema is one schema of the served document, decoded loosely.
type docSchema struct {
	Ref        string                `json:"$ref"`
	Type       any                   `json:"type"` // a name or a list of them
	Properties map[string]*docSchema `json:"properties"`
	Items      *docSchema            `json:"items"`
	Required   []string              `json:"required"`
	Enum       []any                 `json:"enum"`
	Minimum    *float64              `json:"minimum"`
	Maximum    *float64              `json:"maximum"`
	MaxItems   *int                  `json:"maxItems"`
}

// documentSchemas are the served document's components.schemas.
func documentSchemas(t *testing.T) map[string]*docSchema {
	t.Helper()
	var doc struct {
		Components struct {
			Schemas map[string]*docSchema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapiJSON, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Components.Schemas
}

// TestValidatorsEnforceTheDocument: every bound, item count, enum and
// required member the API document states for the calculator's request
// schemas is what the validators enforce. A value just outside a bound,
// one item too many, a value not in an enum and a missing required member
// are each a 422 naming that field; the bound itself, the most items and
// each enum value are not refused for that field. The schemas are
// generated from the Go types (tools/openapi), so this holds the
// validators to the types' stated ranges.
func TestValidatorsEnforceTheDocument(t *testing.T) {
	schemas := documentSchemas(t)
	srv := newServer(config{})
	// targets anchor each request schema in a valid request: route, a
	// request, and where in it the schema's object is.
	type target struct {
		route, prefix string
		base          func() map[string]any
		at            func(req map[string]any) map[string]any
	}
	self := func(req map[string]any) map[string]any { return req }
	member := func(name string) func(map[string]any) map[string]any {
		return func(req map[string]any) map[string]any { return req[name].(map[string]any) }
	}
	limiter := func() map[string]any { return map[string]any{"algorithm": "token_bucket", "rate": 10.0, "burst": 20} }
	var pol map[string]any
	if err := json.Unmarshal([]byte(tieredPolicy("enforce")), &pol); err != nil {
		t.Fatal(err)
	}
	// mixed is a policy run of a pattern with a mix of tiers and requests.
	mixed := func() map[string]any {
		var p map[string]any
		b, _ := json.Marshal(pol)
		json.Unmarshal(b, &p)
		return map[string]any{"policy": p, "pattern": map[string]any{"name": "steady", "clients": 2, "rate": 1.0, "duration": 1.0},
			"mix": map[string]any{
				"tiers":    []any{map[string]any{"name": "paid", "share": 0.5}},
				"requests": []any{map[string]any{"method": "GET", "path": "/v1/reports/1", "share": 0.5}},
			}}
	}
	first := func(member string) func(map[string]any) map[string]any {
		return func(req map[string]any) map[string]any { return req[member].([]any)[0].(map[string]any) }
	}
	targets := map[string]target{
		"CalcInput": {"/api/v1/calc", "", func() map[string]any {
			return map[string]any{"capacity": 1000.0, "clients": 10}
		}, self},
		"TierInput": {"/api/v1/calc", "tiers[0].", func() map[string]any {
			return map[string]any{"capacity": 1000.0, "tiers": []any{map[string]any{"name": "free", "clients": 10}}}
		}, first("tiers")},
		"EndpointInput": {"/api/v1/calc", "endpoints[0].", func() map[string]any {
			return map[string]any{"capacity": 1000.0, "clients": 10, "endpoints": []any{map[string]any{"method": "GET", "path": "/x", "cost": 2}}}
		}, first("endpoints")},
		"RetryInput": {"/api/v1/calc", "retry.", func() map[string]any {
			return map[string]any{"capacity": 1000.0, "clients": 10, "retry": map[string]any{}}
		}, func(req map[string]any) map[string]any { return req["retry"].(map[string]any) }},
		"Limit": {"/api/v1/calc/reverse", "", func() map[string]any {
			return map[string]any{"algorithm": "token_bucket", "rate": 10.0, "burst": 20}
		}, self},
		"SimulateRequest": {"/api/v1/simulate", "", func() map[string]any {
			return map[string]any{"limiter": limiter(), "arrivals": []any{map[string]any{"at": 0.0}}}
		}, self},
		"ArrivalInput": {"/api/v1/simulate", "arrivals[0].", func() map[string]any {
			return map[string]any{"limiter": limiter(), "arrivals": []any{map[string]any{"at": 0.0, "key": "k"}}}
		}, first("arrivals")},
		"Replicas": {"/api/v1/simulate", "replicas.", func() map[string]any {
			return map[string]any{"limiter": limiter(), "arrivals": []any{map[string]any{"at": 0.0}}, "replicas": map[string]any{"count": 2}}
		}, member("replicas")},
		"Pattern": {"/api/v1/simulate", "pattern.", func() map[string]any {
			return map[string]any{"limiter": limiter(), "pattern": map[string]any{"name": "shared_ip"}}
		}, member("pattern")},
		"Mix": {"/api/v1/simulate", "mix.", mixed, member("mix")},
		"TierShare": {"/api/v1/simulate", "mix.tiers[0].", mixed, func(req map[string]any) map[string]any {
			return first("tiers")(req["mix"].(map[string]any))
		}},
		"RequestShare": {"/api/v1/simulate", "mix.requests[0].", mixed, func(req map[string]any) map[string]any {
			return first("requests")(req["mix"].(map[string]any))
		}},
	}
	// at overrides a target's base for the request that sets a member to
	// its bound ("Schema.member=bound"): clients may be 0 only with tiers
	// (it is then their total).
	at := map[string]func() map[string]any{
		"CalcInput.clients=0": func() map[string]any {
			return map[string]any{"capacity": 1000.0, "tiers": []any{map[string]any{"name": "free", "clients": 10}}}
		},
	}
	// items make n valid, distinct items of a list member.
	items := map[string]func(n int) []any{
		"Mix.tiers": func(n int) []any {
			out := make([]any, n)
			for i := range out {
				// The tiered policy has two tiers; each at most once.
				out[i] = map[string]any{"name": []string{"paid", "free"}[min(i, 1)], "share": 0.0}
			}
			return out
		},
		"Mix.requests": func(n int) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = map[string]any{"path": fmt.Sprintf("/r%d", i), "share": 0.001}
			}
			return out
		},
		"CalcInput.tiers": func(n int) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = map[string]any{"name": fmt.Sprintf("t%d", i), "clients": 1}
			}
			return out
		},
		"CalcInput.endpoints": func(n int) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = map[string]any{"method": "GET", "path": fmt.Sprintf("/e%d", i), "cost": 2}
			}
			return out
		},
	}

	// Every schema the calculator's request bodies reach has a target.
	for _, root := range []string{"CalcInput", "Limit", "SimulateRequest"} {
		seen := map[string]bool{}
		var walk func(name string)
		walk = func(name string) {
			if seen[name] {
				return
			}
			seen[name] = true
			if _, ok := targets[name]; !ok {
				t.Errorf("request schema %s (from %s) has no target in this test", name, root)
			}
			var refs func(s *docSchema)
			refs = func(s *docSchema) {
				if s == nil {
					return
				}
				if n, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
					walk(n)
				}
				refs(s.Items)
				for _, p := range s.Properties {
					refs(p)
				}
			}
			refs(schemas[name])
		}
		walk(root)
	}

	// fields sends req and returns the fields its 422 names (none for any
	// other status).
	fields := func(t *testing.T, route string, req map[string]any) []string {
		t.Helper()
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, route, strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		if rec.Code != http.StatusUnprocessableEntity {
			if rec.Code != http.StatusOK {
				t.Fatalf("%s %s: status %d\n%s", route, body, rec.Code, rec.Body)
			}
			return nil
		}
		var p struct {
			Errors []FieldProblem `json:"errors"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range p.Errors {
			out = append(out, e.Field)
		}
		return out
	}
	// expect sends req with member set (or deleted, for a nil value) and
	// checks whether the answer names field.
	expect := func(t *testing.T, tg target, member string, value any, refused bool, field string) {
		t.Helper()
		req := tg.base()
		obj := tg.at(req)
		if value == nil {
			delete(obj, member)
		} else {
			obj[member] = value
		}
		got := fields(t, tg.route, req)
		if slices.Contains(got, field) != refused {
			b, _ := json.Marshal(req)
			t.Errorf("%s: refused fields %q, want %s refused=%v", b, got, field, refused)
		}
	}

	names := make([]string, 0, len(targets))
	for n := range targets {
		names = append(names, n)
	}
	sort.Strings(names)
	checked := 0
	for _, name := range names {
		tg, s := targets[name], schemas[name]
		if s == nil {
			t.Fatalf("the document has no schema %s", name)
		}
		t.Run(name, func(t *testing.T) {
			for _, m := range s.Required {
				expect(t, tg, m, nil, true, tg.prefix+m)
				checked++
			}
			for m, p := range s.Properties {
				field := tg.prefix + m
				if p.Minimum != nil || p.Maximum != nil {
					for _, b := range []struct {
						at  *float64
						dir float64
					}{{p.Minimum, -1}, {p.Maximum, 1}} {
						if b.at == nil {
							continue
						}
						var v, out any = *b.at, *b.at + b.dir*math.Max(math.Abs(*b.at)*1e-9, 1e-12)
						if p.Type == any("integer") {
							v, out = int64(*b.at), int64(*b.at)+int64(b.dir)
						}
						tb := tg
						if base := at[fmt.Sprintf("%s.%s=%v", name, m, v)]; base != nil {
							tb.base = base
						}
						expect(t, tb, m, v, false, field)
						expect(t, tg, m, out, true, field)
						checked += 2
					}
				}
				if p.MaxItems != nil {
					make := items[name+"."+m]
					if make == nil {
						t.Fatalf("%s.%s has maxItems but the test makes no items for it", name, m)
					}
					expect(t, tg, m, make(*p.MaxItems), false, field)
					expect(t, tg, m, make(*p.MaxItems+1), true, field)
					checked += 2
				}
				if len(p.Enum) > 0 {
					for _, v := range p.Enum {
						expect(t, tg, m, v, false, field)
					}
					expect(t, tg, m, "no-such-"+m, true, field)
					checked += len(p.Enum) + 1
				}
			}
		})
	}
	if checked < 40 {
		t.Errorf("checked %d statements of the document, want the calculator's (at least 40)", checked)
	}
}

// TestDocumentPathsAreTheRoutes: the document lists exactly the API's
// routes (every method and path under /api/v1/ the server answers), so a
// route cannot be added, renamed or dropped without the document.
func TestDocumentPathsAreTheRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapiJSON, &doc); err != nil {
		t.Fatal(err)
	}
	var documented, served []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, r := range newServer(config{}).Routes() {
		if strings.HasPrefix(r.Path, "/api/v1/") {
			served = append(served, r.Method+" "+r.Path)
		}
	}
	sort.Strings(documented)
	sort.Strings(served)
	if len(served) < 4 || !slices.Equal(documented, served) {
		t.Errorf("the document's operations %q, the server's API routes %q", documented, served)
	}
}

// TestOperationsDescribeTheirBodies: each operation of the document names
// the bodies the server takes and gives. For every operation, an example
// request validates against the operation's request schema and is
// answered 200 with a body that validates against the operation's 200
// schema; a refused one is answered with a status the operation lists, as
// problem details that validate against that status's schema. The lint
// operation lists exactly the media types the server reads as YAML.
func TestOperationsDescribeTheirBodies(t *testing.T) {
	type media struct {
		Schema json.RawMessage `json:"schema"`
	}
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]media `json:"content"`
			} `json:"requestBody"`
			Responses map[string]struct {
				Content map[string]media `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapiJSON, &doc); err != nil {
		t.Fatal(err)
	}
	// compile compiles a media type's schema, a reference to one of the
	// document's schemas.
	compile := func(t *testing.T, m media) *jsonschema.Schema {
		t.Helper()
		var ref struct {
			Ref string `json:"$ref"`
		}
		name, ok := "", false
		if err := json.Unmarshal(m.Schema, &ref); err == nil {
			name, ok = strings.CutPrefix(ref.Ref, "#/components/schemas/")
		}
		if !ok {
			t.Fatalf("schema %s is not a reference to one of the document's schemas", m.Schema)
		}
		return openapiSchema(t, name)
	}
	examples := map[string]struct {
		contentType string
		good        []string
		bad         string
	}{
		"/api/v1/calc":         {"application/json", []string{`{"capacity": 1000, "clients": 10, "p50": 1, "p99": 5}`}, `{"capacity": 0}`},
		"/api/v1/calc/reverse": {"application/json", []string{`{"algorithm": "fixed_window", "limit": 100, "window": 60}`}, `{"algorithm": "no_such"}`},
		"/api/v1/simulate": {"application/json", []string{
			`{"limiter": {"algorithm": "token_bucket", "rate": 1, "burst": 2}, "arrivals": [{"at": 0, "key": "a"}, {"at": 0.1, "key": "a"}, {"at": 0.2, "key": "a"}]}`,
			`{"policy": ` + tieredPolicy("enforce") + `, "pattern": {"name": "steady", "clients": 2, "rate": 2, "duration": 2}, "mix": {"tiers": [{"name": "paid", "share": 0.5}], "requests": [{"method": "GET", "path": "/v1/reports/1", "share": 0.5}]}}`,
		}, `{"limiter": {"algorithm": "gcra"}, "arrivals": []}`},
		lintPath: {"application/yaml", []string{"apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: x}\nservice: {capacity: 100}\ndefaults:\n  limit: {algorithm: token_bucket, rate: 1, burst: 2}\n"}, ""},
	}
	srv := newServer(config{})
	send := func(path, contentType, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		return rec
	}
	for path, ops := range doc.Paths {
		op, ok := ops["post"]
		ex, known := examples[path]
		if !ok || !known || len(ops) != 1 {
			t.Errorf("%s: operations %v; this test has examples for one POST of each API path", path, slices.Collect(maps.Keys(ops)))
			continue
		}
		t.Run(path, func(t *testing.T) {
			if path == lintPath {
				var types []string
				for ct := range op.RequestBody.Content {
					types = append(types, ct)
				}
				sort.Strings(types)
				if want := slices.Sorted(slices.Values(yamlTypes)); !slices.Equal(types, want) {
					t.Errorf("request media types %q, the server reads %q", types, want)
				}
			}
			for _, body := range ex.good {
				if m, ok := op.RequestBody.Content[ex.contentType]; ok && ex.contentType == "application/json" {
					validate(t, compile(t, m), []byte(body))
				} else if !ok {
					t.Fatalf("the request body has no %s", ex.contentType)
				}
				rec := send(path, ex.contentType, body)
				if rec.Code != http.StatusOK {
					t.Fatalf("%.200s: status %d\n%s", body, rec.Code, rec.Body)
				}
				validate(t, compile(t, op.Responses["200"].Content["application/json"]), rec.Body.Bytes())
			}
			if ex.bad == "" {
				return
			}
			rec := send(path, ex.contentType, ex.bad)
			resp, ok := op.Responses[strconv.Itoa(rec.Code)]
			if !ok {
				t.Fatalf("%s: status %d is not among the operation's responses", ex.bad, rec.Code)
			}
			m, ok := resp.Content[rec.Header().Get("Content-Type")]
			if !ok {
				t.Fatalf("%s: status %d answered as %q, which the operation does not list", ex.bad, rec.Code, rec.Header().Get("Content-Type"))
			}
			validate(t, compile(t, m), rec.Body.Bytes())
		})
	}
}
