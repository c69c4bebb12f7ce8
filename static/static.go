// Package static owns the files the web server serves under /static/: the
// stylesheet, the vendored chart and htmx scripts and the one script that
// initialises the charts. Everything is embedded in the binary, so the
// server needs no files on disk and no CDN. The vendored scripts also come
// as brotli copies made at build time (br/, see vendor/VERSIONS.md).
package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"strings"
	"sync"
)

// FS holds the embedded assets. A file at css/app.css is served at
// /static/css/app.css.
//
//go:embed css img js vendor/*.js
var FS embed.FS

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
			b, err := FS.ReadFile(p)
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

// Brotli returns the brotli copy of the embedded asset name made at build
// time, and false when there is none for the asset's current content (an
// asset without a copy, or one changed since its copy was made), so a
// caller falls back to Gzip and never sends stale bytes.
func Brotli(name string) ([]byte, bool) {
	if !fs.ValidPath(name) {
		return nil, false
	}
	if _, err := fs.Stat(FS, name); err != nil {
		return nil, false
	}
	_, v, _ := strings.Cut(Path(name), "?v=")
	b, err := brotliFS.ReadFile("br/" + name + "." + v + ".br")
	if err != nil {
		return nil, false
	}
	return b, true
}

var gzipped struct {
	sync.Mutex
	m map[string][]byte
}

// Gzip returns the embedded asset name compressed with gzip at the best
// level, computed once: the assets never change while the binary runs, so
// the server need not compress a megabyte of chart library per request. It
// reports false when name is not embedded.
func Gzip(name string) ([]byte, bool) {
	gzipped.Lock()
	defer gzipped.Unlock()
	if b, ok := gzipped.m[name]; ok {
		return b, true
	}
	raw, err := FS.ReadFile(name)
	if err != nil {
		return nil, false
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // the level is valid
	zw.Write(raw)                                            // a bytes.Buffer does not fail
	zw.Close()
	if gzipped.m == nil {
		gzipped.m = map[string][]byte{}
	}
	gzipped.m[name] = buf.Bytes()
	return buf.Bytes(), true
}
