package static_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/static"
)

// vendoredRow is a row of the table in vendor/VERSIONS.md: file, package,
// version, tarball integrity, tarball shasum, file sha256.
var vendoredRow = regexp.MustCompile(`(?m)^\| ([\w.-]+\.js) \| ([\w.@/-]+) \| (\d+\.\d+\.\d+) \| (sha512-[A-Za-z0-9+/=]+) \| ([0-9a-f]{40}) \| ([0-9a-f]{64}) \|$`)

// TestVendoredChecksums holds the record of vendored scripts to the files:
// every embedded vendor/*.js has a row in VERSIONS.md whose sha256 matches
// the bytes the server sends, and every row names an embedded file.
func TestVendoredChecksums(t *testing.T) {
	record, err := os.ReadFile("vendor/VERSIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, m := range vendoredRow.FindAllStringSubmatch(string(record), -1) {
		if _, dup := want[m[1]]; dup {
			t.Errorf("VERSIONS.md lists %s twice", m[1])
		}
		want[m[1]] = m[6]
		if !strings.Contains(string(record), m[2]+"@"+m[3]) {
			t.Errorf("VERSIONS.md: the commands do not fetch %s@%s", m[2], m[3])
		}
	}
	if len(want) == 0 {
		t.Fatal("VERSIONS.md has no rows of vendored files")
	}

	files, err := fs.Glob(static.FS, "vendor/*.js")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, name := range files {
		base := strings.TrimPrefix(name, "vendor/")
		seen[base] = true
		b, err := fs.ReadFile(static.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		got := hex.EncodeToString(sum[:])
		switch w, ok := want[base]; {
		case !ok:
			t.Errorf("%s is embedded but not recorded in vendor/VERSIONS.md", name)
		case got != w:
			t.Errorf("%s: sha256 %s, VERSIONS.md records %s", name, got, w)
		}
	}
	for base := range want {
		if !seen[base] {
			t.Errorf("VERSIONS.md records %s, which is not embedded", base)
		}
	}
}

// TestEmbedsTheDesignerAssets checks that what the layout loads is
// embedded and versioned.
func TestEmbedsTheDesignerAssets(t *testing.T) {
	for _, name := range []string{"css/app.css", "js/charts.js", "vendor/htmx.min.js", "vendor/echarts.min.js"} {
		if p := static.Path(name); !strings.HasPrefix(p, "/static/"+name+"?v=") {
			t.Errorf("Path(%q) = %q", name, p)
		}
	}
	if _, err := fs.ReadFile(static.FS, "vendor/VERSIONS.md"); err == nil {
		t.Error("vendor/VERSIONS.md is embedded; only the scripts should be served")
	}
}
