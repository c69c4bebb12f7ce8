package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ratelab/ratelab/calc"
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

// schemaNode is one subschema of the policy schema that defines a value,
// named by its field path in the policy's syntax: "service.headroom",
// "tiers[].limit", "$defs.limit.rate"; the root is "".
type schemaNode struct {
	path   string
	schema any // a map for a schema object, a bool for true or false
}

// schemaNodes lists node and every subschema under it that defines a value:
// its $defs, properties and items, recursively. Conditionals (allOf,
// if/then/else) only restate, as true or false, fields defined beside them,
// and are not listed.
func schemaNodes(node any, path string) []schemaNode {
	out := []schemaNode{{path, node}}
	m, ok := node.(map[string]any)
	if !ok {
		return out
	}
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	for _, kw := range []string{"$defs", "properties"} {
		sub, _ := m[kw].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(sub)) {
			p := join(name)
			if kw == "$defs" {
				p = "$defs." + name
			}
			out = append(out, schemaNodes(sub[name], p)...)
		}
	}
	if items, ok := m["items"]; ok {
		out = append(out, schemaNodes(items, path+"[]")...)
	}
	return out
}

// undescribed lists the paths of the subschemas of schema (as
// schemaNodes lists them) without a non-empty description.
func undescribed(schema any) []string {
	var out []string
	for _, n := range schemaNodes(schema, "") {
		m, _ := n.schema.(map[string]any)
		if d, _ := m["description"].(string); strings.TrimSpace(d) == "" {
			out = append(out, n.path)
		}
	}
	return out
}

// schemaJSON is Schema decoded.
func schemaJSON(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(Schema, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestUndescribed: the walk finds a missing description wherever a field
// can be defined, and nowhere else.
func TestUndescribed(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []string
	}{
		{"all described", `{"description": "r", "properties": {"a": {"description": "a"}}}`, nil},
		{"root", `{"properties": {"a": {"description": "a"}}}`, []string{""}},
		{"property", `{"description": "r", "properties": {"a": {"type": "string"}}}`, []string{"a"}},
		{"blank", `{"description": "r", "properties": {"a": {"description": "  "}}}`, []string{"a"}},
		{"nested", `{"description": "r", "properties": {"a": {"description": "a", "properties": {"b": {}}}}}`, []string{"a.b"}},
		{"items", `{"description": "r", "properties": {"a": {"description": "a", "items": {"properties": {"b": {"description": "b"}}}}}}`, []string{"a[]"}},
		{"item field", `{"description": "r", "properties": {"a": {"description": "a", "items": {"description": "i", "properties": {"b": {}}}}}}`, []string{"a[].b"}},
		{"$defs", `{"description": "r", "$defs": {"d": {"properties": {"x": {"description": "x"}}}}}`, []string{"$defs.d"}},
		{"$defs field", `{"description": "r", "$defs": {"d": {"description": "d", "properties": {"x": {}}}}}`, []string{"$defs.d.x"}},
		{"boolean property", `{"description": "r", "properties": {"a": true}}`, []string{"a"}},
		{"conditional restates", `{"description": "r", "properties": {"a": {"description": "a"}}, "allOf": [{"if": {"properties": {"a": {"const": 1}}}, "then": {"properties": {"a": true, "b": false}}}]}`, nil},
		{"the description property", `{"description": "r", "properties": {"description": {"type": "string"}}}`, []string{"description"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var schema any
			if err := json.Unmarshal([]byte(tt.schema), &schema); err != nil {
				t.Fatal(err)
			}
			if got := undescribed(schema); !slices.Equal(got, tt.want) {
				t.Errorf("undescribed = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSchemaDescribesEveryField: every field of the schema, every list's
// items and every definition say what they are.
func TestSchemaDescribesEveryField(t *testing.T) {
	doc := schemaJSON(t)
	if n := len(schemaNodes(doc, "")); n < 60 {
		t.Fatalf("the walk found %d subschemas; the schema has more", n)
	}
	for _, path := range undescribed(doc) {
		t.Errorf("%q has no description", path)
	}
}

// TestSchemaHeader: the schema names itself by an absolute URL that is not
// the local server's, and has a title.
func TestSchemaHeader(t *testing.T) {
	doc := schemaJSON(t)
	id, _ := doc["$id"].(string)
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || strings.Contains(u.Host, "localhost") || !strings.HasSuffix(u.Path, "/schema/policy.json") {
		t.Errorf("$id %q: want an absolute https URL ending in /schema/policy.json, not on localhost", id)
	}
	if title, _ := doc["title"].(string); title == "" {
		t.Error("no title")
	}
}

// TestSchemaDefaults: every default the schema states is the value that a
// document leaving the field out gets (through Decode and, for the
// calculator's fields, calc.Size), and every default the table knows is in
// the schema.
func TestSchemaDefaults(t *testing.T) {
	// The base document sets none of the defaulted fields, and has a
	// default limit, a tier and an endpoint for theirs.
	base := head + "service: {capacity: 100}\n" +
		"defaults: {limit: {algorithm: leaky_bucket, rate: 5}}\n" +
		"tiers: [{name: a, clients: 10}]\n" +
		"endpoints: [{match: {method: GET, path: /a}}]\n"
	p, err := Decode(strings.NewReader(base))
	if err != nil {
		t.Fatal(err)
	}
	res, err := calc.Size(p.Design())
	if err != nil {
		t.Fatal(err)
	}
	in := res.Input
	seconds := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	// effective is the value each defaulted field has in the base document.
	effective := map[string]any{
		"service.headroom":              *in.Headroom,
		"service.replicas":              in.Replicas,
		"service.enforcement":           string(p.Service.Enforcing()),
		"service.on_store_failure":      string(p.Service.StoreFailureMode()),
		"defaults.key":                  string(p.Limits()[0].Key),
		"defaults.mode":                 string(p.Defaults.EffectiveMode()),
		"defaults.response.status":      p.Defaults.Response.Code(),
		"defaults.response.headers":     p.Defaults.Response.Styles(),
		"defaults.response.retry_after": p.Defaults.Response.SendsRetryAfter(),
		"sizing.percentile_unit":        string(in.PercentileUnit),
		"sizing.margin":                 in.Margin,
		"sizing.window":                 seconds(in.Window),
		"sizing.retry.base":             seconds(in.Retry.Base),
		"sizing.retry.factor":           in.Retry.Factor,
		"sizing.retry.cap":              seconds(in.Retry.Cap),
		"sizing.retry.attempts":         in.Retry.Attempts,
		"sizing.retry.jitter":           *in.Retry.Jitter,
		"sizing.retry.jitter_mode":      in.Retry.JitterMode,
		"tiers[].multiplier":            in.Tiers[0].Multiplier,
		"endpoints[].cost":              in.Endpoints[0].Cost,
		"$defs.limit.queue":             p.Defaults.Limit.Queue,
	}
	stated := map[string]bool{}
	for _, n := range schemaNodes(schemaJSON(t), "") {
		m, _ := n.schema.(map[string]any)
		def, ok := m["default"]
		if !ok {
			continue
		}
		stated[n.path] = true
		want, known := effective[n.path]
		if !known {
			t.Errorf("%s: the schema states default %v, which this test does not check", n.path, def)
			continue
		}
		if got := fromSchema(t, def, want); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the schema's default is %v; a document without it gets %v", n.path, got, want)
		}
	}
	for path := range effective {
		if !stated[path] {
			t.Errorf("%s: the schema states no default", path)
		}
	}
}

// fromSchema converts def, a default as encoding/json decodes it, to the
// Go type of like.
func fromSchema(t *testing.T, def, like any) any {
	t.Helper()
	switch like.(type) {
	case time.Duration:
		s, _ := def.(string)
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Errorf("default %v is not a duration", def)
		}
		return d
	case int:
		f, _ := def.(float64)
		return int(f)
	case int64:
		f, _ := def.(float64)
		return int64(f)
	case []HeaderStyle:
		list, _ := def.([]any)
		out := []HeaderStyle{}
		for _, v := range list {
			s, _ := v.(string)
			out = append(out, HeaderStyle(s))
		}
		return out
	}
	return def
}
