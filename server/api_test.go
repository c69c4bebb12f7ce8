package server

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// openapiSchema compiles one schema of the served OpenAPI document, so every
// test checks the live response against what the document promises.
func openapiSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapiJSON))
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("https://ratelab.invalid/openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("https://ratelab.invalid/openapi.json#/components/schemas/" + name)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return s
}

// post sends body to path on the real server and returns the response.
func post(t *testing.T, path, contentType, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(rec, req)
	return rec
}

// validate checks a response body against the named schema.
func validate(t *testing.T, schema *jsonschema.Schema, body []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, body)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("response does not match the OpenAPI document: %v\n%s", err, body)
	}
}

func TestCalcAPIAnswersWithTheDocumentedShape(t *testing.T) {
	schema := openapiSchema(t, "CalcResult")
	tests := []struct {
		name     string
		body     string
		wantRate float64 // requests/s, derived by hand
	}{
		// usable = 1000 × (1 − 0.2) = 800; fair share = 800 / 100 = 8 r/s.
		{"capacity and clients only", `{"capacity": 1000, "clients": 100}`, 8},
		// p99 = 60/min = 1 r/s; rate = p99 × margin 2 = 2 r/s.
		{"percentiles per minute", `{"capacity": 2000, "clients": 500, "p50": 10, "p95": 40, "p99": 60, "percentile_unit": "minute"}`, 2},
		// p99 × margin = 50 × 2 = 100 r/s; the peak, tiers, endpoints,
		// local replicas and retry settings add their sections.
		{"everything", `{"capacity": 20000, "headroom": 0.25, "p50": 5, "p95": 30, "p99": 50, "peak": 300, "peak_seconds": 2,
			"window": 60, "max_delay": 2, "replicas": 5, "enforcement": "local",
			"tiers": [{"name": "anonymous", "clients": 100, "multiplier": 0.5}, {"name": "paid", "clients": 20, "multiplier": 4}],
			"endpoints": [{"method": "GET", "path": "/v1/reports", "cost": 8}],
			"retry": {"base": 1, "factor": 2, "cap": 30, "attempts": 4, "jitter": 0.5, "jitter_mode": "equal"}}`, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := post(t, "/api/v1/calc", "application/json", tt.body)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			validate(t, schema, rec.Body.Bytes())
			var res struct {
				Rate struct {
					Value  float64 `json:"value"`
					Reason string  `json:"reason"`
				} `json:"rate"`
				Algorithms []struct {
					Algorithm string `json:"algorithm"`
				} `json:"algorithms"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			if math.Abs(res.Rate.Value-tt.wantRate) > 1e-9 || res.Rate.Reason == "" {
				t.Errorf("rate %v (%q), want %v with a reason", res.Rate.Value, res.Rate.Reason, tt.wantRate)
			}
			if len(res.Algorithms) != 6 {
				t.Errorf("%d algorithms, want all six", len(res.Algorithms))
			}
			if strings.Contains(rec.Body.String(), `\u003e`) {
				t.Error("reasons are HTML-escaped")
			}
		})
	}
}

func TestCalcAPIRejectsBadInputByField(t *testing.T) {
	schema := openapiSchema(t, "Problem")
	tests := []struct {
		name        string
		contentType string
		body        string
		status      int
		field       string // the first problem's field
		message     string // part of its message
	}{
		{"negative capacity", "application/json", `{"capacity": -1, "clients": 10}`, 422, "capacity", "-1"},
		{"every bad field at once", "application/json", `{"capacity": 0, "clients": -3}`, 422, "capacity", "out of range"},
		{"percentiles out of order", "application/json", `{"capacity": 100, "clients": 10, "p95": 5, "p99": 2}`, 422, "p99", "cannot decrease"},
		{"unknown field", "application/json", `{"capacity": 100, "clients": 10, "brust": 5}`, 422, "brust", "unknown field"},
		{"wrong type", "application/json", `{"capacity": "lots", "clients": 10}`, 422, "capacity", "want a number"},
		{"number too large for a float", "application/json", `{"capacity": 1e400, "clients": 10}`, 422, "capacity", "want a number"},
		{"bad tier", "application/json", `{"capacity": 100, "tiers": [{"name": "", "clients": 1}]}`, 422, "tiers[0].name", ""},
		{"malformed JSON", "application/json", `{"capacity": 100,`, 422, "", "ends too early"},
		{"not JSON", "application/json", `capacity=100`, 422, "", "invalid JSON"},
		{"empty body", "application/json", ``, 422, "", "empty"},
		{"two values", "application/json", `{"capacity": 100, "clients": 1} {}`, 422, "", "more than one"},
		{"form instead of JSON", "application/x-www-form-urlencoded", `capacity=100`, 415, "", "application/json"},
		{"too large", "application/json", `{"capacity": 100, "clients": 1, "tiers": [` + strings.Repeat(`{"name":"x","clients":1},`, 4000) + `{}]}`, 413, "", "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := post(t, "/api/v1/calc", tt.contentType, tt.body)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			validate(t, schema, rec.Body.Bytes())
			var got struct {
				Errors []FieldProblem `json:"errors"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.Errors) == 0 {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if p := got.Errors[0]; p.Field != tt.field || !strings.Contains(p.Message, tt.message) {
				t.Errorf("first problem %+v; want field %q and a message containing %q", p, tt.field, tt.message)
			}
		})
	}
	// Every bad field is reported, not only the first.
	rec := post(t, "/api/v1/calc", "application/json", `{"capacity": 0, "clients": -3, "margin": -1}`)
	if n := strings.Count(rec.Body.String(), `"field"`); n != 3 {
		t.Errorf("%d problems, want 3: %s", n, rec.Body)
	}
}

func TestReverseAPI(t *testing.T) {
	ok := openapiSchema(t, "ReverseResult")
	rec := post(t, "/api/v1/calc/reverse", "application/json", `{"algorithm": "fixed_window", "limit": 100, "window": 60}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	validate(t, ok, rec.Body.Bytes())
	var res struct {
		Params struct {
			LargestBurst struct{ Value float64 } `json:"largest_burst"`
		} `json:"params"`
		Equivalents []json.RawMessage `json:"equivalents"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	// A fixed window of 100 lets 2 × 100 through across an edge; the other
	// five algorithms are its equivalents.
	if res.Params.LargestBurst.Value != 200 || len(res.Equivalents) != 5 {
		t.Errorf("largest burst %v, %d equivalents; want 200 and 5", res.Params.LargestBurst.Value, len(res.Equivalents))
	}
	rec = post(t, "/api/v1/calc/reverse", "application/json", `{"algorithm": "token_bucket", "rate": 0, "burst": 5}`)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `"field":"rate"`) {
		t.Errorf("zero rate: status %d %s; want 422 naming rate", rec.Code, rec.Body)
	}
	validate(t, openapiSchema(t, "Problem"), rec.Body.Bytes())
}

func TestOpenAPIDocumentIsServed(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/api/openapi.json", nil)
	rec := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string                     `json:"openapi"`
		Paths   map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Paths["/api/v1/calc"] == nil || doc.Paths["/api/v1/calc/reverse"] == nil || doc.Paths[lintPath] == nil {
		t.Errorf("openapi %q with paths %v", doc.OpenAPI, doc.Paths)
	}
}

// FuzzCalcAPI sends arbitrary bodies to the calculator: the answer is always
// a documented status with a JSON body, never a 500.
func FuzzCalcAPI(f *testing.F) {
	f.Add(`{"capacity": 1000, "clients": 100}`)
	f.Add(`{"capacity": 2000, "clients": 500, "p50": 10, "p95": 40, "p99": 60, "percentile_unit": "minute", "peak": 300, "peak_seconds": 2}`)
	f.Add(`{"capacity": 1e9, "clients": 1, "p99": 1e6, "window": 31622400, "replicas": 1000, "enforcement": "local"}`)
	f.Add(`{"capacity": 0.001, "tiers": [{"name": "a", "clients": 100000000, "multiplier": 1000}], "endpoints": [{"method": "GET", "path": "/", "cost": 1000000}]}`)
	f.Add(`[]`)
	f.Add(`null`)
	f.Add(`{"capacity": 1e308, "clients": 9223372036854775807}`)
	fuzzAPI(f, newServer(config{}), "/api/v1/calc")
}

// fuzzAPI posts each fuzzed body to path: the answer must be 200, 413 or
// 422 with a JSON body, never a 500.
func fuzzAPI(f *testing.F, srv http.Handler, path string) {
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("body is not JSON: %s", rec.Body)
		}
	})
}
