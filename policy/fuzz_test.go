package policy

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecode: Decode never panics; what it accepts encodes to a document
// it accepts again, with the same encoding; Lint never panics on it. The
// pre-scan refuses only documents that break a limit or that the decoder
// refuses anyway, and passes none the tokens nest deeper than MaxDepth.
// The seeds include small YAML bombs of each kind the pre-scan refuses.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/examples/*.yaml")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(head + "service: {capacity: 100}\ndefaults: {limit: &l {algorithm: gcra, rate: 5, burst: 10}}\nglobal: {limit: *l}\n"))
	f.Add([]byte(head + "service: {capacity: 100}\nsizing: {window: 90s, max_delay: 0s, retry: {base: 1s}}\n"))
	f.Add([]byte("a: [" + strings.Repeat("{", 10)))
	for _, bomb := range []string{
		strings.Repeat("{", 40), strings.Repeat("[", 40), strings.Repeat("- ", 40), deepBlock(40),
		"- [" + strings.Repeat("&a 1, ", MaxAnchors+1) + "]", "- [" + strings.Repeat("*a, ", MaxAnchors+1) + "]",
		head + "service: {capacity: !!binary AA==}\n", "%YAML 1.2\n---\n" + head,
		head + "metadata: {name: \"{[\", description: 'it''s [{'}\n# {\nx: |\n  [[\n",
		"\xEF\xBB\xBF" + head + "service: {capacity: 100}\n", "\xFF\xFEa\x00",
		"- &#a \"\n" + strings.Repeat("[", 40), "{&:\"" + strings.Repeat(",0", 40),
	} {
		f.Add([]byte(bomb))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstUnscanned(t, data)
		p, err := Decode(bytes.NewReader(data))
		if err != nil {
			if es, ok := err.(Errors); !ok || len(es) == 0 {
				t.Fatalf("want a non-empty Errors, got %T %v", err, err)
			}
			return
		}
		Lint(p)
		y := encode(t, p)
		q, err := Decode(bytes.NewReader(y))
		if err != nil {
			t.Fatalf("the encoding of an accepted policy is refused: %v\n%s", err, y)
		}
		if y2 := encode(t, q); !bytes.Equal(y, y2) {
			t.Fatalf("encoding not stable:\n%s\n---\n%s", y, y2)
		}
	})
}
