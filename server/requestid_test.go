package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

var generatedRequestID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TestRequestID sends requests with X-Request-Id values (or none) to the
// real server: a valid one comes back on the response and in the request's
// log line; any other is replaced by a generated 32-hex-digit id, which
// the log line names instead.
func TestRequestID(t *testing.T) {
	for _, tt := range []struct {
		name   string
		target string
		header []string // X-Request-Id values sent; nil sends none
		echo   bool     // whether the first value comes back
	}{
		{"valid", "/healthz", []string{"req-42"}, true},
		{"valid on a 404", "/no/such/page", []string{"abc.DEF_123"}, true},
		{"valid punctuation", "/healthz", []string{`!"#$%&'()*+,-./:;<=>?@[\]^_{|}~`}, true},
		{"valid, 128 bytes", "/healthz", []string{strings.Repeat("x", 128)}, true},
		{"first of two", "/healthz", []string{"first", "second"}, true},
		{"absent", "/healthz", nil, false},
		{"empty", "/healthz", []string{""}, false},
		{"too long, 129 bytes", "/healthz", []string{strings.Repeat("x", 129)}, false},
		{"space", "/healthz", []string{"a b"}, false},
		{"tab", "/healthz", []string{"a\tb"}, false},
		{"control character", "/healthz", []string{"a\x01b"}, false},
		{"DEL", "/healthz", []string{"a\x7fb"}, false},
		{"newline, forging a log line", "/healthz", []string{"a\nlevel=ERROR msg=forged"}, false},
		{"not ASCII", "/healthz", []string{"café"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			cfg := testConfig(t)
			cfg.logger = slog.New(slog.NewJSONHandler(&logs, nil))
			e := newServer(cfg)
			req := httptest.NewRequest(http.MethodGet, tt.target, nil)
			if tt.header != nil {
				req.Header[echo.HeaderXRequestID] = tt.header
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)

			got := rec.Header().Values(echo.HeaderXRequestID)
			if len(got) != 1 {
				t.Fatalf("X-Request-Id on the response: got %q, want one value", got)
			}
			id := got[0]
			switch {
			case tt.echo && id != tt.header[0]:
				t.Errorf("X-Request-Id: got %q, want the request's %q", id, tt.header[0])
			case !tt.echo && !generatedRequestID.MatchString(id):
				t.Errorf("X-Request-Id: got %q, want 32 lower-case hex digits", id)
			}

			var line struct {
				Msg       string `json:"msg"`
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatalf("log: %v: %s", err, logs.String())
			}
			if line.Msg != "request" || line.RequestID != id {
				t.Errorf("log line: got msg %q request_id %q, want request and %q: %s", line.Msg, line.RequestID, id, logs.String())
			}
		})
	}
}

// TestGeneratedRequestIDsDiffer: generated ids are random, not a counter
// or a constant.
func TestGeneratedRequestIDsDiffer(t *testing.T) {
	e := newServer(testConfig(t))
	seen := map[string]bool{}
	for range 100 {
		id := serve(t, e, http.MethodGet, "/healthz").Header().Get(echo.HeaderXRequestID)
		if !generatedRequestID.MatchString(id) || seen[id] {
			t.Fatalf("id %q: malformed or seen before (after %d)", id, len(seen))
		}
		seen[id] = true
	}
}
