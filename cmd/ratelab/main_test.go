package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	examples = "../../policy/testdata/examples/"
	head     = "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: t}\n"
)

// TestExitStatuses runs every subcommand through the dispatcher over the
// three statuses: 0 ok, 1 findings or rejections, 2 bad usage or input it
// cannot read.
func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clean := examples + "public-api.yaml"
	warn := write("warn.yaml", head+"service: {capacity: 1000}\ndefaults: {mode: shadow, limit: {algorithm: token_bucket, rate: 5, burst: 50}}\n")
	bad := write("bad.yaml", head+"service: {capacity: 1000}\ndefaults: {limit: {algorithm: token_bucket, rate: 5, burst: 5}}\nendpoints: [{match: {method: GET, path: /r}, cost: 8}]\n")
	invalid := write("invalid.yaml", head+"service: {capacity: 1000, replica: 2}\n")
	missing := filepath.Join(dir, "nope.yaml")
	accessLog := write("access.log", `198.51.100.1 - - [30/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 1 "-" "curl"`+"\n")
	garbage := write("garbage.log", "hello\nworld\n")

	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(healthy.Close)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	t.Cleanup(down.Close)
	// An address in use: serve cannot listen there.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })

	tests := []struct {
		name   string
		args   []string
		want   int
		stdout string // a substring of stdout, when not ""
	}{
		{"no command", nil, 2, ""},
		{"unknown command", []string{"frobnicate"}, 2, ""},
		{"-h", []string{"-h"}, 0, "usage: ratelab <command>"},
		{"help", []string{"help"}, 0, "healthcheck"},
		{"help lint", []string{"help", "lint"}, 0, "usage: ratelab lint"},
		{"help serve", []string{"help", "serve"}, 0, "-addr"},
		{"serve -h", []string{"serve", "-h"}, 0, "usage: ratelab serve [flags]"},
		{"help unknown", []string{"help", "frobnicate"}, 2, ""},
		{"help two", []string{"help", "lint", "export"}, 2, ""},
		{"version", []string{"version"}, 0, "ratelab "},
		{"-version", []string{"-version"}, 0, ", revision "},
		{"version argument", []string{"version", "x"}, 2, ""},

		{"serve bad flag", []string{"serve", "-nope"}, 2, ""},
		{"serve argument", []string{"serve", "extra"}, 2, ""},
		{"serve bad value", []string{"serve", "-max-arrivals", "0"}, 2, ""},
		{"serve cannot listen", []string{"serve", "-addr", busy.Addr().String()}, 1, ""},

		{"lint clean", []string{"lint", clean}, 0, "ok"},
		{"lint warnings", []string{"lint", warn}, 0, "warning"},
		{"lint warnings, fail on warning", []string{"lint", "--fail-on", "warning", warn}, 1, "warning"},
		{"lint error finding", []string{"lint", bad}, 1, "error"},
		{"lint sarif", []string{"lint", "--format", "sarif", bad}, 1, `"version": "2.1.0"`},
		{"lint invalid", []string{"lint", invalid}, 2, "invalid"},
		{"lint missing", []string{"lint", missing}, 2, ""},
		{"lint bad flag", []string{"lint", "--nope"}, 2, ""},
		{"lint bad format", []string{"lint", "--format", "xml", clean}, 2, ""},
		{"lint bad fail-on", []string{"lint", "--fail-on", "info", clean}, 2, ""},

		{"export ok", []string{"export", "-target", "policy", clean}, 0, "apiVersion"},
		{"export below its gate", []string{"export", "-target", "envoy-local", "-require", "exact", clean}, 1, ""},
		{"export missing", []string{"export", "-target", "policy", missing}, 2, ""},
		{"export invalid", []string{"export", "-target", "policy", invalid}, 2, ""},
		{"export no target", []string{"export", clean}, 2, ""},

		{"docs ok", []string{"docs", "-charts", "policy-admitted", "-patterns", "steady", "-o", filepath.Join(dir, "docs"), clean}, 0, ""},
		{"docs missing", []string{"docs", "-o", filepath.Join(dir, "docs2"), missing}, 2, ""},
		{"docs no -o", []string{"docs", clean}, 2, ""},

		{"measure ok", []string{"measure", accessLog}, 0, "1 requests"},
		{"measure missing", []string{"measure", missing}, 2, ""},
		{"measure no parseable line", []string{"measure", garbage}, 2, ""},
		{"measure bad flag", []string{"measure", "-format", "xml", accessLog}, 2, ""},

		{"healthcheck healthy", []string{"healthcheck", "-url", healthy.URL}, 0, "ok"},
		{"healthcheck unhealthy", []string{"healthcheck", "-url", down.URL}, 1, ""},
		{"healthcheck bad url", []string{"healthcheck", "-url", "nope"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			got := run(context.Background(), tt.args, strings.NewReader(""), &out, &errOut)
			if got != tt.want {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, out.String())
			}
			if tt.want == 2 && errOut.Len()+out.Len() == 0 {
				t.Errorf("exit 2 without a word")
			}
		})
	}
}
