package server

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/static"
)

// securityPolicy is the set of security headers a response carries,
// formatted once. Every response gets defaultSecurityPolicy; a route family
// that must differ (the embeddable charts under /embed/ will allow framing:
// newSecurityPolicy("https:") or a list of documentation origins) gets its
// own policy in securityPolicyFor, and nothing else changes.
type securityPolicy struct {
	csp          string // Content-Security-Policy
	frameOptions string // X-Frame-Options, or "" to leave it out
}

// cspDirectives are the Content-Security-Policy directives shared by every
// policy. Pages load scripts, styles, fonts and data only from this origin,
// and no inline script or style: chart options travel as JSON data and one
// static script initialises them. Images may also be data: URLs (chart
// downloads).
var cspDirectives = []string{
	"default-src 'self'",
	"script-src 'self'",
	"style-src 'self'",
	"img-src 'self' data:",
	"connect-src 'self'",
	"font-src 'self'",
	"object-src 'none'",
	"base-uri 'self'",
	"form-action 'self'",
}

// permissionsPolicy turns off powerful browser features ratelab never uses.
// Only features every current browser knows are listed, so none logs an
// "unrecognized feature" error to the console.
const permissionsPolicy = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"

// newSecurityPolicy returns the policy whose CSP frame-ancestors source
// list is frameAncestors: who may frame the page. "'none'" also sends
// X-Frame-Options: DENY for browsers that predate CSP 2; any other list
// leaves X-Frame-Options out, since it cannot express one.
func newSecurityPolicy(frameAncestors string) securityPolicy {
	p := securityPolicy{csp: strings.Join(cspDirectives, "; ") + "; frame-ancestors " + frameAncestors}
	if frameAncestors == "'none'" {
		p.frameOptions = "DENY"
	}
	return p
}

// defaultSecurityPolicy applies to every route: nothing may frame ratelab.
var defaultSecurityPolicy = newSecurityPolicy("'none'")

// embedSecurityPolicy applies to /embed/: any site may frame an embed
// (API documentation lives anywhere); scripts, styles and data still come
// only from ratelab.
var embedSecurityPolicy = newSecurityPolicy("*")

// securityPolicyFor returns the policy of a request path. It is the one
// place to give a route family a different policy.
func securityPolicyFor(path string) securityPolicy {
	if strings.HasPrefix(path, "/embed/") {
		return embedSecurityPolicy
	}
	return defaultSecurityPolicy
}

// securityHeaders sets the security headers of every response before the
// handler runs, so errors, redirects and 429s carry them too.
func securityHeaders() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p := securityPolicyFor(c.Request().URL.Path)
			h := c.Response().Header()
			h.Set("Content-Security-Policy", p.csp)
			if p.frameOptions != "" {
				h.Set(echo.HeaderXFrameOptions, p.frameOptions)
			}
			h.Set(echo.HeaderXContentTypeOptions, "nosniff")
			h.Set(echo.HeaderReferrerPolicy, "no-referrer")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			h.Set("Permissions-Policy", permissionsPolicy)
			return next(c)
		}
	}
}

// Cache lifetimes of static assets. A URL with the asset's current version
// (static.Path adds it as ?v=) never changes content, so browsers may keep
// it for a year without asking again; any other URL of an asset (no
// version, an old one) is cached briefly and revalidated with its ETag.
const (
	staticImmutableCacheControl = "public, max-age=31536000, immutable"
	staticCacheControl          = "public, max-age=300"
)

// staticCache sets Cache-Control and a weak ETag (the content hash) on
// /static/* responses; errorHandler removes Cache-Control from errors. The
// ETag is weak because the same asset may be sent in brotli, gzip or
// identity coding.
func staticCache() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set(echo.HeaderCacheControl, staticCacheControl)
			if v, ok := assetVersion(c.Param("*")); ok {
				h.Set("ETag", `W/"`+v+`"`)
				if c.QueryParam("v") == v {
					h.Set(echo.HeaderCacheControl, staticImmutableCacheControl)
				}
			}
			return next(c)
		}
	}
}

// precompressed serves an embedded text asset compressed: its brotli bytes
// (static.Brotli: made at build time for the vendored scripts, once per
// process for the small assets) to a client that accepts br, else its gzip
// bytes, compressed once for the life of the process (static.Gzip), to a
// client that accepts gzip; anything else falls through to the plain file
// handler, whose response compress encodes like any other, and so do range
// requests (their offsets mean the plain bytes to most
// clients; compress leaves them alone). compress has already set
// Vary: Accept-Encoding, and leaves an encoded response alone.
// Conditional requests work as for the plain file: http.ServeContent
// answers them with the ETag staticCache has set.
func precompressed() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			name := c.Param("*")
			ct := mime.TypeByExtension(path.Ext(name))
			ae := req.Header.Get(echo.HeaderAcceptEncoding)
			if req.Header.Get("Range") != "" || !compressible(ct) || !fs.ValidPath(name) {
				return next(c)
			}
			coding, b, ok := "br", []byte(nil), false
			if acceptsCoding(ae, "br") {
				b, ok = static.Brotli(name)
			}
			if !ok && acceptsGzip(ae) {
				coding = "gzip"
				b, ok = static.Gzip(name)
			}
			if !ok {
				return next(c)
			}
			h := c.Response().Header()
			h.Set(echo.HeaderContentType, ct)
			h.Set(echo.HeaderContentEncoding, coding)
			http.ServeContent(c.Response(), req, name, time.Time{}, bytes.NewReader(b))
			return nil
		}
	}
}

// assetVersion returns the version static.Path puts into the URL of the
// embedded file name, and false when name is not an embedded file.
func assetVersion(name string) (string, bool) {
	if !fs.ValidPath(name) {
		return "", false
	}
	fi, err := fs.Stat(static.FS, name)
	if err != nil || fi.IsDir() {
		return "", false
	}
	_, v, ok := strings.Cut(static.Path(name), "?v=")
	return v, ok
}

// Request body caps. The API's own handlers cap their bodies tighter
// (64 KiB for the calculator, 64 MiB for a simulation of a million
// arrivals at about 45 bytes each); these caps stop anything larger before
// a handler reads it. Pages take GET forms and need almost nothing.
const (
	defaultAPIBodyLimit = 64 << 20
	pageBodyLimit       = 1 << 20
)

// bodyLimit caps request bodies: apiLimit bytes under /api/ (0 means
// defaultAPIBodyLimit), pageBodyLimit elsewhere. A declared Content-Length
// over the cap is refused at once with 413; a body that turns out longer
// while it is read fails the read with *http.MaxBytesError, which
// decodeJSON turns into the same 413.
func bodyLimit(apiLimit int64) echo.MiddlewareFunc {
	if apiLimit <= 0 {
		apiLimit = defaultAPIBodyLimit
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			limit := int64(pageBodyLimit)
			switch {
			case isAPI(req.URL.Path):
				limit = apiLimit
			case isLogUpload(req):
				return next(c) // the measure handler caps its own body
			}
			if req.ContentLength > limit {
				return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
					fmt.Sprintf("the request body is larger than %d bytes", limit))
			}
			if req.Body != nil && req.Body != http.NoBody {
				req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
			}
			return next(c)
		}
	}
}

// isAPI reports whether path belongs to the JSON API.
func isAPI(path string) bool {
	return strings.HasPrefix(path, "/api/")
}

// ipExtractor returns how the server finds a client's IP address, for
// c.RealIP, the request log and the API's rate limit.
//
// With no trusted proxies it is the connection's remote address, and
// X-Forwarded-For and X-Real-IP are ignored: any client can send those
// headers, so trusting them by default would let every request claim a new
// address and walk around the rate limit (or pin the limit on someone
// else). Behind a proxy, list its addresses: then the client is the
// rightmost X-Forwarded-For entry that is not a trusted proxy, the entry the
// nearest untrusted hop wrote, which a client cannot forge.
func ipExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		opts = append(opts, echo.TrustIPRange(prefixIPNet(p)))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// prefixIPNet converts p for echo's trust options.
func prefixIPNet(p netip.Prefix) *net.IPNet {
	a := p.Addr()
	return &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(p.Bits(), a.BitLen())}
}

// parseTrustedProxies parses a comma-separated list of CIDR prefixes or
// single addresses ("10.0.0.0/8, 192.0.2.7").
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: want an address or a CIDR prefix such as 10.0.0.0/8", f)
			}
			if p.Addr().Is4In6() && p.Bits() >= 96 {
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: want an address or a CIDR prefix such as 10.0.0.0/8", f)
		}
		a = a.Unmap().WithZone("")
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// compressible reports whether a response of media type ct is worth
// compressing: text, JSON, JavaScript, SVG, XML and YAML; not images, fonts or
// archives, which are compressed already.
func compressible(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"):
		return true
	case strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/javascript", "application/xml", "application/yaml",
		"application/x-yaml", "image/svg+xml", "application/wasm":
		return true
	}
	return false
}

// minCompressLength is the smallest declared body, in bytes, worth
// compressing; below it a coding's framing (gzip's 18-byte header and
// trailer) outweighs the savings.
const minCompressLength = 512

// minGzipLength is minCompressLength for a handler that gzips its body
// itself (cacheable).
const minGzipLength = minCompressLength

// brotliQuality is the brotli quality (0 to 11) of dynamic responses, and
// brotliWindow the base-2 logarithm of its window size in bytes.
// BenchmarkCompressPage on the designer page (353,504 bytes of HTML, one
// Xeon core, pooled encoders) measured per page:
//
//	gzip, default level   35,369 bytes   4.6 ms
//	brotli quality 4      30,784 bytes   4.4 ms   (13 % smaller)
//	brotli quality 5      27,541 bytes   5.7 ms   (22 % smaller)
//	brotli quality 6      27,287 bytes   6.4 ms   (23 % smaller)
//
// Quality 5 sends a fifth fewer bytes than gzip for about a quarter more
// CPU; it is the lowest quality that keeps a first visit to / within its
// 200,000-byte budget (4 leaves it about 600 bytes over), and 6 saves only
// 1 % more for 12 % more time. A 1 MiB window (20) gives the page the same
// bytes as the default 4 MiB one, and a pooled encoder then holds about
// 5 MB instead of 11 MB.
//
// A live update (an htmx request, which the reader waits on as they type)
// is compressed at brotliLiveQuality instead: on the designer's results
// fragment (215 KB) quality 3 takes 2.7 ms and sends 23.4 KB, quality 5
// 5.3 ms and 19.9 KB, gzip 4.3 ms and 24.2 KB. The 2.6 ms saved outweigh
// the 3.5 KB more on any link faster than about 11 Mbit/s. Its window is
// 256 KiB (18), which holds the whole fragment: each response's encoder
// initialises a ring buffer of the window's size, and 1 MiB of it per
// keystroke was a megabyte of garbage and a millisecond of the update.
const (
	brotliQuality     = 5
	brotliLiveQuality = 3
	brotliWindow      = 20
	brotliLiveWindow  = 18
)

// encoder is a streaming compressor of one response body: Write
// compresses, Flush sends what has been written so far, Close ends the
// stream, Reset starts a new one on another writer.
type encoder interface {
	io.WriteCloser
	Flush() error
	Reset(io.Writer)
}

// contentCoding is a coding compress can apply: its Content-Encoding token
// and a pool of its encoders, reused across responses.
type contentCoding struct {
	name     string
	encoders *sync.Pool
}

var (
	gzipCoding = &contentCoding{name: "gzip", encoders: &sync.Pool{New: func() any {
		return gzip.NewWriter(io.Discard)
	}}}
	brotliCoding     = newBrotliCoding(brotliQuality, brotliWindow)
	brotliLiveCoding = newBrotliCoding(brotliLiveQuality, brotliLiveWindow)
)

func newBrotliCoding(quality, window int) *contentCoding {
	return &contentCoding{name: "br", encoders: &sync.Pool{New: func() any {
		return brotli.NewWriterOptions(io.Discard, brotli.WriterOptions{Quality: quality, LGWin: window})
	}}}
}

// compress compresses responses whose Content-Type is compressible, with
// the coding negotiateCoding picks from the request's Accept-Encoding
// (brotli or gzip; brotli faster for htmx's live updates, see
// brotliLiveQuality), and marks every response Vary: Accept-Encoding.
// It decides when the status is written, from the headers set by then, and
// leaves alone HEAD requests, statuses without a body (1xx, 204, 304),
// range responses (206, and any response with Content-Range, since its
// byte offsets count the uncompressed body), responses that already have a
// Content-Encoding and short ones with a known length (under
// minCompressLength). A handler that returns an error without writing gets
// the plain writer back, so the error handler answers uncompressed.
func compress() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			res := c.Response()
			res.Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
			req := c.Request()
			if req.Method == http.MethodHead {
				return next(c)
			}
			coding := negotiateCoding(req.Header.Get(echo.HeaderAcceptEncoding))
			if coding == nil {
				return next(c)
			}
			if coding == brotliCoding && req.Header.Get("HX-Request") == "true" {
				coding = brotliLiveCoding
			}
			w := &compressResponseWriter{ResponseWriter: res.Writer, coding: coding}
			res.Writer = w
			err := next(c)
			res.Writer = w.ResponseWriter
			if cerr := w.close(); cerr != nil && err == nil {
				err = cerr
			}
			return err
		}
	}
}

// negotiateCoding returns the coding of a response to a request with
// Accept-Encoding ae, or nil for identity: brotli when ae admits it, unless
// ae gives gzip a strictly higher q; else gzip when ae admits it. Brotli
// wins ties: its bodies are about a fifth smaller (see brotliQuality).
func negotiateCoding(ae string) *contentCoding {
	br, gz := codingQ(ae, "br"), codingQ(ae, "gzip", "x-gzip")
	switch {
	case br > 0 && br >= gz:
		return brotliCoding
	case gz > 0:
		return gzipCoding
	}
	return nil
}

// acceptsGzip reports whether an Accept-Encoding value admits gzip: listed
// (or "*") without q=0.
func acceptsGzip(ae string) bool { return acceptsCoding(ae, "gzip", "x-gzip") }

// acceptsCoding reports whether an Accept-Encoding value admits a content
// coding known by any of names: its codingQ is above 0.
func acceptsCoding(ae string, names ...string) bool { return codingQ(ae, names...) > 0 }

// codingQ returns the quality value (0 to 1) an Accept-Encoding value gives
// a content coding known by any of names: the q of the first entry naming
// it (or "*"), 1 when that entry has none, and 0 when no entry names it.
func codingQ(ae string, names ...string) float64 {
	for part := range strings.SplitSeq(ae, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "*" && !slices.Contains(names, coding) {
			continue
		}
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		return q
	}
	return 0
}

// compressResponseWriter compresses the body with its coding once
// WriteHeader has decided to.
type compressResponseWriter struct {
	http.ResponseWriter
	coding  *contentCoding
	decided bool
	enc     encoder // nil unless compressing
}

func (w *compressResponseWriter) WriteHeader(code int) {
	if !w.decided {
		w.decided = true
		if w.shouldCompress(code) {
			h := w.Header()
			h.Del(echo.HeaderContentLength)
			h.Set(echo.HeaderContentEncoding, w.coding.name)
			w.enc = w.coding.encoders.Get().(encoder)
			w.enc.Reset(w.ResponseWriter)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *compressResponseWriter) shouldCompress(code int) bool {
	h := w.Header()
	switch {
	case code < 200, code == http.StatusNoContent, code == http.StatusNotModified, code == http.StatusPartialContent:
		return false
	case h.Get(echo.HeaderContentEncoding) != "", h.Get("Content-Range") != "":
		return false
	case !compressible(h.Get(echo.HeaderContentType)):
		return false
	}
	if cl := h.Get(echo.HeaderContentLength); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n < minCompressLength {
			return false
		}
	}
	return true
}

func (w *compressResponseWriter) Write(b []byte) (int, error) {
	if !w.decided {
		if w.Header().Get(echo.HeaderContentType) == "" {
			w.Header().Set(echo.HeaderContentType, http.DetectContentType(b))
		}
		w.WriteHeader(http.StatusOK)
	}
	if w.enc != nil {
		return w.enc.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends what is compressed so far, for streamed responses.
func (w *compressResponseWriter) Flush() {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.enc != nil {
		_ = w.enc.Flush()
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *compressResponseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// close ends the compressed stream, if any, and returns the encoder to its
// pool.
func (w *compressResponseWriter) close() error {
	if w.enc == nil {
		return nil
	}
	err := w.enc.Close()
	w.enc.Reset(io.Discard)
	w.coding.encoders.Put(w.enc)
	w.enc = nil
	return err
}
