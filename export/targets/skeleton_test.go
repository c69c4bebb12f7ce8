package targets

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A skeleton is a file's structure as its own format parses it, without
// the text a policy or an option put in it: the keys, directives,
// statements and their nesting, each name or word kept only when the
// other file of the comparison (vocab) has it too, "·" otherwise. Two
// renders of one policy that differ in one string value have equal
// skeletons unless that string changed the structure.
type skeletonFunc func(body []byte, vocab map[string]bool) (string, error)

// words lists what vocab is made of for each format: the names and words
// a skeleton keeps when both files have them.
type wordsFunc func(body []byte) (map[string]bool, error)

// format is how one kind of file is parsed.
type format struct {
	words    wordsFunc
	skeleton skeletonFunc
}

// formats by target name; every target has one.
var formats = map[string]format{
	"nginx":           {nginxWords, nginxSkeleton},
	"haproxy":         {haproxyWords, haproxySkeleton},
	"envoy-local":     {yamlWords, yamlSkeleton},
	"envoy-ratelimit": {yamlWords, yamlSkeleton},
	"envoy-gateway":   {yamlWords, yamlSkeleton},
	"traefik":         {yamlWords, yamlSkeleton},
	"traefik-crd":     {yamlWords, yamlSkeleton},
	"kong":            {yamlWords, yamlSkeleton},
	"redis-lua":       {goWords, goSkeleton},
	"xtime-rate":      {goWords, goSkeleton},
	"throttled":       {goWords, goSkeleton},
	"redis-rate":      {goWords, goSkeleton},
	"prometheus":      {yamlWords, yamlSkeleton},
	"openapi":         {yamlWords, yamlSkeleton},
	"markdown":        {markdownWords, markdownSkeleton},
	"policy":          {yamlWords, yamlSkeleton},
}

func keep(vocab map[string]bool, w string) string {
	if vocab[w] {
		return w
	}
	return "·"
}

// intersect is the words both files have, but any word that holds one of
// avoid (case aside): a hostile string that is also a word of the format
// ("GET", "true") must not count as structure in one file only.
func intersect(a, b map[string]bool, avoid ...string) map[string]bool {
	out := map[string]bool{}
next:
	for w := range a {
		if !b[w] {
			continue
		}
		for _, s := range avoid {
			if s != "" && strings.Contains(strings.ToLower(w), strings.ToLower(s)) {
				continue next
			}
		}
		out[w] = true
	}
	return out
}

// --- YAML: every document, node kinds, tags, anchors and aliases; map
// keys kept when vocab has them; maps compared as sets of entries.

func yamlDocs(body []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(body)))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if err.Error() == "EOF" {
				return docs, nil
			}
			return nil, err
		}
		docs = append(docs, &n)
	}
}

func yamlWords(body []byte) (map[string]bool, error) {
	docs, err := yamlDocs(body)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				out[n.Content[i].Value] = true
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	for _, d := range docs {
		walk(d)
	}
	return out, nil
}

func yamlSkeleton(body []byte, vocab map[string]bool) (string, error) {
	docs, err := yamlDocs(body)
	if err != nil {
		return "", err
	}
	// One line a node: its path (keys kept when vocab has them, sequence
	// indices), anchor, kind and tag; sorted, since a map is a set.
	var lines []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		mark := ""
		if n.Anchor != "" {
			mark = " &"
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
			return
		case yaml.MappingNode:
			lines = append(lines, path+mark+" map "+n.Tag)
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
					lines = append(lines, path+" key of kind "+strconv.Itoa(int(k.Kind))+" "+k.Tag)
				}
				walk(n.Content[i+1], path+"/"+keep(vocab, k.Value))
			}
		case yaml.SequenceNode:
			lines = append(lines, path+mark+" seq "+n.Tag+" len "+strconv.Itoa(len(n.Content)))
			for i, c := range n.Content {
				walk(c, path+"["+strconv.Itoa(i)+"]")
			}
		case yaml.AliasNode:
			lines = append(lines, path+" alias")
		default:
			lines = append(lines, path+mark+" "+n.Tag)
		}
	}
	for i, d := range docs {
		walk(d, "doc"+strconv.Itoa(i))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n"), nil
}

// --- nginx: directives as ngx_conf_read_token splits them (whitespace,
// ';', '{', '}', '#' comments, quotes and backslash escapes), each word
// with the count of variables it references.

type nginxDirective struct {
	words []string // raw, quotes removed
	vars  int
	block []nginxDirective
	open  bool
}

func nginxTokens(body []byte) ([]string, error) {
	s := string(body)
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == ';' || c == '{' || c == '}':
			toks = append(toks, string(c))
			i++
		case c == '"' || c == '\'':
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated %c string at byte %d", c, i)
			}
			// nginx wants a space, ';' or '{' after a closing quote.
			if j+1 < len(s) && !strings.ContainsRune(" \t\r\n;{", rune(s[j+1])) {
				return nil, fmt.Errorf("unexpected %q after a quoted string at byte %d", s[j+1], j+1)
			}
			toks = append(toks, "q"+s[i+1:j])
			i = j + 1
		default:
			j := i
			for ; j < len(s) && !strings.ContainsRune(" \t\r\n;{}", rune(s[j])); j++ {
				if s[j] == '\\' {
					j++
				}
			}
			toks = append(toks, "w"+s[i:min(j, len(s))])
			i = j
		}
	}
	return toks, nil
}

var nginxVar = regexp.MustCompile(`(^|[^\\])\$[A-Za-z_{]`)

func nginxParse(body []byte) ([]nginxDirective, error) {
	toks, err := nginxTokens(body)
	if err != nil {
		return nil, err
	}
	var parse func(depth int) ([]nginxDirective, error)
	parse = func(depth int) ([]nginxDirective, error) {
		var out []nginxDirective
		var cur nginxDirective
		for len(toks) > 0 {
			t := toks[0]
			toks = toks[1:]
			switch t {
			case ";":
				out = append(out, cur)
				cur = nginxDirective{}
			case "{":
				b, err := parse(depth + 1)
				if err != nil {
					return nil, err
				}
				cur.block, cur.open = b, true
				out = append(out, cur)
				cur = nginxDirective{}
			case "}":
				if depth == 0 || len(cur.words) > 0 {
					return nil, fmt.Errorf("unexpected }")
				}
				return out, nil
			default:
				cur.words = append(cur.words, t[1:])
				cur.vars += len(nginxVar.FindAllString(t[1:], -1))
			}
		}
		if depth > 0 || len(cur.words) > 0 {
			return nil, fmt.Errorf("unexpected end of file")
		}
		return out, nil
	}
	return parse(0)
}

func nginxWords(body []byte) (map[string]bool, error) {
	ds, err := nginxParse(body)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	var walk func([]nginxDirective)
	walk = func(ds []nginxDirective) {
		for _, d := range ds {
			for _, w := range d.words {
				out[w] = true
			}
			walk(d.block)
		}
	}
	walk(ds)
	return out, nil
}

func nginxSkeleton(body []byte, vocab map[string]bool) (string, error) {
	ds, err := nginxParse(body)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var walk func([]nginxDirective, string)
	walk = func(ds []nginxDirective, in string) {
		for _, d := range ds {
			b.WriteString(in)
			for _, w := range d.words {
				b.WriteString(keep(vocab, w) + " ")
			}
			vars := d.vars
			if len(d.words) > 0 && d.words[0] == "location" {
				vars = 0 // a location's match is literal or a regex, never a script
			}
			fmt.Fprintf(&b, "(%d words, %d vars)", len(d.words), vars)
			if d.open {
				b.WriteString(" {\n")
				walk(d.block, in+"  ")
				b.WriteString(in + "}")
			}
			b.WriteString(";\n")
		}
	}
	walk(ds, "")
	return b.String(), nil
}

// --- HAProxy: one statement a line, words split as HAProxy's parser
// does (whitespace; '\' escapes; "…" with escapes and ${VAR}
// expansion; '…' literal; '#' unquoted starts a comment).

type haproxyLine struct {
	words []string
	vars  int
}

func haproxyParse(body []byte) ([]haproxyLine, error) {
	var out []haproxyLine
	for n, line := range strings.Split(string(body), "\n") {
		var l haproxyLine
		var w strings.Builder
		inWord := false
		flush := func() {
			if inWord {
				l.words = append(l.words, w.String())
				w.Reset()
				inWord = false
			}
		}
		s := strings.TrimSuffix(line, "\r")
	scan:
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case c == ' ' || c == '\t':
				flush()
			case c == '#':
				break scan
			case c == '\\':
				if i+1 < len(s) {
					i++
					w.WriteByte(s[i])
				}
				inWord = true
			case c == '\'':
				j := strings.IndexByte(s[i+1:], '\'')
				if j < 0 {
					return nil, fmt.Errorf("line %d: unterminated '", n+1)
				}
				w.WriteString(s[i+1 : i+1+j])
				i += j + 1
				inWord = true
			case c == '"':
				j := i + 1
				for ; j < len(s) && s[j] != '"'; j++ {
					if s[j] == '\\' {
						j++
					} else if s[j] == '$' && j+1 < len(s) && (s[j+1] == '{' || s[j+1] == '_' || s[j+1] >= 'A' && s[j+1] <= 'Z' || s[j+1] >= 'a' && s[j+1] <= 'z') {
						l.vars++
					}
				}
				if j >= len(s) {
					return nil, fmt.Errorf("line %d: unterminated \"", n+1)
				}
				w.WriteString(s[i+1 : j])
				i = j
				inWord = true
			case c == '$' && i+1 < len(s) && s[i+1] == '{':
				l.vars++
				w.WriteByte(c)
				inWord = true
			default:
				w.WriteByte(c)
				inWord = true
			}
		}
		flush()
		if len(l.words) > 0 {
			out = append(out, l)
		}
	}
	return out, nil
}

func haproxyWords(body []byte) (map[string]bool, error) {
	ls, err := haproxyParse(body)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, l := range ls {
		for _, w := range l.words {
			out[w] = true
		}
	}
	return out, nil
}

func haproxySkeleton(body []byte, vocab map[string]bool) (string, error) {
	ls, err := haproxyParse(body)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, l := range ls {
		for _, w := range l.words {
			b.WriteString(keep(vocab, w) + " ")
		}
		fmt.Fprintf(&b, "(%d words, %d vars)\n", len(l.words), l.vars)
	}
	return b.String(), nil
}

// --- Go: the syntax tree's node types in order, identifiers kept when
// vocab has them; string literals that hold a Lua script (redis.call)
// add the script's Lua token skeleton.

func goFile(body []byte) (*ast.File, error) {
	return parser.ParseFile(token.NewFileSet(), "x.go", body, parser.ParseComments)
}

func goWords(body []byte) (map[string]bool, error) {
	f, err := goFile(body)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			out[n.Name] = true
		case *ast.BasicLit:
			if lua, ok := luaScript(n); ok {
				for _, t := range luaTokens(lua) {
					out[t] = true
				}
			}
		}
		return true
	})
	return out, nil
}

func luaScript(n *ast.BasicLit) (string, bool) {
	if n.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(n.Value)
	return s, err == nil && strings.Contains(s, "redis.call")
}

func goSkeleton(body []byte, vocab map[string]bool) (string, error) {
	f, err := goFile(body)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range f.Comments {
		for _, l := range c.List {
			// A comment is one line of "//" or a whole "/* … */".
			if strings.HasPrefix(l.Text, "//") && strings.ContainsAny(l.Text, "\n\r") {
				return "", fmt.Errorf("a line comment spans lines: %q", l.Text)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case nil:
			b.WriteString(")")
			return false
		case *ast.Ident:
			b.WriteString("id:" + keep(vocab, n.Name))
		case *ast.BasicLit:
			b.WriteString("lit:" + n.Kind.String())
			if lua, ok := luaScript(n); ok {
				b.WriteString("[lua ")
				for _, t := range luaTokens(lua) {
					b.WriteString(keep(vocab, t) + " ")
				}
				b.WriteString("]")
			}
		case *ast.Comment, *ast.CommentGroup:
			return false
		default:
			fmt.Fprintf(&b, "%T", n)
		}
		b.WriteString("(")
		return true
	})
	return b.String(), nil
}

// luaTokens splits a Lua chunk into its tokens, without comments; a
// string or a long string is one token "str".
func luaTokens(s string) []string {
	var out []string
	longEnd := func(i int) (level int, ok bool) { // at '[': "[[", "[=[", …
		j := i + 1
		for j < len(s) && s[j] == '=' {
			j++
		}
		return j - i - 1, j < len(s) && s[j] == '['
	}
	skipLong := func(i, level int) int {
		end := "]" + strings.Repeat("=", level) + "]"
		k := strings.Index(s[i:], end)
		if k < 0 {
			return len(s)
		}
		return i + k + len(end)
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case strings.HasPrefix(s[i:], "--"):
			if i+2 < len(s) && s[i+2] == '[' {
				if level, ok := longEnd(i + 2); ok {
					i = skipLong(i+2, level)
					continue
				}
			}
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '[':
			if level, ok := longEnd(i); ok {
				i = skipLong(i, level)
				out = append(out, "str")
				continue
			}
			out = append(out, "[")
			i++
		case c == '"' || c == '\'':
			j := i + 1
			for ; j < len(s) && s[j] != c && s[j] != '\n'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			out = append(out, "str")
			i = j + 1
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			out = append(out, s[i:j])
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] == '.' || s[j] == 'x' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'f' || s[j] >= 'A' && s[j] <= 'F') {
				j++
			}
			out = append(out, "num")
			i = j
		default:
			out = append(out, string(c))
			i++
		}
	}
	return out
}

// --- Markdown: each line's block kind (heading level, table row and its
// cells, list item, fence, quote, paragraph) and, outside code, what
// starts inline structure: raw HTML ('<'), links and images, code spans;
// an HTML comment line, by the "--" that could end it.

func markdownLines(body []byte) []string {
	var out []string
	fence := false
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			out = append(out, "fence")
			continue
		}
		if fence {
			out = append(out, "code")
			continue
		}
		if strings.HasPrefix(line, "<!--") {
			// An HTML comment: anything but its own "<!--" and "-->"
			// that holds "--" may end it ("--!>", a parser's leniency).
			out = append(out, fmt.Sprintf("comment dashes=%d", strings.Count(line, "--")))
			continue
		}
		kind := "p"
		switch t := strings.TrimLeft(line, " "); {
		case t == "":
			kind = "blank"
		case strings.HasPrefix(t, "#"):
			kind = "h" + strconv.Itoa(len(t)-len(strings.TrimLeft(t, "#")))
		case strings.HasPrefix(t, "|"):
			kind = "row"
		case strings.HasPrefix(t, "- "), strings.HasPrefix(t, "* "), strings.HasPrefix(t, "+ "):
			kind = "li"
		case regexp.MustCompile(`^[0-9]+[.)] `).MatchString(t):
			kind = "ol"
		case strings.HasPrefix(t, ">"):
			kind = "quote"
		}
		// Outside code spans: pipes (table cells), '<', "](".
		var pipes, lt, links, spans int
		inCode := false
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case c == '\\':
				i++
			case c == '`':
				inCode = !inCode
				spans++
			case inCode:
			case c == '|':
				pipes++
			case c == '<':
				lt++
			case c == ']' && i+1 < len(line) && line[i+1] == '(':
				links++
			}
		}
		out = append(out, fmt.Sprintf("%s pipes=%d html=%d links=%d code=%d", kind, pipes, lt, links, spans))
	}
	return out
}

func markdownWords([]byte) (map[string]bool, error) { return nil, nil }

func markdownSkeleton(body []byte, _ map[string]bool) (string, error) {
	return strings.Join(markdownLines(body), "\n"), nil
}
