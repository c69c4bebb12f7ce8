package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	kgzip "github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"
	sjson "github.com/segmentio/encoding/json"

	"github.com/ratelab/ratelab/algorithms"
)

// Bounds on the members of a simulate request, read as it streams in: the
// arrivals may be up to the cap, each at most arrivalLimit bytes; the
// policy at most policyBodyLimit; any other member memberLimit.
const (
	arrivalLimit = 8 << 10
	memberLimit  = 64 << 10
)

// chargeEvery is how often, in arrivals, the decoder charges the request's
// budget while arrivals stream in, so a request that cannot pay for its
// size stops early.
const chargeEvery = 4096

// arrivalIn is an arrival as read: the JSON's fields without a pointer
// per number, so a million of them (the cap) stay compact while the body
// streams in: 48 bytes each, and 48 more for those that name a tier, a
// method or a path (only a policy's arrivals do).
type arrivalIn struct {
	at             float64
	cost           int64
	key            string
	route          *arrivalRoute // nil when tier, method and path are all empty
	hasAt, hasCost bool
}

// arrivalRoute is what an arrival says for a policy's tiers and
// endpoints.
type arrivalRoute struct{ tier, method, path string }

func (a *arrivalIn) tier() string {
	if a.route == nil {
		return ""
	}
	return a.route.tier
}

func (a *arrivalIn) method() string {
	if a.route == nil {
		return ""
	}
	return a.route.method
}

func (a *arrivalIn) path() string {
	if a.route == nil {
		return ""
	}
	return a.route.path
}

// routeSlab hands out arrivalRoutes from blocks of routeBlock, so a
// policy's million arrivals cost a thousand allocations, not a million.
type routeSlab struct{ free []arrivalRoute }

const routeBlock = 1024

// route returns tier, method and path as an arrival's route: nil when all
// are empty.
func (s *routeSlab) route(tier, method, path string) *arrivalRoute {
	if tier == "" && method == "" && path == "" {
		return nil
	}
	if len(s.free) == 0 {
		s.free = make([]arrivalRoute, routeBlock)
	}
	r := &s.free[0]
	s.free = s.free[1:]
	*r = arrivalRoute{tier: tier, method: method, path: path}
	return r
}

// budgetReader is the simulate body as the decoder reads it: it counts the
// bytes, stops a member that grows past its bound, and remembers the first
// read error, which says the client went away (or sent too much) rather
// than that its JSON is wrong.
type budgetReader struct {
	r      io.Reader
	n      int64
	stop   int64 // no reading past this offset; 0 means no bound
	member string
	bound  int64
	err    error
}

// memberTooLarge is a member of the body over its bound.
type memberTooLarge struct {
	member string
	bound  int64
}

func (e *memberTooLarge) Error() string {
	return fmt.Sprintf("%s: larger than %d bytes", e.member, e.bound)
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.stop > 0 {
		if b.n >= b.stop {
			return 0, &memberTooLarge{b.member, b.bound}
		}
		if int64(len(p)) > b.stop-b.n {
			p = p[:b.stop-b.n]
		}
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// bound lets member read at most bound more bytes of the body (beyond
// what the decoder has buffered already).
func (b *budgetReader) limit(member string, bound int64) {
	b.member, b.bound, b.stop = member, bound, b.n+bound
}

func (b *budgetReader) unlimit() { b.stop = 0 }

// bodyReadError is a request body that could not be read to its end: the
// client closed the connection, or reset it. errorHandler logs it as the
// client's doing (499), not the server's.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return "reading the request body: " + e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

// decodeSimulate reads a simulate request member by member, and its
// arrivals one at a time, so that nothing is held before it is counted
// (fastDecode reads a plain request; encoding/json any other): a
// body of more arrivals than maxArrivals stops at the first one past the
// cap, one of arrivals without a time after maxProblems of them, and one
// whose client cannot pay for its size (work.arrivals) at the charge that
// fails. It reads exactly one JSON object: no unknown members, no member
// twice, nothing after it.
func decodeSimulate(c echo.Context, maxArrivals int) (*SimulateRequest, error) {
	hreq := c.Request()
	if ct := hreq.Header.Get(echo.HeaderContentType); ct != "" && !strings.HasPrefix(ct, echo.MIMEApplicationJSON) {
		return nil, echo.NewHTTPError(http.StatusUnsupportedMediaType, "send the request body as application/json")
	}
	limited := http.MaxBytesReader(c.Response(), hreq.Body, simulateBodyLimit)
	if !fastDecoding {
		return decodeSimulateJSON(c, maxArrivals, limited)
	}
	plain, fast, ok := fastDecode(limited, maxArrivals, hreq.ContentLength, workOf(c).arrivals)
	switch {
	case ok && plain == nil:
		fast.release()
		return nil, fast.refused
	case ok:
		plain.body = fast // its strings alias fast's buffer: the request releases it
		return plain, nil
	}
	defer fast.release()
	// Not plain: encoding/json reads it all again, what fastDecode read
	// first, and gives its answer.
	return decodeSimulateJSON(c, maxArrivals, io.MultiReader(bytes.NewReader(fast.buf), limited))
}

// fastDecoding lets decodeSimulate try fastDecode first; tests turn it off
// to compare with encoding/json.
var fastDecoding = true

// decodeSimulateJSON is decodeSimulate's reader of any request, with
// encoding/json, from r (the body, capped).
func decodeSimulateJSON(c echo.Context, maxArrivals int, r io.Reader) (*SimulateRequest, error) {
	body := &budgetReader{r: r}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	fail := func(err error, prefix string) error {
		var (
			big *memberTooLarge
			mbe *http.MaxBytesError
			typ *json.UnmarshalTypeError
		)
		switch {
		case errors.As(err, &big):
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge, big.Error())
		case body.err != nil && !errors.As(body.err, &mbe):
			return &bodyReadError{body.err}
		case prefix != "" && errors.As(err, &typ):
			if typ.Field == "" {
				typ.Field = prefix
			} else {
				typ.Field = prefix + "." + typ.Field
			}
		}
		return jsonProblem(err, simulateBodyLimit)
	}

	var req SimulateRequest
	tok, err := dec.Token()
	if err != nil {
		return nil, fail(err, "")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, invalid("", "the body is a JSON %s; send an object such as {\"limiter\": {…}, \"arrivals\": […]}", tokenKind(tok))
	}
	seen := map[string]bool{}
	for dec.More() {
		body.limit("a member's name", 1<<10)
		tok, err := dec.Token()
		body.unlimit()
		if err != nil {
			return nil, fail(err, "")
		}
		name, _ := tok.(string)
		if seen[name] {
			return nil, invalid(name, "%s: sent twice; send each member once", name)
		}
		seen[name] = true
		var dst any
		bound := int64(memberLimit)
		switch name {
		case "arrivals":
			if err := req.decodeArrivals(c, dec, body, maxArrivals, fail); err != nil {
				return nil, err
			}
			continue
		case "limiter":
			dst = &req.Limiter
		case "policy":
			dst, bound = &req.Policy, policyBodyLimit
		case "pattern":
			dst = &req.Pattern
		case "mix":
			dst = &req.Mix
		case "replicas":
			dst = &req.Replicas
		case "window":
			dst = &req.Window
		case "bin":
			dst = &req.Bin
		case "seed":
			dst = &req.Seed
		case "decisions":
			dst = &req.Decisions
		default:
			return nil, invalid(name, "%s: unknown field", name)
		}
		body.limit(name, bound)
		err = dec.Decode(dst)
		body.unlimit()
		if err != nil {
			return nil, fail(err, name)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, fail(err, "")
	}
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			if f := fail(err, ""); !isInvalid(f) {
				return nil, f
			}
		}
		return nil, invalid("", "the body holds more than one JSON value")
	}
	return &req, nil
}

// isInvalid reports whether err is a 422.
func isInvalid(err error) bool {
	var inv *invalidRequest
	return errors.As(err, &inv)
}

// tokenKind names a JSON token's kind for a message.
func tokenKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "array"
		}
		return "object"
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// decodeArrivals reads the arrivals array one element at a time. Times
// are checked as they come, since both forms need one: the first
// maxProblems missing or out of range end the read.
func (req *SimulateRequest) decodeArrivals(c echo.Context, dec *json.Decoder, body *budgetReader, maxArrivals int,
	fail func(error, string) error) error {
	tok, err := dec.Token()
	if err != nil {
		return fail(err, "arrivals")
	}
	if tok == nil {
		return nil // null: as if absent
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return invalid("arrivals", "arrivals: got a JSON %s; want an array", tokenKind(tok))
	}
	req.hasArrivals = true
	req.arrivals = []arrivalIn{}
	var early []FieldProblem
	var routes routeSlab
	w := workOf(c)
	for dec.More() {
		i := len(req.arrivals)
		if i == maxArrivals {
			return invalid("arrivals", "arrivals: more than the cap of %d arrivals; send fewer, or a pattern", maxArrivals)
		}
		if i%chargeEvery == chargeEvery-1 {
			if err := w.arrivals(i + 1); err != nil {
				return err
			}
		}
		f := fmt.Sprintf("arrivals[%d]", i)
		var a ArrivalInput
		body.limit(f, arrivalLimit)
		err := dec.Decode(&a)
		body.unlimit()
		if err != nil {
			return fail(err, f)
		}
		in := arrivalIn{key: a.Key, route: routes.route(a.Tier, a.Method, a.Path)}
		if a.At != nil {
			in.at, in.hasAt = *a.At, true
		}
		if a.Cost != nil {
			in.cost, in.hasCost = *a.Cost, true
		}
		req.arrivals = append(req.arrivals, in)
		if p := atProblem(f, in); p != nil {
			if early = append(early, *p); len(early) == maxProblems {
				return &invalidRequest{early}
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return fail(err, "arrivals")
	}
	return w.arrivals(len(req.arrivals))
}

// atProblem is the problem with an arrival's time, if any.
func atProblem(f string, a arrivalIn) *FieldProblem {
	if !a.hasAt {
		return &FieldProblem{Field: f + ".at", Message: f + ".at: missing; want seconds since the start of the run"}
	}
	return secondsIn(f+".at", a.at, 0, algorithms.MaxWindow.Seconds())
}

// jsonStream writes one JSON object to the response member by member, and
// arrays element by element: each byte is appended once to a small
// buffer, which goes to the response (and its compressor) whenever it
// fills, so a response of a million decisions is never held whole. Once
// it has started the status is sent, so callers validate everything
// first. It stops at the first write error, or when the request's context
// ends.
//
// Members (written once) are encoded by encoding/json, elements of the
// arrays by segmentio/encoding's Append, which writes the same JSON (the
// shortest numbers, in encoding/json's format) into the buffer without an
// allocation: encoding/json's Encoder costs one an element (the value
// boxed in an interface) and about twice the time.
type jsonStream struct {
	c     echo.Context
	out   io.Writer   // the response, or coder
	coder streamCoder // nil unless the stream compresses (see newJSONStream)
	pool  *sync.Pool  // where coder came from
	buf   []byte
	first bool
	err   error
}

// streamChunk is how many bytes jsonStream gathers before a write.
const streamChunk = 32 << 10

// streamBuffers keeps jsonStream's buffers for the next response.
var streamBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 2*streamChunk); return &b }}

// bigAnswer is how many elements (decisions, arrivals) make an answer
// big enough, about 70 bytes each, for jsonStream to compress it itself.
const bigAnswer = 10_000

// fastGzip is the coding of a big answer: gzip at klauspost/compress's
// BestSpeed. A million decisions are about 75 MB of JSON; the compress
// middleware's brotli (quality 5) took 40 times as long as the simulation
// on them, its gzip 25 times, and this about 3 times for 35 % more bytes
// (BenchmarkSimulateAPI), which are still a tenth of the JSON.
var fastGzip = sync.Pool{New: func() any {
	w, _ := kgzip.NewWriterLevel(io.Discard, kgzip.BestSpeed)
	return w
}}

// fastBrotli is the coding of a big answer to a client that accepts
// brotli but not gzip: quality 0, the peer of gzip's BestSpeed (on 200 000
// decisions, 15 MB of JSON, about 1.1 times its time for 16 % more bytes;
// quality 1 took 1.7 times, the middleware's quality 5 over 20 times).
var fastBrotli = sync.Pool{New: func() any {
	return brotli.NewWriterOptions(io.Discard, brotli.WriterOptions{Quality: 0, LGWin: brotliWindow})
}}

// streamCoder is a compressor a big answer streams through.
type streamCoder interface {
	io.WriteCloser
	Reset(io.Writer)
}

// newJSONStream sends status 200 and opens the object. An answer of
// bigAnswer (or more) elements to a client that accepts gzip is gzipped
// here, fast (fastGzip), or, to one that accepts brotli but not gzip,
// compressed by brotli as fast (fastBrotli); the compress middleware
// leaves it alone.
// (zstd at klauspost/compress's SpeedFastest took about twice gzip's time
// on a million decisions, for 7 % fewer bytes, so big answers are not
// offered in it.)
func newJSONStream(c echo.Context, elements int) *jsonStream {
	s := &jsonStream{c: c, first: true, buf: (*streamBuffers.Get().(*[]byte))[:0], out: c.Response()}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	if ae := c.Request().Header.Get(echo.HeaderAcceptEncoding); elements >= bigAnswer {
		switch {
		case acceptsGzip(ae):
			h.Set(echo.HeaderContentEncoding, "gzip")
			s.pool = &fastGzip
		case acceptsCoding(ae, "br"):
			h.Set(echo.HeaderContentEncoding, "br")
			s.pool = &fastBrotli
		}
		if s.pool != nil {
			s.coder = s.pool.Get().(streamCoder)
			s.coder.Reset(c.Response())
			s.out = s.coder
		}
	}
	c.Response().WriteHeader(http.StatusOK)
	s.raw("{")
	return s
}

func (s *jsonStream) raw(text string) { s.buf = append(s.buf, text...) }

// flush writes the buffer once it holds streamChunk bytes, or with all
// true whatever it holds.
func (s *jsonStream) flush(all bool) {
	if s.err != nil || len(s.buf) == 0 || (!all && len(s.buf) < streamChunk) {
		return
	}
	_, s.err = s.out.Write(s.buf)
	s.buf = s.buf[:0]
}

// value writes v as JSON, as encoding/json without HTML escaping does.
func (s *jsonStream) value(v any) {
	if s.err != nil {
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if s.err = enc.Encode(v); s.err != nil {
		return
	}
	s.buf = append(s.buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
	s.flush(false)
}

// name starts member n, a name that needs no escape.
func (s *jsonStream) name(n string) {
	if !s.first {
		s.raw(",")
	}
	s.first = false
	s.raw(`"`)
	s.raw(n)
	s.raw(`":`)
}

// member writes one member.
func (s *jsonStream) member(n string, v any) {
	s.name(n)
	s.value(v)
}

// array writes member n as an array of count elements, element i being
// what item(i) points to (a value it may reuse, so nothing is allocated
// per element), checking the request's context every chargeEvery
// elements.
func array[T any](s *jsonStream, n string, count int, item func(i int) *T) {
	s.name(n)
	s.raw("[")
	ctx := s.c.Request().Context()
	for i := 0; i < count && s.err == nil; i++ {
		if i > 0 {
			s.raw(",")
		}
		if i%chargeEvery == 0 {
			if s.err = ctx.Err(); s.err != nil {
				break
			}
		}
		s.buf, s.err = appendElement(s.buf, item(i))
		s.flush(false)
	}
	s.raw("]")
}

// appendElement appends v as JSON, as encoding/json without HTML escaping
// writes it: decisions by hand (see Decision.appendJSON), the rest by
// segmentio/encoding; a variable so a test can compare with encoding/json
// itself.
var appendElement = func(b []byte, v any) ([]byte, error) {
	if d, ok := v.(*Decision); ok {
		return d.appendJSON(b)
	}
	return sjson.Append(b, v, 0)
}

// close ends the object and flushes; it returns the first error.
func (s *jsonStream) close() error {
	s.raw("}\n")
	s.flush(true)
	if s.coder != nil {
		if err := s.coder.Close(); s.err == nil {
			s.err = err
		}
		s.coder.Reset(io.Discard)
		s.pool.Put(s.coder)
		s.coder, s.pool = nil, nil
	}
	if cap(s.buf) <= 4*streamChunk {
		b := s.buf[:0]
		streamBuffers.Put(&b)
	}
	s.buf = nil
	return s.err
}
