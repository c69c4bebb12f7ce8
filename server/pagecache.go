package server

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
)

// defaultPageCache bounds the cache of rendered designs: 64 MiB holds a
// few thousand embeds (an SVG is 20–60 KB) or a few hundred designer
// pages.
const defaultPageCache = 64 << 20

// pageEntryOverhead is what an entry costs beyond its key and body: the
// list element, the map slot and the header fields, roughly.
const pageEntryOverhead = 256

// rendered is one cached render: the body and its media type, the
// header a designer page for htmx adds (HX-Push-Url), if any, and the
// body's compressed forms made so far (see serveRendered), so that a hit
// sends bytes already compressed instead of compressing them again.
type rendered struct {
	contentType string
	body        []byte
	pushURL     string
	// etag is the identity body's strong ETag (quoted), "" until
	// serveRendered has made it.
	etag string
	// encoded are the body in the content codings asked for so far,
	// at most one per coding name.
	encoded []encodedBody
}

// encodedBody is a rendered body in one content coding: its
// Content-Encoding token, the compressed bytes and their own strong ETag
// (quoted), a hash of these very bytes, so two compressions of one body at
// different brotli qualities never share a tag.
type encodedBody struct {
	coding string
	body   []byte
	etag   string
}

// size is what r costs the cache under key, in bytes: every body it
// holds, compressed ones included, plus the strings and pageEntryOverhead.
func (r rendered) size(key string) int64 {
	n := len(key) + len(r.body) + len(r.pushURL) + len(r.contentType) + len(r.etag)
	for _, e := range r.encoded {
		n += len(e.coding) + len(e.body) + len(e.etag)
	}
	return int64(n) + pageEntryOverhead
}

// encoding returns r's body in coding, if it has been made.
func (r rendered) encoding(coding string) (encodedBody, bool) {
	for _, e := range r.encoded {
		if e.coding == coding {
			return e, true
		}
	}
	return encodedBody{}, false
}

// withEncoding returns r with enc added (replacing one of the same
// coding). r's own slice is not changed: gets may hold it.
func (r rendered) withEncoding(enc encodedBody) rendered {
	out := make([]encodedBody, 0, len(r.encoded)+1)
	for _, e := range r.encoded {
		if e.coding != enc.coding {
			out = append(out, e)
		}
	}
	r.encoded = append(out, enc)
	return r
}

// pageCache keeps deterministic renders (embeds, SVGs, designer pages) by
// their canonical request, least recently used first out, within a bound
// on bytes: an embed in popular documentation is the same URL thousands of
// times, and its render costs most of a CPU-second. An entry larger than
// an eighth of the bound is not kept, so one design cannot empty the
// cache. A nil *pageCache keeps nothing. Safe for concurrent use.
type pageCache struct {
	max int64

	mu      sync.Mutex
	size    int64
	order   *list.List // of *pageEntry, most recently used first
	entries map[string]*list.Element
	hits    uint64
	misses  uint64
}

type pageEntry struct {
	key string
	r   rendered
}

// newPageCache returns a cache of at most max bytes; 0 means
// defaultPageCache, and a negative max returns nil (no cache).
func newPageCache(max int64) *pageCache {
	switch {
	case max < 0:
		return nil
	case max == 0:
		max = defaultPageCache
	}
	return &pageCache{max: max, order: list.New(), entries: map[string]*list.Element{}}
}

// get returns the render of key and marks it recently used.
func (pc *pageCache) get(key string) (rendered, bool) {
	if pc == nil {
		return rendered{}, false
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	el, ok := pc.entries[key]
	if !ok {
		pc.misses++
		return rendered{}, false
	}
	pc.hits++
	pc.order.MoveToFront(el)
	return el.Value.(*pageEntry).r, true
}

// put keeps r under key, dropping the least recently used entries until
// the cache is within its bound. The caller must not change r.body after.
func (pc *pageCache) put(key string, r rendered) {
	if pc == nil {
		return
	}
	n := r.size(key)
	if n > pc.max/8 {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if el, ok := pc.entries[key]; ok {
		e := el.Value.(*pageEntry)
		pc.size += n - e.r.size(key)
		e.r = r
		pc.order.MoveToFront(el)
	} else {
		pc.entries[key] = pc.order.PushFront(&pageEntry{key: key, r: r})
		pc.size += n
	}
	pc.evict()
}

// addEncoding adds enc to the entry of key, if the cache still holds the
// render whose identity ETag is etag (not one put since), and the entry
// with it is still within an eighth of the bound; the bound then holds as
// for put.
func (pc *pageCache) addEncoding(key, etag string, enc encodedBody) {
	if pc == nil {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	el, ok := pc.entries[key]
	if !ok {
		return
	}
	e := el.Value.(*pageEntry)
	if e.r.etag != etag {
		return
	}
	r := e.r.withEncoding(enc)
	n := r.size(key)
	if n > pc.max/8 {
		return
	}
	pc.size += n - e.r.size(key)
	e.r = r
	pc.evict()
}

// evict drops the least recently used entries until the cache is within
// its bound. pc.mu must be held.
func (pc *pageCache) evict() {
	for pc.size > pc.max {
		el := pc.order.Back()
		e := el.Value.(*pageEntry)
		pc.order.Remove(el)
		delete(pc.entries, e.key)
		pc.size -= e.r.size(e.key)
	}
}

// stats returns the entries, their bytes, and the hits and misses so far.
func (pc *pageCache) stats() (entries int, bytes int64, hits, misses uint64) {
	if pc == nil {
		return 0, 0, 0, 0
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return len(pc.entries), pc.size, pc.hits, pc.misses
}

// strongETag is the strong entity tag (quoted) of body: the first 128
// bits of its SHA-256, in hex.
func strongETag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// responseCoding is the content coding compress would give a response of
// r to req, or nil for identity: none for HEAD (compress leaves HEAD
// alone) and for bodies compress would not compress; brotliLiveCoding
// for htmx's requests.
func responseCoding(req *http.Request, r rendered) *contentCoding {
	if req.Method == http.MethodHead || len(r.body) < minCompressLength || !compressible(r.contentType) {
		return nil
	}
	coding := negotiateCoding(req.Header.Get(echo.HeaderAcceptEncoding))
	if coding == brotliCoding && req.Header.Get("HX-Request") == "true" {
		coding = brotliLiveCoding
	}
	return coding
}

// compressBody returns body in coding, compressed with one of coding's
// pooled encoders.
func compressBody(coding *contentCoding, body []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(body) / 4)
	enc := coding.encoders.Get().(encoder)
	enc.Reset(&buf)
	_, err := enc.Write(body)
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	enc.Reset(io.Discard)
	coding.encoders.Put(enc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", coding.name, err)
	}
	return buf.Bytes(), nil
}

// serveRendered answers with r (status 200), in the coding the request
// negotiates, as compress would have chosen it, with a strong ETag of the
// bytes sent, or 304 Not Modified when If-None-Match already names them.
// The compressed body is made at most once per coding while r is in pc
// under key: the first request in a coding compresses and adds it to the
// entry (addEncoding), later ones copy it. compress has set Vary:
// Accept-Encoding and leaves a response with a Content-Encoding alone.
// r.etag must be set (serveRendered's caller makes it with strongETag
// before putting r).
func serveRendered(c echo.Context, pc *pageCache, key string, r rendered) error {
	req := c.Request()
	h := c.Response().Header()
	if r.pushURL != "" {
		h.Set("HX-Push-Url", r.pushURL)
	}
	body, etag := r.body, r.etag
	if coding := responseCoding(req, r); coding != nil {
		enc, ok := r.encoding(coding.name)
		if !ok {
			b, err := compressBody(coding, r.body)
			if err != nil {
				return err
			}
			enc = encodedBody{coding: coding.name, body: b, etag: strongETag(b)}
			if key != "" {
				pc.addEncoding(key, r.etag, enc)
			}
		}
		h.Set(echo.HeaderContentEncoding, enc.coding)
		body, etag = enc.body, enc.etag
	}
	h.Set("ETag", etag)
	if inm := req.Header.Get("If-None-Match"); inm != "" && etagListed(inm, etag) {
		h.Del(echo.HeaderContentEncoding)
		return c.NoContent(http.StatusNotModified)
	}
	h.Set(echo.HeaderContentType, r.contentType)
	c.Response().WriteHeader(http.StatusOK)
	_, err := c.Response().Write(body)
	return err
}

// etagListed reports whether an If-None-Match value lists etag, or is
// "*": the weak comparison RFC 9110 asks of If-None-Match, so W/ prefixes
// are ignored.
func etagListed(inm, etag string) bool {
	etag = strings.TrimPrefix(etag, "W/")
	for t := range strings.SplitSeq(inm, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}
