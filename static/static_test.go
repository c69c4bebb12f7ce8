package static_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/static"
)

func TestPathCarriesTheContentHash(t *testing.T) {
	b, err := fs.ReadFile(static.FS, "css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	want := "/static/css/app.css?v=" + hex.EncodeToString(sum[:])[:12]
	if got := static.Path("css/app.css"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
}

func TestPathPanicsOnUnknownAsset(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "nope.js") {
			t.Errorf("recover() = %v, want a panic naming nope.js", r)
		}
	}()
	static.Path("nope.js")
}

func TestGzipIsTheAssetCompressedOnce(t *testing.T) {
	raw, err := fs.ReadFile(static.FS, "css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	a, ok := static.Gzip("css/app.css")
	if !ok {
		t.Fatal("Gzip(css/app.css) reports no asset")
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("gunzipped %d bytes (err %v), want the %d bytes of the asset", len(got), err, len(raw))
	}
	if b, _ := static.Gzip("css/app.css"); &b[0] != &a[0] {
		t.Error("the second call compressed again instead of reusing the first result")
	}
	if _, ok := static.Gzip("nope.js"); ok {
		t.Error("Gzip(nope.js) = ok, want false")
	}
}
