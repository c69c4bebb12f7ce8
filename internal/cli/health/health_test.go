package health

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("/down", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// A closed listener's address: nothing answers there.
	gone := httptest.NewServer(mux)
	gone.Close()

	tests := []struct {
		name   string
		args   []string
		want   int
		stderr string
	}{
		{"healthy", []string{"-url", srv.URL + "/healthz"}, 0, ""},
		{"503", []string{"-url", srv.URL + "/down"}, 1, "503 Service Unavailable"},
		{"404", []string{"-url", srv.URL + "/nope"}, 1, "404 Not Found"},
		{"unreachable", []string{"-url", gone.URL + "/healthz"}, 1, "connect"},
		{"too slow", []string{"-url", srv.URL + "/slow", "-timeout", "50ms"}, 1, "deadline exceeded"},
		{"not a URL", []string{"-url", "127.0.0.1:8080/healthz"}, 2, "want an http or https URL"},
		{"bad timeout", []string{"-timeout", "0s"}, 2, "-timeout"},
		{"argument", []string{"extra"}, 2, "unexpected argument"},
		{"bad flag", []string{"-nope"}, 2, "flag provided but not defined"},
		{"help", []string{"-h"}, 0, "usage: ratelab healthcheck"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			start := time.Now()
			got := Run(context.Background(), tt.args, nil, &out, &errOut)
			if got != tt.want {
				t.Errorf("exit %d, want %d; stderr %q", got, tt.want, errOut.String())
			}
			if !strings.Contains(errOut.String(), tt.stderr) {
				t.Errorf("stderr %q lacks %q", errOut.String(), tt.stderr)
			}
			if tt.want == 0 && tt.name == "healthy" && out.String() != "ok\n" {
				t.Errorf("stdout %q, want ok", out.String())
			}
			if d := time.Since(start); d > DefaultTimeout {
				t.Errorf("took %v, more than the default timeout %v", d, DefaultTimeout)
			}
		})
	}
}
