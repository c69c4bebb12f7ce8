package server

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestSimulateRequestsShareNoBuffers runs simulate requests at once on one
// server, each of its own keys, so that each reads its body into a buffer
// another request gave back: a request's keys alias its body buffer, its
// arrivals and simulation are pooled slices, and each answer must still be
// the one the same request gets alone. (Run with -race, a request that
// used a buffer after giving it back is also a race.)
func TestSimulateRequestsShareNoBuffers(t *testing.T) {
	const workers, rounds = 6, 8
	body := func(w, r int) string {
		var b strings.Builder
		b.WriteString(`{"limiter": {"algorithm": "token_bucket", "rate": 1, "burst": 2}, "arrivals": [`)
		for i := range 5000 { // past chargeEvery: the reader sizes its slice from the body
			if i > 0 {
				b.WriteByte(',')
			}
			// Keys of different lengths per request, visited in an order
			// of the request's own, so a key read from another
			// request's bytes changes the decisions.
			fmt.Fprintf(&b, `{"at": %d.%03d, "key": "w%d-r%d-%s"}`, i/100, i%100*10, w, r, strings.Repeat("k", (i*(w+r+1))%7+1))
		}
		b.WriteString(`]}`)
		return b.String()
	}
	post := func(srv http.Handler, body string) (int, []byte) {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/simulate", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec.Code, rec.Body.Bytes()
	}
	want := make(map[[2]int][]byte)
	for w := range workers {
		for r := range rounds {
			code, out := post(newServer(config{}), body(w, r))
			if code != http.StatusOK {
				t.Fatalf("alone: status %d: %.300s", code, out)
			}
			want[[2]int{w, r}] = out
		}
	}
	srv := newServer(config{maxHeavy: 4 * workers})
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				code, out := post(srv, body(w, r))
				if code != http.StatusOK || !bytes.Equal(out, want[[2]int{w, r}]) {
					mu.Lock()
					t.Errorf("worker %d round %d: status %d, the answer differs from the request's alone", w, r, code)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
}
