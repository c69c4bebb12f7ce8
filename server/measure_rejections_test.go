package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	measurecmd "github.com/ratelab/ratelab/internal/cli/measure"
	"github.com/ratelab/ratelab/policy"
)

// heavyLog is a combined log keyed by an X-API-Key extra field: 20
// clients each send 40 requests in each of 30 seconds (24 000 lines), far
// over measureDesign's limits. Some keys start with a formula character.
func heavyLog() string {
	keys := []string{"=HYPERLINK(1)", "+1", "-2", "@SUM(A1)", "\tx", "k"}
	var b strings.Builder
	for s := range 30 {
		for i := range 20 {
			key := keys[i%len(keys)] + fmt.Sprint(i)
			for j := range 40 {
				fmt.Fprintf(&b, "198.51.100.%d - - [30/Nov/2026:10:00:%02d +0000] \"GET /v1/orders/%d?page=%d HTTP/1.1\" 200 12 \"-\" \"curl/8.0\" \"%s\"\n",
					i, s, j, s, key)
			}
		}
	}
	return b.String()
}

// cliRejections runs ratelab measure -rejections (package measure of
// internal/cli, in process) on log with the design's policy and returns
// the CSV it writes.
func cliRejections(t *testing.T, design, log string, args ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	p, probs := parseDesignQuery(design).policy()
	if len(probs) > 0 {
		t.Fatalf("design: %v", probs)
	}
	var y bytes.Buffer
	if err := policy.Encode(&y, p); err != nil {
		t.Fatal(err)
	}
	pf, lf, cf := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "access.log"), filepath.Join(dir, "rejected.csv")
	if err := os.WriteFile(pf, y.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lf, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := measurecmd.Run(context.Background(), append(append([]string{"-policy", pf, "-rejections", cf}, args...), lf), strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("ratelab measure: exit %d\n%s", code, out.String())
	}
	b, err := os.ReadFile(cf)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// multipartBody is the measure form with fields and the log, as a reader
// of unknown length, so that the client sends it chunked as browsers
// stream big files.
func multipartBody(fields [][2]string, log string) (io.Reader, string) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for _, f := range fields {
		w.WriteField(f[0], f[1])
	}
	fw, _ := w.CreateFormFile("log", "access.log")
	fw.Write([]byte(log))
	w.Close()
	return io.MultiReader(&body), w.FormDataContentType()
}

// TestRejectionsCSVCompleteOverTCP reproduces the lost rows: over a real
// connection, with a chunked upload of 24 000 lines and more than 10 000
// would-be rejections, the CSV has every row the page counts and is
// byte-identical to ratelab measure -rejections. (Streamed, it was cut at
// a few hundred rows: the response started before the upload was read,
// and net/http discarded the rest of the body.)
func TestRejectionsCSVCompleteOverTCP(t *testing.T) {
	log := heavyLog()
	srv := httptest.NewServer(newServer(config{}))
	defer srv.Close()
	fields := [][2]string{{"design", measureDesign}, {"key", "header:X-API-Key"}, {"extra", "1"}}
	post := func(path string) (*http.Response, []byte) {
		body, ct := multipartBody(fields, log)
		res, err := http.Post(srv.URL+path, ct, body)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("%s: reading the answer: %v", path, err)
		}
		return res, b
	}
	res, got := post(rejectionsPath)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %.300s", res.StatusCode, got)
	}
	want := cliRejections(t, measureDesign, log, "-key", "header:X-API-Key")
	rows := bytes.Count(want, []byte("\n")) - 1
	if rows < 10000 {
		t.Fatalf("the CLI found %d rejections; the test wants 10 000+", rows)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the route's CSV (%d bytes, %d rows) differs from the CLI's (%d bytes, %d rows)",
			len(got), bytes.Count(got, []byte("\n"))-1, len(want), rows)
	}

	res, page := post(measurePath)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("page: status %d", res.StatusCode)
	}
	if !bytes.Contains(page, fmt.Appendf(nil, "<strong>%d of 24000 requests", rows)) {
		i := bytes.Index(page, []byte(`data-testid="shadow-summary"`))
		t.Errorf("the page does not count %d rejections: %.300s", rows, page[max(i, 0):])
	}

	for _, key := range []string{"=HYPERLINK(1)0", "+11", "-22", "@SUM(A1)3", "\tx4"} {
		if bytes.Contains(got, []byte(","+key+",")) || !bytes.Contains(got, []byte(",'"+key+",")) && !bytes.Contains(got, []byte(",\"'"+key+"\",")) {
			t.Errorf("key %q is not neutralised in the CSV", key)
		}
	}
}

// TestRejectionsCSVFailsWhole: an upload cut off midway (here over the log
// limit, after some 10 000 rejections) gets an error status, never a 200
// with part of the CSV.
func TestRejectionsCSVFailsWhole(t *testing.T) {
	res, b := postHeavyRejections(t, config{logLimit: 1 << 20})
	if res.StatusCode != http.StatusRequestEntityTooLarge || bytes.Contains(b, []byte("retry_after_s")) {
		t.Errorf("status %d, %d bytes (%.100s); want a 413 without CSV", res.StatusCode, len(b), b)
	}
}

// TestSpoolsShareOneBudget: spools that share a budget hold together at
// most its bytes, memory and file alike; a write past what is left fails
// with errSpoolBusy and holds nothing of it, and Close gives back what a
// spool held, so the next one has room.
func TestSpoolsShareOneBudget(t *testing.T) {
	b := &budget{limit: spoolMemory + 300_000}
	chunk := bytes.Repeat([]byte("x"), 100_000)
	a := &spool{limit: rejectionsLimit, budget: b}
	defer a.Close()
	for range (spoolMemory + 200_000) / len(chunk) { // past memory, into a file
		if _, err := a.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if a.f == nil {
		t.Fatal("the first spool never reached its file")
	}
	c := &spool{limit: rejectionsLimit, budget: b}
	defer c.Close()
	if _, err := c.Write(chunk); err != nil {
		t.Fatalf("a write within what is left: %v", err)
	}
	if _, err := c.Write(chunk); !errors.Is(err, errSpoolBusy) {
		t.Fatalf("a write past the budget: %v, want errSpoolBusy", err)
	}
	if got, want := b.used.Load(), a.n+c.n; got != want || got > b.limit {
		t.Fatalf("budget used %d, the spools hold %d (limit %d)", got, want, b.limit)
	}
	name := a.f.Name()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("the closed spool's file is still there: %v", err)
	}
	if _, err := c.Write(chunk); err != nil {
		t.Fatalf("a write once the other spool closed: %v", err)
	}
	c.Close()
	if got := b.used.Load(); got != 0 {
		t.Errorf("budget used %d after every spool closed, want 0", got)
	}
}

// TestRejectionsPastTheSpoolBudget: an upload whose would-be rejections
// find no room left in -max-spool gets 503 with Retry-After, naming the
// flag, and no CSV.
func TestRejectionsPastTheSpoolBudget(t *testing.T) {
	res, b := postHeavyRejections(t, config{uploads: newUploads(0, 0, 0, 0, 0, 64<<10)})
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" ||
		!bytes.Contains(b, []byte("-max-spool")) || bytes.Contains(b, []byte("retry_after_s")) {
		t.Errorf("status %d, Retry-After %q, %d bytes (%.200s); want a 503 naming -max-spool, without CSV",
			res.StatusCode, res.Header.Get("Retry-After"), len(b), b)
	}
}

// postHeavyRejections uploads heavyLog for its rejections CSV, chunked over
// a real connection to a server with cfg, and returns the response and its
// body.
func postHeavyRejections(t *testing.T, cfg config) (*http.Response, []byte) {
	t.Helper()
	srv := httptest.NewServer(newServer(cfg))
	defer srv.Close()
	body, ct := multipartBody([][2]string{{"design", measureDesign}, {"key", "header:X-API-Key"}}, heavyLog())
	res, err := http.Post(srv.URL+rejectionsPath, ct, body)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}
