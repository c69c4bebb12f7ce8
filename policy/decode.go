package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// Limits on a document, checked before the work they bound.
const (
	// MaxSize is the largest document Decode reads, in bytes.
	MaxSize = 1 << 20
	// MaxDepth is the deepest nesting of mappings and sequences.
	MaxDepth = 32
	// MaxExpandedNodes bounds the nodes of the document with every alias
	// replaced by what it names: a billion-laughs document is refused
	// while counting, long before anything is expanded.
	MaxExpandedNodes = 100_000
)

// Decode reads one policy document from r and checks it: its shape (known
// fields, types, durations, unique names, known algorithms) and every value
// against the ranges of packages algorithms and calc. A bad document gives
// Errors listing every problem with its line and column.
//
// The document is UTF-8, optionally after a byte order mark; one of UTF-16
// or UTF-32 is refused. Before the YAML tokenizer sees it, one pass over
// the bytes that allocates nothing refuses it, at the first byte past the
// limit, if it breaks MaxSize, MaxDepth, MaxLines, MaxLineLength,
// MaxTokens, MaxKeys, MaxMappingKeys or MaxAnchors, or holds a tag or a
// directive; so refusing any document costs memory in proportion to its
// size, not to the syntax it holds.
func Decode(r io.Reader) (Policy, error) {
	var buf bytes.Buffer
	if l, ok := r.(interface{ Len() int }); ok {
		// One allocation for a reader that knows its length, with room
		// for the read that finds the end.
		buf.Grow(min(l.Len(), MaxSize+1) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, MaxSize+1)); err != nil {
		return Policy{}, Errors{{Message: "cannot read the document: " + err.Error()}}
	}
	return decode(buf.Bytes(), true)
}

// DecodeFile decodes the policy file name, or stdin when name is "-", as
// the command-line tools take them. A file that cannot be opened is that
// error (an *fs.PathError); otherwise it is Decode's.
func DecodeFile(name string, stdin io.Reader) (Policy, error) {
	if name == "-" {
		return Decode(stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return Policy{}, err
	}
	defer f.Close()
	return Decode(f)
}

// decodeOnly reads the document's shape without checking its values.
func decodeOnly(data []byte) (Policy, error) { return decode(data, false) }

func decode(data []byte, check bool) (Policy, error) {
	if len(data) > MaxSize {
		return Policy{}, Errors{prescan(data)}
	}
	data, bomErr := trimBOM(data)
	if bomErr != nil {
		return Policy{}, Errors{bomErr}
	}
	if err := checkUTF8(data); err != nil {
		return Policy{}, Errors{err}
	}
	data = jsonSpaces(data)
	if err := prescan(data); err != nil {
		return Policy{}, Errors{err}
	}
	return parse(data, check)
}

// jsonSpaces is data with every tab a space when data is a JSON object (a
// policy sent as JSON, indented with tabs as some encoders do): JSON has
// tabs only between its tokens, a string's being escaped, where a space
// means the same, and the pre-scan refuses a tab there (syntaxTab).
// Other data is returned as it is.
func jsonSpaces(data []byte) []byte {
	if bytes.IndexByte(data, '\t') < 0 {
		return data
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' || !json.Valid(data) {
		return data
	}
	return bytes.ReplaceAll(data, []byte{'\t'}, []byte{' '})
}

// parse decodes a document that passed prescan.
func parse(data []byte, check bool) (Policy, error) {
	tokens := lexer.Tokenize(string(data))
	if err := checkDepth(tokens); err != nil {
		return Policy{}, Errors{err}
	}
	file, err := parser.Parse(tokens, 0)
	if err != nil {
		return Policy{}, Errors{syntaxError(err)}
	}
	var docs []*ast.DocumentNode
	for _, d := range file.Docs {
		if d.Body != nil {
			docs = append(docs, d)
		}
	}
	switch {
	case len(docs) == 0:
		return Policy{}, Errors{{Line: 1, Column: 1, Message: "the document is empty; want a RateLimitPolicy"}}
	case len(docs) > 1:
		at := position(docs[1].Body)
		return Policy{}, Errors{{Line: at.Line, Column: at.Column, Message: "more than one YAML document; want exactly one policy"}}
	}
	d := &decoder{pos: map[string]Pos{}, anchors: map[string]ast.Node{}, sizes: map[ast.Node]int{}}
	if d.measure(docs[0].Body, 1) > MaxExpandedNodes {
		if len(d.errs) == 0 {
			d.errs = append(d.errs, &Error{Line: 1, Column: 1,
				Message: fmt.Sprintf("the document has more than %d nodes with its aliases expanded", MaxExpandedNodes),
				Hint:    "a policy needs a few thousand; repeat anchors less"})
		}
		return Policy{}, d.errs
	}
	if len(d.errs) > 0 {
		return Policy{}, d.errs.sorted()
	}
	p := d.policy(docs[0].Body)
	p.pos = d.pos
	if check {
		d.validate(&p)
	}
	if len(d.errs) > 0 {
		return Policy{}, d.errs.sorted()
	}
	return p, nil
}

// Byte order marks: UTF-8's is skipped at the start of a document, the
// others are refused.
var boms = []struct {
	mark, name string
}{
	{"\x00\x00\xFE\xFF", "UTF-32 (big-endian)"},
	{"\xFF\xFE\x00\x00", "UTF-32 (little-endian)"},
	{"\xFE\xFF", "UTF-16 (big-endian)"},
	{"\xFF\xFE", "UTF-16 (little-endian)"},
}

// trimBOM drops a UTF-8 byte order mark at the start of data, and refuses
// a document that starts with the mark of another encoding. A mark
// anywhere else is left to the parser: in a quoted string it is a
// character, elsewhere it makes an unknown key or value.
func trimBOM(data []byte) ([]byte, *Error) {
	for _, b := range boms {
		if bytes.HasPrefix(data, []byte(b.mark)) {
			return nil, &Error{Line: 1, Column: 1,
				Message: fmt.Sprintf("the document is %s, by its byte order mark; want UTF-8", b.name),
				Hint:    "save it as UTF-8"}
		}
	}
	return bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF")), nil
}

// checkUTF8 refuses a document that is not UTF-8, at the first bad byte.
func checkUTF8(data []byte) *Error {
	if utf8.Valid(data) {
		return nil
	}
	i := 0
	for i < len(data) {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	line := bytes.Count(data[:i], []byte("\n")) + 1
	return &Error{Line: line, Column: i - bytes.LastIndexByte(data[:i], '\n'), Message: "the document is not valid UTF-8"}
}

// checkDepth refuses tokens nested deeper than MaxDepth, before parsing:
// the parser takes time that grows faster than the depth ("[[[[…" or
// "- - - …" a few hundred thousand deep takes minutes), while the lexer
// is linear. The depth is that of flow collections ([ and {) plus block
// collections, told apart by the column of their "-" entries and keys.
// prescan has refused deeper documents before tokenizing, counting the
// same way from the bytes; this check keeps the bound on the tokens
// themselves.
func checkDepth(tokens token.Tokens) *Error {
	type block struct {
		col int
		seq bool
	}
	var (
		flow   int
		blocks []block
	)
	for i, tk := range tokens {
		var b block
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow = max(0, flow-1)
			continue
		case token.SequenceEntryType:
			b = block{tk.Position.Column, true}
		case token.MappingKeyType: // "? key"
			b = block{tk.Position.Column, false}
		case token.MappingValueType:
			if i == 0 {
				continue
			}
			b = block{tokens[i-1].Position.Column, false}
		default:
			continue
		}
		if b.col > 0 && flow == 0 {
			for len(blocks) > 0 {
				top := blocks[len(blocks)-1]
				if top.col > b.col || (top.col == b.col && top.seq != b.seq) {
					blocks = blocks[:len(blocks)-1]
					continue
				}
				break
			}
			if n := len(blocks); n == 0 || blocks[n-1] != b {
				blocks = append(blocks, b)
			}
		}
		if flow+len(blocks) > MaxDepth {
			at := tk.Position
			if tk.Type == token.MappingValueType {
				at = tokens[i-1].Position // the key
			}
			return &Error{Line: at.Line, Column: at.Column, Message: fmt.Sprintf("collections nested deeper than %d", MaxDepth)}
		}
	}
	return nil
}

// syntaxError turns the parser's error into an Error at its token.
func syntaxError(err error) *Error {
	var se *yaml.SyntaxError
	if errors.As(err, &se) && se.Token != nil {
		return &Error{Line: se.Token.Position.Line, Column: se.Token.Position.Column, Message: "YAML syntax: " + se.Message}
	}
	var de *yaml.DuplicateKeyError
	if errors.As(err, &de) && de.Token != nil {
		return &Error{Line: de.Token.Position.Line, Column: de.Token.Position.Column, Message: de.Message}
	}
	return &Error{Message: "YAML syntax: " + err.Error()}
}

type decoder struct {
	errs    Errors
	pos     map[string]Pos
	anchors map[string]ast.Node
	// sizes memoizes the expanded size of each anchored node.
	sizes map[ast.Node]int
}

func position(n ast.Node) Pos {
	switch m := n.(type) {
	case *ast.MappingNode:
		if len(m.Values) > 0 {
			return position(m.Values[0].Key)
		}
	case *ast.MappingValueNode:
		return position(m.Key)
	}
	if n == nil || n.GetToken() == nil {
		return Pos{}
	}
	p := n.GetToken().Position
	return Pos{p.Line, p.Column}
}

// fail records a problem at node n.
func (d *decoder) fail(n ast.Node, field, msg, hint string) {
	at := position(n)
	d.errs = append(d.errs, &Error{Line: at.Line, Column: at.Column, Field: field, Message: msg, Hint: hint})
}

// measure is the number of nodes under n with aliases expanded, counted
// without expanding: an anchor's size is computed once. It records anchors,
// refuses tags and merge keys and nesting beyond MaxDepth, and stops
// counting past MaxExpandedNodes.
func (d *decoder) measure(n ast.Node, depth int) int {
	if depth > MaxDepth {
		d.fail(n, "", fmt.Sprintf("collections nested deeper than %d", MaxDepth), "")
		return MaxExpandedNodes + 1
	}
	switch n := n.(type) {
	case *ast.AnchorNode:
		size := d.measure(n.Value, depth)
		d.anchors[tokenText(n.Name)] = n.Value
		d.sizes[n.Value] = size
		return size
	case *ast.AliasNode:
		target, ok := d.anchors[tokenText(n.Value)]
		if !ok {
			d.fail(n, "", fmt.Sprintf("alias *%s names no anchor before it", tokenText(n.Value)), "")
			return MaxExpandedNodes + 1
		}
		return d.sizes[target]
	case *ast.TagNode:
		d.fail(n, "", fmt.Sprintf("tag %s: tags are not supported", tokenText(n)), "leave the tag out; quote a value to make it a string")
		return 1
	case *ast.MappingNode:
		total := 1
		for _, mv := range n.Values {
			if total += d.measure(mv, depth+1); total > MaxExpandedNodes {
				return total
			}
		}
		return total
	case *ast.MappingValueNode:
		if n.Key.IsMergeKey() {
			d.fail(n.Key, "", "merge keys (<<) are not supported", "write the fields out")
		}
		return 1 + d.measure(n.Key, depth) + d.measure(n.Value, depth)
	case *ast.SequenceNode:
		total := 1
		for _, v := range n.Values {
			if total += d.measure(v, depth+1); total > MaxExpandedNodes {
				return total
			}
		}
		return total
	}
	return 1
}

// tokenText is the text of n's token, or "" when it has none.
func tokenText(n ast.Node) string {
	if n == nil || n.GetToken() == nil {
		return ""
	}
	return n.GetToken().Value
}

// resolve follows anchors and aliases to the node that holds the value.
func (d *decoder) resolve(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			n = d.anchors[tokenText(v.Value)]
		default:
			return n
		}
	}
}

// join appends key to a path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// kind names a node's type for "want a mapping, got a string".
func kind(n ast.Node) string {
	switch n := n.(type) {
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode, nil:
		return "nothing (null)"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.StringNode, *ast.LiteralNode:
		if _, err := strconv.ParseFloat(n.GetToken().Value, 64); err == nil && n.GetToken().Type == token.StringType {
			return "a number"
		}
		return fmt.Sprintf("the string %s", clip(n.GetToken().Value))
	}
	return "a " + n.Type().String()
}

// clip quotes s for a message, shortened when long.
func clip(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "…"
	}
	return strconv.Quote(s)
}

// mapping calls set for each field of the mapping at n, reporting a node
// that is not a mapping, unknown fields (with the closest known one as a
// hint) and missing required ones. ok is false when n is not a mapping.
func (d *decoder) mapping(n ast.Node, path string, fields, required []string, set func(key string, v ast.Node, path string)) bool {
	m, ok := d.resolve(n).(*ast.MappingNode)
	if !ok {
		d.fail(n, path, fmt.Sprintf("want a mapping with %s, got %s", listing(fields), kind(d.resolve(n))), "")
		return false
	}
	seen := map[string]bool{}
	for _, mv := range m.Values {
		key := tokenText(mv.Key)
		if _, isStr := mv.Key.(*ast.StringNode); !isStr && !slices.Contains(fields, key) {
			d.fail(mv.Key, join(path, key), fmt.Sprintf("unknown field %s", clip(key)), "want one of "+listing(fields))
			continue
		}
		if !slices.Contains(fields, key) {
			hint := suggest(key, fields)
			if hint == "" {
				hint = "want one of " + listing(fields)
			}
			d.fail(mv.Key, join(path, key), fmt.Sprintf("unknown field `%s`", clipRaw(key)), hint)
			continue
		}
		seen[key] = true
		fp := join(path, key)
		d.pos[fp] = position(mv.Key)
		set(key, mv.Value, fp)
	}
	for _, r := range required {
		if !seen[r] {
			d.fail(m, join(path, r), fmt.Sprintf("missing required field `%s`", r), "")
		}
	}
	return true
}

func clipRaw(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		return string([]rune(s)[:40]) + "…"
	}
	return s
}

func listing(fields []string) string { return strings.Join(fields, ", ") }

// sequence calls each for every entry of the list at n.
func (d *decoder) sequence(n ast.Node, path string, each func(i int, v ast.Node, path string)) {
	s, ok := d.resolve(n).(*ast.SequenceNode)
	if !ok {
		d.fail(n, path, "want a list, got "+kind(d.resolve(n)), "")
		return
	}
	for i, v := range s.Values {
		fp := fmt.Sprintf("%s[%d]", path, i)
		d.pos[fp] = position(v)
		each(i, v, fp)
	}
}

// str reads a string. A number or boolean is refused: quote it.
func (d *decoder) str(n ast.Node, path string) string {
	switch v := d.resolve(n).(type) {
	case *ast.StringNode:
		if v.GetToken().Type == token.StringType {
			if _, err := strconv.ParseFloat(v.Value, 64); err == nil {
				d.fail(n, path, "want a string, got a number", fmt.Sprintf("quote it: %q", v.Value))
				return ""
			}
		}
		return v.Value
	case *ast.LiteralNode:
		return v.Value.Value
	}
	r := d.resolve(n)
	hint := ""
	if r != nil && r.GetToken() != nil && r.Type() != ast.MappingType && r.Type() != ast.SequenceType && r.Type() != ast.NullType {
		hint = fmt.Sprintf("quote it: %q", r.GetToken().Value)
	}
	d.fail(n, path, "want a string, got "+kind(r), hint)
	return ""
}

// enum reads one of the allowed strings.
func (d *decoder) enum(n ast.Node, path string, allowed []string) string {
	s := d.str(n, path)
	if s == "" && !isEmptyString(d.resolve(n)) {
		return ""
	}
	if slices.Contains(allowed, s) {
		return s
	}
	d.fail(n, path, fmt.Sprintf("%s is not one of %s", clip(s), listing(allowed)), suggest(s, allowed))
	return ""
}

func isEmptyString(n ast.Node) bool {
	s, ok := n.(*ast.StringNode)
	return ok && s.Value == ""
}

// number reads a finite number: an integer, a decimal, or an unquoted
// number in exponent form (1e6).
func (d *decoder) number(n ast.Node, path string) (float64, bool) {
	r := d.resolve(n)
	switch v := r.(type) {
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return float64(x), true
		case uint64:
			return float64(x), true
		}
	case *ast.FloatNode:
		return v.Value, true
	case *ast.InfinityNode, *ast.NanNode:
		d.fail(n, path, fmt.Sprintf("%s is not a finite number", v.GetToken().Value), "")
		return 0, false
	case *ast.StringNode:
		if v.GetToken().Type == token.StringType {
			if x, err := strconv.ParseFloat(v.Value, 64); err == nil && !math.IsNaN(x) && !math.IsInf(x, 0) {
				return x, true
			}
		}
	}
	hint := ""
	if s, ok := r.(*ast.StringNode); ok {
		if _, err := strconv.ParseFloat(strings.TrimSpace(s.Value), 64); err == nil {
			hint = "leave out the quotes"
		}
	}
	d.fail(n, path, "want a number, got "+kind(r), hint)
	return 0, false
}

// maxWhole bounds whole numbers before the ranges of calc and algorithms
// apply; anything larger is out of every range and might not fit an int.
const maxWhole = 1e15

// whole reads a whole number (1000, 1e3 and 1000.0 all count).
func (d *decoder) whole(n ast.Node, path string) (int64, bool) {
	x, ok := d.number(n, path)
	if !ok {
		return 0, false
	}
	if x != math.Trunc(x) {
		d.fail(n, path, fmt.Sprintf("%s is not a whole number", num(x)), "")
		return 0, false
	}
	if math.Abs(x) > maxWhole {
		d.fail(n, path, fmt.Sprintf("%s is out of range; want a whole number up to %g", num(x), maxWhole), "")
		return 0, false
	}
	return int64(x), true
}

func (d *decoder) integer(n ast.Node, path string) int {
	x, _ := d.whole(n, path)
	return int(x)
}

func (d *decoder) boolean(n ast.Node, path string) bool {
	if b, ok := d.resolve(n).(*ast.BoolNode); ok {
		return b.Value
	}
	d.fail(n, path, "want true or false, got "+kind(d.resolve(n)), "")
	return false
}

// duration reads a Go duration string: "60s", "1m30s", "500ms".
func (d *decoder) duration(n ast.Node, path string) time.Duration {
	r := d.resolve(n)
	s, ok := r.(*ast.StringNode)
	if ok {
		if _, err := strconv.ParseFloat(s.Value, 64); err != nil || s.GetToken().Type != token.StringType {
			v, err := time.ParseDuration(s.Value)
			if err == nil {
				return v
			}
			d.fail(n, path, fmt.Sprintf("%s is not a duration", clip(s.Value)), "write a Go duration such as 60s, 1m30s or 500ms")
			return 0
		}
	}
	hint := "write a Go duration such as 60s, 1m30s or 500ms"
	if x, isNum := d.quietNumber(r); isNum {
		hint = fmt.Sprintf("write `%ss` for %s seconds", num(x), num(x))
	}
	d.fail(n, path, "want a duration, got "+kind(r), hint)
	return 0
}

// quietNumber is number without reporting.
func (d *decoder) quietNumber(n ast.Node) (float64, bool) {
	saved := len(d.errs)
	x, ok := d.number(n, "")
	d.errs = d.errs[:saved]
	return x, ok
}

var (
	topFields      = []string{"apiVersion", "kind", "metadata", "service", "defaults", "sizing", "tiers", "endpoints", "global"}
	metadataFields = []string{"name", "description"}
	serviceFields  = []string{"capacity", "headroom", "replicas", "enforcement", "on_store_failure"}
	defaultsFields = []string{"key", "mode", "response", "limit"}
	responseFields = []string{"status", "headers", "retry_after"}
	sizingFields   = []string{"clients", "p50", "p95", "p99", "percentile_unit", "margin", "peak", "peak_seconds", "window", "max_delay", "retry"}
	retryFields    = []string{"base", "factor", "cap", "attempts", "jitter", "jitter_mode"}
	tierFields     = []string{"name", "key", "clients", "multiplier", "limit"}
	endpointFields = []string{"match", "cost", "limit"}
	matchFields    = []string{"method", "path"}
	globalFields   = []string{"limit"}
	limitFields    = []string{"algorithm", "rate", "burst", "queue", "limit", "window"}

	keys         = []string{string(KeyIP), string(KeyAPIKey), string(KeyAccount), string(KeyGlobal)}
	modes        = []string{string(ModeEnforce), string(ModeShadow)}
	enforcements = []string{string(calc.Shared), string(calc.Local)}
	failures     = []string{string(FailOpen), string(FailClosed)}
	headerStyles = []string{string(HeadersIETF), string(HeadersLegacy), string(HeadersX)}
	units        = []string{string(calc.PerSecond), string(calc.PerMinute)}
	algorithmSet = func() []string {
		out := make([]string, len(algorithms.Names))
		for i, n := range algorithms.Names {
			out[i] = string(n)
		}
		return out
	}()
)

// policy reads the document's shape into a Policy.
func (d *decoder) policy(n ast.Node) Policy {
	var p Policy
	d.mapping(n, "", topFields, []string{"apiVersion", "kind", "metadata", "service"}, func(key string, v ast.Node, path string) {
		switch key {
		case "apiVersion":
			p.APIVersion = d.str(v, path)
		case "kind":
			p.Kind = d.str(v, path)
		case "metadata":
			d.mapping(v, path, metadataFields, []string{"name"}, func(key string, v ast.Node, path string) {
				if key == "name" {
					p.Metadata.Name = d.str(v, path)
				} else {
					p.Metadata.Description = d.str(v, path)
				}
			})
		case "service":
			d.service(v, path, &p.Service)
		case "defaults":
			d.defaults(v, path, &p.Defaults)
		case "sizing":
			d.sizing(v, path, &p.Sizing)
		case "tiers":
			d.sequence(v, path, func(i int, v ast.Node, path string) {
				p.Tiers = append(p.Tiers, d.tier(v, path))
			})
		case "endpoints":
			d.sequence(v, path, func(i int, v ast.Node, path string) {
				p.Endpoints = append(p.Endpoints, d.endpoint(v, path))
			})
		case "global":
			d.mapping(v, path, globalFields, nil, func(_ string, v ast.Node, path string) {
				p.Global.Limit = d.limit(v, path)
			})
		}
	})
	return p
}

func (d *decoder) service(n ast.Node, path string, s *Service) {
	d.mapping(n, path, serviceFields, []string{"capacity"}, func(key string, v ast.Node, path string) {
		switch key {
		case "capacity":
			s.Capacity, _ = d.number(v, path)
		case "headroom":
			if x, ok := d.number(v, path); ok {
				s.Headroom = &x
			}
		case "replicas":
			s.Replicas = d.integer(v, path)
		case "enforcement":
			s.Enforcement = calc.Enforcement(d.enum(v, path, enforcements))
		case "on_store_failure":
			s.OnStoreFailure = StoreFailure(d.enum(v, path, failures))
		}
	})
}

func (d *decoder) defaults(n ast.Node, path string, df *Defaults) {
	d.mapping(n, path, defaultsFields, nil, func(key string, v ast.Node, path string) {
		switch key {
		case "key":
			df.Key = Key(d.enum(v, path, keys))
		case "mode":
			df.Mode = Mode(d.enum(v, path, modes))
		case "limit":
			df.Limit = d.limit(v, path)
		case "response":
			r := &df.Response
			d.mapping(v, path, responseFields, nil, func(key string, v ast.Node, path string) {
				switch key {
				case "status":
					r.Status = d.integer(v, path)
				case "retry_after":
					r.RetryAfter = new(d.boolean(v, path))
				case "headers":
					r.Headers = []HeaderStyle{}
					seen := map[string]bool{}
					d.sequence(v, path, func(_ int, v ast.Node, path string) {
						h := d.enum(v, path, headerStyles)
						if seen[h] && h != "" {
							d.fail(v, path, fmt.Sprintf("header style %s is listed twice", h), "")
						}
						seen[h] = true
						r.Headers = append(r.Headers, HeaderStyle(h))
					})
				}
			})
		}
	})
}

func (d *decoder) sizing(n ast.Node, path string, s *Sizing) {
	d.mapping(n, path, sizingFields, nil, func(key string, v ast.Node, path string) {
		switch key {
		case "clients":
			s.Clients = d.integer(v, path)
		case "p50":
			s.P50, _ = d.number(v, path)
		case "p95":
			s.P95, _ = d.number(v, path)
		case "p99":
			s.P99, _ = d.number(v, path)
		case "percentile_unit":
			s.PercentileUnit = calc.PercentileUnit(d.enum(v, path, units))
		case "margin":
			s.Margin, _ = d.number(v, path)
		case "peak":
			s.Peak, _ = d.number(v, path)
		case "peak_seconds":
			s.PeakSeconds, _ = d.number(v, path)
		case "window":
			s.Window = d.duration(v, path)
		case "max_delay":
			s.MaxDelay = new(d.duration(v, path))
		case "retry":
			r := &s.Retry
			d.mapping(v, path, retryFields, nil, func(key string, v ast.Node, path string) {
				switch key {
				case "base":
					r.Base = d.duration(v, path)
				case "factor":
					r.Factor, _ = d.number(v, path)
				case "cap":
					r.Cap = d.duration(v, path)
				case "attempts":
					r.Attempts = d.integer(v, path)
				case "jitter":
					if x, ok := d.number(v, path); ok {
						r.Jitter = &x
					}
				case "jitter_mode":
					r.JitterMode = d.enum(v, path, calc.JitterModes)
				}
			})
		}
	})
}

func (d *decoder) tier(n ast.Node, path string) Tier {
	var t Tier
	d.mapping(n, path, tierFields, []string{"name"}, func(key string, v ast.Node, path string) {
		switch key {
		case "name":
			t.Name = d.str(v, path)
		case "key":
			t.Key = Key(d.enum(v, path, keys))
		case "clients":
			t.Clients = d.integer(v, path)
		case "multiplier":
			t.Multiplier, _ = d.number(v, path)
		case "limit":
			t.Limit = d.limit(v, path)
		}
	})
	return t
}

func (d *decoder) endpoint(n ast.Node, path string) Endpoint {
	var e Endpoint
	d.mapping(n, path, endpointFields, []string{"match"}, func(key string, v ast.Node, path string) {
		switch key {
		case "match":
			d.mapping(v, path, matchFields, matchFields, func(key string, v ast.Node, path string) {
				if key == "method" {
					e.Match.Method = d.str(v, path)
				} else {
					e.Match.Path = d.str(v, path)
				}
			})
		case "cost":
			e.Cost, _ = d.whole(v, path)
		case "limit":
			e.Limit = d.limit(v, path)
		}
	})
	return e
}

func (d *decoder) limit(n ast.Node, path string) algorithms.Spec {
	var s algorithms.Spec
	d.mapping(n, path, limitFields, []string{"algorithm"}, func(key string, v ast.Node, path string) {
		switch key {
		case "algorithm":
			s.Algorithm = algorithms.Name(d.enum(v, path, algorithmSet))
		case "rate":
			s.Rate, _ = d.number(v, path)
		case "burst":
			s.Burst, _ = d.whole(v, path)
		case "queue":
			s.Queue, _ = d.whole(v, path)
		case "limit":
			s.Limit, _ = d.whole(v, path)
		case "window":
			s.Window = d.duration(v, path)
		}
	})
	return s
}
