package server

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// heldUpload is an upload served in the background whose body the test
// writes through a pipe.
type heldUpload struct {
	w    *io.PipeWriter
	done chan *httptest.ResponseRecorder
}

// startUpload posts to path from client addr with a body the test sends
// later through the returned pipe.
func startUpload(srv http.Handler, path, addr, contentType string) heldUpload {
	pr, pw := io.Pipe()
	req := httptest.NewRequest(http.MethodPost, path, pr)
	req.RemoteAddr = addr
	req.Header.Set("Content-Type", contentType)
	h := heldUpload{w: pw, done: make(chan *httptest.ResponseRecorder, 1)}
	go func() {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		pr.Close()
		h.done <- rec
	}()
	return h
}

// formBody is the measure form for measureDesign with log, and its type.
func formBody(log string) ([]byte, string) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("design", measureDesign)
	fw, _ := w.CreateFormFile("log", "access.log")
	fw.Write([]byte(log))
	w.Close()
	return body.Bytes(), w.FormDataContentType()
}

// TestUploadConcurrencyCaps: with -max-uploads 2 and
// -max-uploads-per-client 1, a second upload from a client whose upload
// runs gets 429, a third upload in all gets 503 (on either route, they
// share the slots), both with Retry-After; once one finishes, the next
// is served. Uploads are held open by their bodies and counted through
// the acquired hook, without sleeping.
func TestUploadConcurrencyCaps(t *testing.T) {
	up := newUploads(2, 1, 0, 0, 0, 0)
	acquired := make(chan struct{}, 10)
	up.acquired = func() { acquired <- struct{}{} }
	srv := newServer(config{uploads: up})
	body, ct := formBody(measureLog())

	a := startUpload(srv, measurePath, "192.0.2.1:1000", ct)
	<-acquired
	b := startUpload(srv, rejectionsPath, "192.0.2.1:1001", ct)
	if rec := <-b.done; rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), "-max-uploads-per-client") {
		t.Errorf("second upload of a client: %d, Retry-After %q: %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	c := startUpload(srv, rejectionsPath, "192.0.2.2:1000", ct)
	<-acquired
	d := startUpload(srv, measurePath, "192.0.2.3:1000", ct)
	if rec := <-d.done; rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), "-max-uploads") {
		t.Errorf("third upload in all: %d, Retry-After %q: %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	for _, h := range []heldUpload{a, c} {
		h.w.Write(body)
		h.w.Close()
		if rec := <-h.done; rec.Code != http.StatusOK {
			t.Errorf("held upload: %d %.200s", rec.Code, rec.Body)
		}
	}
	e := startUpload(srv, measurePath, "192.0.2.3:1000", ct)
	<-acquired
	e.w.Write(body)
	e.w.Close()
	if rec := <-e.done; rec.Code != http.StatusOK {
		t.Errorf("after the others finished: %d", rec.Code)
	}
}

// TestOpenUploadsHoldLittle reproduces the slow-connection finding: 20
// uploads held open after their form and first log lines hold well under
// 64 KiB of heap each (each held a 1 MiB line buffer, twice, before).
func TestOpenUploadsHoldLittle(t *testing.T) {
	const n = 20
	srv := newServer(config{uploads: newUploads(n, n, 0, 0, 0, 0)})
	body, ct := formBody(measureLog())
	i := bytes.Index(body, []byte("198.51.100.1 "))
	head, lines := body[:i], body[i:i+400]
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	held := make([]heldUpload, n)
	for k := range held {
		held[k] = startUpload(srv, measurePath, fmt.Sprintf("192.0.2.%d:1000", k+1), ct)
		held[k].w.Write(head)
		held[k].w.Write(lines) // returns once the handler reads the log
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	for _, h := range held {
		h.w.CloseWithError(io.ErrUnexpectedEOF)
		<-h.done
	}
	if per > 64<<10 {
		t.Errorf("%d bytes of heap per open upload; want under 64 KiB", per)
	}
	t.Logf("%d bytes of heap per open upload", per)
}

// steppingClock advances by step at every reading.
type steppingClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *steppingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// trickle yields at most 100 bytes a read.
type trickle struct{ r io.Reader }

func (t trickle) Read(p []byte) (int, error) { return t.r.Read(p[:min(len(p), 100)]) }

// TestSlowUploadCutOff: at -min-upload-rate 1000 bytes/s, an upload of
// 100 bytes a second (the fake clock moves a second per reading) is cut
// off with a 408 naming the flag once its grace has passed; the same
// upload at full speed is measured.
func TestSlowUploadCutOff(t *testing.T) {
	body, ct := formBody(measureLog())
	send := func(step time.Duration) *httptest.ResponseRecorder {
		clk := &steppingClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), step: step}
		srv := newServer(config{clock: clk.now, uploads: newUploads(0, 0, 1000, 0, 0, 0)})
		req := httptest.NewRequest(http.MethodPost, measurePath, trickle{bytes.NewReader(body)})
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	if rec := send(time.Second); rec.Code != http.StatusRequestTimeout || !strings.Contains(rec.Body.String(), "-min-upload-rate") {
		t.Errorf("slow upload: %d %.300s", rec.Code, rec.Body)
	}
	if rec := send(0); rec.Code != http.StatusOK {
		t.Errorf("fast upload: %d %.300s", rec.Code, rec.Body)
	}
}

// TestUploadContentBounds: a log with more clients than -max-clients is a
// 422 naming the flag on both routes; a second with more requests than
// -max-second-requests gives a replay marked degraded on the page.
func TestUploadContentBounds(t *testing.T) {
	cfg := config{uploads: newUploads(0, 0, 0, 5, 0, 0)}
	rec := uploadLog(t, cfg, measurePath, [][2]string{{"design", measureDesign}}, measureLog())
	if msg := parseHTML(t, rec).Find(`[data-testid="measure-error"]`).Text(); rec.Code != http.StatusUnprocessableEntity || !strings.Contains(msg, "-max-clients") {
		t.Errorf("20 clients over 5: %d %q", rec.Code, msg)
	}
	rec = uploadLog(t, cfg, rejectionsPath, [][2]string{{"design", measureDesign}}, measureLog())
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "-max-clients") {
		t.Errorf("rejections, 20 clients over 5: %d %s", rec.Code, rec.Body)
	}

	rec = uploadLog(t, config{uploads: newUploads(0, 0, 0, 0, 50, 0)}, measurePath, [][2]string{{"design", measureDesign}}, measureLog())
	doc := parseHTML(t, rec)
	if msg := doc.Find(`[data-testid="shadow-degraded"]`).Text(); rec.Code != http.StatusOK || !strings.Contains(msg, "160 requests") {
		t.Errorf("a second of 210 requests over 50: %d, degraded note %q", rec.Code, msg)
	}
	rec = uploadLog(t, config{}, measurePath, [][2]string{{"design", measureDesign}}, measureLog())
	if parseHTML(t, rec).Find(`[data-testid="shadow-degraded"]`).Length() != 0 {
		t.Error("a degraded note within the default bound")
	}
}
