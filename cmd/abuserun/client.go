package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ratelab/ratelab/internal/liveserver"
)

// maxHeaderBytes is the most a response's header may take: nginx's default
// proxy buffer for a response header is 4 KiB, so more is a 502 behind it.
const maxHeaderBytes = 4 << 10

// requestTimeout bounds one request of an attack or of the well-formed
// client, body included.
const requestTimeout = 60 * time.Second

// newClient is an HTTP client that only ever dials loopback addresses.
func newClient(conns int) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: requestTimeout,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
				if !liveserver.IsLoopbackAddr(address) {
					return nil, fmt.Errorf("refusing to dial %s: not a loopback address", address)
				}
				return dialer.DialContext(ctx, network, address)
			},
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns,
			DisableCompression:  true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// tally counts one attack's outcomes.
type tally struct {
	mu       sync.Mutex
	requests int
	statuses map[int]int
	errs     int      // transport errors: no answer at all
	bad      int      // 5xx other than 503 with Retry-After
	big      int      // responses whose header passed maxHeaderBytes
	notes    []string // the first few failures, for the report
	closed   int      // connections the server closed without an answer (slow uploads)
	held     int      // connections still open when the attack ended
}

func newTally() *tally { return &tally{statuses: map[int]int{}} }

func (t *tally) note(format string, args ...any) {
	if len(t.notes) < 4 {
		t.notes = append(t.notes, liveserver.Truncate(fmt.Sprintf(format, args...), 300))
	}
}

// record counts one answered request.
func (t *tally) record(what string, resp *http.Response) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.requests++
	t.statuses[resp.StatusCode]++
	if resp.StatusCode >= 500 && !(resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "") {
		t.bad++
		t.note("%s: status %d", what, resp.StatusCode)
	}
	if n := headerBytes(resp.Header); n > maxHeaderBytes {
		t.big++
		t.note("%s: a header of %d bytes", what, n)
	}
}

// failed counts a request that got no answer.
func (t *tally) failed(what string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.requests++
	t.errs++
	t.note("%s: %v", what, err)
}

// headerBytes is the size of a header as written on the wire.
func headerBytes(h http.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	return n
}

// statusList formats the statuses seen: "200 × 3, 429 × 7".
func (t *tally) statusList() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var codes []int
	for c := range t.statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d × %d", c, t.statuses[c]))
	}
	if t.closed > 0 {
		parts = append(parts, fmt.Sprintf("closed × %d", t.closed))
	}
	if t.held > 0 {
		parts = append(parts, fmt.Sprintf("still open × %d", t.held))
	}
	return strings.Join(parts, ", ")
}

// send sends one request from client address ip (X-Forwarded-For, which
// the server trusts from 127.0.0.1) and reads the whole answer.
func send(ctx context.Context, client *http.Client, t *tally, ip, method, url, contentType string, body io.Reader) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.failed(method+" "+url, err)
		return
	}
	req.Header.Set("X-Forwarded-For", ip)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	what := method + " " + liveserver.Truncate(strings.SplitN(url, "?", 2)[0], 60)
	resp, err := client.Do(req)
	if ctx.Err() != nil {
		// The run ended this request, not the server.
		if err == nil {
			resp.Body.Close()
		}
		return
	}
	if err != nil {
		t.failed(what, err)
		return
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil && ctx.Err() == nil {
		t.failed(what+" (body)", err)
		return
	}
	t.record(what, resp)
}

// repeat is a reader of prefix, then unit n times, then suffix, made as it
// is read: a body of any size in constant memory.
type repeat struct {
	prefix, unit, suffix string
	n                    int
	part                 int // 0 prefix, 1 units, 2 suffix, 3 done
	off                  int
	done                 int
}

func (r *repeat) Read(p []byte) (int, error) {
	total := 0
	for total < len(p) && r.part < 3 {
		var s string
		switch r.part {
		case 0:
			s = r.prefix
		case 1:
			if r.done == r.n {
				r.part, r.off = 2, 0
				continue
			}
			s = r.unit
		case 2:
			s = r.suffix
		}
		k := copy(p[total:], s[r.off:])
		total += k
		r.off += k
		if r.off == len(s) {
			r.off = 0
			if r.part == 1 {
				r.done++
			} else {
				r.part++
			}
		}
	}
	if total == 0 && r.part == 3 {
		return 0, io.EOF
	}
	return total, nil
}

// lines is a reader of n lines made by line(i), in constant memory.
type lines struct {
	n, i int
	line func(i int) string
	buf  []byte
}

func (l *lines) Read(p []byte) (int, error) {
	total := 0
	for total < len(p) {
		if len(l.buf) == 0 {
			if l.i == l.n {
				break
			}
			l.buf = append(l.buf[:0], l.line(l.i)...)
			l.i++
		}
		k := copy(p[total:], l.buf)
		total += k
		l.buf = l.buf[k:]
	}
	if total == 0 {
		return 0, io.EOF
	}
	return total, nil
}
