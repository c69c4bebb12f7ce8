package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRefusalDoesNotWaitForTheBody: a request refused with its body unsent
// (a declared size over the limit, an upload that stalls) gets its answer
// at once with Connection: close, over a real connection. Without the
// close, net/http first reads up to 256 KiB of the body that the client
// will never send, and the client waits for nothing.
func TestRefusalDoesNotWaitForTheBody(t *testing.T) {
	srv := httptest.NewServer(newServer(config{}))
	defer srv.Close()
	for _, tt := range []struct {
		name, head string
		want       int
	}{
		{"policy over its limit", "POST /api/v1/policy/lint HTTP/1.1\r\nHost: x\r\nContent-Type: application/yaml\r\nContent-Length: 10000000\r\n\r\n", http.StatusRequestEntityTooLarge},
		{"upload with a bad form", "POST /measure HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\nnot a form", http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := fmt.Fprint(c, tt.head); err != nil {
				t.Fatal(err)
			}
			// A bound for a broken server, not a measurement: the answer
			// comes as soon as the server has read the headers.
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("no answer while the body is unsent: %v", err)
			}
			resp.Body.Close()
			// ReadResponse moves Connection: close into resp.Close.
			if resp.StatusCode != tt.want || !resp.Close {
				t.Errorf("status %d, close %v; want %d and Connection: close", resp.StatusCode, resp.Close, tt.want)
			}
		})
	}
}
