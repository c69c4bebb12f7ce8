package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/static"
)

// wantSecurityHeaders are the headers every response carries.
var wantSecurityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
	"X-Content-Type-Options":     "nosniff",
	"Referrer-Policy":            "no-referrer",
	"X-Frame-Options":            "DENY",
	"Cross-Origin-Opener-Policy": "same-origin",
	"Permissions-Policy":         "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
}

func checkSecurityHeaders(t *testing.T, h http.Header) {
	t.Helper()
	for name, want := range wantSecurityHeaders {
		if got := h.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	tests := []struct {
		name, method, target, body string
		wantCode                   int
	}{
		{"page", http.MethodGet, "/", "", http.StatusOK},
		{"healthz", http.MethodGet, "/healthz", "", http.StatusOK},
		{"static", http.MethodGet, "/static/css/app.css", "", http.StatusOK},
		{"metrics", http.MethodGet, "/metrics", "", http.StatusOK},
		{"api", http.MethodGet, "/api/openapi.json", "", http.StatusOK},
		{"not found", http.MethodGet, "/no/such/page", "", http.StatusNotFound},
		{"method not allowed", http.MethodDelete, "/", "", http.StatusMethodNotAllowed},
		{"api 422", http.MethodPost, "/api/v1/calc", `{"capacity": -1, "clients": 1}`, http.StatusUnprocessableEntity},
	}
	e := newServer(testConfig(t))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
			if tt.body != "" {
				req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tt.wantCode {
				t.Fatalf("status: got %d, want %d", rec.Code, tt.wantCode)
			}
			checkSecurityHeaders(t, rec.Header())
		})
	}
}

func TestSecurityHeadersSurviveAPanic(t *testing.T) {
	e := newServer(testConfig(t))
	e.GET("/test-panic", func(echo.Context) error { panic("boom") })
	rec := serve(t, e, http.MethodGet, "/test-panic")
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status: got %d, want 500", rec.Code)
	}
	checkSecurityHeaders(t, rec.Header())
}

// get sends a GET for target with the given request headers (name, value
// pairs) to e.
func get(t *testing.T, e http.Handler, target string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

func TestStaticCacheControl(t *testing.T) {
	versioned := static.Path("css/app.css")
	_, v, _ := strings.Cut(versioned, "?v=")
	tests := []struct {
		name, target string
		want         string
	}{
		{"current version", versioned, staticImmutableCacheControl},
		{"no version", "/static/css/app.css", staticCacheControl},
		{"old version", "/static/css/app.css?v=000000000000", staticCacheControl},
		{"empty version", "/static/css/app.css?v=", staticCacheControl},
	}
	e := newServer(testConfig(t))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, e, tt.target)
			if rec.Code != http.StatusOK {
				t.Fatalf("status: got %d, want 200", rec.Code)
			}
			if got := rec.Header().Get(echo.HeaderCacheControl); got != tt.want {
				t.Errorf("Cache-Control: got %q, want %q", got, tt.want)
			}
			if got, want := rec.Header().Get("ETag"), `W/"`+v+`"`; got != want {
				t.Errorf("ETag: got %q, want %q", got, want)
			}
		})
	}
	if rec := get(t, e, "/static/css/nope.css?v="+v); rec.Header().Get(echo.HeaderCacheControl) != "" || rec.Header().Get("ETag") != "" {
		t.Errorf("404 of a missing asset: Cache-Control %q, ETag %q; want neither",
			rec.Header().Get(echo.HeaderCacheControl), rec.Header().Get("ETag"))
	}
}

func TestStaticRevalidatesWith304(t *testing.T) {
	e := newServer(testConfig(t))
	first := get(t, e, "/static/css/app.css", "Accept-Encoding", "gzip")
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	rec := get(t, e, "/static/css/app.css", "Accept-Encoding", "gzip", "If-None-Match", etag)
	if rec.Code != http.StatusNotModified {
		t.Fatalf("status: got %d, want 304", rec.Code)
	}
	if rec.Body.Len() != 0 {
		t.Errorf("304 has a body of %d bytes", rec.Body.Len())
	}
	if got := rec.Header().Get(echo.HeaderContentEncoding); got != "" {
		t.Errorf("Content-Encoding on a 304: %q", got)
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

func unbrotli(t *testing.T, b []byte) []byte {
	t.Helper()
	out, err := io.ReadAll(brotli.NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatalf("brotli: %v", err)
	}
	return out
}

// decodeBody returns b decoded from the content coding ce ("gzip", "br",
// or "" for identity).
func decodeBody(t *testing.T, ce string, b []byte) []byte {
	t.Helper()
	switch ce {
	case "gzip":
		return gunzip(t, b)
	case "br":
		return unbrotli(t, b)
	case "":
		return b
	}
	t.Fatalf("unexpected Content-Encoding %q", ce)
	return nil
}

func hasVaryAcceptEncoding(h http.Header) bool {
	for _, v := range h.Values(echo.HeaderVary) {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "Accept-Encoding") {
				return true
			}
		}
	}
	return false
}

// TestCompressOnTheRealServer fetches pages, an API document and a static
// asset with each coding and without: dynamic responses come in the coding
// the client prefers, and decode to the plain body. The stylesheet has no
// prebuilt brotli copy: it comes as its gzip copy to a client that accepts
// gzip, and compressed on the fly to one that accepts only brotli.
func TestCompressOnTheRealServer(t *testing.T) {
	e := newServer(testConfig(t))
	for _, tt := range []struct {
		accept  string
		dynamic string // Content-Encoding of pages, JSON and metrics
		static  string // of the stylesheet
	}{
		{"gzip, deflate", "gzip", "gzip"},
		{"gzip, deflate, br", "br", "br"},
		{"br", "br", "br"},
	} {
		for _, target := range []string{"/static/css/app.css", "/", "/api/openapi.json", "/metrics"} {
			t.Run(tt.accept+" "+target, func(t *testing.T) {
				want := tt.dynamic
				if strings.HasPrefix(target, "/static/") {
					want = tt.static
				}
				plain := get(t, e, target)
				coded := get(t, e, target, "Accept-Encoding", tt.accept)
				if plain.Code != http.StatusOK || coded.Code != http.StatusOK {
					t.Fatalf("status: got %d and %d, want 200", plain.Code, coded.Code)
				}
				if got := plain.Header().Get(echo.HeaderContentEncoding); got != "" {
					t.Errorf("Content-Encoding without Accept-Encoding: %q", got)
				}
				if got := coded.Header().Get(echo.HeaderContentEncoding); got != want {
					t.Fatalf("Content-Encoding: got %q, want %q", got, want)
				}
				if !hasVaryAcceptEncoding(coded.Header()) || !hasVaryAcceptEncoding(plain.Header()) {
					t.Errorf("Vary: got %q and %q, want Accept-Encoding", plain.Header().Values("Vary"), coded.Header().Values("Vary"))
				}
				if coded.Header().Get(echo.HeaderContentLength) != "" {
					t.Errorf("Content-Length of the uncompressed body on a compressed response")
				}
				if target == "/metrics" {
					return // the figures move between two scrapes
				}
				if got := decodeBody(t, want, coded.Body.Bytes()); !bytes.Equal(got, plain.Body.Bytes()) {
					t.Errorf("decoded body differs from the plain one (%d vs %d bytes)", len(got), plain.Body.Len())
				}
			})
		}
	}
}

func TestGzipLeavesRangesAndErrorsAlone(t *testing.T) {
	e := newServer(testConfig(t))
	rec := get(t, e, "/static/css/app.css", "Accept-Encoding", "gzip", "Range", "bytes=0-9")
	if rec.Code != http.StatusPartialContent || rec.Body.Len() != 10 {
		t.Errorf("range: got %d with %d bytes, want 206 with 10", rec.Code, rec.Body.Len())
	}
	if got := rec.Header().Get(echo.HeaderContentEncoding); got != "" {
		t.Errorf("range: Content-Encoding %q", got)
	}

	rec = get(t, e, "/no/such/page", "Accept-Encoding", "gzip")
	if rec.Code != http.StatusNotFound || rec.Body.String() != "Not Found" {
		t.Errorf("404: got %d %q, want a plain \"Not Found\"", rec.Code, rec.Body.String())
	}
	if got := rec.Header().Get(echo.HeaderContentEncoding); got != "" {
		t.Errorf("404: Content-Encoding %q", got)
	}
}

// TestCompress drives the middleware alone, with handlers for the cases the
// real routes do not have (yet), under each coding.
func TestCompress(t *testing.T) {
	big := strings.Repeat("ratelab ", 200)
	e := echo.New()
	e.Use(compress())
	e.GET("/html", func(c echo.Context) error { return c.HTML(http.StatusOK, big) })
	e.HEAD("/html", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
		return c.NoContent(http.StatusOK)
	})
	e.GET("/png", func(c echo.Context) error { return c.Blob(http.StatusOK, "image/png", []byte(big)) })
	e.GET("/svg", func(c echo.Context) error { return c.Blob(http.StatusOK, "image/svg+xml", []byte(big)) })
	e.GET("/short", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentLength, "2")
		return c.String(http.StatusOK, "ok")
	})
	e.GET("/long", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(big)))
		return c.String(http.StatusOK, big)
	})
	e.GET("/empty", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	e.GET("/notmodified", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
		return c.NoContent(http.StatusNotModified)
	})
	e.GET("/partial", func(c echo.Context) error {
		return c.Blob(http.StatusPartialContent, echo.MIMETextPlainCharsetUTF8, []byte(big))
	})
	e.GET("/ranged", func(c echo.Context) error {
		c.Response().Header().Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", len(big)-1, 2*len(big)))
		return c.String(http.StatusOK, big)
	})
	e.GET("/encoded", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentEncoding, "zstd")
		return c.String(http.StatusOK, big)
	})
	e.GET("/error", func(c echo.Context) error { return errors.New("boom") })
	e.GET("/stream", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextPlain)
		c.Response().Flush()
		_, err := io.WriteString(c.Response(), big)
		return err
	})
	e.GET("/sniffed", func(c echo.Context) error {
		_, err := io.WriteString(c.Response(), "<!DOCTYPE html><p>"+big)
		return err
	})

	tests := []struct {
		method, path string
		wantCode     int
		wantCoded    bool // sent in the request's coding, else as is
	}{
		{http.MethodGet, "/html", http.StatusOK, true},
		{http.MethodHead, "/html", http.StatusOK, false},
		{http.MethodGet, "/png", http.StatusOK, false},
		{http.MethodGet, "/svg", http.StatusOK, true},
		{http.MethodGet, "/short", http.StatusOK, false},
		{http.MethodGet, "/long", http.StatusOK, true},
		{http.MethodGet, "/empty", http.StatusNoContent, false},
		{http.MethodGet, "/notmodified", http.StatusNotModified, false},
		{http.MethodGet, "/partial", http.StatusPartialContent, false},
		{http.MethodGet, "/ranged", http.StatusOK, false},
		{http.MethodGet, "/encoded", http.StatusOK, false},
		{http.MethodGet, "/error", http.StatusInternalServerError, false},
		{http.MethodGet, "/stream", http.StatusOK, true},
		// Echo writes the status before the body, so a type sniffed
		// from the body comes too late to compress; handlers here always
		// set one.
		{http.MethodGet, "/sniffed", http.StatusOK, false},
	}
	for _, coding := range []string{"gzip", "br"} {
		for _, tt := range tests {
			t.Run(coding+" "+tt.method+" "+tt.path, func(t *testing.T) {
				req := httptest.NewRequest(tt.method, tt.path, nil)
				req.Header.Set("Accept-Encoding", coding)
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				if rec.Code != tt.wantCode {
					t.Fatalf("status: got %d, want %d", rec.Code, tt.wantCode)
				}
				want := ""
				switch {
				case tt.wantCoded:
					want = coding
				case tt.path == "/encoded":
					want = "zstd"
				}
				ce := rec.Header().Get(echo.HeaderContentEncoding)
				if ce != want {
					t.Fatalf("Content-Encoding: got %q, want %q", ce, want)
				}
				if !hasVaryAcceptEncoding(rec.Header()) {
					t.Errorf("no Vary: Accept-Encoding")
				}
				if tt.wantCoded && rec.Header().Get(echo.HeaderContentLength) != "" {
					t.Errorf("Content-Length %q of the uncompressed body on a compressed response", rec.Header().Get(echo.HeaderContentLength))
				}
				wantBody := big
				switch {
				case tt.method == http.MethodHead, tt.wantCode == http.StatusNoContent, tt.wantCode == http.StatusNotModified:
					wantBody = ""
				case tt.path == "/short":
					wantBody = "ok"
				case tt.path == "/error":
					wantBody = rec.Body.String() // the error handler's own text
					if !strings.Contains(wantBody, "Internal Server Error") {
						t.Errorf("error body %q, want a plain Internal Server Error", wantBody)
					}
				case tt.path == "/sniffed":
					wantBody = "<!DOCTYPE html><p>" + big
				}
				if ce == "zstd" {
					ce = "" // the handler's own bytes, sent as they are
				}
				if got := string(decodeBody(t, ce, rec.Body.Bytes())); got != wantBody {
					t.Errorf("decoded body: got %d bytes, want %d", len(got), len(wantBody))
				}
			})
		}
	}
}

// TestAcceptEncodingNegotiation sends a compressible body to clients with
// various Accept-Encoding values: brotli wins unless the client gives gzip
// a strictly higher q; q=0 refuses a coding, "*" admits any.
func TestAcceptEncodingNegotiation(t *testing.T) {
	big := strings.Repeat("ratelab ", 200)
	e := echo.New()
	e.Use(compress())
	e.GET("/", func(c echo.Context) error { return c.HTML(http.StatusOK, big) })
	for _, tt := range []struct {
		accept string
		want   string // Content-Encoding, "" for identity
	}{
		{"", ""},
		{"identity", ""},
		{"deflate, zstd", ""},
		{"br", "br"},
		{"BR", "br"},
		{"gzip", "gzip"},
		{"x-gzip", "gzip"},
		{"gzip, br", "br"},
		{"br, gzip", "br"},
		{"gzip, deflate, br, zstd", "br"},
		{"gzip;q=0.5, br;q=0.5", "br"},
		{"gzip;q=1.0, br;q=0.9", "gzip"},
		{"br;q=0.8, gzip;q=0.7", "br"},
		{"gzip, br;q=0.5", "gzip"},
		{"br;q=0, gzip", "gzip"},
		{"br;q=0", ""},
		{"gzip;q=0, br", "br"},
		{"gzip;q=0, br;q=0", ""},
		{"*", "br"},
		{"*;q=0", ""},
		{"gzip, *;q=0.5", "gzip"},
		{"br;q=0, *", "gzip"},
		{"identity, *;q=0", ""},
	} {
		t.Run(tt.accept, func(t *testing.T) {
			rec := get(t, e, "/", "Accept-Encoding", tt.accept)
			ce := rec.Header().Get(echo.HeaderContentEncoding)
			if ce != tt.want {
				t.Fatalf("Accept-Encoding %q: Content-Encoding %q, want %q", tt.accept, ce, tt.want)
			}
			if !hasVaryAcceptEncoding(rec.Header()) {
				t.Errorf("no Vary: Accept-Encoding")
			}
			if got := string(decodeBody(t, ce, rec.Body.Bytes())); got != big {
				t.Errorf("decoded body: got %d bytes, want the %d of the page", len(got), len(big))
			}
		})
	}
}

// TestCompressFlushStreams serves a handler that flushes a first part and
// then waits for the client to have read it before it writes the rest: each
// coding must send the first part through a real connection while the
// handler still runs. The handler also sets a write deadline, which
// reaches the connection only through the writer's Unwrap.
func TestCompressFlushStreams(t *testing.T) {
	const timeout = 10 * time.Second
	first, rest := strings.Repeat("first ", 200), strings.Repeat("rest ", 200)
	for _, coding := range []string{"gzip", "br"} {
		t.Run(coding, func(t *testing.T) {
			read := make(chan struct{}) // closed once the client has the first part
			handlerErr := make(chan error, 1)
			e := echo.New()
			e.Use(compress())
			stream := func(c echo.Context) error {
				rc := http.NewResponseController(c.Response().Writer)
				if err := rc.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
					return fmt.Errorf("SetWriteDeadline: %w", err)
				}
				c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextPlainCharsetUTF8)
				c.Response().WriteHeader(http.StatusOK)
				if _, err := io.WriteString(c.Response(), first); err != nil {
					return err
				}
				if err := rc.Flush(); err != nil {
					return fmt.Errorf("Flush: %w", err)
				}
				select {
				case <-read:
				case <-time.After(timeout):
					return errors.New("the client never got the flushed part")
				}
				_, err := io.WriteString(c.Response(), rest)
				return err
			}
			e.GET("/stream", func(c echo.Context) error {
				err := stream(c)
				handlerErr <- err
				return err
			})
			srv := httptest.NewServer(e)
			defer srv.Close()
			client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableCompression: true}}
			defer client.CloseIdleConnections()
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/stream", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept-Encoding", coding)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ce := resp.Header.Get("Content-Encoding"); resp.StatusCode != http.StatusOK || ce != coding {
				select {
				case err := <-handlerErr:
					t.Errorf("handler: %v", err)
				case <-time.After(timeout):
				}
				t.Fatalf("status %d, Content-Encoding %q; want 200 %s", resp.StatusCode, ce, coding)
			}
			var body io.Reader
			if coding == "br" {
				body = brotli.NewReader(resp.Body)
			} else if body, err = gzip.NewReader(resp.Body); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(first))
			if n, err := io.ReadFull(body, got); err != nil || string(got) != first {
				t.Fatalf("first part: read %d bytes (%v), want the %d bytes flushed", n, err, len(first))
			}
			close(read)
			tail, err := io.ReadAll(body)
			if err != nil || string(tail) != rest {
				t.Errorf("rest: %d bytes (%v), want %d", len(tail), err, len(rest))
			}
			select {
			case err := <-handlerErr:
				if err != nil {
					t.Error(err)
				}
			case <-time.After(timeout):
				t.Error("the handler did not finish")
			}
		})
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"deflate, gzip;q=1.0, *;q=0.5", true},
		{"GZIP", true},
		{"br", false},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"*", true},
		{"identity, x-gzip", true},
	}
	for _, tt := range tests {
		if got := acceptsGzip(tt.header); got != tt.want {
			t.Errorf("acceptsGzip(%q): got %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestCompressible(t *testing.T) {
	tests := []struct {
		ct   string
		want bool
	}{
		{"text/html; charset=UTF-8", true},
		{"text/css; charset=utf-8", true},
		{"text/javascript; charset=utf-8", true},
		{"application/javascript", true},
		{"application/json", true},
		{"application/problem+json", true},
		{"image/svg+xml", true},
		{"text/plain; version=0.0.4; charset=utf-8", true},
		{"image/png", false},
		{"font/woff2", false},
		{"application/octet-stream", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := compressible(tt.ct); got != tt.want {
			t.Errorf("compressible(%q): got %v, want %v", tt.ct, got, tt.want)
		}
	}
}

func TestBodyLimit(t *testing.T) {
	const limit = 100
	cfg := testConfig(t)
	cfg.apiBodyLimit = limit
	e := newServer(cfg)
	body := `{"capacity": 1000, "clients": 10, "tiers": [` + strings.Repeat(`{"name": "x", "clients": 1},`, 10) + `{"name": "y", "clients": 1}]}`

	t.Run("declared length", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/calc", strings.NewReader(body))
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		checkTooLarge(t, rec, "larger than 100 bytes")
	})
	t.Run("chunked", func(t *testing.T) {
		// No Content-Length: the cap applies while the handler reads.
		req := httptest.NewRequest(http.MethodPost, "/api/v1/calc", io.MultiReader(strings.NewReader(body)))
		req.ContentLength = -1
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		checkTooLarge(t, rec, "larger than 100 bytes")
	})
	t.Run("within the cap", func(t *testing.T) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/api/v1/calc", strings.NewReader(`{"capacity": 1000, "clients": 10}`))
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("status: got %d, want 200: %s", rec.Code, rec.Body)
		}
	})
	t.Run("pages", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("x", pageBodyLimit+1)))
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("status: got %d, want 413", rec.Code)
		}
	})
}

func checkTooLarge(t *testing.T, rec *httptest.ResponseRecorder, wantMsg string) {
	t.Helper()
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status: got %d, want 413: %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get(echo.HeaderContentType); got != mimeProblemJSON {
		t.Errorf("Content-Type: got %q, want %s", got, mimeProblemJSON)
	}
	var body Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Errors) != 1 {
		t.Fatalf("body: %v: %s", err, rec.Body)
	}
	if body.Status != http.StatusRequestEntityTooLarge || !strings.Contains(body.Detail, wantMsg) {
		t.Errorf("problem status %d, detail %q; want 413 and a detail containing %q", body.Status, body.Detail, wantMsg)
	}
	if !strings.Contains(body.Errors[0].Message, wantMsg) {
		t.Errorf("message: got %q, want it to contain %q", body.Errors[0].Message, wantMsg)
	}
}

func TestIPExtractor(t *testing.T) {
	trusted, err := parseTrustedProxies("10.0.0.0/8, 192.0.2.10, ::ffff:172.16.0.0/108")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		trusted []netip.Prefix
		remote  string
		xff     string
		want    string
	}{
		{"no proxy, no header", nil, "203.0.113.5:4000", "", "203.0.113.5"},
		{"no proxy ignores a forged header", nil, "203.0.113.5:4000", "198.51.100.1", "203.0.113.5"},
		{"trusted proxy", trusted, "10.1.2.3:4000", "198.51.100.1", "198.51.100.1"},
		{"trusted proxy, client forged the first entry", trusted, "10.1.2.3:4000", "6.6.6.6, 198.51.100.1", "198.51.100.1"},
		{"two trusted hops", trusted, "192.0.2.10:4000", "198.51.100.1, 10.9.9.9", "198.51.100.1"},
		{"mapped prefix", trusted, "172.16.0.9:4000", "198.51.100.1", "198.51.100.1"},
		{"untrusted peer's header is ignored", trusted, "203.0.113.5:4000", "198.51.100.1", "203.0.113.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.RemoteAddr = tt.remote
			if tt.xff != "" {
				req.Header.Set(echo.HeaderXForwardedFor, tt.xff)
			}
			if got := ipExtractor(tt.trusted)(req); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseTrustedProxies(t *testing.T) {
	for _, bad := range []string{"nope", "10.0.0.0/33", "10.0.0.1/8/1", "2001:db8::/200"} {
		if _, err := parseTrustedProxies(bad); err == nil {
			t.Errorf("parseTrustedProxies(%q): got no error", bad)
		}
	}
	got, err := parseTrustedProxies(" 10.1.2.3/8 ,, 2001:db8::1 ")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::1/128")}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestRequestLogLine(t *testing.T) {
	var buf bytes.Buffer
	cfg := testConfig(t)
	cfg.logger = slog.New(slog.NewJSONHandler(&buf, nil))
	e := newServer(cfg)
	req := httptest.NewRequest(http.MethodGet, "/static/css/app.css?v=1", nil)
	req.RemoteAddr = "203.0.113.5:4000"
	req.Header.Set(echo.HeaderXForwardedFor, "6.6.6.6") // not trusted by default
	e.ServeHTTP(httptest.NewRecorder(), req)

	var line struct {
		Msg      string  `json:"msg"`
		Route    string  `json:"route"`
		URI      string  `json:"uri"`
		Status   int     `json:"status"`
		Latency  float64 `json:"latency"`
		RemoteIP string  `json:"remote_ip"`
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("log: %v: %s", err, buf.String())
	}
	if line.Msg != "request" || line.Route != "/static/*" || line.URI != "/static/css/app.css?v=1" ||
		line.Status != http.StatusOK || line.RemoteIP != "203.0.113.5" || !strings.Contains(buf.String(), `"latency":`) {
		t.Errorf("log line: got %s", buf.String())
	}
}

func TestSecurityPolicyThatAllowsFraming(t *testing.T) {
	p := newSecurityPolicy("https://docs.example.com")
	if p.frameOptions != "" {
		t.Errorf("X-Frame-Options: got %q, want none (it cannot name an origin)", p.frameOptions)
	}
	if !strings.HasSuffix(p.csp, "; frame-ancestors https://docs.example.com") || !strings.Contains(p.csp, "script-src 'self';") {
		t.Errorf("CSP: got %q", p.csp)
	}
}

func TestStaticAssetsAreCompressedOnce(t *testing.T) {
	srv := newServer(testConfig(t))
	name := "vendor/echarts.min.js"
	raw, err := fs.ReadFile(static.FS, name)
	if err != nil {
		t.Fatal(err)
	}
	get := func(header ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, static.Path(name), nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	a, b := get("Accept-Encoding", "gzip"), get("Accept-Encoding", "gzip")
	if a.Code != http.StatusOK || a.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %d, Content-Encoding %q; want 200 gzip", a.Code, a.Header().Get("Content-Encoding"))
	}
	if !bytes.Equal(a.Body.Bytes(), b.Body.Bytes()) {
		t.Error("two requests got different compressed bytes")
	}
	zr, err := gzip.NewReader(a.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("gunzipped %d bytes (%v), want the %d bytes of the asset", len(got), err, len(raw))
	}
	if ct := a.Header().Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Errorf("Content-Type %q, want JavaScript", ct)
	}
	if etag := a.Header().Get("ETag"); etag == "" {
		t.Error("no ETag")
	} else if c := get("Accept-Encoding", "gzip", "If-None-Match", etag); c.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: status %d, want 304", c.Code)
	}
	if plain := get(); plain.Header().Get("Content-Encoding") != "" || !bytes.Equal(plain.Body.Bytes(), raw) {
		t.Errorf("without Accept-Encoding: Content-Encoding %q, %d bytes; want the plain asset", plain.Header().Get("Content-Encoding"), plain.Body.Len())
	}
}

// BenchmarkStaticEcharts serves the vendored chart library to a client that
// accepts gzip: the compressed bytes are made once, not per request.
func BenchmarkStaticEcharts(b *testing.B) {
	srv := newServer(config{})
	target := static.Path("vendor/echarts.min.js")
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkCompressPage sends the designer page (its HTML as / renders it,
// about 350 KB) through compress to a client that accepts only gzip and to
// one that accepts brotli, side by side: the cost per page of each coding,
// with pooled encoders, and the bytes it sends (out-bytes).
func BenchmarkCompressPage(b *testing.B) {
	page := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(page, httptest.NewRequest(http.MethodGet, "/", nil))
	if page.Code != http.StatusOK || page.Body.Len() < 100_000 {
		b.Fatalf("/: status %d, %d bytes", page.Code, page.Body.Len())
	}
	html := page.Body.Bytes()
	e := echo.New()
	e.Use(compress())
	e.GET("/", func(c echo.Context) error { return c.HTMLBlob(http.StatusOK, html) })
	for _, bc := range []struct{ name, coding, hx string }{{"gzip", "gzip", ""}, {"br", "br", ""}, {"br-live", "br", "true"}} {
		coding := bc.coding
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Header.Set("Accept-Encoding", coding)
			if bc.hx != "" {
				req.Header.Set("HX-Request", bc.hx)
			}
			w := &countingResponseWriter{header: http.Header{}}
			b.SetBytes(int64(len(html)))
			b.ReportAllocs()
			for b.Loop() {
				clear(w.header)
				w.n = 0
				e.ServeHTTP(w, req)
				if ce := w.header.Get(echo.HeaderContentEncoding); ce != coding {
					b.Fatalf("Content-Encoding %q, want %q", ce, coding)
				}
			}
			b.ReportMetric(float64(w.n), "out-bytes")
		})
	}
}

// countingResponseWriter discards a response and counts its body bytes.
type countingResponseWriter struct {
	header http.Header
	n      int
}

func (w *countingResponseWriter) Header() http.Header { return w.header }
func (w *countingResponseWriter) WriteHeader(int)     {}
func (w *countingResponseWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

// TestLiveUpdatesCompressFaster: an htmx request (a live update) is
// brotli-compressed at the faster quality, a page at the smaller one, and
// both decode to the same body.
func TestLiveUpdatesCompressFaster(t *testing.T) {
	page := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(page, httptest.NewRequest(http.MethodGet, "/", nil))
	html := page.Body.Bytes()
	e := echo.New()
	e.Use(compress())
	e.GET("/", func(c echo.Context) error { return c.HTMLBlob(http.StatusOK, html) })
	size := map[string]int{}
	for _, hx := range []string{"", "true"} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Accept-Encoding", "br")
		if hx != "" {
			req.Header.Set("HX-Request", hx)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if ce := rec.Header().Get(echo.HeaderContentEncoding); ce != "br" {
			t.Fatalf("HX-Request %q: Content-Encoding %q, want br", hx, ce)
		}
		size[hx] = rec.Body.Len()
		body, err := io.ReadAll(brotli.NewReader(rec.Body))
		if err != nil || !bytes.Equal(body, html) {
			t.Fatalf("HX-Request %q: decoded %d bytes (%v), want the %d of the page", hx, len(body), err, len(html))
		}
	}
	// Quality 3 against 5 on 260 KB of HTML: about a sixth more bytes.
	if size["true"] <= size[""]*11/10 {
		t.Errorf("live update %d bytes, page %d: want the live update compressed at a lower quality (over 10 %% larger)", size["true"], size[""])
	}
}
