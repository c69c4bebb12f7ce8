package static_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/static"
)

func TestPathCarriesTheContentHash(t *testing.T) {
	b, err := static.FS.ReadFile("css/app.css")
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
