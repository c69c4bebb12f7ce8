package lint

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const head = "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: t}\n"

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clean := write("clean.yaml", head+"service: {capacity: 1000}\ndefaults: {limit: {algorithm: token_bucket, rate: 5, burst: 50}}\n")
	warn := write("warn.yaml", head+"service: {capacity: 1000}\ndefaults: {mode: shadow, limit: {algorithm: token_bucket, rate: 5, burst: 50}}\n")
	bad := write("bad.yaml", head+"service: {capacity: 1000}\ndefaults: {limit: {algorithm: token_bucket, rate: 5, burst: 5}}\nendpoints: [{match: {method: GET, path: /r}, cost: 8}]\n")
	invalid := write("invalid.yaml", head+"service: {capacity: 1000, replica: 2}\n")

	tests := []struct {
		name     string
		args     []string
		stdin    string
		want     int
		contains []string
	}{
		{"clean", []string{clean}, "", 0, []string{"clean.yaml: ok"}},
		{"warnings only", []string{warn}, "", 0, []string{"warn.yaml:5:12: warning shadow_mode (defaults.mode):", "    fix: Switch to mode: enforce"}},
		{"error finding", []string{bad}, "", 1, []string{"bad.yaml:5:12: error burst_below_cost (defaults.limit):"}},
		{"invalid", []string{invalid}, "", 2, []string{"invalid.yaml:4:27: invalid: service.replica: unknown field `replica`; did you mean `replicas`?"}},
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, "", 2, []string{"nope.yaml: invalid: open"}},
		{"worst of several", []string{clean, bad, invalid}, "", 2, []string{"clean.yaml: ok", "bad.yaml:", "invalid.yaml:"}},
		{"stdin", nil, head + "service: {capacity: 1000}\ndefaults: {limit: {algorithm: gcra, rate: 5, burst: 50}}\n", 0, []string{"-: ok"}},
		{"bad flag", []string{"--nope"}, "", 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			got := run(tt.args, strings.NewReader(tt.stdin), &out, &errOut)
			if got != tt.want {
				t.Errorf("exit %d, want %d\n%s%s", got, tt.want, out.String(), errOut.String())
			}
			for _, c := range tt.contains {
				if !strings.Contains(out.String(), c) {
					t.Errorf("output lacks %q:\n%s", c, out.String())
				}
			}
		})
	}
}

func TestRunJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	doc := head + "service: {capacity: 1000, on_store_failure: fail_closed}\ndefaults: {limit: {algorithm: token_bucket, rate: 5, burst: 50}}\n"
	if got := run([]string{"--json", "-"}, strings.NewReader(doc), &out, &errOut); got != 0 {
		t.Fatalf("exit %d: %s", got, errOut.String())
	}
	var r struct {
		File     string            `json:"file"`
		Errors   []json.RawMessage `json:"errors"`
		Findings []struct {
			Severity, ID, Field string
			Line, Column        int
		} `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if r.File != "-" || len(r.Errors) != 0 || len(r.Findings) != 1 {
		t.Fatalf("got %+v", r)
	}
	if f := r.Findings[0]; f.ID != "fail_closed" || f.Severity != "warning" || f.Field != "service.on_store_failure" || f.Line != 4 || f.Column != 27 {
		t.Errorf("got %+v", f)
	}

	out.Reset()
	if got := run([]string{"--json"}, strings.NewReader("a: ["), &out, &errOut); got != 2 {
		t.Errorf("invalid: exit %d, want 2", got)
	}
	if !strings.Contains(out.String(), `"errors":[{"line":1,"column":4,"message":"YAML syntax`) {
		t.Errorf("invalid: got %s", out.String())
	}
}
