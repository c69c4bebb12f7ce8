package accesslog

import "bytes"

// IDSegment is what Pattern writes for a path segment that is an id.
const IDSegment = "{id}"

// Pattern appends to dst the endpoint pattern of a request target: the
// path without its query string or fragment (and without scheme and host
// when the target is an absolute URL), with every segment that looks like
// an id replaced by "{id}":
//
//	/v1/orders/123?expand=items → /v1/orders/{id}
//	/v1/users/6ba7b810-9dad-11d1-80b4-00c04fd430c8/keys → /v1/users/{id}/keys
//
// A segment is an id when it is
//   - digits, possibly with '-', '.', ':' or '_' between them (123, 2024-01-02);
//   - a UUID (8-4-4-4-12 hex digits);
//   - hex digits only, 16 or more, or 8 or more mixing digits and letters
//     (a hash, a short commit);
//   - an opaque token: 16 or more of letters, digits, '-', '_', '.', '~',
//     '+', '=' with at least one digit and one letter (cus_9s6XKzkNRiz8i3).
//
// Words without digits (orders, search, very-long-resource-name) are kept.
// Pattern allocates only when dst is too small.
func Pattern(dst, target []byte) []byte {
	if len(target) > 8 && (target[0]|0x20) == 'h' {
		for _, scheme := range []string{"http://", "https://"} {
			if len(target) > len(scheme) && hasPrefixFold(target, scheme) {
				rest := target[len(scheme):]
				if s := bytes.IndexByte(rest, '/'); s >= 0 {
					target = rest[s:]
				} else {
					target = []byte("/")
				}
				break
			}
		}
	}
	if len(target) == 0 || target[0] == '?' || target[0] == '#' {
		return append(dst, '/')
	}
	// One pass: each segment's bytes are classified as they are scanned
	// for the '/' that ends it (or the '?' or '#' that ends the path).
	// The classes seen are or-ed into one byte, a chain of one cycle per
	// byte; counting each class in an array instead chained a store and a
	// load per byte.
	for {
		var seen uint8
		i := 0
		for ; i < len(target); i++ {
			c := byteClass[target[i]]
			if c >= cSlash {
				break
			}
			seen |= c
		}
		seg := target[:i]
		if isID(seg, seen) {
			dst = append(dst, IDSegment...)
		} else {
			dst = append(dst, seg...)
		}
		if i == len(target) || byteClass[target[i]] == cEnd {
			return dst
		}
		dst = append(dst, '/')
		target = target[i+1:]
	}
}

// Byte classes of a path segment's bytes, one bit each, for isID; cSlash
// and cEnd, above them all, end a segment.
const (
	cDigit     = 1 << iota // 0-9
	cHexLetter             // a-f, A-F
	cLetter                // g-z, G-Z
	cSep                   // - . : _
	cOther                 // ~ + =
	cBad                   // anything else: not an id
	cSlash                 // '/'
	cEnd                   // '?' or '#'
)

var byteClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = cDigit
		case 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F':
			t[c] = cHexLetter
		case 'g' <= c && c <= 'z' || 'G' <= c && c <= 'Z':
			t[c] = cLetter
		case c == '-' || c == '.' || c == ':' || c == '_':
			t[c] = cSep
		case c == '~' || c == '+' || c == '=':
			t[c] = cOther
		case c == '/':
			t[c] = cSlash
		case c == '?' || c == '#':
			t[c] = cEnd
		default:
			t[c] = cBad
		}
	}
	return t
}()

// isID reports whether a path segment looks like an id (see Pattern);
// seen ors the classes of its bytes.
func isID(seg []byte, seen uint8) bool {
	size := len(seg)
	if size == 0 || seen&cBad != 0 {
		return false
	}
	digits := seen&cDigit != 0
	switch {
	case digits && seen&^(cDigit|cSep) == 0 && seg[0] != '.':
		// Digits and separators, fewer separators than digits: numbers,
		// dates, versions of digits.
		return seen&cSep == 0 || 2*countSeps(seg) < size
	case isUUID(seg, seen):
		return true
	case seen&^(cDigit|cHexLetter) == 0 && (size >= 16 || size >= 8 && digits && seen&cHexLetter != 0):
		return true // hex digits only
	case size >= 16 && digits && seen&(cHexLetter|cLetter) != 0:
		return true // an opaque token
	}
	return false
}

// countSeps counts the separators (- . : _) in seg.
func countSeps(seg []byte) int {
	n := 0
	for _, c := range seg {
		if byteClass[c] == cSep {
			n++
		}
	}
	return n
}

// isUUID reports whether seg, of the classes seen, is a UUID: 36 bytes,
// 8-4-4-4-12 hex digits between dashes.
func isUUID(seg []byte, seen uint8) bool {
	if len(seg) != 36 || seen&^(cDigit|cHexLetter|cSep) != 0 ||
		seg[8] != '-' || seg[13] != '-' || seg[18] != '-' || seg[23] != '-' {
		return false
	}
	return countSeps(seg) == 4
}

// hasPrefixFold reports whether b starts with the lower-case ASCII prefix,
// ignoring case.
func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}
