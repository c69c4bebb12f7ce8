package policy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ratelab/ratelab/algorithms"
)

// Scope is what a limit applies to.
type Scope string

// Scopes.
const (
	// ScopeDefault is the per-client limit of clients in no tier.
	ScopeDefault Scope = "default"
	// ScopeTier is a tier's per-client limit.
	ScopeTier Scope = "tier"
	// ScopeEndpoint is an endpoint's per-client limit.
	ScopeEndpoint Scope = "endpoint"
	// ScopeGlobal is the whole service's limit, all clients together.
	ScopeGlobal Scope = "global"
)

// Limit is one limit of a policy with everything a target needs to place it.
type Limit struct {
	// Field is the policy path of the limit: "tiers[1].limit".
	Field string
	Scope Scope
	// Name identifies it in the target's config, lower case letters,
	// digits and underscores, unique in the policy: "default",
	// "tier_paid", "endpoint_2", "global"; a tier whose identifier another
	// tier already has gets its index appended ("tier_paid_plus_3").
	Name string
	// Tier is the tier's name (ScopeTier).
	Tier string
	// Key is what identifies a client: the tier's key, else the
	// defaults' key; KeyGlobal for the global limit.
	Key Key
	// Match is the endpoint's method and path (ScopeEndpoint).
	Match Match
	// Spec is the limit.
	Spec algorithms.Spec
	// Shadow is true when the policy is in shadow mode: log, never reject.
	Shadow bool
}

// Limits lists the policy's limits in a fixed order: default, tiers,
// endpoints, global. A tier without its own limit inherits the default
// limit (listed under the tier, so tier selection still works); an endpoint
// or global without a limit is left out.
func (p Policy) Limits() []Limit {
	shadow := p.Defaults.Mode == ModeShadow
	defKey := p.Defaults.Key
	if defKey == "" {
		defKey = KeyAPIKey
	}
	var out []Limit
	if p.Defaults.Limit.Algorithm != "" {
		out = append(out, Limit{Field: "defaults.limit", Scope: ScopeDefault, Name: "default",
			Key: defKey, Spec: p.Defaults.Limit, Shadow: shadow})
	}
	used := map[string]bool{"default": true, "global": true}
	for i := range p.Endpoints {
		used[fmt.Sprintf("endpoint_%d", i)] = true
	}
	for i, t := range p.Tiers {
		// Names that differ only in case or punctuation ("Paid Plus",
		// "paid_plus") would share an identifier: the later one gets
		// its index appended.
		name := "tier_" + Ident(t.Name)
		for n := 0; used[name]; n++ {
			name = fmt.Sprintf("tier_%s_%d", Ident(t.Name), i+n)
		}
		used[name] = true
		l := Limit{Field: fmt.Sprintf("tiers[%d].limit", i), Scope: ScopeTier, Name: name,
			Tier: t.Name, Key: defKey, Spec: t.Limit, Shadow: shadow}
		if t.Key != "" {
			l.Key = t.Key
		}
		if l.Spec.Algorithm == "" {
			l.Spec = p.Defaults.Limit
		}
		if l.Spec.Algorithm != "" {
			out = append(out, l)
		}
	}
	for i, e := range p.Endpoints {
		if e.Limit.Algorithm == "" {
			continue
		}
		out = append(out, Limit{Field: fmt.Sprintf("endpoints[%d].limit", i), Scope: ScopeEndpoint,
			Name: fmt.Sprintf("endpoint_%d", i), Key: defKey, Match: e.Match, Spec: e.Limit, Shadow: shadow})
	}
	if p.Global.Limit.Algorithm != "" {
		out = append(out, Limit{Field: "global.limit", Scope: ScopeGlobal, Name: "global",
			Key: KeyGlobal, Spec: p.Global.Limit, Shadow: shadow})
	}
	return out
}

// Ident is s as an identifier for config files: lower-case ASCII letters,
// digits and underscores, never empty, never starting with a digit.
func Ident(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	id := b.String()
	if id == "" || (id[0] >= '0' && id[0] <= '9') {
		id = "x" + id
	}
	return id
}

// PathRegex is an endpoint path as an anchored regular expression (RE2 and
// PCRE alike): literal characters quoted, each {name} one segment
// ([^/]+). A '{' without its '}' (a path Check would refuse) is literal.
func PathRegex(path string) string {
	var b strings.Builder
	b.WriteString("^")
	for path != "" {
		i := strings.IndexByte(path, '{')
		j := strings.IndexByte(path[max(i, 0):], '}')
		if i < 0 || j < 0 {
			b.WriteString(regexp.QuoteMeta(path))
			break
		}
		b.WriteString(regexp.QuoteMeta(path[:i]))
		b.WriteString("[^/]+")
		path = path[i+j+1:]
	}
	b.WriteString("$")
	return b.String()
}

// IsTemplate reports whether the path has a {name} segment.
func IsTemplate(path string) bool { return strings.Contains(path, "{") }

// IsPlaceholder reports whether a path template's segment is a {name},
// which matches exactly one non-empty path segment.
func IsPlaceholder(seg string) bool { return len(seg) >= 2 && seg[0] == '{' && seg[len(seg)-1] == '}' }

// Overlaps reports whether some request matches both a and b: the same
// method ignoring ASCII case, and path templates with as many segments in
// which each pair of segments is two equal literals, a {name} and a
// non-empty literal, or two {name}s.
func Overlaps(a, b Match) bool {
	if LowerASCII(a.Method) != LowerASCII(b.Method) {
		return false
	}
	as, bs := strings.Split(a.Path, "/"), strings.Split(b.Path, "/")
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		av, bv := IsPlaceholder(as[i]), IsPlaceholder(bs[i])
		switch {
		case av && bv:
		case av && bs[i] == "", bv && as[i] == "":
			return false
		case !av && !bv && as[i] != bs[i]:
			return false
		}
	}
	return true
}

// ExportErrors are the problems that keep p's own text out of the files
// an export writes, in the order of the document, each naming the field,
// the value and what is allowed, with a fix as its Hint; nil when there
// are none. Config formats differ in what they quote and how, so rather
// than trust each target's escaper with every byte, text that reaches a
// generated file is held to characters that need no quoting anywhere:
//
//   - metadata.name and metadata.description: valid UTF-8 without control
//     characters (C0, DEL, C1) or Unicode line and paragraph separators.
//     They are written into comments, and a line terminator that YAML,
//     Lua, Go, nginx or HAProxy recognises — CR, LF, NEL U+0085, LS
//     U+2028, PS U+2029, and VT or FF for some — would end the comment
//     and turn the rest of the text into configuration;
//   - tier names: [ValidTierName] (they are matched as header values);
//   - endpoint paths: [ValidPath].
//
// Every export target refuses a policy with any of them, and lint reports
// each as an error.
func (p Policy) ExportErrors() Errors {
	var out Errors
	add := func(field, value, want, fix string) {
		out = append(out, &Error{Field: field, Message: fmt.Sprintf("%s cannot be exported; want %s", value, want), Hint: fix})
	}
	if r, at, bad := unsafeText(p.Metadata.Name); bad {
		add("metadata.name", fmt.Sprintf("%q (its %s at character %d would end a comment)", p.Metadata.Name, runeName(r), at),
			"a name without control characters or line breaks (it goes into comments)",
			fmt.Sprintf("remove the %s: a name is one line of printable text", runeName(r)))
	}
	if r, at, bad := unsafeText(p.Metadata.Description); bad {
		add("metadata.description", fmt.Sprintf("%s (its %s at character %d would end a comment)", clip(p.Metadata.Description), runeName(r), at),
			"a description without control characters or line breaks (it goes into comments)",
			fmt.Sprintf("remove the %s: write the description as one line of printable text", runeName(r)))
	}
	for i, t := range p.Tiers {
		if !ValidTierName(t.Name) {
			add(fmt.Sprintf("tiers[%d].name", i), strconv.Quote(t.Name), "letters, digits, spaces, '-', '_' and '.' (a tier name is sent as a header value)",
				"rename the tier with 1 to 64 of those characters")
		}
	}
	for i, e := range p.Endpoints {
		if !ValidPath(e.Match.Path) {
			add(fmt.Sprintf("endpoints[%d].match.path", i), strconv.Quote(e.Match.Path),
				"a path of RFC 3986 characters (letters, digits, -._~!$&'()*+,=:@/ and %XX escapes) with {name} for a variable segment",
				"start the path with '/', percent-encode other characters (%20 for a space) and write each variable segment as a whole /{name}/")
		}
	}
	return out
}

// unsafeText reports the first rune of s that must not reach a comment in
// a generated file, and its place (1-based, in runes): a control character
// (C0, DEL, C1 — CR, LF, VT, FF and NEL among them), a line or paragraph
// separator, or a byte that is not UTF-8 (reported as U+FFFD).
func unsafeText(s string) (r rune, at int, bad bool) {
	at = 0
	for i, c := range s {
		at++
		if c == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return c, at, true
			}
		}
		if unicode.IsControl(c) || c == '\u2028' || c == '\u2029' {
			return c, at, true
		}
	}
	return 0, 0, false
}

// runeName names a rune unsafeText refuses: "line feed U+000A".
func runeName(r rune) string {
	names := map[rune]string{'\t': "tab", '\n': "line feed", '\v': "vertical tab", '\f': "form feed", '\r': "carriage return",
		0x85: "next line", 0x2028: "line separator", 0x2029: "paragraph separator", utf8.RuneError: "byte that is not UTF-8"}
	if n, ok := names[r]; ok {
		if r == utf8.RuneError {
			return n
		}
		return fmt.Sprintf("%s %U", n, r)
	}
	return fmt.Sprintf("control character %U", r)
}

// ValidTierName reports whether s can be a tier name in every export: 1 to
// 64 letters, digits, spaces, '-', '_' and '.' (a tier name is matched as a
// header value, and reaches config files unquoted).
func ValidTierName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" -_.", r)) {
			return false
		}
	}
	return true
}

// ValidPath reports whether s is an endpoint path every export can carry:
// it starts with '/', holds only RFC 3986 path characters (unreserved,
// %XX escapes, sub-delims but ';', ':', '@', '/'), and each {name}
// placeholder is a whole segment.
func ValidPath(s string) bool {
	if !strings.HasPrefix(s, "/") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("-._~!$&'()*+,=:@/", c) >= 0:
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 2 || !isIdent(s[i+1:i+end]) || s[i-1] != '/' || (i+end+1 < len(s) && s[i+end+1] != '/') {
				return false
			}
			i += end
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// LowerASCII is s with ASCII letters in lower case, the rest as it is: how
// tier names and methods are matched (ignoring ASCII case, never Unicode
// folding). A string with no upper-case letter is returned without a copy.
func LowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
