package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ratelab/ratelab/static"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// testConfig logs to the test's output, so logs show only when a test fails
// or runs with -v.
func testConfig(t *testing.T) config {
	t.Helper()
	return config{addr: "127.0.0.1:0", logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
}

func serve(t *testing.T, e *echo.Echo, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

func TestHealthz(t *testing.T) {
	rec := serve(t, newServer(testConfig(t)), http.MethodGet, "/healthz")
	if rec.Code != http.StatusOK {
		t.Fatalf("status: got %d, want %d", rec.Code, http.StatusOK)
	}
	if got := rec.Header().Get(echo.HeaderContentType); !strings.HasPrefix(got, "text/plain") {
		t.Errorf("Content-Type: got %q, want text/plain", got)
	}
	if got := rec.Body.String(); got != "ok" {
		t.Errorf("body: got %q, want %q", got, "ok")
	}
}

func TestHome(t *testing.T) {
	rec := serve(t, newServer(testConfig(t)), http.MethodGet, "/")
	if rec.Code != http.StatusOK {
		t.Fatalf("status: got %d, want %d", rec.Code, http.StatusOK)
	}
	if got := rec.Header().Get(echo.HeaderContentType); !strings.HasPrefix(got, "text/html") {
		t.Errorf("Content-Type: got %q, want text/html", got)
	}
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatalf("parse HTML: %v", err)
	}
	// The home page is the designer; designer_test.go tests it in depth.
	for _, id := range []string{"designer", "design-form", "results"} {
		if n := doc.Find(`[data-testid="` + id + `"]`).Length(); n != 1 {
			t.Errorf(`[data-testid=%q]: got %d elements, want 1`, id, n)
		}
	}
	if got := doc.Find("title").Text(); !strings.HasPrefix(got, "ratelab") {
		t.Errorf("title: got %q, want it to start with ratelab", got)
	}
}

func TestNotFound(t *testing.T) {
	for _, target := range []string{"/no/such/page", "/static/css/missing.css", "/static/../go.mod"} {
		t.Run(target, func(t *testing.T) {
			rec := serve(t, newServer(testConfig(t)), http.MethodGet, target)
			if rec.Code != http.StatusNotFound {
				t.Fatalf("status: got %d, want %d", rec.Code, http.StatusNotFound)
			}
			if got, want := rec.Body.String(), http.StatusText(http.StatusNotFound); got != want {
				t.Errorf("body: got %q, want %q", got, want)
			}
			if got := rec.Header().Get(echo.HeaderCacheControl); got != "" {
				t.Errorf("Cache-Control on an error: got %q, want none", got)
			}
		})
	}
}

func TestStaticCSS(t *testing.T) {
	rec := serve(t, newServer(testConfig(t)), http.MethodGet, "/static/css/app.css")
	if rec.Code != http.StatusOK {
		t.Fatalf("status: got %d, want %d", rec.Code, http.StatusOK)
	}
	if got := rec.Header().Get(echo.HeaderContentType); !strings.HasPrefix(got, "text/css") {
		t.Errorf("Content-Type: got %q, want text/css", got)
	}
	if got := rec.Header().Get(echo.HeaderCacheControl); got != staticCacheControl {
		t.Errorf("Cache-Control: got %q, want %q", got, staticCacheControl)
	}
	if !strings.Contains(rec.Body.String(), "prefers-color-scheme") {
		t.Errorf("body does not look like app.css:\n%s", rec.Body.String())
	}
}

func TestErrorHandler(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantBody string
	}{
		{"http error as is", echo.NewHTTPError(http.StatusUnprocessableEntity, "rate: 0 is out of range (0, 1e6]"), http.StatusUnprocessableEntity, "rate: 0 is out of range (0, 1e6]"},
		{"wrapped http error", errors.Join(errors.New("context"), echo.ErrBadRequest), http.StatusBadRequest, "Bad Request"},
		{"other error hides details", errors.New("dial redis 10.0.0.7: secret detail"), http.StatusInternalServerError, "Internal Server Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newServer(testConfig(t))
			rec := httptest.NewRecorder()
			c := e.NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
			e.HTTPErrorHandler(tt.err, c)
			if rec.Code != tt.wantCode {
				t.Errorf("status: got %d, want %d", rec.Code, tt.wantCode)
			}
			if got := rec.Body.String(); got != tt.wantBody {
				t.Errorf("body: got %q, want %q", got, tt.wantBody)
			}
		})
	}
}

func TestRenderErrorIsClean500(t *testing.T) {
	e := newServer(testConfig(t))
	rec := httptest.NewRecorder()
	c := e.NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
	broken := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		io.WriteString(w, "<p>half a page")
		return errors.New("template exploded")
	})

	err := render(c, http.StatusOK, broken)
	if err == nil {
		t.Fatal("render: got nil error, want the component's error")
	}
	if c.Response().Committed {
		t.Fatal("render wrote a response although the component failed")
	}
	e.HTTPErrorHandler(err, c)
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status: got %d, want %d", rec.Code, http.StatusInternalServerError)
	}
	if body := rec.Body.String(); strings.Contains(body, "half") || strings.Contains(body, "exploded") {
		t.Errorf("body leaks the failed render: %q", body)
	}
}

func TestPanicIs500(t *testing.T) {
	e := newServer(testConfig(t))
	e.GET("/test-panic", func(echo.Context) error { panic("secret detail") })
	rec := serve(t, e, http.MethodGet, "/test-panic")
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status: got %d, want %d", rec.Code, http.StatusInternalServerError)
	}
	if strings.Contains(rec.Body.String(), "secret") {
		t.Errorf("body leaks the panic: %q", rec.Body.String())
	}
}

// logWatcher is run's stdout in tests. It keeps the JSON log lines and
// reports the address of the first "listening" line on listening.
type logWatcher struct {
	listening chan string   // buffered, receives one address
	stopping  chan struct{} // closed at the "shutting down" line

	mu      sync.Mutex
	pending []byte
	lines   []string
	addrs   []string
}

func newLogWatcher() *logWatcher {
	return &logWatcher{listening: make(chan string, 1), stopping: make(chan struct{})}
}

func (w *logWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, p...)
	for {
		i := bytes.IndexByte(w.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.pending[:i])
		w.pending = w.pending[i+1:]
		w.lines = append(w.lines, line)
		var rec struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "shutting down" {
			close(w.stopping)
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" {
			w.addrs = append(w.addrs, rec.Addr)
			if len(w.addrs) == 1 {
				w.listening <- rec.Addr
			}
		}
	}
}

func (w *logWatcher) snapshot() (lines, addrs []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...), append([]string(nil), w.addrs...)
}

func TestRunServesAndShutsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	logs := newLogWatcher()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "ratelab serve", []string{"-addr", "127.0.0.1:0"}, func(string) string { return "" }, logs)
	}()
	defer func() {
		lines, _ := logs.snapshot()
		t.Logf("run's log:\n%s", strings.Join(lines, "\n"))
	}()

	// The timers only bound a hang; nothing waits for them on success.
	var addr string
	select {
	case addr = <-logs.listening:
	case err := <-done:
		t.Fatalf("run returned before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not log a listening address")
	}

	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Fatalf("GET /healthz: got %d %q (read error %v), want 200 \"ok\"", resp.StatusCode, body, err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after cancel: got %v, want nil", err)
		}
	case <-time.After(defaultShutdownTimeout + 5*time.Second):
		t.Fatal("run did not return after the context was cancelled")
	}
	if _, addrs := logs.snapshot(); len(addrs) != 1 {
		t.Errorf("listening lines: got %d (%v), want 1", len(addrs), addrs)
	}
}

func TestRunArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr bool
	}{
		{"help", []string{"-h"}, false},
		{"unknown flag", []string{"-nope"}, true},
		{"extra argument", []string{"-addr", "127.0.0.1:0", "extra"}, true},
		{"no heavy slots", []string{"-max-heavy", "0"}, true},
		{"no heavy time", []string{"-heavy-timeout", "0s"}, true},
		{"negative page rate", []string{"-page-rate", "-1"}, true},
		{"negative page cache", []string{"-page-cache", "-1"}, true},
		{"relative public URL", []string{"-public-url", "ratelab.example.com"}, true},
		{"no shutdown time", []string{"-shutdown-timeout", "0s"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// None of these may reach the listener; the cancelled context
			// makes run return even if one did.
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			err := run(ctx, "ratelab serve", tt.args, func(string) string { return "" }, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Errorf("run(%q): got error %v, want error: %v", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestRunAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = run(t.Context(), "ratelab serve", []string{"-addr", ln.Addr().String()}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("run on a busy address: got %v, want a listen error", err)
	}
}

func TestHeadAnswersLikeGet(t *testing.T) {
	srv := newServer(testConfig(t))
	for _, target := range []string{"/", "/healthz", "/api/openapi.json", static.Path("css/app.css")} {
		get := serve(t, srv, http.MethodGet, target)
		head := serve(t, srv, http.MethodHead, target)
		if head.Code != http.StatusOK || get.Code != http.StatusOK {
			t.Errorf("%s: HEAD %d, GET %d; want 200 for both", target, head.Code, get.Code)
		}
		if h, g := head.Header().Get("Content-Type"), get.Header().Get("Content-Type"); h != g {
			t.Errorf("%s: HEAD content type %q, GET %q", target, h, g)
		}
	}
}

// startRun runs the server with args on a free port and returns its
// address, its log and the channel run's error arrives on.
func startRun(t *testing.T, ctx context.Context, args ...string) (string, *logWatcher, chan error) {
	t.Helper()
	logs := newLogWatcher()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "ratelab serve", append([]string{"-addr", "127.0.0.1:0"}, args...), func(string) string { return "" }, logs)
	}()
	t.Cleanup(func() {
		lines, _ := logs.snapshot()
		t.Logf("run's log:\n%s", strings.Join(lines, "\n"))
	})
	select {
	case addr := <-logs.listening:
		return addr, logs, done
	case err := <-done:
		t.Fatalf("run returned before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not log a listening address")
	}
	return "", nil, nil
}

// inFlight opens a connection to addr and sends the head of a POST
// /api/v1/calc of a body of length n with "Expect: 100-continue", and
// returns once the server's 100 Continue says its handler is reading the
// body: the request is in flight.
func inFlight(t *testing.T, addr string, n int) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := fmt.Sprintf("POST /api/v1/calc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", n)
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue: %v %v", resp, err)
	}
	return conn, r
}

// A stop signal lets a request in flight finish: its body, not sent before
// the signal, is sent after it, and the client gets its answer; run then
// returns nil (exit 0).
func TestRunShutdownDrainsInFlightRequests(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addr, logs, done := startRun(t, ctx, "-shutdown-timeout", "1m")
	body := `{"capacity": 1000, "clients": 10}`
	conn, r := inFlight(t, addr, len(body))
	cancel() // SIGTERM
	select {
	case <-logs.stopping:
	case <-time.After(10 * time.Second):
		t.Fatal("run did not start shutting down")
	}
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("the in-flight request got no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the in-flight request: %d; want 200", resp.StatusCode)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after draining: %v; want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("run did not return after the request finished")
	}
}

// A request still in flight when -shutdown-timeout ends is closed, and run
// still returns nil: it stopped as asked.
func TestRunShutdownTimeoutClosesTheRest(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addr, logs, done := startRun(t, ctx, "-shutdown-timeout", "1ms")
	inFlight(t, addr, 100) // and its body never comes
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after the shutdown timeout: %v; want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("run did not return")
	}
	if lines, _ := logs.snapshot(); !strings.Contains(strings.Join(lines, "\n"), "shutdown timeout") {
		t.Error("no log line says the shutdown timed out")
	}
}
