package policy

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// lines is n lines made by line(i), each ended by "\n".
func lines(n int, line func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(line(i) + "\n")
	}
	return b.String()
}

// comment128 is a comment line of 128 bytes.
var comment128 = "# " + strings.Repeat("x", 125) + "\n"

func TestPrescan(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name string
		doc  string
		// at is "line:col" of the refusal, "" when the document passes;
		// want is a part of the message.
		at, want string
	}{
		// Each limit, just within and just past.
		{"size", string(fill(comment128, MaxSize)), "", ""},
		{"past size", string(fill(comment128, MaxSize)) + "#", fmt.Sprintf("%d:1", MaxSize/128+1), "larger than 1048576 bytes"},
		{"lines", lines(MaxLines, func(int) string { return "# c" }), "", ""},
		{"past lines", lines(MaxLines+1, func(int) string { return "# c" }), fmt.Sprintf("%d:1", MaxLines+1), "more than 10000 lines"},
		{"CRLF lines", strings.Repeat("# c\r\n", MaxLines), "", ""},
		{"CR lines", strings.Repeat("#\r", MaxLines+1), fmt.Sprintf("%d:1", MaxLines+1), "more than 10000 lines"},
		{"line length", "# " + strings.Repeat("x", MaxLineLength-2), "", ""},
		{"past line length", "a: 1\n# " + strings.Repeat("x", MaxLineLength-1), fmt.Sprintf("2:%d", MaxLineLength+1), "line 2 is 65537 bytes long; the most is 65536"},
		{"flow depth", "a: " + deep(MaxDepth-1), "", ""},
		{"past flow depth", "a: " + deep(MaxDepth), "1:35", "nested 33 deep; the most is 32"},
		{"past flow depth, {", strings.Repeat("{", 40), "1:33", "nested 33 deep"},
		{"block depth", deepBlock(MaxDepth - 1), "", ""},
		{"past block depth", deepBlock(MaxDepth), "33:33", "nested 33 deep"},
		{"past sequence depth", lines(40, func(i int) string { return strings.Repeat("  ", i) + "-" }), "33:65", "nested 33 deep"},
		{"past compact depth", strings.Repeat("- ", 40), "1:65", "nested 33 deep"},
		{"sequence in a mapping at its column", "k:\n" + lines(40, func(i int) string { return strings.Repeat("  ", i) + "- a:" }), "17:33", "nested 33 deep"},
		{"depth after a multibyte key", "é: " + deep(MaxDepth), "1:35", "nested 33 deep"},
		{"tokens", "a: [" + strings.Repeat("1,", (MaxTokens-4)/2) + "]", "", ""},
		{"past tokens", "a: [" + strings.Repeat("1,", MaxTokens/2), fmt.Sprintf("1:%d", MaxTokens+2), "more than 16384 tokens"},
		{"mapping keys", lines(MaxMappingKeys, func(i int) string { return fmt.Sprintf("k%d:", i) }), "", ""},
		{"past mapping keys", lines(MaxMappingKeys+1, func(i int) string { return fmt.Sprintf("k%d:", i) }), "257:1", "a mapping has more than 256 keys"},
		{"keys of sequence entries", lines(2*MaxMappingKeys, func(i int) string { return fmt.Sprintf("- k%d: 1\n  v: 1", i) }), "", ""},
		{"past keys", lines(17, func(i int) string { return "m:\n" + lines(MaxMappingKeys-1, func(j int) string { return " k:" }) }), "4113:1", "more than 4096 mapping keys"},
		{"anchors", "- [" + strings.Repeat("&a 1, ", MaxAnchors) + "]", "", ""},
		{"past anchors", "- [" + strings.Repeat("&a 1, ", MaxAnchors) + "&a 1]", fmt.Sprintf("1:%d", 4+6*MaxAnchors), "more than 1000 anchors and aliases"},
		{"past aliases", "- [" + strings.Repeat("*a, ", MaxAnchors) + "*a]", fmt.Sprintf("1:%d", 4+4*MaxAnchors), "more than 1000 anchors"},
		{"tag", "a: {b: !!binary AA==}", "1:8", "tag \"!!binary\": tags are not supported"},
		{"local tag", "- !x 1", "1:3", "tags are not supported"},
		{"tag after an anchor", "a: &x !y 1", "1:7", "tags are not supported"},
		{"directive", "%YAML 1.2\n---\na: 1", "1:1", "directives"},
		{"block scalar header", "a: |x\n  b", "1:4", "invalid block scalar header"},

		// Text that is not structure.
		{"double quotes", `a: "` + strings.Repeat("{[", 40) + `"`, "", ""},
		{"escaped double quote", `a: "\"` + strings.Repeat("{", 40) + `\\"`, "", ""},
		{"single quotes", "a: '" + strings.Repeat("[", 40) + "'", "", ""},
		{"doubled single quote", "a: 'it''s " + strings.Repeat("[", 40) + "'", "", ""},
		{"quoted key", `"{[": 1` + "\n'[{': 2", "", ""},
		{"multi-line quotes", "a: \"x\n" + lines(40, func(int) string { return "  [{ !t &a *a" }) + "  y\"\nb: 1", "", ""},
		{"comment", "# " + strings.Repeat("{", 40) + " !t &a", "", ""},
		{"comment after a value", "a: b # " + strings.Repeat("[", 40), "", ""},
		{"hash in a plain scalar", "a: b#" + strings.Repeat("[", 40), "", ""},
		{"literal block", "a: |\n  " + strings.Repeat("{", 40) + "\n\n  - - - !t &a\nb: 1", "", ""},
		{"folded block", "- >-\n  " + strings.Repeat("[", 40) + "\n   !t\n- x", "", ""},
		{"block scalar with a comment", "a: |2 # c\n   " + strings.Repeat("[", 40), "", ""},
		{"plain scalar with indicators", "a: x & y ! z * w " + strings.Repeat("[{", 40), "", ""},
		{"multi-line plain scalar", "a: b\n  !c &d *e " + strings.Repeat("[", 40) + "\n\n  - f", "", ""},
		{"flow plain continued", "a: [b,\n  c d\n  !e]", "", ""},
		{"document markers", "---\na: 1\n...\n", "", ""},

		// What ends text ends it for the scan too.
		{"block scalar ends at its indentation", "a: |\n  x\n" + strings.Repeat("[", 40), "3:32", "nested 33 deep"},
		{"marker ends quotes", "a: \"x\n---\n" + strings.Repeat("[", 40), "3:33", "nested 33 deep"},
		{"marker ends a block scalar", "--- |\n" + strings.Repeat("[", 40) + "\n---\n" + strings.Repeat("[", 40), "4:33", "nested 33 deep"},
		{"comment ends a plain scalar", "a: b\n# c\n  !t", "3:3", "tags are not supported"},
		{"tag in flow after a colon", "{a: b, c:!d}", "1:10", "tags are not supported"},
		// The tokenizer's ':' is a mapping's only before a space outside a
		// flow mapping, and inside one not after another ':' or before
		// '/': elsewhere it is text, and a quote after it opens nothing.
		{"second colon in a flow mapping is text", "{a: b:!c}", "", ""},
		{"colon in a flow sequence", "[a:\"\n" + strings.Repeat("[", 40), "2:32", "nested 33 deep"},
		{"colon after a colon", "{a::\"\n" + strings.Repeat("[", 40), "2:32", "nested 33 deep"},
		{"colon after a key's colon", "{a: b:'\n" + strings.Repeat("[", 40), "2:32", "nested 33 deep"},
		// '?' ends no key at a line's end: it is text, which the next
		// line continues.
		{"question mark at a line's end", "a: ?\n  \"\n" + strings.Repeat("[", 40), "3:32", "nested 33 deep"},
		{"question mark in flow at a line's end", "[?\n\"\n" + strings.Repeat("[", 40), "3:32", "nested 33 deep"},
		// A header's indentation digit fixes the content's indentation
		// past the key or entry; a line under it is not text.
		{"content at the header's indentation", "a: |2\n  " + strings.Repeat("[", 40), "", ""},
		{"content under the header's indentation", "a: |9\n  " + strings.Repeat("[", 40), "2:3", "indentation digit wants at least 9"},
		{"content under a nested header's indentation", "a:\n  b: >2\n   " + strings.Repeat("[", 40), "3:4", "indentation digit wants at least 4"},
		// A plain scalar goes on, to the tokenizer, on a line that starts
		// past its last delimiter (the key's column, a '-' entry's),
		// whatever came before it on its line and however indented the
		// line before; a quote there is text.
		{"plain after a quoted scalar", "a: \"x\" y\n  \"\n" + strings.Repeat("[", 40), "3:32", "nested 33 deep"},
		{"plain after an alias", "a: *x y\n  \"\n" + strings.Repeat("[", 40), "3:32", "nested 33 deep"},
		{"plain after a flow sequence", "a: [x] y\n  \"\n" + strings.Repeat("[", 40), "3:32", "nested 33 deep"},
		{"plain less indented than its last line", "a: b\n    c\n  \"\n" + strings.Repeat("[", 40), "4:32", "nested 33 deep"},
		{"plain ended by a flow mapping's key", "{a: b} x\n  \"\n" + strings.Repeat("[", 40), "3:33", "nested 33 deep"},
		// A continuation line that starts with '-' makes the rest raw
		// text to the tokenizer, ':' and '#' included, from its column.
		{"raw folded text", "- 0\n    -0\n    a: \"\n" + strings.Repeat("[", 40), "4:32", "nested 33 deep"},
		{"raw folded comment", "- 0\n    -0\n    # x\n    \"\n" + strings.Repeat("[", 40), "5:32", "nested 33 deep"},
		// A block scalar's header counts after a quoted scalar and in a
		// flow collection too: its text is not syntax.
		{"block scalar after a quoted scalar", "a: \"a\" |\n  \"\n" + strings.Repeat("[", 40), "3:32", "nested 33 deep"},
		{"block scalar in flow", "[ |\n  \"\n" + strings.Repeat("[", 40), "3:32", "nested 33 deep"},
		// A tab in a quoted scalar's indentation, at or before the last
		// delimiter's column, ends it to the tokenizer (an error).
		// A tab there ends the quote, to the tokenizer, which reads on
		// from the tab as syntax, where a tab is refused.
		{"tab in a quote's indentation", "a:\n\"x\n\t" + strings.Repeat("[", 40), "3:1", "a tab outside a quoted string"},
		// An unknown escape ends a double-quoted scalar, to the tokenizer
		// (an error); \x, \u and \U take hex digits, whatever follows.
		{"unknown escape", "a: \"\\q\n" + strings.Repeat("[", 40), "2:32", "nested 33 deep"},
		{"escape of a quote", "a: \"\\\"\" b", "", ""},
		{"hex escapes", "a: \"\\x41\\u00e9\\U0001F600\\uD83D\\uDE00\"", "", ""},
		{"short hex escape", "a: \"\\x4\"\n" + strings.Repeat("[", 40), "1:5", "invalid escape"},
		{"lone high surrogate", "a: \"\\uD83D\"", "1:5", "invalid escape"},
		// "..." ends a document before anything but a dot, to the
		// tokenizer; in a quoted scalar only before a space.
		{"document end before text", "a: b\n..." + strings.Repeat("[", 40), "2:36", "nested 33 deep"},
		{"dots in a quoted scalar", "a: \"x\n...y\"\n" + strings.Repeat("[", 40), "3:32", "nested 33 deep"},
		// '#' where the tokenizer has no text begun is a comment, right
		// after '[' too.
		{"comment right after a flow indicator", "&[# \"\n" + strings.Repeat("[", 40), "2:32", "nested 33 deep"},
		{"colon before a slash", "{a:/\"\n" + strings.Repeat("[", 40), "2:32", "nested 33 deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := prescan([]byte(tt.doc))
			if tt.at == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("passed, want %s %q", tt.at, tt.want)
			}
			if at := fmt.Sprintf("%d:%d", err.Line, err.Column); at != tt.at || !strings.Contains(err.Message, tt.want) {
				t.Errorf("got %s %q, want %s %q", at, err.Message, tt.at, tt.want)
			}
		})
	}
}

// fill repeats unit to exactly n bytes.
func fill(unit string, n int) []byte {
	return []byte(strings.Repeat(unit, n/len(unit)+1)[:n])
}

// TestPrescanBombs: a 1 MiB document of syntax is refused with memory
// independent of its size: nothing but the error is allocated once the
// bytes are in memory, and Decode reading them adds one copy.
func TestPrescanBombs(t *testing.T) {
	nested := func() []byte {
		var b bytes.Buffer
		for i := 0; b.Len() < MaxSize; i++ {
			b.WriteString(strings.Repeat("  ", i) + "- \n")
		}
		return b.Bytes()[:MaxSize]
	}
	tests := []struct {
		name string
		doc  []byte
		want string
	}{
		{"{", fill("{", MaxSize), "nested 33 deep"},
		{"[", fill("[", MaxSize), "nested 33 deep"},
		{"- nested blocks", nested(), "nested 33 deep"},
		{"- - on a line", fill("- ", MaxSize), "nested 33 deep"},
		{"anchors", fill("- &a 1\n", MaxSize), "anchors and aliases"},
		{"aliases", fill("- *a\n", MaxSize), "anchors and aliases"},
		{"tags", fill("- !!binary AA==\n", MaxSize), "tags are not supported"},
		{"scalars", append([]byte("a: ["), fill("1,", MaxSize-4)...), "tokens"},
		// ':' right after '&' is the anchor's name to the tokenizer, so
		// the '"' after it opens no quote and every ",0" is two tokens.
		// '#' right after '&' is a comment to the tokenizer, so the '"'
		// after it opens no quote over the lines below.
		{"comment after '&'", append([]byte("- &#a \"\n"), fill(strings.Repeat("[", 1000)+"\n", MaxSize-8)...), "nested 33 deep"},
		// ']' closes no '{' for the tokenizer, so every ',' after it
		// is a token.
		{"']' in a flow mapping", append([]byte("{]"), fill(strings.Repeat("0,", 500)+"\n", MaxSize-2)...), "tokens"},
		// After '&' the tokenizer ends, at the line's first space, the
		// text it has begun, even when the name ended earlier.
		{"text ended by an anchor's space", append([]byte("[&a,b "), fill("%", 60_000)...), "directives"},
		// A quote opens wherever the tokenizer has no text begun, right
		// after another quoted scalar too: each "" is a token.
		{"quotes after quotes", append([]byte("a: "), fill(`""`, MaxSize-3)...), "tokens"},
		// '- ' is an entry in flow too, to the tokenizer: what follows
		// it starts a node.
		{"entry in flow", append([]byte("[- "), fill("%0 ", 60_000)...), "directives"},
		{"anchor named by ':'", append([]byte(`{&:"`), fill(strings.Repeat(",0", 500)+"\n", MaxSize-4)...), "tokens"},
		// A tab in a line's indentation at or before the last
		// delimiter's column is a token of its own to the tokenizer: a
		// '-' far out on the first line made every tab below one (207
		// MB for this MiB).
		{"tabs under a '-'", append([]byte(strings.Repeat(" ", 60_000)+"-\n"), fill(strings.Repeat("\t", 60_000)+"\n", MaxSize-60_002)...), "tokens"},
		// A blank line of more spaces than a block scalar's first text
		// line is indented, or a tab where it wants indentation, ends
		// the scalar for the tokenizer, which reads what follows as
		// syntax.
		{"spaces over a block scalar's text", append([]byte(">\n   \n 0"), fill("{", MaxSize-8)...), "blank line above"},
		{"a tab in a block scalar's blank line", append([]byte(">\n\t\n  "), fill("{", MaxSize-6)...), "nested 33 deep"},
		// Spaces and tabs after the first space indent a block
		// scalar's first text line, to the tokenizer: a tab left of
		// that column on a later line ends the scalar.
		{"a tab left of a block scalar's text", append([]byte(">\n \t    0\n"), fill(" \t"+strings.Repeat("[", 1000)+"\n", MaxSize-10)...), "a tab outside a quoted string"},
		// A tab in a double-quoted string's text makes the tokenizer
		// look for text to the line's end (quadratic: 0.7 s for a line
		// of 60 000) and skip a byte after the closing quote, where each
		// '%' is then a directive.
		{"tabs in a double-quoted string", fill("a: \"x"+strings.Repeat("\t", 60_000)+"y\"\n", MaxSize), "a tab inside a double-quoted string"},
		{"a tab that skips past its quote", append([]byte("\"\t0\"0"), fill("%", 60_000)...), "a tab inside a double-quoted string"},
		// A tab in the indentation past the last delimiter's column
		// takes no column, to the tokenizer: "\t>" at the top is a block
		// scalar header at column 1, whose text must be indented, so
		// each '>' line below is a header and an empty scalar. A tab
		// is refused outside quotes, comments and block scalars.
		{"a tab before a block scalar header", append([]byte("\t>\n"), fill(">\n", 2*(MaxLines-1))...), "a tab outside a quoted string"},
		// A '?' then a tab is a key to the tokenizer, and the '"' after
		// the tab no quote, so the lines below were syntax to it and
		// text to the pre-scan (57 MB for 200 KB).
		{"a quote after '?' and a tab", append([]byte("*,?\t\"\n"), fill(strings.Repeat("[", 1000)+"\n", MaxSize-6)...), "a tab outside a quoted string"},
		// Documents the pre-scan still misjudges, found by a generator
		// of short documents: to it the brackets or entries below are
		// text, to the tokenizer syntax (57 and 25 MB for 200 KB);
		// roughTokens refuses them.
		{"a block scalar, then '\">a: {@a:'", append([]byte("- |-\n\n\">a: {@a: [{ - ]\n"), fill(strings.Repeat("[", 1000)+"\n", MaxSize-24)...), "words and YAML indicators"},
		{"'{]' then a '*%|' line", append([]byte("{]\n- *%|\n|*#- a\n"), fill(strings.Repeat("- ", 500)+"\n", MaxSize-17)...), "words and YAML indicators"},
		{"keys", fill("k: 1\n", MaxSize), "keys"},
		{"lines", fill("\n", MaxSize), "lines"},
		{"one line", fill("a", MaxSize), "bytes long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			alloc := allocated(func() { _, err = decode(tt.doc, true) })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			if alloc > 16<<10 {
				t.Errorf("decoding the bytes allocated %d bytes", alloc)
			}
			alloc = allocated(func() { _, err = Decode(bytes.NewReader(tt.doc)) })
			if limit := uint64(len(tt.doc)) + 16<<10; alloc > limit {
				t.Errorf("Decode allocated %d bytes for %d", alloc, len(tt.doc))
			}
		})
	}
}

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestPrescanAllocs(t *testing.T) {
	data, err := os.ReadFile("testdata/examples/tiered.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(10, func() {
		if err := prescan(data); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("prescan allocates %v times", n)
	}
}

func TestDecodeBOM(t *testing.T) {
	doc := head + "service: {capacity: 100, zzz: 1}\n"
	tests := []struct {
		name, doc, want string
	}{
		{"UTF-8", "\xEF\xBB\xBF" + doc, "4:26: service.zzz: unknown field"},
		{"UTF-8 twice", "\xEF\xBB\xBF\xEF\xBB\xBF" + doc, "unknown field"},
		{"UTF-16 BE", "\xFE\xFF\x00a", "1:1: the document is UTF-16 (big-endian), by its byte order mark; want UTF-8; save it as UTF-8"},
		{"UTF-16 LE", "\xFF\xFEa\x00", "UTF-16 (little-endian)"},
		{"UTF-32 BE", "\x00\x00\xFE\xFF\x00\x00\x00a", "UTF-32 (big-endian)"},
		{"UTF-32 LE", "\xFF\xFE\x00\x00a\x00\x00\x00", "UTF-32 (little-endian)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
	for _, name := range examples(t) {
		data, _ := os.ReadFile(name)
		want, err := Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(bytes.NewReader(append([]byte("\xEF\xBB\xBF"), data...)))
		if err != nil {
			t.Fatalf("%s with a BOM: %v", name, err)
		}
		if !bytes.Equal(encode(t, got), encode(t, want)) {
			t.Errorf("%s with a BOM decodes differently", name)
		}
	}
}

func examples(t *testing.T) []string {
	files, err := filepath.Glob("testdata/examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	return files
}

// TestPrescanKeepsDecoding: the examples and every committed fuzz input
// decode as they did without the pre-scan, or break a limit.
func TestPrescanKeepsDecoding(t *testing.T) {
	var docs [][]byte
	for _, name := range examples(t) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := prescan(data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		docs = append(docs, data)
	}
	corpus, _ := filepath.Glob("testdata/fuzz/FuzzDecode/*")
	for _, name := range corpus {
		docs = append(docs, corpusInput(t, name))
	}
	for i, data := range docs {
		if !bytes.HasPrefix(data, []byte("\xEF\xBB\xBF")) {
			checkAgainstUnscanned(t, data)
		}
		if t.Failed() {
			t.Fatalf("input %d: %q", i, data)
		}
	}
}

// corpusInput reads the []byte of a fuzz corpus file.
func corpusInput(t *testing.T, name string) []byte {
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	_, lit, _ := strings.Cut(strings.TrimSpace(string(raw)), "\n")
	lit = strings.TrimSuffix(strings.TrimPrefix(lit, "[]byte("), ")")
	s, err := strconv.Unquote(lit)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return []byte(s)
}

// checkAgainstUnscanned holds prescan to its promises on data:
//   - a document it refuses is one the decoder without it refuses too, or
//     one that breaks a limit as counted on the tokenizer's own tokens;
//   - a document it passes is within MaxDepth as the tokens count it, and
//     has no more tokens than it counted, give or take a few.
func checkAgainstUnscanned(t *testing.T, data []byte) {
	t.Helper()
	if len(data) > MaxSize || checkUTF8(data) != nil {
		return
	}
	var s scanner
	s.data = data
	err := s.run()
	if err != nil {
		rough := strings.HasPrefix(err.Message, "the document has more than") && len(data) > MaxRoughTokens/2
		if _, old := parse(data, true); old == nil && !breaksLimit(data) && !quotedTab(data, err) && !syntaxTab(data, err) && !rough {
			t.Errorf("prescan refuses a document the decoder accepts within every limit: %v", err)
		}
		return
	}
	// What bounds the tokenizer's work is roughTokens, which follows no
	// rule of YAML's: the pre-scan's own count follows the tokenizer's
	// rules and is not held to them here (a generator of short documents
	// finds it short within minutes: see roughTokens).
	if n := len(lexer.Tokenize(string(data))); n > 0 && roughTokens(data, n-1) < 0 {
		t.Errorf("the tokenizer made %d tokens, more than roughTokens counts", n)
	}
}

// syntaxTab reports whether err refuses a tab outside quoted strings and
// comments: a tab at err's place, on a line where no quoted or comment
// token of the tokenizer's holds a tab. (The pre-scan refuses them,
// valid YAML as some are: see syntaxTab. A tab in a block scalar's text
// is a plain string token to the tokenizer, which this cannot tell.)
func syntaxTab(data []byte, err *Error) bool {
	if err.Message != "a tab outside a quoted string, a comment or a block scalar" || !tabAt(data, err) {
		return false
	}
	for _, tk := range lexer.Tokenize(string(data)) {
		switch tk.Type {
		case token.SingleQuoteType, token.DoubleQuoteType, token.CommentType:
			if tk.Position.Line <= err.Line && err.Line <= tk.Position.Line+strings.Count(tk.Origin, "\n") && strings.Contains(tk.Origin, "\t") {
				return false
			}
		}
	}
	return true
}

// tabAt reports whether err's place in data is a tab.
func tabAt(data []byte, err *Error) bool {
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n"), "\n")
	if err.Line < 1 || err.Line > len(lines) {
		return false
	}
	line := []rune(lines[err.Line-1])
	return err.Column >= 1 && err.Column <= len(line) && line[err.Column-1] == '\t'
}

// quotedTab reports whether err refuses a tab in a double-quoted string
// that the tokenizer sees: a tab at err's place, in a line that a
// double-quoted token of the tokenizer's spans, whose value holds a tab.
// (The pre-scan refuses them, valid YAML as they are: see scanQuote.)
func quotedTab(data []byte, err *Error) bool {
	if err.Message != "a tab inside a double-quoted string" {
		return false
	}
	if !tabAt(data, err) {
		return false
	}
	for _, tk := range lexer.Tokenize(string(data)) {
		if tk.Type == token.DoubleQuoteType && strings.Contains(tk.Value, "\t") &&
			tk.Position.Line <= err.Line && err.Line <= tk.Position.Line+strings.Count(tk.Origin, "\n") {
			return true
		}
	}
	return false
}

// breaksLimit counts the prescan limits its own slow way: on the lines of
// data, the tokenizer's tokens and the parser's mappings.
func breaksLimit(data []byte) bool {
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	ls := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(ls) > MaxLines {
		return true
	}
	for _, l := range ls {
		if len(l) > MaxLineLength {
			return true
		}
	}
	tokens := lexer.Tokenize(string(data))
	if len(tokens) > MaxTokens || checkDepth(tokens) != nil {
		return true
	}
	keys, anchors := 0, 0
	for _, tk := range tokens {
		switch tk.Type {
		case token.MappingValueType:
			keys++
		case token.AnchorType, token.AliasType:
			anchors++
		case token.TagType, token.DirectiveType:
			return true
		}
	}
	if keys > MaxKeys || anchors > MaxAnchors {
		return true
	}
	file, err := parser.Parse(tokens, 0)
	if err != nil {
		return false
	}
	most := 0
	for _, d := range file.Docs {
		ast.Walk(visitor(func(n ast.Node) {
			if m, ok := n.(*ast.MappingNode); ok && !m.IsFlowStyle {
				most = max(most, len(m.Values))
			}
		}), d)
	}
	return most > MaxMappingKeys
}

type visitor func(ast.Node)

func (v visitor) Visit(n ast.Node) ast.Visitor {
	v(n)
	return v
}

// TestPrescanCountsDepthAfterAnEmptyName: an & or * that a space or the
// line's end follows names nothing to the tokenizer, which ends the name
// there, and a name ends with its line. Each ladder below nests 33 deep
// in the tokens (checkDepth); the pre-scan once read the text after the
// empty name, or a ':' on the next line, as part of the name and counted
// fewer levels, so it passed documents the decoder then refused.
func TestPrescanCountsDepthAfterAnEmptyName(t *testing.T) {
	ladder := func(line func(k int) string, lines int) []byte {
		var b strings.Builder
		for k := range lines {
			b.WriteString(line(k))
			b.WriteByte('\n')
		}
		return []byte(b.String())
	}
	tests := []struct {
		name string
		doc  []byte
	}{
		{"'&' and spaces before a key", ladder(func(k int) string {
			if k == 10 {
				return "&" + strings.Repeat(" ", 4*k) + "0: : :"
			}
			return strings.Repeat(" ", 4*k) + "0: : :"
		}, 11)},
		{"'& ' before every key", ladder(func(k int) string { return strings.Repeat(" ", 4*k) + "& 0: : :" }, 11)},
		{"a name that ends its line", ladder(func(k int) string {
			if k == 0 {
				return "0: &:"
			}
			return strings.Repeat(" ", 2*k) + "0: :"
		}, 17)},
		{"'&' that ends its line", ladder(func(k int) string { return strings.Repeat(" ", 2*k) + "0: : &" }, 17)},
		{"'*' that ends its line", ladder(func(k int) string { return strings.Repeat(" ", 2*k) + "0: : *" }, 17)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if e := checkDepth(lexer.Tokenize(string(tt.doc))); e == nil {
				t.Fatalf("the tokens do not nest past %d: the case tests nothing", MaxDepth)
			}
			s := scanner{data: tt.doc}
			if err := s.run(); err == nil || !strings.Contains(err.Error(), "nested 33 deep") {
				t.Errorf("pre-scan: %v, want the document refused as nested 33 deep", err)
			}
		})
	}
}

// TestRoughTokensBoundTheTokenizer: over random short documents made of
// the bytes YAML gives meaning to (and of the examples), the tokenizer
// never makes more tokens than roughTokens counts.
func TestRoughTokensBoundTheTokenizer(t *testing.T) {
	pieces := []string{"\t", " ", " ", "-", ">", "|", ":", "a", "\n", "\n", "[", "]", "{", "}", ",", "#", "\"", "'", "0", "&", "*", "?",
		"a: ", "- ", "\\", "!", "%", "@", "\r", "---", "...", "<<", "x", "=", "`", "é"}
	r := rand.New(rand.NewPCG(17, 18))
	docs := 0
	check := func(doc string) {
		n := len(lexer.Tokenize(doc))
		if n > 0 && roughTokens([]byte(doc), n-1) < 0 {
			t.Fatalf("%q: the tokenizer made %d tokens, more than roughTokens counts", doc, n)
		}
		docs++
	}
	for range 200_000 {
		var b strings.Builder
		for range 1 + r.IntN(24) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		check(b.String())
	}
	files, _ := filepath.Glob("testdata/examples/*.yaml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(string(b))
	}
	if docs < 200_003 {
		t.Fatalf("checked %d documents", docs)
	}
}
