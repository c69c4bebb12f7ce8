package envoy

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// The three documents are written by a small block-style YAML writer, not
// by a marshaller, so that keys keep the order Envoy's documentation uses
// and a limit's descriptor carries a comment naming the policy field.
//
// A document is built from these values:
//
//	obj   an ordered mapping; a field's comment goes on the line above it
//	list  a sequence
//	string, int, int64, uint32, uint64, bool  scalars
//
// Strings that could read as anything but a string (numbers, booleans,
// "1s", "@type", ":path", text with spaces or '#') are written as JSON
// strings, which are valid YAML double-quoted scalars.

// obj is an ordered YAML mapping.
type obj []field

// field is one key of an obj.
type field struct {
	key     string
	val     any
	comment string
}

// list is a YAML sequence.
type list []any

// with appends a field.
func (o obj) with(key string, val any) obj { return append(o, field{key: key, val: val}) }

// note appends a field with a comment line above it.
func (o obj) note(comment, key string, val any) obj {
	return append(o, field{key: key, val: val, comment: comment})
}

// plain is a string YAML reads back as the same string without quotes.
var plain = regexp.MustCompile(`^[A-Za-z_/][A-Za-z0-9_./-]*$`)

// yamlWords are plain scalars YAML 1.1 readers take for booleans or null.
var yamlWords = map[string]bool{"true": true, "false": true, "yes": true, "no": true, "on": true,
	"off": true, "y": true, "n": true, "null": true}

// scalar formats a scalar value.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		if plain.MatchString(v) && !yamlWords[strings.ToLower(v)] {
			return v
		}
		b, _ := json.Marshal(v) // a string always marshals
		return string(b)
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	}
	panic("envoy: no YAML form for a value of this type")
}

// lines renders a collection as block YAML lines at indent 0.
func lines(v any) []string {
	var out []string
	switch v := v.(type) {
	case obj:
		for _, f := range v {
			if f.comment != "" {
				for _, c := range strings.Split(f.comment, "\n") {
					out = append(out, "# "+c)
				}
			}
			k := scalar(f.key)
			switch c := f.val.(type) {
			case obj:
				if len(c) == 0 {
					out = append(out, k+": {}")
					continue
				}
				out = append(out, k+":")
				out = append(out, indent(lines(c), "  ")...)
			case list:
				if len(c) == 0 {
					out = append(out, k+": []")
					continue
				}
				out = append(out, k+":")
				out = append(out, indent(lines(c), "  ")...)
			default:
				out = append(out, k+": "+scalar(c))
			}
		}
	case list:
		for _, item := range v {
			switch c := item.(type) {
			case obj, list:
				sub := lines(c)
				if len(sub) == 0 {
					if _, ok := c.(obj); ok {
						out = append(out, "- {}")
					} else {
						out = append(out, "- []")
					}
					continue
				}
				out = append(out, "- "+sub[0])
				out = append(out, indent(sub[1:], "  ")...)
			default:
				out = append(out, "- "+scalar(c))
			}
		}
	}
	return out
}

// indent prefixes every line.
func indent(ls []string, prefix string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = prefix + l
	}
	return out
}

// document renders a header comment and a mapping as a YAML document.
func document(header []string, body obj) []byte {
	var b strings.Builder
	for _, h := range header {
		for _, l := range strings.Split(h, "\n") {
			b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
		}
	}
	for _, l := range lines(body) {
		b.WriteString(l + "\n")
	}
	return []byte(b.String())
}
