package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPolicyDecodesWaitTheirTurn: with maxPolicyDecodes decodes under
// way, a lint waits for one to end before it decodes (then answers as
// usual), and one whose client has left gives up without decoding.
func TestPolicyDecodesWaitTheirTurn(t *testing.T) {
	for range maxPolicyDecodes {
		policyDecodes <- struct{}{}
	}
	waited := make(chan struct{}, 1)
	decodeWaits = func() {
		select {
		case waited <- struct{}{}:
		default:
		}
	}
	defer func() { decodeWaits = nil }()
	srv := newServer(config{})
	lint := func(ctx context.Context) chan *httptest.ResponseRecorder {
		done := make(chan *httptest.ResponseRecorder, 1)
		go func() {
			req := httptest.NewRequest(http.MethodPost, "/api/v1/policy/lint", strings.NewReader("apiVersion: ratelab/v1\n")).WithContext(ctx)
			req.Header.Set("Content-Type", "application/yaml")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			done <- rec
		}()
		return done
	}

	// A client that leaves while it waits: nothing decoded, nothing sent.
	ctx, cancel := context.WithCancel(context.Background())
	done := lint(ctx)
	select {
	case <-waited:
	case rec := <-done:
		t.Fatalf("decoded with every turn taken: %d %s", rec.Code, rec.Body)
	}
	cancel()
	if rec := <-done; rec.Body.Len() > 0 {
		t.Errorf("a lint whose client left answered %d %s", rec.Code, rec.Body)
	}

	// One that waits for a turn, then gets its answer.
	done = lint(context.Background())
	select {
	case <-waited:
	case rec := <-done:
		t.Fatalf("decoded with every turn taken: %d %s", rec.Code, rec.Body)
	}
	<-policyDecodes
	rec := <-done
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"valid":false`) {
		t.Errorf("after its turn: %d %s, want the lint of the document", rec.Code, rec.Body)
	}
	for range maxPolicyDecodes - 1 {
		<-policyDecodes
	}
}
