package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/targets"
	"github.com/ratelab/ratelab/policy"
)

// examplePolicy is a policy file from the policy package's examples.
const examplePolicy = "../../../policy/testdata/examples/public-api.yaml"

func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func decodeFile(t *testing.T, path string) policy.Policy {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := policy.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestList(t *testing.T) {
	code, out, _ := runCmd(t, "", "-list")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(targets.All) {
		t.Fatalf("%d lines, want one per target (%d):\n%s", len(lines), len(targets.All), out)
	}
	for i, tg := range targets.All {
		if f := strings.Fields(lines[i]); len(f) < 3 || f[0] != tg.Name || f[1] != string(tg.Group) {
			t.Errorf("line %d = %q, want name %s and group %s first", i, lines[i], tg.Name, tg.Group)
		}
	}
}

// TestOneTargetToStdout: the file on stdout is targets.Render's, from a
// path and from stdin alike; the fidelity goes to stderr.
func TestOneTargetToStdout(t *testing.T) {
	p := decodeFile(t, examplePolicy)
	data, err := os.ReadFile(examplePolicy)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets.All {
		want, err := targets.Render(tg.Name, p, export.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tg.Name, err)
		}
		for _, src := range []struct{ stdin, arg string }{{"", examplePolicy}, {string(data), "-"}} {
			code, out, errOut := runCmd(t, src.stdin, "-target", tg.Name, src.arg)
			if code != exitOK {
				t.Fatalf("%s %s: exit %d: %s", tg.Name, src.arg, code, errOut)
			}
			if out != string(want.Body) {
				t.Errorf("%s %s: stdout differs from targets.Render", tg.Name, src.arg)
			}
			if !strings.HasPrefix(errOut, tg.Name+": "+string(want.Fidelity)+"\n") {
				t.Errorf("%s %s: stderr %q does not start with the fidelity %s", tg.Name, src.arg, errOut, want.Fidelity)
			}
		}
	}
}

// TestAllToFolder: -all -o DIR writes DIR/<target>/<file> for every
// target, byte-identical to targets.Render, with options applied.
func TestAllToFolder(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCmd(t, "", "-all", "-o", dir, "-tier-header", "X-Plan", examplePolicy)
	if code != exitOK || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	p := decodeFile(t, examplePolicy)
	for _, tg := range targets.All {
		want, err := targets.Render(tg.Name, p, export.Options{TierHeader: "X-Plan"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, tg.Name, want.Filename))
		if err != nil {
			t.Errorf("%s: %v", tg.Name, err)
			continue
		}
		if !bytes.Equal(got, want.Body) {
			t.Errorf("%s: file differs from targets.Render", tg.Name)
		}
	}
}

// TestJSON: one JSON object per target with the mappings.
func TestJSON(t *testing.T) {
	code, out, errOut := runCmd(t, "", "-target", "policy", "-json", examplePolicy)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	var n int
	for sc.Scan() {
		var e export.Export
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		// public-api.yaml has a default limit, two tiers, one endpoint
		// limit and a global limit: five mappings for the policy target.
		if e.Target != "policy" || e.Fidelity != export.Exact || len(e.Mappings) != 5 {
			t.Errorf("JSON export = %+v, want policy, exact, 5 mappings", e)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d JSON lines, want 1", n)
	}
}

// TestRequire: -require exits 1 when an export is worse than asked, 0
// when not.
func TestRequire(t *testing.T) {
	p := decodeFile(t, examplePolicy)
	var approx string
	for _, tg := range targets.All {
		e, err := targets.Render(tg.Name, p, export.Options{})
		if err == nil && e.Fidelity != export.Exact {
			approx = tg.Name
			break
		}
	}
	if code, _, errOut := runCmd(t, "", "-target", "policy", "-require", "exact", examplePolicy); code != exitOK {
		t.Errorf("policy target with -require exact: exit %d: %s", code, errOut)
	}
	if approx == "" {
		t.Skip("no target is inexact for the example policy yet")
	}
	if code, _, _ := runCmd(t, "", "-target", approx, "-require", "exact", examplePolicy); code != exitFidelity {
		t.Errorf("%s with -require exact: exit %d, want %d", approx, code, exitFidelity)
	}
}

func TestUsageAndInvalid(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: x}\nservice: {capacity: -1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no target", []string{examplePolicy}, "give -target"},
		{"unknown target", []string{"-target", "nope", examplePolicy}, `no target "nope"`},
		{"both", []string{"-all", "-target", "policy", examplePolicy}, "not both"},
		{"several without -o", []string{"-target", "policy,policy2", examplePolicy}, "no target"},
		{"bad require", []string{"-target", "policy", "-require", "best", examplePolicy}, "-require"},
		{"missing file", []string{"-target", "policy", "/nonexistent.yaml"}, "no such file"},
		{"invalid policy", []string{"-target", "policy", bad}, "capacity"},
		{"bad option", []string{"-target", "policy", "-upstream", "nohost", examplePolicy}, "upstream"},
		{"two files", []string{"-target", "policy", examplePolicy, examplePolicy}, "one policy file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, "", tt.args...)
			if code != exitInvalid {
				t.Errorf("exit %d, want %d", code, exitInvalid)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if !strings.Contains(errOut, tt.msg) {
				t.Errorf("stderr %q does not mention %q", errOut, tt.msg)
			}
		})
	}
}
