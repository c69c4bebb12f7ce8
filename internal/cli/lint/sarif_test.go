package lint

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ratelab/ratelab/internal/buildinfo"
	"github.com/ratelab/ratelab/policy"
)

// sarifSchema compiles testdata's SARIF 2.1.0 subset, with formats
// asserted (uri, uri-reference).
func compileSARIFSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif-2.1.0-subset.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sarifOut is what the tests read back of the log.
type sarifOut struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name, Version string
				Rules         []struct {
					ID               string
					ShortDescription struct{ Text string }
				}
			}
		}
		Results []struct {
			RuleID    string
			RuleIndex int
			Level     string
			Message   struct{ Text string }
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI string }
					Region           *struct{ StartLine, StartColumn int }
				}
				LogicalLocations []struct{ FullyQualifiedName string }
			}
		}
	}
}

func TestSARIF(t *testing.T) {
	schema := compileSARIFSchema(t)
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
	bad := write("bad.yaml", head+"service: {capacity: 1000, on_store_failure: fail_closed}\ndefaults: {limit: {algorithm: token_bucket, rate: 5, burst: 5}}\nendpoints: [{match: {method: GET, path: /r}, cost: 8}]\n")
	invalid := write("in valid.yaml", head+"service: {capacity: 1000, replica: 2}\n")

	// result is one expected result: rule, level, file URI (a suffix),
	// line and column (0: no region), logical location.
	type result struct {
		rule, level, uri string
		line, col        int
		field            string
	}
	tests := []struct {
		name    string
		args    []string
		stdin   string
		want    int
		results []result
	}{
		{"clean", []string{clean}, "", 0, nil},
		{"warning passes by default", []string{warn}, "", 0, []result{{"shadow_mode", "warning", "/warn.yaml", 5, 12, "defaults.mode"}}},
		{"warning fails with --fail-on warning", []string{"--fail-on", "warning", warn}, "", 1, []result{{"shadow_mode", "warning", "/warn.yaml", 5, 12, "defaults.mode"}}},
		{"error and warning", []string{bad}, "", 1, []result{
			{"burst_below_cost", "error", "/bad.yaml", 5, 12, "defaults.limit"},
			{"fail_closed", "warning", "/bad.yaml", 4, 27, "service.on_store_failure"},
		}},
		{"invalid, escaped name", []string{invalid}, "", 2, []result{{"invalid", "error", "/in%20valid.yaml", 4, 27, "service.replica"}}},
		{"unreadable: no region", []string{filepath.Join(dir, "nope.yaml")}, "", 2, []result{{"invalid", "error", "/nope.yaml", 0, 0, ""}}},
		{"stdin, several files", []string{"-", warn}, head + "service: {capacity: 1000, on_store_failure: fail_closed}\ndefaults: {limit: {algorithm: gcra, rate: 5, burst: 50}}\n", 0, []result{
			{"fail_closed", "warning", "-", 4, 27, "service.on_store_failure"},
			{"shadow_mode", "warning", "/warn.yaml", 5, 12, "defaults.mode"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			got := run(append([]string{"--format", "sarif"}, tt.args...), strings.NewReader(tt.stdin), &out, &errOut)
			if got != tt.want {
				t.Errorf("exit %d, want %d: %s", got, tt.want, errOut.String())
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out.Bytes()))
			if err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out.String())
			}
			if err := schema.Validate(inst); err != nil {
				t.Fatalf("not SARIF 2.1.0: %v\n%s", err, out.String())
			}
			var log sarifOut
			if err := json.Unmarshal(out.Bytes(), &log); err != nil {
				t.Fatal(err)
			}
			if log.Version != "2.1.0" || len(log.Runs) != 1 {
				t.Fatalf("version %q, %d runs; want 2.1.0, 1", log.Version, len(log.Runs))
			}
			run := log.Runs[0]
			if d := run.Tool.Driver; d.Name != "ratelab" || d.Version == "" || d.Version[0] < '0' || d.Version[0] > '9' {
				t.Errorf("driver %q %q, want ratelab and a version starting with a number", d.Name, d.Version)
			}
			for _, r := range run.Tool.Driver.Rules {
				if want := policy.LintDescription[r.ID]; want == "" || r.ShortDescription.Text != want {
					t.Errorf("rule %q described %q, want lint's description %q", r.ID, r.ShortDescription.Text, want)
				}
			}
			if len(run.Results) != len(tt.results) {
				t.Fatalf("%d results, want %d:\n%s", len(run.Results), len(tt.results), out.String())
			}
			for i, w := range tt.results {
				r := run.Results[i]
				if r.RuleIndex < 0 || r.RuleIndex >= len(run.Tool.Driver.Rules) || run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
					t.Errorf("result %d: ruleIndex %d does not name rule %q in %+v", i, r.RuleIndex, r.RuleID, run.Tool.Driver.Rules)
				}
				if r.RuleID != w.rule || r.Level != w.level || r.Message.Text == "" || len(r.Locations) != 1 {
					t.Errorf("result %d: %s %s %q, %d locations; want %s %s, a message, 1 location", i, r.RuleID, r.Level, r.Message.Text, len(r.Locations), w.rule, w.level)
					continue
				}
				loc := r.Locations[0]
				if uri := loc.PhysicalLocation.ArtifactLocation.URI; !strings.HasSuffix(uri, w.uri) || (w.uri != "-" && !strings.HasPrefix(uri, "file:///")) {
					t.Errorf("result %d: uri %q, want a file URI ending %q", i, uri, w.uri)
				}
				reg := loc.PhysicalLocation.Region
				switch {
				case w.line == 0 && reg != nil:
					t.Errorf("result %d: region %+v, want none", i, *reg)
				case w.line > 0 && (reg == nil || reg.StartLine != w.line || reg.StartColumn != w.col):
					t.Errorf("result %d: region %+v, want %d:%d", i, reg, w.line, w.col)
				}
				if w.field != "" && (len(loc.LogicalLocations) != 1 || loc.LogicalLocations[0].FullyQualifiedName != w.field) {
					t.Errorf("result %d: logical locations %+v, want %s", i, loc.LogicalLocations, w.field)
				}
			}
		})
	}
}

// TestSARIFSchemaRejects: the schema subset can fail, on the mistakes a
// hand-written log makes.
func TestSARIFSchemaRejects(t *testing.T) {
	schema := compileSARIFSchema(t)
	for _, doc := range []string{
		`{"version": "2.0.0", "runs": []}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "level": "info"}]}]}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a"}, "region": {"startLine": 0}}}]}]}]}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"txt": "m"}}]}]}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if schema.Validate(inst) == nil {
			t.Errorf("the schema accepts %s", doc)
		}
	}
}

// TestToolVersion: SARIF's tool version starts with a number, as SARIF
// validators want, for a tagged build and for one without a tag.
func TestToolVersion(t *testing.T) {
	for _, tt := range []struct {
		info buildinfo.Info
		want string
	}{
		{buildinfo.Info{Version: "v1.4.0", Revision: "0123456789abcdef0123"}, "1.4.0"},
		{buildinfo.Info{Version: "v0.0.0-20261201220800-0123456789ab"}, "0.0.0-20261201220800-0123456789ab"},
		{buildinfo.Info{Version: "(devel)", Revision: "0123456789abcdef0123"}, "0.0.0-devel+0123456789ab"},
		{buildinfo.Info{Version: "(devel)", Revision: "unknown"}, "0.0.0-devel"},
		{buildinfo.Info{Version: "unknown", Revision: "abc"}, "0.0.0-devel+abc"},
	} {
		if got := toolVersion(tt.info); got != tt.want {
			t.Errorf("toolVersion(%+v) = %q, want %q", tt.info, got, tt.want)
		}
	}
}
