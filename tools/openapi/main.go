// Command openapi writes the schemas of ratelab's API document
// (server/openapi.json) that come from Go types: it reflects each type
// with github.com/invopop/jsonschema (members from the json tags, in field
// order; descriptions from the Go doc comments; closed objects), takes
// every enum from the Go list the validators check against and every
// bound from the constant they compare with, and replaces those schemas in
// the document, leaving the rest of it (paths, the schemas not yet
// generated) as it is. CI runs it with -check, which fails when the
// document differs from what the types say.
//
// It is a module of its own so that the reflection library stays out of
// the main module's graph. Run it from this directory after changing a
// type the API sends or reads:
//
//	go run . -root ../..
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// module is the main module's path, to which the comments' packages are
// relative.
const module = "github.com/ratelab/ratelab"

// document is the API document, relative to the repository root.
const document = "server/openapi.json"

// generated is one schema of the document that a Go type defines.
type generated struct {
	name string // in components.schemas
	typ  reflect.Type
	// request marks a type the API reads: its required members are those
	// tagged jsonschema:"required" (the validators refuse them missing),
	// not every member without omitempty, which is what an answer always
	// holds.
	request bool
	// extend adds what the type's fields cannot say: bounds, item counts
	// and enums of plain strings, each from the constant the validators
	// use.
	extend func(s *jsonschema.Schema)
}

// commentDirs are the packages whose doc comments describe the schemas,
// relative to the repository root.
var commentDirs = []string{"calc"}

// schemas are the generated schemas, in the document's order.
var schemas = []generated{
	{name: "CalcInput", typ: reflect.TypeFor[calc.Input](), request: true, extend: func(s *jsonschema.Schema) {
		bound(s, "capacity", calc.MinCapacity, calc.MaxCapacity)
		bound(s, "headroom", 0, calc.MaxHeadroom)
		bound(s, "clients", 0, calc.MaxClients)
		bound(s, "replicas", 0, calc.MaxReplicas)
		maxItems(s, "tiers", calc.MaxTiers)
		maxItems(s, "endpoints", calc.MaxEndpoints)
	}},
	{name: "TierInput", typ: reflect.TypeFor[calc.TierInput](), request: true, extend: func(s *jsonschema.Schema) {
		bound(s, "clients", 1, calc.MaxClients)
	}},
	{name: "EndpointInput", typ: reflect.TypeFor[calc.Endpoint](), request: true, extend: func(s *jsonschema.Schema) {
		bound(s, "cost", 0, calc.MaxCost)
	}},
	{name: "RetryInput", typ: reflect.TypeFor[calc.Retry](), request: true, extend: func(s *jsonschema.Schema) {
		enum(s, "jitter_mode", calc.JitterModes)
	}},
	{name: "Value", typ: reflect.TypeFor[calc.Value]()},
	{name: "Params", typ: reflect.TypeFor[calc.Params]()},
	{name: "Tier", typ: reflect.TypeFor[calc.Tier]()},
	{name: "PerReplica", typ: reflect.TypeFor[calc.PerReplica]()},
	{name: "EndpointFit", typ: reflect.TypeFor[calc.EndpointFit]()},
	{name: "Header", typ: reflect.TypeFor[calc.Header]()},
	{name: "Response", typ: reflect.TypeFor[calc.Response]()},
	{name: "Moment", typ: reflect.TypeFor[calc.Moment]()},
	{name: "HeaderExample", typ: reflect.TypeFor[calc.HeaderExample]()},
	{name: "Attempt", typ: reflect.TypeFor[calc.Attempt]()},
	{name: "Backoff", typ: reflect.TypeFor[calc.Backoff]()},
	{name: "Share", typ: reflect.TypeFor[calc.Share](), extend: func(s *jsonschema.Schema) {
		bound(s, "fraction", 0, 1)
	}},
	{name: "Check", typ: reflect.TypeFor[calc.Check]()},
	{name: "CalcResult", typ: reflect.TypeFor[calc.Result]()},
	{name: "Limit", typ: reflect.TypeFor[calc.Limit](), request: true},
	{name: "ReverseResult", typ: reflect.TypeFor[calc.ReverseResult]()},
}

// enums are the named string types and their values, each the list the
// validators check against or the constants an answer holds.
var enums = map[reflect.Type][]string{
	reflect.TypeFor[algorithms.Name]():     names(algorithms.Names),
	reflect.TypeFor[calc.PercentileUnit](): names(calc.PercentileUnits),
	reflect.TypeFor[calc.Enforcement]():    names(calc.Enforcements),
	reflect.TypeFor[calc.Unit]():           names(calc.Units),
	reflect.TypeFor[calc.Severity]():       names(calc.Severities),
	reflect.TypeFor[calc.HeaderForm]():     names(calc.HeaderForms),
	reflect.TypeFor[calc.Fidelity]():       names(calc.Fidelities),
}

func names[S ~string](vs []S) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// property is s's member name; it panics when there is none, so that a
// renamed field cannot leave its bound behind.
func property(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties.Get(name)
	if !ok {
		panic(fmt.Sprintf("openapi: no member %q to extend", name))
	}
	return p
}

// bound sets the inclusive range of s's member name.
func bound[N int | int64 | float64](s *jsonschema.Schema, name string, lo, hi N) {
	p := property(s, name)
	p.Minimum, p.Maximum = number(lo), number(hi)
}

// maxItems sets how many items s's list member name may hold.
func maxItems(s *jsonschema.Schema, name string, n uint64) {
	property(s, name).MaxItems = &n
}

// enum sets the values of s's string member name.
func enum(s *jsonschema.Schema, name string, values []string) {
	p := property(s, name)
	p.Enum = nil
	for _, v := range values {
		p.Enum = append(p.Enum, v)
	}
}

// number is n as JSON writes it.
func number[N int | int64 | float64](n N) json.Number {
	switch v := any(n).(type) {
	case float64:
		return json.Number(strconv.FormatFloat(v, 'f', -1, 64))
	default:
		return json.Number(fmt.Sprint(v))
	}
}

func main() {
	root := flag.String("root", ".", "the repository root")
	check := flag.Bool("check", false, "report whether the document is up to date instead of writing it")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "openapi:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	path := filepath.Join(root, document)
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	defs, err := reflectAll(root)
	if err != nil {
		return err
	}
	doc, err := replaceSchemas(old, defs)
	if err != nil {
		return err
	}
	if check {
		if !bytes.Equal(doc, old) {
			return fmt.Errorf("%s differs from the Go types: run (cd tools/openapi && go run . -root ../..) and commit it", document)
		}
		return nil
	}
	return os.WriteFile(path, doc, 0o644)
}

// reflectAll returns each generated schema as JSON, by name.
func reflectAll(root string) (map[string][]byte, error) {
	// The comments' package paths are the module's joined with the
	// directories as given, so they are read from the root.
	comments := map[string]string{}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if err := os.Chdir(root); err != nil {
		return nil, err
	}
	for _, dir := range commentDirs {
		if err = (&jsonschema.Reflector{CommentMap: comments}).AddGoComments(module, dir); err != nil {
			break
		}
	}
	if cerr := os.Chdir(cwd); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	byType := map[reflect.Type]string{}
	for _, g := range schemas {
		byType[g.typ] = g.name
	}
	namer := func(t reflect.Type) string {
		if n, ok := byType[t]; ok {
			return n
		}
		return t.Name()
	}
	mapper := func(t reflect.Type) *jsonschema.Schema {
		if vs, ok := enums[t]; ok {
			s := &jsonschema.Schema{Type: "string"}
			for _, v := range vs {
				s.Enum = append(s.Enum, v)
			}
			return s
		}
		return nil
	}
	out := map[string][]byte{}
	for _, g := range schemas {
		r := &jsonschema.Reflector{
			Anonymous:                  true,
			RequiredFromJSONSchemaTags: g.request,
			Namer:                      namer,
			Mapper:                     mapper,
			CommentMap:                 comments,
		}
		s := r.ReflectFromType(g.typ).Definitions[g.name]
		if s == nil {
			return nil, fmt.Errorf("%s: reflecting %v gave no definition", g.name, g.typ)
		}
		if g.extend != nil {
			g.extend(s)
		}
		tidy(s)
		b, err := marshal(s)
		if err != nil {
			return nil, err
		}
		out[g.name] = bytes.ReplaceAll(b, []byte(`"#/$defs/`), []byte(`"#/components/schemas/`))
	}
	return out, nil
}

// tidy writes each description of s and its members on one line.
func tidy(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.Description = strings.Join(strings.Fields(s.Description), " ")
	if s.Properties != nil {
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			tidy(p.Value)
		}
	}
	tidy(s.Items)
	tidy(s.AdditionalProperties)
}

// marshal is s as compact JSON, with <, > and & as themselves (the
// library's encoding/json writes them as \u003c, \u003e and \u0026).
func marshal(s *jsonschema.Schema) ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			out = append(out, b[i])
			continue
		}
		// An escape: \uXXXX or a backslash and one byte.
		switch e := string(b[i:min(i+6, len(b))]); e {
		case `\u003c`, `\u003e`, `\u0026`:
			v, _ := strconv.ParseUint(e[2:], 16, 8)
			out = append(out, byte(v))
			i += 5
		default:
			out = append(out, b[i], b[i+1])
			i++
		}
	}
	return out, nil
}

// member is one member of a JSON object, its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// object reads a JSON object's members in order.
func object(b []byte) ([]member, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var ms []member
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, member{t.(string), v})
	}
	return ms, nil
}

// write appends ms as a compact JSON object to buf.
func write(buf *bytes.Buffer, ms []member) {
	buf.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(m.value)
	}
	buf.WriteByte('}')
}

// find is the index of key's member in ms, or -1.
func find(ms []member, key string) int {
	for i, m := range ms {
		if m.key == key {
			return i
		}
	}
	return -1
}

// replaceSchemas returns doc with each schema of defs in place of the one
// of its name (a new one goes last), indented as before.
func replaceSchemas(doc []byte, defs map[string][]byte) ([]byte, error) {
	top, err := object(doc)
	if err != nil {
		return nil, err
	}
	ci := find(top, "components")
	if ci < 0 {
		return nil, fmt.Errorf("%s has no components", document)
	}
	comps, err := object(top[ci].value)
	if err != nil {
		return nil, err
	}
	si := find(comps, "schemas")
	if si < 0 {
		return nil, fmt.Errorf("%s has no components.schemas", document)
	}
	ss, err := object(comps[si].value)
	if err != nil {
		return nil, err
	}
	for _, g := range schemas {
		if i := find(ss, g.name); i >= 0 {
			ss[i].value = defs[g.name]
		} else {
			ss = append(ss, member{g.name, defs[g.name]})
		}
	}
	var buf bytes.Buffer
	write(&buf, ss)
	comps[si].value = append(json.RawMessage(nil), buf.Bytes()...)
	buf.Reset()
	write(&buf, comps)
	top[ci].value = append(json.RawMessage(nil), buf.Bytes()...)
	buf.Reset()
	write(&buf, top)
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
