// Command openapi writes the schemas of ratelab's API document
// (server/openapi.json) that come from Go types: it reflects each type
// with github.com/invopop/jsonschema (members from the json tags, in field
// order; descriptions from the Go doc comments; closed objects), takes
// every enum from the Go list the validators check against and every
// bound from the constant they compare with, and replaces those schemas in
// the document, leaving the rest of it (the info, the operations and
// SimulateResponse, a choice of the two answers) as it is. CI runs its
// test, which fails when the document differs from what the types say (as
// -check does).
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
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/server"
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
var commentDirs = []string{"calc", "policy", "server"}

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
	{name: "ArrivalInput", typ: reflect.TypeFor[server.ArrivalInput](), request: true, extend: func(s *jsonschema.Schema) {
		bound(s, "at", 0, algorithms.MaxWindow.Seconds())
		bound(s, "cost", 1, int64(algorithms.MaxCount))
	}},
	{name: "ArrivalOutput", typ: reflect.TypeFor[server.ArrivalOutput]()},
	{name: "Replicas", typ: reflect.TypeFor[server.Replicas](), request: true, extend: func(s *jsonschema.Schema) {
		bound(s, "count", 0, algorithms.MaxReplicas)
	}},
	{name: "SimulateRequest", typ: reflect.TypeFor[server.SimulateRequest](), request: true, extend: simulateRequest},
	{name: "Decision", typ: reflect.TypeFor[server.Decision]()},
	{name: "Summary", typ: reflect.TypeFor[server.Summary](), extend: func(s *jsonschema.Schema) {
		nullable(s, "first_rejection")
	}},
	{name: "Bin", typ: reflect.TypeFor[server.Bin]()},
	{name: "FieldProblem", typ: reflect.TypeFor[server.FieldProblem]()},
	{name: "Problem", typ: reflect.TypeFor[server.Problem](), extend: func(s *jsonschema.Schema) {
		t := property(s, "type")
		t.Format, t.Const = "uri-reference", server.ProblemType
		bound(s, "status", 400, 599)
		property(s, "instance").Format = "uri-reference"
		property(s, "errors").MinItems = new(uint64(1))
	}},
	{name: "PolicyError", typ: reflect.TypeFor[policy.Error](), extend: func(s *jsonschema.Schema) {
		minimum(s, "line", 1)
		minimum(s, "column", 1)
	}},
	{name: "Finding", typ: reflect.TypeFor[policy.Finding](), extend: func(s *jsonschema.Schema) {
		minimum(s, "line", 1)
		minimum(s, "column", 1)
	}},
	{name: "LintResult", typ: reflect.TypeFor[server.LintResult]()},
	{name: "Mix", typ: reflect.TypeFor[server.Mix](), request: true, extend: func(s *jsonschema.Schema) {
		maxItems(s, "tiers", server.MaxMix)
		maxItems(s, "requests", server.MaxMix)
	}},
	{name: "SimulateLimiterResponse", typ: reflect.TypeFor[server.SimulateLimiterResponse]()},
	{name: "PolicyArrivalOutput", typ: reflect.TypeFor[server.PolicyArrivalOutput]()},
	{name: "PolicyDecision", typ: reflect.TypeFor[server.PolicyDecision](), extend: func(s *jsonschema.Schema) {
		minimum(s, "cost", 1)
	}},
	{name: "LimitSummary", typ: reflect.TypeFor[server.LimitSummary]()},
	{name: "TierSummary", typ: reflect.TypeFor[server.TierSummary]()},
	{name: "PolicySummary", typ: reflect.TypeFor[server.PolicySummary](), extend: func(s *jsonschema.Schema) {
		nullable(s, "first_rejection")
	}},
	{name: "PolicyBin", typ: reflect.TypeFor[server.PolicyBin]()},
	{name: "SimulatePolicyResponse", typ: reflect.TypeFor[server.SimulatePolicyResponse](), extend: func(s *jsonschema.Schema) {
		p := property(s, "shadow")
		p.Type, p.Const = "", true
	}},
	{name: "Pattern", typ: reflect.TypeFor[server.Pattern](), request: true, extend: func(s *jsonschema.Schema) {
		enum(s, "key_by", algorithms.KeyBys)
	}},
	{name: "TierShare", typ: reflect.TypeFor[server.TierShare](), request: true, extend: func(s *jsonschema.Schema) {
		bound(s, "share", 0, 1.0)
	}},
	{name: "RequestShare", typ: reflect.TypeFor[server.RequestShare](), request: true, extend: func(s *jsonschema.Schema) {
		bound(s, "share", 0, 1.0)
	}},
}

// simulateRequest says what SimulateRequest's Go fields cannot: policy is
// a JSON object (read by policy.Decode, as the policy schema describes),
// pattern a Pattern (read once the form is known), arrivals a list of
// ArrivalInput (read as they stream in, so no field holds them as sent),
// decisions true by default, and exactly one of limiter and policy.
func simulateRequest(s *jsonschema.Schema) {
	p := property(s, "policy")
	*p = jsonschema.Schema{Type: "object", Description: p.Description}
	p = property(s, "pattern")
	*p = jsonschema.Schema{Ref: "#/$defs/Pattern", Description: p.Description}
	property(s, "decisions").Default = true
	one := func(want, not string) *jsonschema.Schema {
		props := jsonschema.NewProperties()
		props.Set(not, &jsonschema.Schema{})
		return &jsonschema.Schema{Required: []string{want}, Not: &jsonschema.Schema{Required: []string{not}, Properties: props}}
	}
	s.OneOf = []*jsonschema.Schema{one("limiter", "policy"), one("policy", "limiter")}
}

// enums are the named string types and their values, each the list the
// validators check against or the constants an answer holds.
var enums = map[reflect.Type][]string{
	reflect.TypeFor[algorithms.Name]():        names(algorithms.Names),
	reflect.TypeFor[algorithms.PatternName](): patternNames(),
	reflect.TypeFor[algorithms.Balance]():     names(algorithms.Balances),
	reflect.TypeFor[calc.PercentileUnit]():    names(calc.PercentileUnits),
	reflect.TypeFor[calc.Enforcement]():       names(calc.Enforcements),
	reflect.TypeFor[calc.Unit]():              names(calc.Units),
	reflect.TypeFor[calc.Severity]():          names(calc.Severities),
	reflect.TypeFor[calc.HeaderForm]():        names(calc.HeaderForms),
	reflect.TypeFor[calc.Fidelity]():          names(calc.Fidelities),
}

// patternNames are the patterns' names, in the order the UI lists them.
func patternNames() []string {
	var out []string
	for _, p := range algorithms.Patterns {
		out = append(out, string(p.Name))
	}
	return out
}

// names are vs as strings.
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

// minimum sets the least value of s's member name.
func minimum[N int | int64 | float64](s *jsonschema.Schema, name string, lo N) {
	property(s, name).Minimum = number(lo)
}

// nullable lets s's member name be null as well as its type.
func nullable(s *jsonschema.Schema, name string) {
	p := property(s, name)
	p.Extras = map[string]any{"type": []string{p.Type, "null"}}
	p.Type = ""
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
	comments, err := readComments(root)
	if err != nil {
		return nil, err
	}
	// SimulateRequest's arrivals are read as they stream in, into no field
	// of their own: the schema's member is this field, described by the
	// comment of the one that holds them.
	arrivals := reflect.StructField{Name: "Arrivals", Type: reflect.TypeFor[[]server.ArrivalInput](), Tag: `json:"arrivals"`}
	request := reflect.TypeFor[server.SimulateRequest]()
	comments[module+"/server.SimulateRequest.Arrivals"] = comments[module+"/server.SimulateRequest.arrivals"]
	additional := func(t reflect.Type) []reflect.StructField {
		if t == request {
			return []reflect.StructField{arrivals}
		}
		return nil
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
		if t == reflect.TypeFor[policy.Errors]() {
			// A named list of *policy.Error: a list, not a schema of its own.
			return &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Ref: "#/$defs/PolicyError"}}
		}
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
			AdditionalFields:           additional,
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

// readComments returns the doc comments of the types and fields of the
// packages in commentDirs (their non-test files), keyed as the reflector
// looks them up: "import/path.Type" and "import/path.Type.Field". A
// type's text is its comment's first paragraph; a field's is its whole
// comment, above the field or after it.
func readComments(root string) (map[string]string, error) {
	out := map[string]string{}
	for _, dir := range commentDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			return nil, err
		}
		pkg := module + "/" + dir
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.TYPE {
					continue
				}
				for _, sp := range g.Specs {
					ts := sp.(*ast.TypeSpec)
					doc := ts.Doc
					if doc == nil && len(g.Specs) == 1 {
						doc = g.Doc
					}
					if text, _, _ := strings.Cut(doc.Text(), "\n\n"); text != "" {
						out[pkg+"."+ts.Name.Name] = oneLine(text)
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fd := range st.Fields.List {
						text := fd.Doc.Text()
						if text == "" {
							text = fd.Comment.Text()
						}
						for _, n := range fd.Names {
							if text != "" {
								out[pkg+"."+ts.Name.Name+"."+n.Name] = oneLine(text)
							}
						}
					}
				}
			}
		}
	}
	return out, nil
}

// oneLine is text with its runs of white space as one space.
func oneLine(text string) string { return strings.Join(strings.Fields(text), " ") }

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

// refPattern finds the schemas a schema refers to.
var refPattern = regexp.MustCompile(`"\$ref":\s*"#/components/schemas/([^"]+)"`)

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
	// A type the generated schemas refer to must have a schema: one not
	// in the list above is named by the reflector but defined nowhere.
	for _, m := range ss {
		for _, ref := range refPattern.FindAllSubmatch(m.value, -1) {
			if find(ss, string(ref[1])) < 0 {
				return nil, fmt.Errorf("schema %s refers to %s, which no Go type in the generator's list defines", m.key, ref[1])
			}
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
