// Package static owns the files the web server serves under /static/: the
// stylesheet, the vendored chart and htmx scripts and the one script that
// initialises the charts. Everything is embedded in the binary, so the
// server needs no files on disk and no CDN. The vendored scripts also come
// as brotli copies made at build time (br/, see vendor/VERSIONS.md); the
// small assets are brotli-compressed once when first asked for. The
// stylesheet is served without its comments and indentation (FS).
package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io"
	"io/fs"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
)

// FS holds the assets as served (see served): a file at css/app.css is
// served at /static/css/app.css.
var FS fs.FS = served{files}

// files holds the embedded assets as written.
//
//go:embed css img js vendor/*.js
var files embed.FS

var (
	hashesOnce sync.Once
	hashes     map[string]string // asset name → first 12 hex digits of its SHA-256
)

// Path returns the URL of the embedded asset name ("css/app.css") with a
// version taken from its content, "/static/css/app.css?v=1a2b3c4d5e6f", so
// pages can let browsers cache assets for a year: a changed file gets a new
// URL. It panics on a name that is not embedded, a programming error that
// any page test catches.
func Path(name string) string {
	hashesOnce.Do(func() {
		hashes = map[string]string{}
		err := fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(FS, p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			hashes[p] = hex.EncodeToString(sum[:])[:12]
			return nil
		})
		if err != nil {
			panic("static: " + err.Error())
		}
	})
	v, ok := hashes[name]
	if !ok {
		panic("static: no embedded asset " + name)
	}
	return "/static/" + name + "?v=" + v
}

// brotliFS holds the brotli copies of the vendored scripts, made by the
// build in vendor/echarts-build: br/vendor/htmx.min.js.<version>.br is
// vendor/htmx.min.js at the version static.Path gives it. They are not
// served as files of their own.
//
//go:embed br
var brotliFS embed.FS

// Brotli returns the embedded asset name compressed with brotli: the copy
// made at build time for a vendored script, else, for an asset of at most
// maxRuntimeBrotli bytes (the stylesheet and ratelab's own scripts), its
// compression at the best quality, made once on first use (a few
// milliseconds for a few kilobytes, a sixth smaller than gzip's best).
// It reports false for a name that is not embedded and for a larger asset
// without a current copy (one changed since its copy was made), so a
// caller falls back to Gzip and never sends stale bytes.
func Brotli(name string) ([]byte, bool) {
	if !fs.ValidPath(name) {
		return nil, false
	}
	info, err := fs.Stat(FS, name)
	if err != nil || info.IsDir() {
		return nil, false
	}
	_, v, _ := strings.Cut(Path(name), "?v=")
	if b, err := brotliFS.ReadFile("br/" + name + "." + v + ".br"); err == nil {
		return b, true
	}
	if info.Size() > maxRuntimeBrotli || strings.HasPrefix(name, "vendor/") {
		return nil, false
	}
	return brotlied.get(name, func(w io.Writer) io.WriteCloser { return brotli.NewWriterLevel(w, brotli.BestCompression) })
}

// maxRuntimeBrotli is the largest asset Brotli compresses itself, in
// bytes: best-quality brotli costs about 10 ms per 100 KB, so larger
// files (the vendored scripts) get their copies at build time.
const maxRuntimeBrotli = 64 << 10

// onceCache holds the assets compressed with one coding, each computed on
// first use: the assets never change while the binary runs.
type onceCache struct {
	sync.Mutex
	m map[string][]byte
}

var brotlied, gzipped onceCache

// get returns the embedded asset name compressed by the writer enc makes,
// computing it the first time; false when name is not embedded.
func (c *onceCache) get(name string, enc func(io.Writer) io.WriteCloser) ([]byte, bool) {
	c.Lock()
	defer c.Unlock()
	if b, ok := c.m[name]; ok {
		return b, true
	}
	raw, err := fs.ReadFile(FS, name)
	if err != nil {
		return nil, false
	}
	var buf bytes.Buffer
	w := enc(&buf)
	w.Write(raw) // a bytes.Buffer does not fail
	w.Close()
	if c.m == nil {
		c.m = map[string][]byte{}
	}
	c.m[name] = buf.Bytes()
	return buf.Bytes(), true
}

// Gzip returns the embedded asset name compressed with gzip at the best
// level, computed once: the assets never change while the binary runs, so
// the server need not compress a megabyte of chart library per request. It
// reports false when name is not embedded.
func Gzip(name string) ([]byte, bool) {
	return gzipped.get(name, func(w io.Writer) io.WriteCloser {
		zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression) // the level is valid
		return zw
	})
}
