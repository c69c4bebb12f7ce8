package targets

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// textField is one string of a policy or of the options that reaches a
// generated file: how to set it, and a benign string of the same shape
// (the same length, a template path keeps its {name} segments, an
// address keeps host:port) that no format reads as syntax.
type textField struct {
	name   string // as an *export.Error names it
	set    func(p *policy.Policy, o *export.Options, s string)
	benign func(s string) string
}

func letters(c string) func(string) string {
	return func(s string) string { return strings.Repeat(c, utf8.RuneCountInString(s)) }
}

// benignPath keeps a path's '/' and {name} segments, and the %XX escapes
// of bytes no request line carries (the exports leave such a path's limit
// out, and say so); every other character becomes a letter.
func benignPath(s string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '/' || c == '{' || c == '}':
			in = c == '{' || (in && c != '}')
			b.WriteByte(c)
		case in:
			b.WriteByte('p')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) && (unhex(s[i+1])<<4|unhex(s[i+2]) < 0x20 || unhex(s[i+1])<<4|unhex(s[i+2]) >= 0x7f):
			b.WriteString(s[i : i+3])
			i += 2
		default:
			b.WriteByte('a')
		}
	}
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// benignAddr is host:port when s has a host, else a port.
func benignAddr(port string) func(string) string {
	return func(s string) string {
		if strings.Contains(s, ":") {
			return "127.0.0.1:" + port
		}
		return port
	}
}

// textFields are every string of the test policy "tiered" and of the
// options that an export may write: the policy's own text, a tier's name,
// endpoints' methods and paths (one with a cost only, one with its own
// limit), and every option.
var textFields = []textField{
	{"metadata.name", func(p *policy.Policy, _ *export.Options, s string) { p.Metadata.Name = s }, letters("n")},
	{"metadata.description", func(p *policy.Policy, _ *export.Options, s string) { p.Metadata.Description = s }, letters("d")},
	{"tiers[1].name", func(p *policy.Policy, _ *export.Options, s string) { p.Tiers[1].Name = s }, letters("t")},
	{"endpoints[0].match.method", func(p *policy.Policy, _ *export.Options, s string) { p.Endpoints[0].Match.Method = s }, letters("M")},
	{"endpoints[0].match.path", func(p *policy.Policy, _ *export.Options, s string) { p.Endpoints[0].Match.Path = s }, benignPath},
	{"endpoints[1].match.path", func(p *policy.Policy, _ *export.Options, s string) { p.Endpoints[1].Match.Path = s }, benignPath},
	{"api_key_header", func(_ *policy.Policy, o *export.Options, s string) { o.APIKeyHeader = s }, letters("K")},
	{"account_header", func(_ *policy.Policy, o *export.Options, s string) { o.AccountHeader = s }, letters("A")},
	{"tier_header", func(_ *policy.Policy, o *export.Options, s string) { o.TierHeader = s }, letters("T")},
	{"upstream", func(_ *policy.Policy, o *export.Options, s string) { o.Upstream = s }, benignAddr("8081")},
	{"listen", func(_ *policy.Policy, o *export.Options, s string) { o.Listen = s }, benignAddr("8080")},
	// The gateway chooses what the Prometheus rules watch, so a name the
	// target accepts is compared with itself.
	{"gateway", func(_ *policy.Policy, o *export.Options, s string) { o.Gateway = s }, func(s string) string { return s }},
}

// hostile strings: every line terminator YAML, Lua, Go, nginx and HAProxy
// recognise, the quotes and escapes of each, comment and string ends,
// template and variable syntax, YAML document markers, anchors and tags,
// and HTML. The reproduced injections of issue 13 are in
// testdata/fuzz/FuzzInjection.
var hostile = []string{
	"a\rb", "a\nb", "a\r\nb", "a\u0085b", "a\u2028b", "a\u2029b", "a\vb", "a\fb", "a\x00b", "a\x1bb", "a\xffb",
	`a"b`, `a'b`, "a`b", `a\b`, `a\"b`, `a\`, `"`, `'`,
	"a */ b", "/* a", "a // b", "a ]] b", "a ]=] b", "--[[ a", "a -- b",
	"${HOME}", "$host", "a$b", "{{ .x }}", "{{", "%{x}", "#{x}",
	"---", "...", "a\n---\nb", "&a", "*a", "!!binary", "!x a", "? a", "- a", "a: b", "{a: b}", "[a]", "a #b", "|", ">",
	"true", "null", "~", "0x1f", "1e3", "01:02", "<<",
	"a;b", "a#b", "a{b}", "}", "{", "a b", " a", "a ", "\ta",
	"<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "--->", "--!>", "<!--", "a|b", "[a](javascript:x)", "![a](b)",
	"/v1/a%22b", "/v1/a%0Ab", "/v1/a%24b", "/v1/{id}", "/v1/{a}/{b}/x", "/a$b", "/a'b", "/a(b)*+,=:@!~&", "/%7B/%3B",
	"GET", "get", "PoSt", "X-Custom-1", "[::1]:8080", "a.b-c:1", "65535", "0", "envoy-gateway", "haproxy", "nginx-plus",
}

// FuzzInjection puts a string into one text field of the policy or the
// options (or, for the last selector, into all of them), renders every
// target through Render, and wants either a refusal that is an
// *export.Error naming one of those fields, or a file whose structure,
// parsed as its format (YAML documents and keys, nginx directives,
// HAProxy statements, Go declarations and statements with the Lua scripts
// they embed, Markdown blocks and HTML), equals that of the same render
// with a benign string of the same shape: hostile text never adds a key,
// a directive, a statement or an HTML tag. A string that makes the policy
// invalid (policy.Validate: a method that is not letters, a duplicate
// tier) is not exported by any caller and is skipped; so is one that
// changes what the policy means to a target, which the export states in
// its mappings (a path no request line carries, a tier that one gateway
// cannot tell from another).
func FuzzInjection(f *testing.F) {
	for i := range textFields {
		for _, s := range hostile {
			f.Add(uint8(i), s)
		}
	}
	for _, s := range hostile {
		f.Add(uint8(len(textFields)), s)
	}
	base := exporttest.Named(f, "tiered")
	f.Fuzz(func(t *testing.T, sel uint8, s string) {
		fields := textFields
		if i := int(sel) % (len(textFields) + 1); i < len(textFields) {
			fields = textFields[i : i+1]
		}
		p, bp := clone(base), clone(base)
		var o, bo export.Options
		var names []string
		for _, fd := range fields {
			fd.set(&p, &o, s)
			fd.set(&bp, &bo, fd.benign(s))
			names = append(names, fd.name)
		}
		if len(policy.Validate(p)) > 0 {
			return
		}
		if errs := policy.Validate(bp); len(errs) > 0 {
			t.Fatalf("the benign policy is invalid: %v", errs)
		}
		for _, tg := range All {
			e, err := Render(tg.Name, p, o)
			if err != nil {
				var xe *export.Error
				if !errors.As(err, &xe) || !refuses(xe, names) {
					t.Fatalf("%s: %q in %v: refused with %v, want an *export.Error naming the field", tg.Name, s, names, err)
				}
				continue
			}
			be, err := Render(tg.Name, bp, bo)
			if err != nil {
				// A benign string a target refuses is not a shape the
				// fuzz can compare; it is no injection either.
				t.Logf("%s: the benign render is refused: %v", tg.Name, err)
				continue
			}
			if !safeFilename.MatchString(e.Filename) {
				t.Errorf("%s: %q in %v: file name %q", tg.Name, s, names, e.Filename)
			}
			if !sameFidelities(e, be) {
				continue
			}
			var avoid []string
			for _, fd := range fields {
				b := fd.benign(s)
				avoid = append(avoid, s, b, policy.Ident(s), policy.Ident(b))
			}
			compareStructure(t, tg.Name, s, names, e.Body, be.Body, avoid)
		}
	})
}

var safeFilename = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

func refuses(e *export.Error, fields []string) bool {
	for _, f := range fields {
		if e.Field == f {
			return true
		}
	}
	return false
}

// sameFidelities reports whether the two exports map the same parts of
// the policy with the same fidelity.
func sameFidelities(a, b export.Export) bool {
	if len(a.Mappings) != len(b.Mappings) {
		return false
	}
	for i := range a.Mappings {
		if a.Mappings[i].Field != b.Mappings[i].Field || a.Mappings[i].Fidelity != b.Mappings[i].Fidelity {
			return false
		}
	}
	return true
}

// compareStructure fails t when the hostile file does not parse as its
// format or its skeleton differs from the benign file's.
func compareStructure(t *testing.T, target, s string, fields []string, body, benign []byte, avoid []string) {
	t.Helper()
	fm, ok := formats[target]
	if !ok {
		t.Fatalf("%s: no format to parse its file with", target)
	}
	hw, err := fm.words(body)
	if err != nil {
		t.Fatalf("%s: %q in %v: the file does not parse: %v\n%s", target, s, fields, err, body)
	}
	bw, err := fm.words(benign)
	if err != nil {
		t.Fatalf("%s: the benign file does not parse: %v\n%s", target, err, benign)
	}
	vocab := intersect(hw, bw, avoid...)
	got, err := fm.skeleton(body, vocab)
	if err != nil {
		t.Fatalf("%s: %q in %v: the file does not parse: %v\n%s", target, s, fields, err, body)
	}
	want, err := fm.skeleton(benign, vocab)
	if err != nil {
		t.Fatalf("%s: the benign file does not parse: %v", target, err)
	}
	if got != want {
		t.Fatalf("%s: %q in %v changes the file's structure:\n%s", target, s, fields, firstDiff(got, want))
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + clip(gl) + "\n want " + clip(wl)
		}
	}
	return "(same lines)"
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

// clone copies p's slices so that setting a field of the copy leaves p
// alone.
func clone(p policy.Policy) policy.Policy {
	p.Tiers = append([]policy.Tier(nil), p.Tiers...)
	p.Endpoints = append([]policy.Endpoint(nil), p.Endpoints...)
	return p
}
