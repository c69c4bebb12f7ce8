package policy

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles Schema.
func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("policy.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("policy.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validateYAML validates a YAML document against the schema.
func validateYAML(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("YAML to JSON: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatalf("JSON: %v", err)
	}
	return s.Validate(inst)
}

// TestSchemaExamples: every example policy, and the encoding of designs,
// is valid against the schema.
func TestSchemaExamples(t *testing.T) {
	s := compileSchema(t)
	files, _ := filepath.Glob("testdata/examples/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := validateYAML(t, s, data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	p := decodeFile(t, "testdata/examples/tiered.yaml")
	if err := validateYAML(t, s, encode(t, FromDesign(p.Design()))); err != nil {
		t.Errorf("FromDesign of the tiered example: %v", err)
	}
}

// TestSchemaDesigns: the policy of every valid random design is valid
// against the schema.
func TestSchemaDesigns(t *testing.T) {
	s := compileSchema(t)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		in := randomDesign(r)
		if in.Validate() != nil {
			continue
		}
		y := encode(t, FromDesign(in))
		if err := validateYAML(t, s, y); err != nil {
			t.Fatalf("design %d: %v\n%s", i, err, y)
		}
	}
}

// TestSchemaRejectsShape: documents Decode refuses for their shape
// (unknown field, wrong type, missing required field, bad enum or
// duration) are refused by the schema too.
func TestSchemaRejectsShape(t *testing.T) {
	s := compileSchema(t)
	base := head + "service: {capacity: 100}\n"
	docs := map[string]string{
		"unknown top-level field":  base + "teirs: []\n",
		"unknown nested field":     base + "defaults: {limit: {algorithm: gcra, rate: 1, brust: 5}}\n",
		"unknown tier field":       base + "tiers: [{name: a, clinets: 5}]\n",
		"wrong type":               head + "service: {capacity: fast}\n",
		"quoted number":            head + "service: {capacity: \"100\"}\n",
		"mapping for a scalar":     head + "service: {capacity: {a: 1}}\n",
		"list for a mapping":       base + "defaults: [1]\n",
		"boolean for a string":     "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: true}\nservice: {capacity: 100}\n",
		"missing metadata":         "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nservice: {capacity: 100}\n",
		"missing capacity":         head + "service: {replicas: 2}\n",
		"missing tier name":        base + "tiers: [{clients: 5}]\n",
		"missing match":            base + "endpoints: [{cost: 5}]\n",
		"missing algorithm":        base + "global: {limit: {rate: 5, burst: 5}}\n",
		"unknown algorithm":        base + "global: {limit: {algorithm: token_buckit, rate: 1, burst: 1}}\n",
		"bad enum":                 base + "defaults: {mode: dry_run}\n",
		"bad jitter mode":          base + "sizing: {retry: {jitter_mode: none}}\n",
		"bad duration":             base + "sizing: {window: 5 minutes}\n",
		"number for a duration":    base + "sizing: {window: 60}\n",
		"non-integer cost":         base + "endpoints: [{match: {method: GET, path: /a}, cost: 0.5}]\n",
		"string for a boolean":     base + "defaults: {response: {retry_after: \"yes\"}}\n",
		"string for a header list": base + "defaults: {response: {headers: ietf}}\n",
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(doc))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("Decode accepts it: %v", err)
			}
			if validateYAML(t, s, []byte(doc)) == nil {
				t.Errorf("the schema accepts it; Decode says %v", err)
			}
		})
	}
}
