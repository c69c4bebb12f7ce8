package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"
)

// TestDocumentIsUpToDate: server/openapi.json holds exactly the schemas
// the Go types give (what CI's -check run says too).
func TestDocumentIsUpToDate(t *testing.T) {
	if err := run("../..", true); err != nil {
		t.Fatal(err)
	}
}

// TestMarshalWritesHTMLCharacters: <, > and & come out as themselves, and
// an escaped backslash before "u003c" stays a backslash and that text.
func TestMarshalWritesHTMLCharacters(t *testing.T) {
	desc := `a < b & c > d, \u003c and "quoted"`
	b, err := marshal(&jsonschema.Schema{Description: desc})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`a < b & c > d`)) {
		t.Errorf("marshal = %s, want <, & and > unescaped", b)
	}
	var back struct{ Description string }
	if err := json.Unmarshal(b, &back); err != nil || back.Description != desc {
		t.Errorf("marshal = %s, reads back as %q (%v), want %q", b, back.Description, err, desc)
	}
}

// TestReplaceSchemasKeepsTheRest: a generated schema replaces the one of
// its name in place, one the document lacks goes last, and every other
// member keeps its place and its text.
func TestReplaceSchemasKeepsTheRest(t *testing.T) {
	doc := `{"openapi": "3.1.0", "paths": {"/a": {"get": {"x": 1.50}}}, "components": {"schemas": {"Hand": {"type": "string"}, "CalcInput": {"type": "null"}}}}`
	defs := map[string][]byte{}
	for _, g := range schemas {
		defs[g.name] = []byte(`{"type":"object","title":"` + g.name + `"}`)
	}
	out, err := replaceSchemas([]byte(doc), defs)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{`"x": 1.50`, `"Hand": {` + "\n" + `        "type": "string"`, `"title": "CalcInput"`} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, `"null"`) {
		t.Errorf("the old CalcInput is still there:\n%s", s)
	}
	order := []string{`"openapi"`, `"paths"`, `"components"`, `"Hand"`, `"CalcInput"`, `"TierInput"`, `"ReverseResult"`}
	last := -1
	for _, k := range order {
		i := strings.Index(s, k)
		if i <= last {
			t.Errorf("%s is not after the member before it:\n%s", k, s)
		}
		last = i
	}
}

// TestReplaceSchemasRefusesAnUndefinedReference: a generated schema that
// refers to a schema nothing defines is an error naming both.
func TestReplaceSchemasRefusesAnUndefinedReference(t *testing.T) {
	defs := map[string][]byte{}
	for _, g := range schemas {
		defs[g.name] = []byte(`{"type":"object"}`)
	}
	defs["CalcInput"] = []byte(`{"type":"object","properties":{"x":{"$ref":"#/components/schemas/Nowhere"}}}`)
	_, err := replaceSchemas([]byte(`{"components": {"schemas": {}}}`), defs)
	if err == nil || !strings.Contains(err.Error(), "CalcInput") || !strings.Contains(err.Error(), "Nowhere") {
		t.Errorf("err = %v, want one naming CalcInput and Nowhere", err)
	}
}
