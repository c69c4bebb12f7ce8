package policy

import (
	"bytes"
	"fmt"
)

// Limits the pre-scan checks in one pass over the bytes, before the YAML
// tokenizer sees them. The tokenizer keeps some 300 bytes per token and the
// parser's work on a block mapping grows with the square of its keys, so
// each limit bounds the work a document can cause, at several times what a
// policy needs: the examples are a few hundred bytes, and the largest valid
// policy (16 tiers, 100 endpoints, every field written out) has about 1 500
// keys and 4 000 tokens.
const (
	// MaxLines is the most lines a document may have.
	MaxLines = 10_000
	// MaxLineLength is the longest line, in bytes without the line break:
	// room for the longest description (4096 characters) written on one
	// line with every character escaped.
	MaxLineLength = 64 << 10
	// MaxTokens bounds the pieces of YAML syntax the tokenizer would make
	// of the document: scalars, the indicators - ? : , [ ] { } | >,
	// anchors, aliases, comments and document markers.
	MaxTokens = 16_384
	// MaxKeys is the most mapping keys in the whole document.
	MaxKeys = 4096
	// MaxMappingKeys is the most keys in one block mapping.
	MaxMappingKeys = 256
	// MaxAnchors is the most anchors (&name) and aliases (*name) together.
	MaxAnchors = 1000
	// MaxRoughTokens bounds roughTokens, the count that follows no rule
	// of YAML's: whatever the pre-scan's own count misses, the tokenizer
	// then keeps at most about 20 MB of tokens.
	MaxRoughTokens = 4 * MaxTokens
)

// Tags (!tag, !!str) and directives (%YAML, %TAG) are refused: a policy's
// values are plain strings, numbers and booleans, and a tag could only make
// one of them something the policy does not know.

// prescan checks data against MaxSize, MaxDepth, MaxLines, MaxLineLength,
// MaxTokens, MaxKeys, MaxMappingKeys and MaxAnchors, and refuses tags,
// directives and a block scalar's line under the indentation its header's
// digit fixes (invalid YAML, which the tokenizer reads by rules of its
// own), in one linear pass that allocates nothing unless it refuses. It
// refuses a document only when one of those is broken, and then at the
// first byte that breaks it.
//
// It follows YAML far enough to know what is text: quoted scalars ("{",
// '[' and "\"" are not nesting; a doubled quote is one quote in single
// quotes), comments, block scalars (| and >, whose content lines are
// text) and multi-line plain scalars, where the tokenizer does: a ':', a
// '?' or a flow indicator is syntax or text by its rules. Nesting is flow
// collections ([ and {) plus block collections, told apart by the column
// of their "-" entries and keys; a document the parser would read less
// deeply nested may be counted deeper, never the other way. Whatever it does not follow — invalid YAML the
// parser refuses anyway — is counted as structure, never skipped as text.
func prescan(data []byte) *Error {
	s := scanner{data: data}
	return s.run()
}

func (s *scanner) run() *Error {
	data := s.data
	if len(data) > MaxSize {
		line, col := lineCol(data, MaxSize)
		return &Error{Line: line, Column: col,
			Message: fmt.Sprintf("the document is larger than %d bytes (%d KiB), the most a policy may be", MaxSize, MaxSize>>10)}
	}
	for start, line := 0, 1; start < len(data); line++ {
		end := start
		for end < len(data) && data[end] != '\n' && data[end] != '\r' {
			end++
		}
		s.line, s.start = line, start
		if line > MaxLines {
			return s.fail(start, fmt.Sprintf("the document has more than %d lines", MaxLines), "a policy needs a few hundred")
		}
		// A line too long is scanned up to the limit first, so that the
		// error is at the first byte that breaks one.
		if err := s.scanLine(start, min(end, start+MaxLineLength)); err != nil {
			return err
		}
		if end-start > MaxLineLength {
			return s.fail(start+MaxLineLength, fmt.Sprintf("line %d is %d bytes long; the most is %d", line, end-start, MaxLineLength), "break the line")
		}
		start = end + 1
		if end+1 < len(data) && data[end] == '\r' && data[end+1] == '\n' {
			start++
		}
	}
	// The backstop of the count above, which follows the tokenizer's
	// rules: one that follows none (roughTokens).
	if i := roughTokens(data, MaxRoughTokens); i >= 0 {
		line, col := lineCol(data, i)
		return &Error{Line: line, Column: col,
			Message: fmt.Sprintf("the document has more than %d words and YAML indicators, the most a policy may have", MaxRoughTokens),
			Hint:    "a policy needs a few thousand"}
	}
	return nil
}

// roughTokens counts, in one pass that follows none of YAML's rules, an
// upper bound of the tokens the tokenizer can make of data: each byte
// that is or may be an indicator (- ? : , [ ] { } # & * ! | > ' " % @ ` .
// < \ =), each line break and tab, and each run of other bytes but
// spaces is one. It returns the
// offset at which the count passes most, or -1. The pre-scan's
// own count follows the tokenizer's rules and is tighter, but where it
// misjudges a document (fuzzing keeps finding such documents: a '?' then
// a tab, a block scalar then '">a: {@a:', each made 200 KB of brackets
// 57 MB of tokens) this one still holds: the tokenizer never made more
// tokens than it counts (TestRoughTokensBoundTheTokenizer).
func roughTokens(data []byte, most int) int {
	n, word := 0, false
	for i, c := range data {
		switch c {
		case ' ':
			word = false
			continue
		case '\n', '\r', '\t':
			n, word = n+1, false
		case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '.', '<', '\\', '=':
			n, word = n+1, false // and what follows may be a token of its own
		default:
			if !word {
				n++
			}
			word = true
		}
		if n > most {
			return i
		}
	}
	return -1
}

// lineCol is the 1-based line and column (in characters) of offset i.
func lineCol(data []byte, i int) (line, col int) {
	line, start := 1, 0
	for j := 0; j < i; j++ {
		switch {
		case data[j] == '\n':
			line, start = line+1, j+1
		case data[j] == '\r' && (j+1 >= len(data) || data[j+1] != '\n'):
			line, start = line+1, j+1
		}
	}
	return line, column(data, start, i)
}

// column is the 1-based column of offset i on the line starting at start,
// counted in characters as the parser counts them.
func column(data []byte, start, i int) int {
	col := 1
	for _, b := range data[start:i] {
		if b&0xC0 != 0x80 {
			col++
		}
	}
	return col
}

// level is one block collection the scanner is in: a sequence ("-"
// entries) or a mapping (keys) at a column, with its keys so far.
type level struct {
	col  int
	seq  bool
	keys int
}

// scanner is the state of prescan between lines. Its stack is an array
// bounded by MaxDepth, so scanning allocates nothing.
type scanner struct {
	data        []byte
	line, start int // the current line, from 1, and its first byte

	blocks [MaxDepth]level
	n      int // blocks in use
	flow   int // open [ and {: the nesting of the tokens
	// The tokenizer's own counts, which decide what ',', ':', ']' and '}'
	// mean to it: '[' opened less ']' met (below 0 after a stray ']'),
	// and '{' opened less '}' closed.
	seqs, maps int

	tokens, keys, anchors int
	last, lastStart       int // where the last token began, and its line

	quote   byte // '"' or '\'' inside a quoted scalar, else 0
	plain   bool // inside a plain scalar
	plainAt int  // the column (from 1) the tokenizer places the plain scalar at
	plainNL bool // … once past its first line
	quoted  bool // the last token was a quoted scalar
	// delim is the tokenizer's last delimiter column (from 1): the key's
	// of a mapping's ':', a '-' entry's or a '?' key's, a block scalar
	// text's less 1. A plain scalar continues on a line that starts
	// past it.
	delim int
	name  byte // '&' or '*' when the next token is its name
	// naming: since an & or *, until a space in a line: the tokenizer
	// then reads no ':' as a mapping's, and ends at that space, or at
	// the line's end, the text it has begun.
	naming  bool
	colon   bool // the last token but plain scalars was a mapping's ':'
	node    bool // at the start of a node, where indicators mean something
	after   bool // just after a quoted scalar, alias or flow collection
	openKey bool // the last block key has no value on its line yet
	nodeAt  int  // where the current block node began on this line, or -1

	// A block scalar: content lines are those indented more than min, and,
	// once the first one has fixed it (-1 until then), at least indent.
	inBlock     bool
	min, indent int
	fixed       bool // indent was given by the header
	// spaces is, before the first text line, the length of the last line
	// of only spaces and tabs: the tokenizer refuses a first text line
	// that starts at a lower column, and goes on reading that line as
	// syntax, not text.
	spaces int
}

func (s *scanner) fail(i int, msg, hint string) *Error {
	return &Error{Line: s.line, Column: column(s.data, s.start, i), Message: msg, Hint: hint}
}

func (s *scanner) token(i int) *Error {
	s.last, s.lastStart, s.colon, s.quoted = i, s.start, false, false
	return s.count(i)
}

// count counts a token at i against MaxTokens.
func (s *scanner) count(i int) *Error {
	if s.tokens++; s.tokens > MaxTokens {
		return s.fail(i, fmt.Sprintf("the document has more than %d tokens (scalars, indicators and comments)", MaxTokens), "a policy needs a few thousand")
	}
	return nil
}

// mapValue reports whether a ':' followed by next (a space at the line's
// end) is a mapping's ':' to the tokenizer: outside a flow mapping, when a
// space follows; inside one, unless '/' follows (a URL's "://") or the
// last token but a plain scalar was a ':' too. Elsewhere it is text.
func (s *scanner) mapValue(next byte) bool {
	if s.naming {
		return false
	}
	if s.maps == 0 {
		return space(next)
	}
	return next != '/' && !s.colon
}

// inFlow reports whether the tokenizer reads flow syntax (',', and a
// flow indicator inside text it has begun).
func (s *scanner) inFlow() bool { return s.seqs > 0 || s.maps > 0 }

// ends reports whether the flow indicator c ends a plain scalar or a name
// the tokenizer has begun: '[', '{' and ',' in a flow collection, ']' in
// a flow sequence, '}' in a flow mapping; elsewhere it is their text.
func (s *scanner) ends(c byte) bool {
	switch c {
	case '[', '{', ',':
		return s.inFlow()
	case ']':
		return s.seqs > 0
	case '}':
		return s.maps > 0
	}
	return false
}

func (s *scanner) deeper(i int) *Error {
	if d := s.n + s.flow + 1; d > MaxDepth {
		return s.fail(i, fmt.Sprintf("collections nested %d deep; the most is %d", d, MaxDepth), "a policy nests 4 deep at most")
	}
	return nil
}

// topCol is the column (0-based) of the innermost block collection, -1
// at the top of a document.
func (s *scanner) topCol() int {
	if s.n == 0 {
		return -1
	}
	return s.blocks[s.n-1].col
}

// block records a "-" entry (seq) or a key at column col (0-based) of the
// line, at offset i: it closes the collections it is left of, and opens a
// new one or adds to the one at its column.
func (s *scanner) block(i, col int, seq bool) *Error {
	open := s.openKey
	s.openKey = false
	for s.n > 0 && s.blocks[s.n-1].col > col {
		s.n--
	}
	if s.n > 0 && s.blocks[s.n-1].col == col {
		top := &s.blocks[s.n-1]
		switch {
		case top.seq == seq:
			if !seq {
				return s.key(i, top)
			}
			return nil
		case seq && open: // "key:" then "- entry" at the key's column
		default: // back from a sequence to its mapping, or a new collection at the same column
			s.n--
			if !seq && s.n > 0 && s.blocks[s.n-1].col == col && !s.blocks[s.n-1].seq {
				return s.key(i, &s.blocks[s.n-1])
			}
		}
	}
	if err := s.deeper(i); err != nil {
		return err
	}
	s.blocks[s.n] = level{col: col, seq: seq}
	s.n++
	if !seq {
		return s.key(i, &s.blocks[s.n-1])
	}
	return nil
}

// key counts a key of the document, and of the block mapping m if any.
func (s *scanner) key(i int, m *level) *Error {
	if s.keys++; s.keys > MaxKeys {
		return s.fail(i, fmt.Sprintf("the document has more than %d mapping keys", MaxKeys), "a policy needs a few hundred")
	}
	if m != nil {
		if m.keys++; m.keys > MaxMappingKeys {
			return s.fail(i, fmt.Sprintf("a mapping has more than %d keys", MaxMappingKeys), "a policy's mappings have a dozen at most")
		}
	}
	return nil
}

func space(b byte) bool { return b == ' ' || b == '\t' }

func flowIndicator(b byte) bool {
	return b == ',' || b == '[' || b == ']' || b == '{' || b == '}'
}

// marker reports whether the line starts with a document marker, as the
// tokenizer reads one: "---" alone or before a space; "..." so too in a
// quoted scalar, elsewhere before anything but a fourth dot.
func marker(line []byte, quoted bool) bool {
	switch {
	case bytes.HasPrefix(line, []byte("...")):
		return len(line) == 3 || space(line[3]) || !quoted && line[3] != '.'
	case bytes.HasPrefix(line, []byte("---")):
		return len(line) == 3 || space(line[3])
	}
	return false
}

// scanLine scans the line data[i:end].
func (s *scanner) scanLine(i, end int) *Error {
	if s.naming {
		// A name ends with its line, and so does the text it began; an
		// & or * that ended its line names nothing, and the next line
		// starts a node of its own.
		s.endName()
	}
	if s.plain && !s.plainNL {
		// The tokenizer places a plain scalar that goes on past its
		// first line at its start plus the spaces ending that line.
		s.plainNL = true
		k := i - 1
		if k >= 0 && s.data[k] == '\n' {
			k--
		}
		if k >= 0 && s.data[k] == '\r' {
			k--
		}
		for ; k >= 0 && space(s.data[k]); k-- {
			s.plainAt++
		}
	}
	line := s.data[i:end]
	indent := 0
	for indent < len(line) && line[indent] == ' ' {
		indent++
	}
	first := i + indent // the line's first byte but spaces and tabs
	for first < end && space(s.data[first]) {
		first++
	}
	blank := first == end
	if marker(line, s.quote != 0) {
		// A document marker ends every scalar, and the block collections.
		s.inBlock, s.quote, s.plain, s.after, s.openKey = false, 0, false, false, false
		if s.flow == 0 {
			s.n = 0
		}
		if err := s.token(i); err != nil {
			return err
		}
		s.node, s.nodeAt = true, -1
		return s.scan(i+3, end)
	}
	if s.inBlock {
		switch {
		case blank:
			if s.tabInIndent(i, end) {
				s.inBlock = false
				return nil
			}
			if s.indent < 0 {
				s.spaces = end - i
			}
			return nil
		case s.indent < 0 && s.tabInIndent(i, end): // ends the scalar, as in a blank line
		case s.indent < 0 && indent > s.min && indent >= s.delim: // past the delimiter, to the tokenizer
			col := first - i + 1
			if s.spaces > col {
				return s.fail(first, fmt.Sprintf("a blank line above is %d spaces long, past this block scalar's first line of text, at column %d", s.spaces, col), "remove the spaces from the blank lines above the text")
			}
			// The text's column: to the tokenizer, spaces and tabs
			// after the first space are all indentation.
			s.indent, s.delim = col-1, col-1 // the tokenizer's delimiter: the text's column less 1
			return nil
		case s.indent >= 0 && indent >= s.indent:
			s.delim = s.indent
			return nil
		case s.fixed && indent > s.min:
			// Under the indentation the header fixed, where the
			// tokenizer reads the line as an invalid token or as
			// syntax, by rules of its own.
			return s.fail(i+indent, fmt.Sprintf("the line is indented %d; its block scalar's indentation digit wants at least %d", indent, s.indent), "indent the text as the header says, or leave the digit out of the header")
		}
		s.inBlock = false
	}
	if err := s.tabTokens(i, first); err != nil {
		return err
	}
	if s.quote != 0 {
		// Indentation is one byte a column, from column 1 at i.
		for k := i; k < first && k-i < s.delim; k++ {
			if s.data[k] == '\t' {
				// A tab there ends the quoted scalar, to the tokenizer
				// (an error), which reads on from the tab.
				s.quote, s.node, s.after = 0, true, false
				return s.scan(k, end)
			}
		}
		// The spaces and tabs before the text are the line's
		// indentation, not the scalar's text (scanQuote's tab rule).
		return s.scan(first, end)
	}
	if !blank {
		for k := i; k < first; k++ {
			if s.data[k] == '\t' {
				return s.syntaxTab(k)
			}
		}
	}
	col := column(s.data, s.start, first)
	if s.flow > 0 || s.inFlow() {
		if s.plain && s.delim > 0 && !blank && col <= s.delim {
			// A line that starts at or before the last delimiter's
			// column ends the plain scalar, to the tokenizer, in flow
			// too.
			s.plain, s.colon, s.node, s.after = false, false, true, false
		}
		return s.scan(i, end)
	}
	if blank {
		return nil // a blank line continues a plain scalar, or changes nothing
	}
	// The next line of a plain scalar, as the tokenizer reads it: one
	// that starts past its last delimiter's column and is no comment.
	if s.plain && col > s.delim && s.data[first] != '#' {
		if s.data[first] == '-' && s.delim > 0 {
			// A '-' there makes the rest "raw folded" text to the
			// tokenizer: every line from its column on, ':' and '#'
			// included, as in a block scalar.
			s.plain, s.inBlock, s.indent, s.fixed, s.delim = false, true, col-1, false, col-1
			return nil
		}
		return s.scan(first, end)
	}
	s.plain, s.after, s.node, s.nodeAt = false, false, true, -1
	return s.scan(first, end)
}

// endName ends name mode, as a space or the line's end does to the
// tokenizer: with it the text the name began, and an & or * with no name
// yet names nothing: what follows is a node of its own, not its name.
func (s *scanner) endName() {
	s.naming = false
	if s.name != 0 {
		s.node, s.after = s.name == '&', s.name == '*'
		s.name = 0
	}
	if s.plain {
		s.plain, s.node = false, true
	}
}

// tabInIndent reports whether the block scalar line data[i:end] has a tab
// where the tokenizer wants indentation: in column 1 before the scalar's
// first text line, else left of the text's column. The tokenizer ends the
// scalar there with an invalid token, and what follows is syntax to it.
func (s *scanner) tabInIndent(i, end int) bool {
	n := s.indent
	if n < 0 {
		n = 1
	}
	return bytes.IndexByte(s.data[i:min(end, i+n)], '\t') >= 0
}

// tabTokens counts the tabs of a line's indentation, data[i:first], at or
// before the tokenizer's last delimiter's column, outside flow: to the
// tokenizer each is a token of its own ("found character '\t' that cannot
// start any token"), made one by one, so a 1 MiB document of such lines
// was a million tokens. Only the count changes: to the rest of the
// pre-scan they are the line's indentation, as before.
func (s *scanner) tabTokens(i, first int) *Error {
	if s.delim == 0 || s.inFlow() {
		return nil
	}
	// Indentation is one byte a column, from column 1 at i.
	for k := i; k < first && k-i < s.delim; k++ {
		if s.data[k] != '\t' {
			continue
		}
		if err := s.count(k); err != nil {
			return err
		}
	}
	return nil
}

// syntaxTab refuses the tab at j, outside any quoted string, comment or
// block scalar. YAML indents and separates with spaces; the tokenizer
// reads a tab there by rules of its own (a column or none, a token or
// none, whether a '?', '-' or ':' before it is an indicator), each of
// which the pre-scan would have to follow, and where it did not, a tab
// let a document of nested brackets through as text: 57 MB for 200 KB.
// A JSON document's tabs are spaces before the pre-scan (jsonSpaces).
func (s *scanner) syntaxTab(j int) *Error {
	return s.fail(j, "a tab outside a quoted string, a comment or a block scalar", "indent and separate with spaces")
}

// scan reads data[j:end], part of one line, from the state the line
// starts in.
func (s *scanner) scan(j, end int) *Error {
	data := s.data
	for j < end {
		c := data[j]
		if s.quote != 0 {
			var err *Error
			if j, err = s.scanQuote(j, end); err != nil {
				return err
			}
			continue
		}
		if c == '\t' {
			return s.syntaxTab(j)
		}
		if space(c) {
			if s.naming {
				s.endName()
			}
			j++
			continue
		}
		// A comment starts after a space, or wherever the tokenizer has
		// no text begun (right after an indicator, & or * included).
		comment := c == '#' && (!s.plain || j == s.start || space(data[j-1]))
		if comment {
			s.plain, s.name = false, 0
			return s.token(j)
		}
		next := byte(' ')
		if j+1 < end {
			next = data[j+1]
		}
		plainKey := 0 // the column of a plain key a ':' ends
		if s.plain {
			switch {
			case c == ':' && s.mapValue(next):
				plainKey = s.plainAt
			case s.ends(c):
			default:
				j++
				continue
			}
			s.plain, s.after = false, true
		}
		// Indicators count at the start of a node, and just after one too:
		// valid YAML has none there, but the tokenizer reads them. Quotes
		// and block scalars only start at the start of a node, so that
		// no text is skipped that the tokenizer would read as syntax.
		name := s.name
		s.name = 0
		switch {
		case c == '-' && (space(next) || next == 0) && (s.node || s.after): // a NUL ends a line, and flow has entries too, to the tokenizer
			if err := s.token(j); err != nil {
				return err
			}
			s.delim = column(data, s.start, j)
			if s.flow == 0 {
				if err := s.block(j, column(data, s.start, j)-1, true); err != nil {
					return err
				}
			}
			s.node, s.after = true, false
			j++
		case c == '?' && j+1 < end && space(next) && (s.node || s.after): // not at a line's end, to the tokenizer
			if err := s.token(j); err != nil {
				return err
			}
			s.delim = column(data, s.start, j)
			var err *Error
			if s.flow == 0 {
				err = s.block(j, column(data, s.start, j)-1, false)
			} else {
				err = s.key(j, nil)
			}
			if err != nil {
				return err
			}
			j++
		case c == ':' && name == 0 && s.mapValue(next) && (s.node || s.after || s.flow > 0):
			prev, prevStart := s.last, s.lastStart
			switch {
			case plainKey > 0:
				s.delim = plainKey
			case s.quoted:
				s.delim = column(data, prevStart, prev)
			}
			if err := s.token(j); err != nil {
				return err
			}
			var err *Error
			if s.flow == 0 {
				// The key is the node before on this line, or else the
				// token before, even on a line before (": :" or a ":"
				// starting a line), as checkDepth places it.
				col := column(data, s.start, j) - 1
				switch {
				case plainKey > 0: // where the tokenizer places it
					col = plainKey - 1
				case s.nodeAt >= s.start:
					col = column(data, s.start, s.nodeAt) - 1
				case s.tokens > 1:
					col = column(data, prevStart, prev) - 1
				}
				at := j
				if s.nodeAt >= s.start {
					at = s.nodeAt
				}
				err = s.block(at, col, false)
				s.openKey, s.nodeAt = true, -1 // a second ":" is a key of its own
			} else {
				err = s.key(j, nil)
			}
			if err != nil {
				return err
			}
			s.node, s.after, s.colon = true, false, true
			j++
		case c == '[' || c == '{':
			if err := s.token(j); err != nil {
				return err
			}
			if err := s.deeper(j); err != nil {
				return err
			}
			s.startNode(j)
			s.flow++
			if c == '{' {
				s.maps++
			} else {
				s.seqs++
			}
			s.node, s.after = true, false
			j++
		case c == ']' || c == '}' && s.maps > 0: // ']' even in a block, to the tokenizer
			if err := s.token(j); err != nil {
				return err
			}
			s.flow = max(0, s.flow-1)
			if c == '}' {
				s.maps--
			} else {
				s.seqs--
			}
			s.node, s.after = false, true
			j++
		case c == ',' && s.inFlow():
			if err := s.token(j); err != nil {
				return err
			}
			s.node, s.after = true, false
			j++
		case (c == '&' || c == '*') && (s.node || s.after):
			if err := s.token(j); err != nil {
				return err
			}
			if s.anchors++; s.anchors > MaxAnchors {
				return s.fail(j, fmt.Sprintf("the document has more than %d anchors and aliases", MaxAnchors), "a policy needs a few; write the values out")
			}
			if c == '*' {
				s.startNode(j)
			}
			// The name is the next token: indicators there are read as
			// such, as by the tokenizer, but for ':', which it reads as
			// the name's first byte (the ':' case waits for the name).
			s.node, s.after, s.name, s.naming = true, false, c, true
			j++
		case (c == '@' || c == '`') && (s.node || s.after):
			return s.fail(j, fmt.Sprintf("%q is reserved in YAML", c), "quote the value")
		case c == '%' && (s.node || s.after):
			// A directive, to the tokenizer, wherever a node may start.
			return s.fail(j, "directives (%YAML, %TAG) are not supported", "leave the line out; quote a value that starts with %")
		case c == '!' && (s.node || s.after):
			k := j
			for k < end && !space(data[k]) && !flowIndicator(data[k]) {
				k++
			}
			return s.fail(j, fmt.Sprintf("tag %s: tags are not supported", clip(string(data[j:k]))), "leave the tag out; quote a value to make it a string")
		case (c == '|' || c == '>') && (s.node || s.after): // in flow too, to the tokenizer
			if !blockHeader(data[j+1 : end]) {
				return s.fail(j, fmt.Sprintf("%s: invalid block scalar header", clip(string(data[j:end]))), "write | or > alone, or with an indentation digit and + or -")
			}
			if err := s.token(j); err != nil {
				return err
			}
			s.inBlock, s.min, s.indent, s.fixed, s.spaces = true, s.topCol(), -1, false, 0
			if column(data, s.start, j) == 1 {
				s.delim = 1
			}
			if d := indentIndicator(data[j+1 : end]); d > 0 {
				// The tokenizer's text is indented d past its last
				// delimiter (the key or entry the scalar belongs to), not
				// as its first line is: a line less indented is syntax.
				// (Past the innermost collection too, to be sure.)
				s.indent, s.fixed = max(s.delim-1, s.topCol(), 0)+d, true
			}
			s.openKey = false
			return s.token(j) // the content
		case (c == '"' || c == '\'') && (s.node || s.after): // wherever the tokenizer has no text begun
			if err := s.token(j); err != nil {
				return err
			}
			s.startNode(j)
			s.quote, s.quoted = c, true
			j++
		case name != 0: // an anchor's or alias's name
			if err := s.token(j); err != nil {
				return err
			}
			for j < end && !space(data[j]) && !s.ends(data[j]) {
				j++
			}
			s.node, s.after = name == '&', name == '*'
		default: // a plain scalar
			colon := s.colon // the tokenizer adds its token at its end
			if err := s.token(j); err != nil {
				return err
			}
			s.colon = colon
			s.startNode(j)
			s.plain, s.plainAt, s.plainNL, s.node, s.after = true, column(data, s.start, j), false, false, false
			j++
		}
	}
	if s.flow == 0 {
		s.after = false
	}
	return nil
}

// startNode notes where a node that may be a block key begins.
func (s *scanner) startNode(j int) {
	if s.flow == 0 {
		s.nodeAt = j
		s.openKey = false
	}
}

// scanQuote reads quoted text from j to its closing quote or the end of the
// line, and returns where it stopped.
func (s *scanner) scanQuote(j, end int) (int, *Error) {
	data := s.data
	for ; j < end; j++ {
		switch data[j] {
		case '\t':
			// To the tokenizer, a tab in a double-quoted scalar's text
			// (not its lines' indentation) looks for text after it to
			// the line's end, and counts its column twice when it finds
			// some: each skips a byte after the closing quote, which it
			// then reads as no text at all (a '%' there is a token of
			// its own), and a line of them costs time quadratic in its
			// length (0.7 s for 60 000 tabs). Valid YAML, refused here.
			if s.quote == '"' {
				return j, s.fail(j, "a tab inside a double-quoted string", `write \t for a tab`)
			}
		case '\\':
			if s.quote != '"' || j+1 == end {
				continue // a line break is handled by the caller
			}
			switch e := data[j+1]; e {
			case '0', 'a', 'b', 't', 'n', 'v', 'f', 'r', 'e', ' ', '"', '/', '\\', 'N', '_', 'L', 'P', '\t':
				j++
			case 'x', 'u', 'U':
				// The tokenizer skips the digits whatever they are, or
				// fails near the end: only hex digits on the line pass.
				n := 2
				switch e {
				case 'u':
					n = 4
				case 'U':
					n = 8
				}
				if j+2+n >= len(data) || j+2+n > end || !hexDigits(data[j+2:j+2+n]) || e == 'u' && surrogate(data, j, end) {
					return j, s.fail(j, "invalid escape in a double-quoted string", `\x takes 2 hex digits, \u 4 (a surrogate pair two \u), \U 8`)
				}
				j += 1 + n
			default:
				// An unknown escape ends the quoted scalar, to the
				// tokenizer (an error), which reads on from the escaped
				// character.
				s.quote, s.node, s.after = 0, true, false
				return j + 1, nil
			}
		case s.quote:
			if s.quote == '\'' && j+1 < end && data[j+1] == '\'' {
				j++
				continue
			}
			s.quote = 0
			s.node, s.after = false, true
			return j + 1, nil
		}
	}
	return end, nil
}

func hexDigits(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// hexValue is the value of hex digits (hexDigits holds).
func hexValue(b []byte) uint32 {
	var v uint32
	for _, c := range b {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		v = v<<4 | uint32(c)
	}
	return v
}

// surrogate reports whether the \u escape at j is a UTF-16 surrogate
// the tokenizer refuses: a low one, or a high one not followed by a \u
// low one.
func surrogate(data []byte, j, end int) bool {
	v := hexValue(data[j+2 : j+6])
	switch {
	case v >= 0xDC00 && v <= 0xDFFF:
		return false // taken as it is
	case v < 0xD800 || v > 0xDBFF:
		return false
	}
	if j+12 > end || j+12 >= len(data) || data[j+6] != '\\' || data[j+7] != 'u' || !hexDigits(data[j+8:j+12]) {
		return true
	}
	low := hexValue(data[j+8 : j+12])
	return low < 0xDC00 || low > 0xDFFF
}

// blockHeader reports whether rest, what follows | or >, is a valid block
// scalar header: at most one indentation digit (1-9) and one chomping
// indicator (+ or -), then nothing or a comment.
// indentIndicator is the indentation digit of a valid block scalar
// header's rest (what follows | or >), or 0.
func indentIndicator(rest []byte) int {
	for i := 0; i < len(rest) && i < 2; i++ {
		if c := rest[i]; c >= '1' && c <= '9' {
			return int(c - '0')
		}
	}
	return 0
}

func blockHeader(rest []byte) bool {
	digit, chomp := false, false
	i := 0
	for ; i < len(rest) && i < 2; i++ {
		switch c := rest[i]; {
		case c >= '1' && c <= '9' && !digit:
			digit = true
		case (c == '+' || c == '-') && !chomp:
			chomp = true
		default:
			goto tail
		}
	}
tail:
	if i == len(rest) {
		return true
	}
	if !space(rest[i]) {
		return false
	}
	for ; i < len(rest); i++ {
		if rest[i] == '#' {
			return true
		}
		if !space(rest[i]) {
			return false
		}
	}
	return true
}
