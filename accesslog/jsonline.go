package accesslog

import (
	"unicode/utf16"
	"unicode/utf8"
)

// JSON lines are read by a small scanner of one top-level object: it finds
// the wanted fields' values and skips every other value (nested objects
// and arrays included) without decoding it. Only top-level fields can be
// named. A field that appears twice takes its last value, as in
// encoding/json.

// jsonField indexes the wanted fields.
const (
	jTime = iota
	jKey
	jMethod
	jPath
	jRequest
	jTier
	jFields
)

// Kinds of JSON values.
const (
	jvNone = iota
	jvString
	jvNumber
	jvOther // true, false, object, array
	jvNull
)

type jsonState struct {
	names   [jFields]string
	vals    [jFields][]byte
	kinds   [jFields]uint8
	scratch []byte // unescaped strings; capacity ≥ the line so slices stay valid
	keyBuf  []byte // an escaped field name, unescaped
}

func (s *jsonState) init(cfg Config) {
	s.names = [jFields]string{
		jTime:    cfg.Fields.Time,
		jKey:     keyName(cfg),
		jMethod:  cfg.Fields.Method,
		jPath:    cfg.Fields.Path,
		jRequest: cfg.Fields.Request,
		jTier:    cfg.Fields.Tier,
	}
}

// keyName is the JSON field or CSV column holding the key.
func keyName(cfg Config) string {
	switch cfg.Key.Kind {
	case KeyHeader:
		return headerField(cfg.Key.Name)
	case KeyField:
		return cfg.Key.Name
	}
	return cfg.Fields.IP
}

func (rd *Reader) parseJSON(line []byte) Reason {
	s := &rd.json
	if why := s.scan(line); why != "" {
		return why
	}
	if s.kinds[jTime] == jvNone || s.kinds[jTime] == jvNull {
		return ReasonMissing
	}
	if s.kinds[jTime] != jvString && s.kinds[jTime] != jvNumber {
		return ReasonBadValue
	}
	t, ok := parseTimeText(s.vals[jTime], &rd.clf)
	if !ok {
		return ReasonBadTime
	}
	method, path := s.vals[jMethod], s.vals[jPath]
	for _, f := range []int{jMethod, jPath, jRequest} {
		if k := s.kinds[f]; k != jvNone && k != jvNull && k != jvString {
			return ReasonBadValue
		}
	}
	if s.kinds[jMethod] != jvString || s.kinds[jPath] != jvString || len(method) == 0 || len(path) == 0 {
		if s.kinds[jRequest] != jvString {
			return ReasonMissing
		}
		if method, path, ok = splitRequest(s.vals[jRequest]); !ok {
			return ReasonBadRequest
		}
	}
	switch s.kinds[jKey] {
	case jvString, jvNumber:
		rd.rec.Key = s.vals[jKey]
	case jvNone, jvNull:
		rd.rec.Key = nil
	default:
		return ReasonBadValue
	}
	rd.rec.Tier = nil
	if k := s.kinds[jTier]; k == jvString || k == jvNumber {
		rd.rec.Tier = s.vals[jTier]
	}
	rd.rec.UnixNano = t
	rd.rec.Method = method
	rd.rec.Path = path
	return ""
}

// scan finds the wanted fields of the object in line.
func (s *jsonState) scan(line []byte) Reason {
	s.kinds = [jFields]uint8{}
	if cap(s.scratch) < len(line) {
		s.scratch = make([]byte, 0, len(line)+len(line)/2)
	}
	s.scratch = s.scratch[:0]
	i := skipWS(line, 0)
	if i >= len(line) || line[i] != '{' {
		return ReasonNotJSON
	}
	i = skipWS(line, i+1)
	if i < len(line) && line[i] == '}' {
		return tail(line, i+1)
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return ReasonNotJSON
		}
		name, end, escaped := jsonString(line, i)
		if end < 0 {
			return ReasonNotJSON
		}
		if escaped {
			var ok bool
			if s.keyBuf, ok = unescape(s.keyBuf[:0], name); !ok {
				return ReasonNotJSON
			}
			name = s.keyBuf
		}
		field := -1
		for f, n := range s.names {
			if n != "" && string(name) == n {
				field = f
				break
			}
		}
		i = skipWS(line, end)
		if i >= len(line) || line[i] != ':' {
			return ReasonNotJSON
		}
		i = skipWS(line, i+1)
		if i >= len(line) {
			return ReasonNotJSON
		}
		var (
			val  []byte
			kind uint8
		)
		switch c := line[i]; {
		case c == '"':
			v, e, esc := jsonString(line, i)
			if e < 0 {
				return ReasonNotJSON
			}
			if esc {
				if field < 0 {
					if _, ok := unescape(s.scratch[len(s.scratch):], v); !ok {
						return ReasonNotJSON
					}
				} else {
					start := len(s.scratch)
					var ok bool
					if s.scratch, ok = unescape(s.scratch, v); !ok {
						return ReasonNotJSON
					}
					v = s.scratch[start:]
				}
			}
			val, kind, i = v, jvString, e
		case c == '-' || '0' <= c && c <= '9':
			j := i + 1
			for j < len(line) && isNumByte(line[j]) {
				j++
			}
			val, kind, i = line[i:j], jvNumber, j
		case c == '{' || c == '[':
			e := skipNested(line, i)
			if e < 0 {
				return ReasonNotJSON
			}
			kind, i = jvOther, e
		default:
			e, k := literal(line, i)
			if e < 0 {
				return ReasonNotJSON
			}
			kind, i = k, e
		}
		if field >= 0 {
			s.vals[field], s.kinds[field] = val, kind
		}
		i = skipWS(line, i)
		if i >= len(line) {
			return ReasonNotJSON
		}
		switch line[i] {
		case ',':
			i = skipWS(line, i+1)
		case '}':
			return tail(line, i+1)
		default:
			return ReasonNotJSON
		}
	}
}

// tail accepts only white space after the object.
func tail(line []byte, i int) Reason {
	if skipWS(line, i) != len(line) {
		return ReasonNotJSON
	}
	return ""
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

func isNumByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// literal reads true, false or null at b[i].
func literal(b []byte, i int) (int, uint8) {
	for _, l := range [...]struct {
		s string
		k uint8
	}{{"true", jvOther}, {"false", jvOther}, {"null", jvNull}} {
		if len(b)-i >= len(l.s) && string(b[i:i+len(l.s)]) == l.s {
			return i + len(l.s), l.k
		}
	}
	return -1, 0
}

// jsonString returns the raw contents of the string whose opening quote is
// b[i], the index past its closing quote (or -1), and whether it has
// escapes. Control characters are not allowed inside.
func jsonString(b []byte, i int) ([]byte, int, bool) {
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, escaped
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			return nil, -1, false
		}
	}
	return nil, -1, false
}

// skipNested skips the object or array starting at b[i] and returns the
// index past it, or -1. It checks only that brackets and strings balance.
func skipNested(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '{', '[':
			depth++
			if depth > 10000 {
				return -1
			}
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		case '"':
			_, e, _ := jsonString(b, j)
			if e < 0 {
				return -1
			}
			j = e - 1
		}
	}
	return -1
}

// unescape appends the decoded JSON string contents s to dst.
func unescape(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		if i >= len(s) {
			return dst, false
		}
		switch s[i] {
		case '"', '\\', '/':
			dst = append(dst, s[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s[i+1:])
			if !ok {
				return dst, false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					r2, ok = hex4(s[i+3:])
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, false
		}
	}
	return dst, true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}
