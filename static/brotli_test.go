package static_test

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/ratelab/ratelab/static"
)

// TestBrotliCopiesAreCurrent holds br/ to the vendored scripts: every
// embedded vendor/*.js has a brotli copy for its current content, and br/
// holds no copy of anything else (a copy of an older version, which the
// server would never send). Rebuild them as vendor/VERSIONS.md says.
func TestBrotliCopiesAreCurrent(t *testing.T) {
	scripts, err := fs.Glob(static.FS, "vendor/*.js")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, name := range scripts {
		_, v, _ := strings.Cut(static.Path(name), "?v=")
		want["br/"+name+"."+v+".br"] = true
		b, ok := static.Brotli(name)
		switch {
		case !ok:
			t.Errorf("%s has no brotli copy br/%s.%s.br; rebuild as vendor/VERSIONS.md says", name, name, v)
		case len(b) == 0:
			t.Errorf("%s: the brotli copy is empty", name)
		}
	}
	err = fs.WalkDir(os.DirFS("."), "br", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !want[p] {
			t.Errorf("%s is the brotli copy of no current vendored script; remove it or rebuild", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nope.js", "../static.go", "css", "br/vendor"} {
		if _, ok := static.Brotli(name); ok {
			t.Errorf("Brotli(%q) = ok, want false (not an embedded file)", name)
		}
	}
}

// TestBrotliOfSmallAssets: the stylesheet and ratelab's own scripts, which
// have no build-time copy, are brotli-compressed on first use, decode to
// the embedded bytes, come out smaller than their gzip, and the same bytes
// come back the second time.
func TestBrotliOfSmallAssets(t *testing.T) {
	names, err := fs.Glob(static.FS, "js/*.js")
	if err != nil || len(names) == 0 {
		t.Fatalf("js/*.js: %v, %d files", err, len(names))
	}
	for _, name := range append(names, "css/app.css") {
		raw, _ := fs.ReadFile(static.FS, name)
		b, ok := static.Brotli(name)
		if !ok {
			t.Fatalf("%s: no brotli", name)
		}
		got, err := io.ReadAll(brotli.NewReader(bytes.NewReader(b)))
		if err != nil || !bytes.Equal(got, raw) {
			t.Fatalf("%s: decodes to %d bytes (%v), want its %d", name, len(got), err, len(raw))
		}
		gz, _ := static.Gzip(name)
		if len(b) >= len(gz) {
			t.Errorf("%s: brotli %d bytes, gzip %d; want brotli smaller", name, len(b), len(gz))
		}
		if again, _ := static.Brotli(name); !bytes.Equal(again, b) {
			t.Errorf("%s: a second call gives other bytes", name)
		}
	}
}
