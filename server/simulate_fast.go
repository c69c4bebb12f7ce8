package server

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/ratelab/ratelab/algorithms"
)

// The fast reader of a simulate request.
//
// A million arrivals through encoding/json's Decoder, one Decode each,
// cost about 30 times algorithms.Simulate on them and 4 allocations an
// arrival (BenchmarkSimulateAPI). fastDecode reads the common request
// instead: one JSON object whose arrivals are objects of the members
// at, key, cost, tier, method and path, spelled so, each at most once,
// with numbers for at and cost and strings without escapes for the
// rest. It scans the bytes as they stream in, keeping them, and its
// strings are views of those bytes (see view), so an arrival costs no
// allocation. Anything else (a syntax error, an unknown or repeated member, a
// null, an escape, a member over its bound, too many arrivals, a
// problem with a time) makes it give up, and decodeSimulate reads the
// same bytes again, then the rest of the body, with encoding/json: every
// answer to a request that is not plain is the one that reader gives,
// byte for byte, and fastDecode only needs to agree with it on the
// requests it accepts. (A JSON library would do the scanning, but none
// reports which members were present without a pointer, that is an
// allocation, per member, nor hands out strings without copying them.)
type fastBody struct {
	r   io.Reader
	buf []byte // every byte read so far
	pos int    // next byte to scan
	eof bool   // r has nothing more, or failed
	err error  // the read error other than io.EOF, if any
	// refused is a charge that failed: the answer, which the reader of
	// encoding/json would give at the same arrival.
	refused error
}

// readChunk is how much fastBody asks r for at a time: small, so it reads
// little past an arrival that ends the read (over the cap, or the last of
// too many without a time).
const readChunk = 16 << 10

// bodyBuffers keeps the buffers of read bodies for the next request.
var bodyBuffers = sync.Pool{New: func() any { return new([]byte) }}

// ensure reads until n bytes past pos are buffered, or the body ends.
func (f *fastBody) ensure(n int) {
	for !f.eof && len(f.buf)-f.pos < n {
		if cap(f.buf)-len(f.buf) < readChunk {
			f.buf = slices.Grow(f.buf, readChunk)
		}
		m, err := f.r.Read(f.buf[len(f.buf) : len(f.buf)+readChunk])
		f.buf = f.buf[:len(f.buf)+m]
		if err != nil {
			f.eof = true
			if err != io.EOF {
				f.err = err
			}
		}
	}
}

// ws skips whitespace and returns the next byte, 0 at the end of what is
// buffered.
func (f *fastBody) ws() byte {
	for f.pos < len(f.buf) {
		switch c := f.buf[f.pos]; c {
		case ' ', '\t', '\n', '\r':
			f.pos++
		default:
			return c
		}
	}
	return 0
}

// str reads a string without escapes or control characters and returns
// its bytes, which alias the buffer; ok is false for anything else.
func (f *fastBody) str() (s []byte, ok bool) {
	if f.ws() != '"' {
		return nil, false
	}
	start, high := f.pos+1, false
	for i := start; i < len(f.buf); i++ {
		c := f.buf[i]
		switch {
		case c == '"':
			f.pos = i + 1
			s = f.buf[start:i]
			return s, !high || utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			high = true
		}
	}
	return nil, false
}

// number reads a JSON number and returns its text, aliasing the buffer;
// integer reports that it has no fraction or exponent.
func (f *fastBody) number() (text string, integer, ok bool) {
	f.ws()
	b, i := f.buf, f.pos
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return "", false, false
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return "", false, false
		}
		integer = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return "", false, false
		}
		integer = false
	}
	if i == len(b) {
		return "", false, false // the number may go on past the buffer
	}
	text = unsafe.String(&b[f.pos], i-f.pos)
	f.pos = i
	return text, integer, true
}

// skip passes over one JSON value of at most bound bytes and returns it,
// aliasing the buffer; the value is checked only by whoever decodes it.
// It reads on only as far as the value goes.
func (f *fastBody) skip(bound int) ([]byte, bool) {
	f.ensure(1)
	f.ws()
	start, depth := f.pos, 0
	at := func(i int) (byte, bool) {
		if i >= len(f.buf) {
			f.ensure(i - f.pos + 1)
		}
		if i >= len(f.buf) || i-start >= bound {
			return 0, false
		}
		return f.buf[i], true
	}
	for i := start; ; i++ {
		c, ok := at(i)
		if !ok {
			return nil, false
		}
		switch c {
		case '"':
			for i++; ; i++ {
				c, ok := at(i)
				if !ok {
					return nil, false
				}
				if c == '"' {
					break
				}
				if c == '\\' {
					i++
				}
			}
			if depth == 0 {
				f.pos = i + 1
				return f.buf[start:f.pos], true
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 && i > start { // the end of a number or literal
				f.pos = i
				return f.buf[start:i], true
			}
			if depth--; depth < 0 {
				return nil, false
			}
			if depth == 0 {
				f.pos = i + 1
				return f.buf[start:f.pos], true
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 { // the end of a number or literal
				if i == start {
					return nil, false
				}
				f.pos = i
				return f.buf[start:i], true
			}
		}
	}
}

// view is b, a part of the body buffer, as a string without a copy. A
// request's strings alias the buffer, which the request holds until its
// answer is written (SimulateRequest.release); nothing keeps them longer.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// fastDecode reads the body of r as decodeSimulate would, if it is plain
// (see fastBody): it returns the request, or the refusal of a charge. If
// not, ok is false and f holds every byte read, for encoding/json to read
// again. The caller releases f when done with its bytes.
func fastDecode(r io.Reader, maxArrivals int, contentLength int64, charge func(int) error) (req *SimulateRequest, f *fastBody, ok bool) {
	f = &fastBody{r: r, buf: (*bodyBuffers.Get().(*[]byte))[:0]}
	if contentLength > 0 && contentLength <= simulateBodyLimit {
		f.buf = slices.Grow(f.buf, int(contentLength)+readChunk) // one buffer, never copied to grow
	}
	req = &SimulateRequest{}
	if !f.object(req, maxArrivals, contentLength, charge) {
		arrivalBuffers.put(req.arrivals)
		return nil, f, f.refused != nil
	}
	return req, f, true
}

// release gives f's buffer back for another request.
func (f *fastBody) release() {
	b := f.buf[:0]
	f.buf = nil
	bodyBuffers.Put(&b)
}

// maxSeconds is the latest time of an arrival, in seconds.
var maxSeconds = algorithms.MaxWindow.Seconds()

// object reads the whole body: one object, then only whitespace.
func (f *fastBody) object(req *SimulateRequest, maxArrivals int, contentLength int64, charge func(int) error) bool {
	f.ensure(1 << 10)
	if f.ws() != '{' {
		return false
	}
	f.pos++
	var seen uint16
	for first := true; ; first = false {
		f.ensure(2 << 10)
		c := f.ws()
		if c == '}' {
			f.pos++
			break
		}
		if !first {
			if c != ',' {
				return false
			}
			f.pos++
		}
		name, ok := f.str()
		if !ok || len(name) > 1<<10 {
			return false
		}
		if f.ws() != ':' {
			return false
		}
		f.pos++
		var dst any
		bit, bound := uint16(0), memberLimit
		switch string(name) {
		case "arrivals":
			if seen&1 != 0 || !f.arrivals(req, maxArrivals, contentLength, charge) {
				return false
			}
			seen |= 1
			continue
		case "limiter":
			dst, bit = &req.Limiter, 1<<1
		case "policy":
			dst, bit, bound = &req.Policy, 1<<2, policyBodyLimit
		case "pattern":
			dst, bit = &req.Pattern, 1<<3
		case "mix":
			dst, bit = &req.Mix, 1<<4
		case "replicas":
			dst, bit = &req.Replicas, 1<<5
		case "window":
			dst, bit = &req.Window, 1<<6
		case "bin":
			dst, bit = &req.Bin, 1<<7
		case "seed":
			dst, bit = &req.Seed, 1<<8
		case "decisions":
			dst, bit = &req.Decisions, 1<<9
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		v, ok := f.skip(bound)
		if !ok {
			return false
		}
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.DisallowUnknownFields()
		if dec.Decode(dst) != nil || dec.InputOffset() != int64(len(v)) {
			return false
		}
	}
	for {
		f.ensure(1)
		if f.ws() != 0 {
			return false
		}
		if f.pos == len(f.buf) && f.eof {
			return f.err == nil
		}
	}
}

// Members of an arrival, as bits of a set.
const (
	hasAt = 1 << iota
	hasKey
	hasCost
	hasTier
	hasMethod
	hasPath
)

// arrivals reads the arrivals array, charging as decodeArrivals does.
func (f *fastBody) arrivals(req *SimulateRequest, maxArrivals int, contentLength int64, charge func(int) error) bool {
	f.ensure(1)
	switch f.ws() {
	case 'n':
		f.ensure(5)
		if !bytes.HasPrefix(f.buf[f.pos:], []byte("null")) {
			return false
		}
		f.pos += 4
		return true // as if absent
	case '[':
		f.pos++
	default:
		return false
	}
	req.hasArrivals = true
	req.arrivals = arrivalBuffers.get()
	var routes routeSlab
	var last string // the key of the arrival before
	for i := 0; ; i++ {
		f.ensure(arrivalLimit)
		c := f.ws()
		if c == ']' {
			f.pos++
			break
		}
		if i > 0 {
			if c != ',' {
				return false
			}
			f.pos++
		}
		if i == maxArrivals {
			return false
		}
		if i%chargeEvery == chargeEvery-1 {
			if f.refused = charge(i + 1); f.refused != nil {
				return false
			}
		}
		if i == chargeEvery && contentLength > 0 {
			// Room for the rest at the bytes per arrival so far.
			n := min(int(contentLength/max(int64(f.pos)/int64(i), 1))+chargeEvery, maxArrivals)
			if cap(req.arrivals) < n {
				req.arrivals = append(make([]arrivalIn, 0, n), req.arrivals...)
			}
		}
		start := f.pos
		a, ok := f.arrival(&routes, last)
		if !ok || f.pos-start > arrivalLimit || !a.hasAt || secondsIn("", a.at, 0, maxSeconds) != nil {
			return false
		}
		req.arrivals = append(req.arrivals, a)
		last = a.key
	}
	f.refused = charge(len(req.arrivals))
	return f.refused == nil
}

// arrival reads one arrival object. Its strings alias the buffer (view),
// except a key spelled as last, the key before, which is last itself: a
// limiter knows the key it has just seen by its string's address.
func (f *fastBody) arrival(routes *routeSlab, last string) (a arrivalIn, ok bool) {
	if f.ws() != '{' {
		return a, false
	}
	f.pos++
	var seen uint8
	var tier, method, path string
	for first := true; ; first = false {
		c := f.ws()
		if c == '}' {
			f.pos++
			a.route = routes.route(tier, method, path)
			return a, true
		}
		if !first {
			if c != ',' {
				return a, false
			}
			f.pos++
		}
		name, ok := f.str()
		if !ok || f.ws() != ':' {
			return a, false
		}
		f.pos++
		var bit uint8
		var dst *string
		switch string(name) {
		case "at":
			v, ok := f.seconds()
			if !ok {
				return a, false
			}
			a.at, a.hasAt, bit = v, true, hasAt
		case "cost":
			text, integer, ok := f.number()
			if !ok || !integer {
				return a, false
			}
			v, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				return a, false
			}
			a.cost, a.hasCost, bit = v, true, hasCost
		case "key":
			dst, bit = &a.key, hasKey
		case "tier":
			dst, bit = &tier, hasTier
		case "method":
			dst, bit = &method, hasMethod
		case "path":
			dst, bit = &path, hasPath
		default:
			return a, false
		}
		if seen&bit != 0 {
			return a, false
		}
		seen |= bit
		if dst != nil {
			s, ok := f.str()
			if !ok {
				return a, false
			}
			if *dst = view(s); bit == hasKey && *dst == last {
				*dst = last
			}
		}
	}
}

// seconds reads a number, a time, as number and parseNumber do. The common
// time, digits with a point and no exponent that make an integer below
// 2^53, is read in one pass, its value taken as parseNumber takes it;
// anything else goes through number and parseNumber.
func (f *fastBody) seconds() (float64, bool) {
	f.ws()
	b, i := f.buf, f.pos
	var m uint64
	whole := 0
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		m = m*10 + uint64(b[i]-'0')
		whole++
	}
	frac := 0
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i]-'0' <= 9; i++ {
			m = m*10 + uint64(b[i]-'0')
			frac++
		}
		if frac == 0 {
			whole = 0 // "1." is not a number: number says so
		}
	}
	if whole == 0 || whole > 1 && b[f.pos] == '0' || whole+frac > 19 || m >= 1<<53 || frac >= len(exactPow10) ||
		i == len(b) || b[i] == 'e' || b[i] == 'E' {
		text, _, ok := f.number()
		if !ok {
			return 0, false
		}
		v, err := parseNumber(text)
		return v, err == nil
	}
	f.pos = i
	return float64(m) / exactPow10[frac], true
}

// exactPow10 are the powers of ten a float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseNumber reads a JSON number as strconv.ParseFloat does, faster for
// the common time: digits with at most one point and no exponent. When
// the digits without the point make an integer m below 2^53 and k of them
// follow the point (k ≤ 22), m and 10^k are exact float64s and their
// quotient, rounded once by the division, is the float nearest the
// decimal, which is ParseFloat's answer. Anything else is ParseFloat's.
func parseNumber(text string) (float64, error) {
	i, neg := 0, false
	if i < len(text) && text[i] == '-' {
		i, neg = 1, true
	}
	var m uint64
	digits, frac, point := 0, 0, false
	for ; i < len(text); i++ {
		c := text[i]
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			return strconv.ParseFloat(text, 64)
		}
	}
	if digits == 0 || digits > 19 || m >= 1<<53 || frac >= len(exactPow10) {
		return strconv.ParseFloat(text, 64)
	}
	f := float64(m) / exactPow10[frac]
	if neg {
		f = -f
	}
	return f, nil
}
