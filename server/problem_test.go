package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
)

// checkProblem checks that rec is status as RFC 9457 problem details: the
// media type, the members the OpenAPI document's Problem schema promises,
// a title that is the status's reason phrase, a detail containing
// wantDetail, and the errors extension member.
func checkProblem(t *testing.T, rec *httptest.ResponseRecorder, status int, wantDetail string) Problem {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body)
	}
	if got := rec.Header().Get(echo.HeaderContentType); got != mimeProblemJSON {
		t.Errorf("Content-Type %q, want %s", got, mimeProblemJSON)
	}
	validate(t, openapiSchema(t, "Problem"), rec.Body.Bytes())
	var p Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("body: %v: %s", err, rec.Body)
	}
	if p.Type != "about:blank" || p.Status != status || p.Title != http.StatusText(status) {
		t.Errorf("type %q, status %d, title %q; want about:blank, %d, %q", p.Type, p.Status, p.Title, status, http.StatusText(status))
	}
	if p.Detail == "" || !strings.Contains(p.Detail, wantDetail) {
		t.Errorf("detail %q, want one containing %q", p.Detail, wantDetail)
	}
	if len(p.Errors) == 0 || p.Errors[0].Message == "" {
		t.Errorf("errors %+v, want at least one problem with a message", p.Errors)
	}
	return p
}

// TestAPIErrorsAreProblemDetails sends every API route each error it can
// answer: an unknown path (404), a wrong method (405, with Allow), a body
// over the cap (413), of the wrong type (415), invalid (422), over the
// rate limit (429, with Retry-After) and with the server busy (503, with
// Retry-After). Every one is application/problem+json.
func TestAPIErrorsAreProblemDetails(t *testing.T) {
	const sim = `{` + gcraLimiter + `, "arrivals": [{"at": 0}]}`
	tests := []struct {
		name        string
		cfg         func(*config)
		method      string
		target      string
		contentType string
		body        string
		busy        bool // every heavy slot taken
		status      int
		detail      string // part of the detail
		header      string // a header the answer must have
	}{
		{name: "unknown version", method: "GET", target: "/api/v2/calc", status: 404, detail: "/api/v2/calc is not a route of the API"},
		{name: "unknown route", method: "POST", target: "/api/v1/nope", contentType: "application/json", body: "{}", status: 404, detail: "/api/v1/nope"},
		{name: "calc by GET", method: "GET", target: "/api/v1/calc", status: 405, detail: "does not answer GET; it answers", header: echo.HeaderAllow},
		{name: "reverse by PUT", method: "PUT", target: "/api/v1/calc/reverse", status: 405, detail: "does not answer PUT", header: echo.HeaderAllow},
		{name: "simulate by DELETE", method: "DELETE", target: "/api/v1/simulate", status: 405, detail: "does not answer DELETE", header: echo.HeaderAllow},
		{name: "lint by GET", method: "GET", target: lintPath, status: 405, detail: "does not answer GET", header: echo.HeaderAllow},
		{name: "openapi by POST", method: "POST", target: "/api/openapi.json", status: 405, detail: "does not answer POST", header: echo.HeaderAllow},
		{name: "calc too large", cfg: func(c *config) { c.apiBodyLimit = 10 }, method: "POST", target: "/api/v1/calc", contentType: "application/json", body: calcBody, status: 413, detail: "larger than 10 bytes"},
		{name: "reverse too large", cfg: func(c *config) { c.apiBodyLimit = 10 }, method: "POST", target: "/api/v1/calc/reverse", contentType: "application/json", body: calcBody, status: 413, detail: "larger than 10 bytes"},
		{name: "simulate too large", cfg: func(c *config) { c.apiBodyLimit = 10 }, method: "POST", target: "/api/v1/simulate", contentType: "application/json", body: sim, status: 413, detail: "larger than 10 bytes"},
		{name: "lint too large", cfg: func(c *config) { c.apiBodyLimit = 10 }, method: "POST", target: lintPath, contentType: "application/yaml", body: "apiVersion: ratelab/v1\n", status: 413, detail: "larger than 10 bytes"},
		{name: "calc as a form", method: "POST", target: "/api/v1/calc", contentType: "application/x-www-form-urlencoded", body: "capacity=1", status: 415, detail: "application/json"},
		{name: "reverse as text", method: "POST", target: "/api/v1/calc/reverse", contentType: "text/plain", body: "{}", status: 415, detail: "application/json"},
		{name: "simulate as XML", method: "POST", target: "/api/v1/simulate", contentType: "application/xml", body: "<a/>", status: 415, detail: "application/json"},
		{name: "lint as JSON", method: "POST", target: lintPath, contentType: "image/png", body: "x", status: 415, detail: "application/yaml"},
		{name: "calc invalid", method: "POST", target: "/api/v1/calc", contentType: "application/json", body: `{"capacity": -1, "clients": 10}`, status: 422, detail: "capacity"},
		{name: "reverse invalid", method: "POST", target: "/api/v1/calc/reverse", contentType: "application/json", body: `{"algorithm": "token_bucket", "rate": 0, "burst": 5}`, status: 422, detail: "rate"},
		{name: "simulate invalid", method: "POST", target: "/api/v1/simulate", contentType: "application/json", body: `{"arrivals": []}`, status: 422, detail: "limiter: missing"},
		{name: "simulate with the server busy", cfg: func(c *config) { c.maxHeavy = 1 }, busy: true, method: "POST", target: "/api/v1/simulate", contentType: "application/json", body: sim,
			status: 503, detail: "the server is busy", header: echo.HeaderRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			req := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set(echo.HeaderContentType, tt.contentType)
			}
			e := newServer(cfg)
			if tt.busy {
				defer heldSimulations(t, e, cfg.maxHeavy)()
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			checkProblem(t, rec, tt.status, tt.detail)
			if tt.header != "" && rec.Header().Get(tt.header) == "" {
				t.Errorf("no %s header: %v", tt.header, rec.Header())
			}
		})
	}
}

// TestAPIRateLimitIsProblemDetails: with a burst of 1, a client's second
// request to any API route, an unknown one included, is a 429 as problem
// details with Retry-After, whose detail names the limit.
func TestAPIRateLimitIsProblemDetails(t *testing.T) {
	for _, tt := range []struct{ method, target, body string }{
		{"POST", "/api/v1/calc", calcBody},
		{"POST", "/api/v1/calc/reverse", `{"algorithm": "fixed_window", "limit": 100, "window": 60}`},
		{"POST", "/api/v1/simulate", `{` + gcraLimiter + `, "arrivals": []}`},
		{"POST", lintPath, ""},
		{"GET", "/api/openapi.json", ""},
		{"GET", "/api/v1/nope", ""},
	} {
		t.Run(tt.target, func(t *testing.T) {
			e, _ := limitedServer(t, algorithms.NameTokenBucket, 0.1, 1)
			from(t, e, "192.0.2.1", tt.method, tt.target, tt.body)
			rec := from(t, e, "192.0.2.1", tt.method, tt.target, tt.body)
			checkProblem(t, rec, http.StatusTooManyRequests, "each client may send 0.1 requests per second to the API, in bursts of up to 1; retry after 10 s")
			if got := rec.Header().Get(echo.HeaderRetryAfter); got != "10" {
				t.Errorf("Retry-After %q, want 10", got)
			}
		})
	}
}

// TestErrorHandlerAnswersProblemDetails hands errorHandler the errors no
// route answers on purpose (a bare 400, an internal failure) under /api/,
// and the same errors to a page, which stays plain text.
func TestErrorHandlerAnswersProblemDetails(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		err    error
		status int
		detail string // for a problem; the body of a page
	}{
		{"bad request", "/api/v1/calc", echo.NewHTTPError(http.StatusBadRequest, "cannot parse the request"), 400, "cannot parse the request"},
		{"internal", "/api/v1/simulate", errors.New("disk on fire"), 500, "Internal Server Error"},
		{"past the deadline", "/api/v1/simulate", context.DeadlineExceeded, 503, "past its deadline"},
		{"teapot", "/api/v1/calc", echo.NewHTTPError(http.StatusTeapot), 418, "I'm a teapot"},
		{"page: bad request", "/reverse", echo.NewHTTPError(http.StatusBadRequest, "cannot parse the request"), 400, "cannot parse the request"},
		{"page: internal", "/", errors.New("disk on fire"), 500, "Internal Server Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := echo.New()
			rec := httptest.NewRecorder()
			c := e.NewContext(httptest.NewRequest(http.MethodGet, tt.path, nil), rec)
			errorHandler(slog.New(slog.DiscardHandler))(tt.err, c)
			if !isAPI(tt.path) {
				if rec.Code != tt.status || !strings.HasPrefix(rec.Header().Get(echo.HeaderContentType), echo.MIMETextPlain) || rec.Body.String() != tt.detail {
					t.Errorf("page: %d %q %q; want %d, plain text %q", rec.Code, rec.Header().Get(echo.HeaderContentType), rec.Body, tt.status, tt.detail)
				}
				return
			}
			p := checkProblem(t, rec, tt.status, tt.detail)
			if strings.Contains(rec.Body.String(), "disk on fire") {
				t.Errorf("the internal error reached the client: %+v", p)
			}
		})
	}
}

// TestPageErrorsStayPlainText: the pages' 404 and 405 are not problem
// details.
func TestPageErrorsStayPlainText(t *testing.T) {
	for _, tt := range []struct {
		method, target string
		status         int
	}{
		{"GET", "/nope", 404},
		{"GET", "/apix/v1/calc", 404},
		{"DELETE", "/healthz", 405},
	} {
		rec := httptest.NewRecorder()
		newServer(testConfig(t)).ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
		if rec.Code != tt.status || !strings.HasPrefix(rec.Header().Get(echo.HeaderContentType), echo.MIMETextPlain) {
			t.Errorf("%s %s: %d %q; want %d as plain text", tt.method, tt.target, rec.Code, rec.Header().Get(echo.HeaderContentType), tt.status)
		}
	}
}

// TestREADMEErrorExample: the README's 422 is what the API answers for
// the same input.
func TestREADMEErrorExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "Every API error (400, 404, 405")
	if !ok {
		t.Fatal("the README does not describe the API's errors")
	}
	_, block, ok := strings.Cut(rest, "```http\n")
	block, _, closed := strings.Cut(block, "```")
	head, body, split := strings.Cut(block, "\n\n")
	if !ok || !closed || !split {
		t.Fatal("no ```http block with a body after the API's errors")
	}
	rec := post(t, "/api/v1/calc", "application/json", `{"capacity": 100, "clients": 10, "p95": 5, "p99": 2}`)
	checkProblem(t, rec, http.StatusUnprocessableEntity, "p99")
	if want := "HTTP/1.1 422 Unprocessable Entity\nContent-Type: " + mimeProblemJSON; head != want {
		t.Errorf("the README's head\n%s\nwant\n%s", head, want)
	}
	var got, want any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		t.Fatalf("the README's body is not JSON: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the API answers\n%s\nthe README shows\n%s", rec.Body, body)
	}
}
