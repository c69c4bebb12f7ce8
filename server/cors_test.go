package server

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
)

func TestCORSOriginsFlag(t *testing.T) {
	tests := []struct {
		flag    string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{" , ", nil, ""},
		{"https://app.example.com", []string{"https://app.example.com"}, ""},
		{"https://App.Example.com, http://localhost:3000,", []string{"https://app.example.com", "http://localhost:3000"}, ""},
		{"*", []string{"*"}, ""},
		{"app.example.com", nil, `origin "app.example.com"`},
		{"https://app.example.com/", nil, "without a path"},
		{"https://app.example.com/api", nil, "without a path"},
		{"ftp://files.example.com", nil, "want a scheme"},
		{"https://user@app.example.com", nil, "want a scheme"},
		{"https://*.example.com", nil, "want a scheme"},
		{"https://app.example.com?x=1", nil, "want a scheme"},
	}
	for _, tt := range tests {
		cfg, err := parseServerFlags("-cors-origins", tt.flag)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), "-cors-origins") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("-cors-origins %q: error %v, want one containing %q", tt.flag, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("-cors-origins %q: %v", tt.flag, err)
		case !slices.Equal(cfg.corsOrigins, tt.want):
			t.Errorf("-cors-origins %q: got %q, want %q", tt.flag, cfg.corsOrigins, tt.want)
		}
	}
	if cfg, err := parseServerFlags(); err != nil || cfg.corsOrigins != nil {
		t.Errorf("default: %q, %v; want CORS off", cfg.corsOrigins, err)
	}
}

// TestCORS: with -cors-origins, a preflight from an allowed origin to an
// API route is answered with the methods, the header and the exposed rate
// limit headers, and so are its requests, even refused ones; another
// origin, a page, and a server without the flag get no CORS headers.
func TestCORS(t *testing.T) {
	const allowed, other = "https://app.example.com", "https://evil.example.net"
	type want struct {
		status int
		cors   bool // Access-Control-Allow-Origin is the origin
	}
	tests := []struct {
		name    string
		origins []string
		method  string
		target  string
		origin  string
		body    string
		want    want
	}{
		{"preflight, allowed", []string{allowed}, "OPTIONS", "/api/v1/calc", allowed, "", want{204, true}},
		{"preflight of simulate, allowed", []string{"http://localhost:3000", allowed}, "OPTIONS", "/api/v1/simulate", allowed, "", want{204, true}},
		{"preflight, any origin", []string{"*"}, "OPTIONS", lintPath, other, "", want{204, true}},
		{"preflight, another origin", []string{allowed}, "OPTIONS", "/api/v1/calc", other, "", want{204, false}},
		{"preflight, an origin's subdomain", []string{allowed}, "OPTIONS", "/api/v1/calc", "https://x.app.example.com", "", want{204, false}},
		{"request, allowed", []string{allowed}, "POST", "/api/v1/calc", allowed, calcBody, want{200, true}},
		{"GET, allowed", []string{allowed}, "GET", "/api/openapi.json", allowed, "", want{200, true}},
		{"error, allowed", []string{allowed}, "POST", "/api/v1/calc", allowed, `{"capacity": -1}`, want{422, true}},
		{"request, another origin", []string{allowed}, "POST", "/api/v1/calc", other, calcBody, want{200, false}},
		{"a page", []string{allowed}, "GET", "/healthz", allowed, "", want{200, false}},
		{"a page's preflight", []string{allowed}, "OPTIONS", "/healthz", allowed, "", want{204, false}},
		{"no flag, preflight", nil, "OPTIONS", "/api/v1/calc", allowed, "", want{204, false}},
		{"no flag, request", nil, "POST", "/api/v1/calc", allowed, calcBody, want{200, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.corsOrigins = tt.origins
			req := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
			req.Header.Set(echo.HeaderOrigin, tt.origin)
			if tt.body != "" {
				req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
			}
			preflight := tt.method == http.MethodOptions
			if preflight {
				req.Header.Set(echo.HeaderAccessControlRequestMethod, http.MethodPost)
				req.Header.Set(echo.HeaderAccessControlRequestHeaders, "content-type")
			}
			rec := httptest.NewRecorder()
			newServer(cfg).ServeHTTP(rec, req)
			h := rec.Header()
			if rec.Code != tt.want.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.want.status, rec.Body)
			}
			if !tt.want.cors {
				for _, name := range []string{echo.HeaderAccessControlAllowOrigin, echo.HeaderAccessControlAllowMethods,
					echo.HeaderAccessControlAllowHeaders, echo.HeaderAccessControlExposeHeaders, echo.HeaderAccessControlAllowCredentials} {
					if v := h.Get(name); v != "" {
						t.Errorf("%s: %q, want none", name, v)
					}
				}
				return
			}
			wantOrigin := tt.origin
			if slices.Contains(tt.origins, "*") {
				wantOrigin = "*"
			}
			if got := h.Get(echo.HeaderAccessControlAllowOrigin); got != wantOrigin {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, wantOrigin)
			}
			if !slices.Contains(h.Values(echo.HeaderVary), echo.HeaderOrigin) {
				t.Errorf("Vary %q lacks Origin", h.Values(echo.HeaderVary))
			}
			if got := h.Get(echo.HeaderAccessControlAllowCredentials); got != "" {
				t.Errorf("Access-Control-Allow-Credentials %q, want none", got)
			}
			if preflight {
				if got := h.Get(echo.HeaderAccessControlAllowMethods); got != "GET,HEAD,POST" {
					t.Errorf("Access-Control-Allow-Methods %q, want GET,HEAD,POST", got)
				}
				if got := h.Get(echo.HeaderAccessControlAllowHeaders); got != "Content-Type" {
					t.Errorf("Access-Control-Allow-Headers %q, want Content-Type", got)
				}
				if got := h.Get(echo.HeaderAccessControlMaxAge); got != "600" {
					t.Errorf("Access-Control-Max-Age %q, want 600", got)
				}
				return
			}
			if got := h.Get(echo.HeaderAccessControlExposeHeaders); got != "RateLimit,RateLimit-Policy,Retry-After,X-Request-Id" {
				t.Errorf("Access-Control-Expose-Headers %q, want RateLimit,RateLimit-Policy,Retry-After,X-Request-Id", got)
			}
		})
	}
}

// TestCORSOnARefusal: a 429 of the API's rate limit carries the CORS
// headers, so the page can read its Retry-After; a preflight is not
// charged to the client's quota.
func TestCORSOnARefusal(t *testing.T) {
	const origin = "https://app.example.com"
	clock := newFakeClock()
	cfg := testConfig(t)
	cfg.apiLimit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 0.1, Burst: 1}
	cfg.clock = clock.now
	cfg.corsOrigins = []string{origin}
	e := newServer(cfg)
	send := func(method string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "/api/v1/calc", strings.NewReader(calcBody))
		req.Header.Set(echo.HeaderOrigin, origin)
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		if method == http.MethodOptions {
			req.Header.Set(echo.HeaderAccessControlRequestMethod, http.MethodPost)
		}
		req.RemoteAddr = "192.0.2.1:40000"
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	for range 3 {
		if rec := send(http.MethodOptions); rec.Code != http.StatusNoContent {
			t.Fatalf("preflight: %d, want 204", rec.Code)
		}
	}
	if rec := send(http.MethodPost); rec.Code != http.StatusOK {
		t.Fatalf("first request after three preflights: %d, want 200 (a preflight costs nothing)", rec.Code)
	}
	rec := send(http.MethodPost)
	checkProblem(t, rec, http.StatusTooManyRequests, "too many requests")
	h := rec.Header()
	if h.Get(echo.HeaderAccessControlAllowOrigin) != origin || !strings.Contains(h.Get(echo.HeaderAccessControlExposeHeaders), "Retry-After") || h.Get(echo.HeaderRetryAfter) == "" {
		t.Errorf("429 headers %v; want CORS exposing Retry-After", h)
	}
}
