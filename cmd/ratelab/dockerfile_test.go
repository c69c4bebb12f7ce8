package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDockerfile: the image builds this command, serves with flags serve
// accepts, and its HEALTHCHECK is a subcommand (the image has no shell)
// that passes on a healthy server and fails on an unhealthy one.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	// Continuation lines joined, comments dropped.
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	exec := func(instruction string) []string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + instruction + `\s+(?:--\S+\s+)*(\[.*\])\s*$`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no %s in exec form", instruction)
		}
		var argv []string
		if err := json.Unmarshal([]byte(m[1]), &argv); err != nil {
			t.Fatalf("%s: %v", instruction, err)
		}
		return argv
	}
	if !regexp.MustCompile(`(?m)^RUN .*go build .*-o /out/ratelab \./cmd/ratelab$`).MatchString(text) {
		t.Error("the build stage does not build ./cmd/ratelab into /out/ratelab")
	}
	if !strings.Contains(text, "\nUSER nonroot:nonroot\n") {
		t.Error("the image does not run as nonroot")
	}
	entry, cmd := exec("ENTRYPOINT"), exec("CMD")
	if !slices.Equal(entry, []string{"/ratelab", "serve"}) {
		t.Errorf("ENTRYPOINT %q, want /ratelab serve", entry)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), append(append(entry[1:], cmd...), "-h"), nil, &out, &errOut); code != 0 {
		t.Errorf("serve does not take CMD %q: exit %d: %s", cmd, code, errOut.String())
	}

	// HEALTHCHECK [options] CMD ["/ratelab", "healthcheck", ...]
	m := regexp.MustCompile(`(?m)^HEALTHCHECK\s+(?:--\S+\s+)*CMD\s+(\[.*\])\s*$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("no HEALTHCHECK CMD in exec form")
	}
	var hc []string
	if err := json.Unmarshal([]byte(m[1]), &hc); err != nil {
		t.Fatal(err)
	}
	if len(hc) < 2 || hc[0] != "/ratelab" || hc[1] != "healthcheck" {
		t.Fatalf("HEALTHCHECK %q, want /ratelab healthcheck …", hc)
	}
	i := slices.Index(hc, "-url")
	if i < 0 || i+1 >= len(hc) || !strings.HasSuffix(hc[i+1], ":8080/healthz") {
		t.Fatalf("HEALTHCHECK %q: want -url on the served port 8080's /healthz", hc)
	}
	for _, tt := range []struct {
		status, want int
	}{{http.StatusOK, 0}, {http.StatusServiceUnavailable, 1}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tt.status) }))
		args := slices.Clone(hc[1:])
		args[i] = srv.URL + "/healthz"
		if code := run(context.Background(), args, nil, &out, &errOut); code != tt.want {
			t.Errorf("HEALTHCHECK against a %d: exit %d, want %d", tt.status, code, tt.want)
		}
		srv.Close()
	}
}
