package static_test

import (
	"io/fs"
	"os"
	"strings"
	"testing"

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
	for _, name := range []string{"css/app.css", "nope.js", "../static.go"} {
		if _, ok := static.Brotli(name); ok {
			t.Errorf("Brotli(%q) = ok, want false (no copy)", name)
		}
	}
}
