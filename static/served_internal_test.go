package static

import (
	"bytes"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

func TestStripCSS(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"comment and indentation", "/* the page */\n.a {\n  color: red; /* why */\n}\n", ".a {\ncolor: red;\n}\n"},
		{"blank lines", "a{}\n\n\n  \nb{}\n", "a{}\nb{}\n"},
		{"comment over lines", "a{}\n/* one\n   two */\nb{}", "a{}\nb{}"},
		{"comment inside a line", "a{color:/**/red}", "a{color:red}"},
		{"comment in a string is text", `a::before{content:"/* not */"}`, `a::before{content:"/* not */"}`},
		{"single quotes", `a::before{content:'/*' " · "}`, `a::before{content:'/*' " · "}`},
		{"escaped quote", `a::before{content:"\"/*"}`, `a::before{content:"\"/*"}`},
		{"string continued on the next line keeps its blanks", "a::before{content:\"x\\\n   y\"}", "a::before{content:\"x\\\n   y\"}"},
		{"unterminated comment runs to the end", "a{}\n/* open", "a{}\n"},
		{"a slash alone", "a{grid-area:1 / 2}", "a{grid-area:1 / 2}"},
		{"crlf", "a{}\r\n  b{}\r\n", "a{}\nb{}\n"},
		{"empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(stripCSS([]byte(tt.in))); got != tt.want {
				t.Errorf("stripCSS(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestServedStylesheetKeepsEveryRule: the stylesheet served is the source
// without its comments (removed here by a regular expression, which is
// right for a stylesheet whose strings hold no "/*"), blanks aside; and
// its size, its bytes through Open and through ReadFile agree.
func TestServedStylesheetKeepsEveryRule(t *testing.T) {
	src, err := files.ReadFile("css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range regexp.MustCompile(`"[^"\n]*"|'[^'\n]*'`).FindAll(src, -1) {
		if bytes.Contains(q, []byte("/*")) {
			t.Fatalf("the string %s holds a comment's opening; the expression below would be wrong", q)
		}
	}
	blanks := regexp.MustCompile(`\s+`)
	want := blanks.ReplaceAll(regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAll(src, nil), nil)
	got, err := fs.ReadFile(FS, "css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(blanks.ReplaceAll(got, nil), want) {
		t.Error("the served stylesheet differs from its source by more than comments and blanks")
	}
	if len(got) >= len(src)*9/10 {
		t.Errorf("served %d bytes of a %d-byte source: the comments and blanks are still there", len(got), len(src))
	}
	f, err := FS.Open("css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, got) || info.Size() != int64(len(got)) {
		t.Errorf("Open: %d bytes, Stat says %d; ReadFile: %d", len(body), info.Size(), len(got))
	}
	if _, ok := f.(io.Seeker); !ok {
		t.Error("the served stylesheet does not seek, which http.ServeContent needs")
	}
	entries, err := fs.ReadDir(FS, "css")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "app.css" {
			if fi, err := e.Info(); err != nil || fi.Size() != int64(len(got)) {
				t.Errorf("ReadDir: app.css is %v bytes (%v), want %d", fi.Size(), err, len(got))
			}
		}
	}
	// Scripts are served as written.
	js, _ := files.ReadFile("js/charts.js")
	if served, _ := fs.ReadFile(FS, "js/charts.js"); !bytes.Equal(js, served) || !strings.Contains(string(js), "//") {
		t.Error("js/charts.js is not served as written")
	}
}
