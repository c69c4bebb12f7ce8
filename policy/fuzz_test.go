package policy

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecode: Decode never panics; what it accepts encodes to a document
// it accepts again, with the same encoding; Lint never panics on it.
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
	f.Fuzz(func(t *testing.T, data []byte) {
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
