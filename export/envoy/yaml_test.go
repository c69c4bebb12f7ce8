package envoy

import (
	"reflect"
	"testing"

	"go.yaml.in/yaml/v2"
)

// TestDocumentReadsBack writes awkward scalars, comments and nesting and
// reads the document back with a YAML parser: every value must come back
// as written. The parser is go-yaml v2 (YAML 1.1: on, Yes and ~ are no
// strings unless quoted), the one sigs.k8s.io/yaml and so Kubernetes use.
func TestDocumentReadsBack(t *testing.T) {
	strs := []string{"plain", "1s", "0.05s", ":path", "@type", "a #b", "x: y", "Paid Plus", "", "null", "on", "Yes",
		"~", `say "hi"`, "line\nbreak", "%ROUTE_NAME%", "^(a|b)$", "0.0.0.0/0", "::/0", "*", "-dash", "日本"}
	body := obj{}
	for i, s := range strs {
		body = body.note("comment\nover two lines #"+s, "k"+string(rune('a'+i)), s)
	}
	body = body.
		with("nested", obj{}.with("empty_obj", obj{}).with("empty_list", list{}).
			with("list", list{obj{}.note("first field's comment", "a", int64(1)).with("b", true), list{"x", uint32(7)}, obj{}})).
		with("@type", "type.googleapis.com/x.y.Z")
	out := document([]string{"header", "with\nnewline"}, body)

	var got map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for i, s := range strs {
		k := "k" + string(rune('a'+i))
		if got[k] != s {
			t.Errorf("%s: got %#v, want %#v\n%s", k, got[k], s, out)
		}
	}
	want := map[any]any{
		"empty_obj":  map[any]any{},
		"empty_list": []any{},
		"list":       []any{map[any]any{"a": 1, "b": true}, []any{"x", 7}, map[any]any{}},
	}
	if !reflect.DeepEqual(got["nested"], want) {
		t.Errorf("nested: got %#v, want %#v", got["nested"], want)
	}
	if got["@type"] != "type.googleapis.com/x.y.Z" {
		t.Errorf("@type: got %#v", got["@type"])
	}
}
