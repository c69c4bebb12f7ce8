// Package accesslog reads HTTP access logs, one request a line, in three
// formats: nginx/Apache combined, JSON lines and CSV. It owns the parsing:
// which bytes are the time, the client key, the method and the path, and
// which lines are bad and why. Measuring (package measure) and the shadow
// replay both read requests from a Reader.
//
// A Reader streams: it holds one line at a time (at most Config.MaxLine
// bytes), so its memory does not grow with the log. Its line buffer is
// allocated when the first line is read, at 4 KiB, and grows only to fit
// a longer line: validating a configuration with NewReader costs no
// buffer, and a log of short lines a few KiB. Bad lines never stop a
// run; they are counted by reason, with a bounded number of examples.
package accesslog

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Format is the layout of a log's lines.
type Format string

// Formats.
const (
	// Combined is the nginx/Apache "combined" format:
	//
	//	$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"
	//
	// optionally followed by more quoted fields (see KeyHeader).
	Combined Format = "combined"
	// JSON is one JSON object a line; field names are in Config.Fields.
	JSON Format = "json"
	// CSV has a header row naming the columns; column names are in
	// Config.Fields.
	CSV Format = "csv"
)

// KeyKind says what identifies a client.
type KeyKind string

// Key kinds.
const (
	// KeyIP keys by the client address: the first field of a combined
	// line, or the Fields.IP field (JSON) or column (CSV).
	KeyIP KeyKind = "ip"
	// KeyHeader keys by a request header, such as an API key. In the
	// combined format the header must be logged as an extra quoted field
	// after the user agent, as in this nginx format:
	//
	//	log_format keyed '$remote_addr - $remote_user [$time_local] "$request" '
	//	                 '$status $body_bytes_sent "$http_referer" '
	//	                 '"$http_user_agent" "$http_x_api_key"';
	//
	// (Apache: append \"%{X-API-Key}i\" to the combined LogFormat.)
	// Config.Extra says which extra quoted field it is (1, the default, is
	// the first after the user agent); Key.Name is then only a label. In
	// JSON and CSV, header "X-API-Key" reads the field or column named as
	// nginx names the header's variable: "http_x_api_key".
	KeyHeader KeyKind = "header"
	// KeyField keys by any top-level JSON field or CSV column, Key.Name.
	// A JSON number is used as its text.
	KeyField KeyKind = "field"
)

// Key says how to find a line's client key.
type Key struct {
	Kind KeyKind
	Name string // the header or field name; empty for KeyIP
}

// ParseKey parses "ip", "header:<name>" or "field:<name>".
func ParseKey(s string) (Key, error) {
	kind, name, _ := strings.Cut(s, ":")
	switch k := KeyKind(kind); {
	case k == KeyIP && name == "" && !strings.Contains(s, ":"):
		return Key{Kind: KeyIP}, nil
	case (k == KeyHeader || k == KeyField) && name != "":
		return Key{Kind: k, Name: name}, nil
	}
	return Key{}, fmt.Errorf("key %q: want ip, header:<name> or field:<name>", s)
}

// String is the key as ParseKey reads it.
func (k Key) String() string {
	if k.Kind == KeyIP || k.Kind == "" {
		return string(KeyIP)
	}
	return string(k.Kind) + ":" + k.Name
}

// headerField is the nginx variable name of header h: "X-API-Key" →
// "http_x_api_key".
func headerField(h string) string {
	return "http_" + strings.ReplaceAll(strings.ToLower(h), "-", "_")
}

// Fields names the JSON fields or CSV columns that hold each part of a
// request. An empty name takes the default shown.
type Fields struct {
	Time    string // "time": RFC 3339, "10/Oct/2000:13:55:36 -0700", or Unix seconds/ms/µs/ns
	IP      string // "remote_addr": the key for KeyIP
	Method  string // "method"
	Path    string // "path": the request target; a query string is allowed
	Request string // "request": "GET /path HTTP/1.1", read when Method or Path is absent
	// Tier holds the client's tier name, for the shadow replay; "" (the
	// default) reads no tier.
	Tier string
}

func (f Fields) withDefaults() Fields {
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&f.Time, "time")
	def(&f.IP, "remote_addr")
	def(&f.Method, "method")
	def(&f.Path, "path")
	def(&f.Request, "request")
	return f
}

// Config says how to read a log. The zero value reads combined lines keyed
// by IP.
type Config struct {
	Format Format // "" means Combined
	Key    Key    // zero means KeyIP
	// Extra is which extra quoted field after the user agent holds the
	// header for KeyHeader in the combined format, from 1; 0 means 1.
	Extra int
	// TierExtra is which extra quoted field after the user agent holds the
	// client's tier in the combined format, from 1; 0 reads no tier. A
	// line without that field has no tier.
	TierExtra int
	Fields    Fields // JSON and CSV only
	// Comma separates CSV columns; 0 means ','.
	Comma byte
	// MaxLine is the longest line in bytes; longer lines are bad. 0 means
	// 1 MiB.
	MaxLine int
	// Examples is how many example lines are kept per bad-line reason; 0
	// means 3.
	Examples int
}

// Record is one request. Its byte slices point into the Reader's buffer and
// are valid only until the next call to Scan: copy what you keep.
type Record struct {
	Line     int64  // 1-based line number in the log
	UnixNano int64  // the request's time, Unix nanoseconds (combined logs have whole seconds)
	Key      []byte // the client key; empty or "-" when the line has none (see Reader.NoKey)
	Method   []byte // as logged, such as "GET"
	Path     []byte // the request target as logged, query string included
	Tier     []byte // the client's tier, when Config names where it is logged; empty otherwise
}

// Time is the record's time in UTC.
func (r *Record) Time() time.Time { return time.Unix(0, r.UnixNano).UTC() }

// Reason is why a line is bad.
type Reason string

// Reasons for bad lines.
const (
	ReasonTooLong    Reason = "line too long"
	ReasonNoTime     Reason = "no [time] field"
	ReasonBadTime    Reason = "time not understood"
	ReasonNoRequest  Reason = "no quoted request"
	ReasonBadRequest Reason = `request is not "METHOD PATH ..."`
	ReasonNoKeyField Reason = "no key field"
	ReasonNotJSON    Reason = "not a JSON object"
	ReasonBadValue   Reason = "field of the wrong type"
	ReasonMissing    Reason = "missing field"
	ReasonUnquoted   Reason = "unbalanced quote"
	ReasonFewColumns Reason = "fewer columns than the header"
)

// BadLine is an example of a bad line.
type BadLine struct {
	Line   int64  `json:"line"`
	Reason Reason `json:"reason"`
	Text   string `json:"text"` // the line, cut to 200 bytes
}

// BadLines counts bad lines by reason and keeps examples: the first
// Config.Examples of each reason, in log order.
type BadLines struct {
	Count    int64            `json:"count"`
	ByReason map[Reason]int64 `json:"by_reason,omitempty"`
	Examples []BadLine        `json:"examples,omitempty"`
}

func (b *BadLines) add(line int64, why Reason, text []byte, keep int) {
	b.Count++
	if b.ByReason == nil {
		b.ByReason = map[Reason]int64{}
	}
	b.ByReason[why]++
	if b.ByReason[why] > int64(keep) {
		return
	}
	const maxText = 200
	if len(text) > maxText {
		text = text[:maxText]
	}
	b.Examples = append(b.Examples, BadLine{Line: line, Reason: why, Text: string(text)})
}

// ErrNoRecords is wrapped by Reader.Err when the whole log had no parseable
// line.
var ErrNoRecords = errors.New("no parseable line")

// Reader reads records from a log. It is not safe for concurrent use.
//
//	rd, err := accesslog.NewReader(f, cfg)
//	for rd.Scan() {
//		rec := rd.Record()
//		…
//	}
//	if err := rd.Err(); err != nil { … }
type Reader struct {
	cfg     Config
	br      lineReader
	rec     Record
	line    int64
	records int64
	noKey   int64
	bytes   int64
	bad     BadLines
	err     error
	done    bool

	clf  clfCache
	csv  *csvState
	json jsonState
}

// NewReader returns a Reader of r, or an error naming the bad field of cfg.
func NewReader(r io.Reader, cfg Config) (*Reader, error) {
	if cfg.Format == "" {
		cfg.Format = Combined
	}
	if cfg.Key.Kind == "" {
		cfg.Key.Kind = KeyIP
	}
	if cfg.Extra == 0 {
		cfg.Extra = 1
	}
	if cfg.Comma == 0 {
		cfg.Comma = ','
	}
	if cfg.MaxLine == 0 {
		cfg.MaxLine = 1 << 20
	}
	if cfg.Examples == 0 {
		cfg.Examples = 3
	}
	cfg.Fields = cfg.Fields.withDefaults()
	switch cfg.Key.Kind {
	case KeyIP, KeyHeader, KeyField:
	default:
		return nil, fmt.Errorf("key kind %q: want ip, header or field", cfg.Key.Kind)
	}
	if cfg.Key.Kind != KeyIP && cfg.Key.Name == "" {
		return nil, fmt.Errorf("key %s: a name is required", cfg.Key.Kind)
	}
	switch cfg.Format {
	case Combined:
		if cfg.Key.Kind == KeyField {
			return nil, fmt.Errorf("key %s: the combined format has no named fields; use ip or header:<name> with an extra quoted field", cfg.Key)
		}
	case JSON, CSV:
	default:
		return nil, fmt.Errorf("format %q: want combined, json or csv", cfg.Format)
	}
	if cfg.Extra < 1 || cfg.Extra > 64 {
		return nil, fmt.Errorf("extra %d: want the position of the quoted field after the user agent, 1 to 64", cfg.Extra)
	}
	if cfg.TierExtra < 0 || cfg.TierExtra > 64 {
		return nil, fmt.Errorf("tier extra %d: want the position of the quoted field after the user agent, 1 to 64, or 0 for none", cfg.TierExtra)
	}
	if cfg.MaxLine < 64 || cfg.MaxLine > 1<<30 {
		return nil, fmt.Errorf("max line %d: want 64 bytes to 1 GiB", cfg.MaxLine)
	}
	if cfg.Examples < 0 || cfg.Examples > 1000 {
		return nil, fmt.Errorf("examples %d: want 0 to 1000 per reason", cfg.Examples)
	}
	if cfg.Comma == '"' || cfg.Comma == '\n' || cfg.Comma == '\r' {
		return nil, fmt.Errorf("comma %q: want a separator other than a quote or a line end", cfg.Comma)
	}
	rd := &Reader{cfg: cfg, br: lineReader{r: r, max: max(cfg.MaxLine+2, 64<<10)}} // +2 for CR LF
	switch cfg.Format {
	case JSON:
		rd.json.init(cfg)
	case CSV:
		rd.csv = &csvState{}
	}
	return rd, nil
}

// Scan advances to the next good record, skipping and counting bad lines
// and blank lines. It returns false at the end of the log or on a read
// error; see Err.
func (rd *Reader) Scan() bool {
	if rd.done {
		return false
	}
	for {
		line, err := rd.readLine()
		if line == nil {
			rd.done = true
			if err != nil && err != io.EOF {
				rd.err = fmt.Errorf("reading line %d: %w", rd.line+1, err)
			} else if rd.records == 0 {
				rd.err = rd.noRecords()
			}
			return false
		}
		rd.rec = Record{Line: rd.line}
		var why Reason
		switch rd.cfg.Format {
		case Combined:
			why = rd.parseCombined(line)
		case JSON:
			why = rd.parseJSON(line)
		case CSV:
			if rd.csv.header == nil {
				if why = rd.csv.readHeader(line, rd.cfg); why == "" {
					continue
				}
				if why == reasonFatal {
					rd.done = true
					rd.err = rd.csv.err
					return false
				}
			} else {
				why = rd.parseCSV(line)
			}
		}
		if why == reasonSkip {
			continue
		}
		if why != "" {
			rd.bad.add(rd.line, why, line, rd.cfg.Examples)
			continue
		}
		rd.records++
		if k := rd.rec.Key; len(k) == 0 || len(k) == 1 && k[0] == '-' {
			rd.noKey++
		}
		return true
	}
}

// Internal reasons: a blank line, and a CSV header that cannot be used.
const (
	reasonSkip  Reason = "\x00skip"
	reasonFatal Reason = "\x00fatal"
)

// readLine returns the next line without its line end, or nil at the end.
// A line longer than MaxLine is counted as bad and skipped. A read error
// ends the log where it happened: the partial line before it is not a
// line of the log.
func (rd *Reader) readLine() ([]byte, error) {
	for {
		line, err := rd.br.readSlice()
		rd.bytes += int64(len(line))
		if err != nil && err != io.EOF && err != errLineFull {
			return nil, err
		}
		if err == errLineFull || len(trimEOL(line)) > rd.cfg.MaxLine {
			rd.line++
			rd.bad.add(rd.line, ReasonTooLong, line[:min(len(line), 200)], rd.cfg.Examples)
			for err == errLineFull {
				line, err = rd.br.readSlice()
				rd.bytes += int64(len(line))
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		if len(line) == 0 {
			return nil, err
		}
		rd.line++
		line = trimEOL(line)
		if len(line) == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		return line, nil
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// Record is the record Scan found.
func (rd *Reader) Record() *Record { return &rd.rec }

// Err is the error that ended the scan: a read error, a CSV header without
// a needed column, or, for a log with no parseable line, an error wrapping
// ErrNoRecords that names the expected formats. nil at a normal end.
func (rd *Reader) Err() error { return rd.err }

// Lines is how many lines were read so far, blank and bad ones included.
func (rd *Reader) Lines() int64 { return rd.line }

// Bytes is how many bytes were read so far.
func (rd *Reader) Bytes() int64 { return rd.bytes }

// Records is how many good records Scan returned.
func (rd *Reader) Records() int64 { return rd.records }

// NoKey is how many good records had an empty or "-" key (an IP or header
// that was not logged).
func (rd *Reader) NoKey() int64 { return rd.noKey }

// Bad is the bad-line count and examples so far.
func (rd *Reader) Bad() BadLines { return rd.bad }

func (rd *Reader) noRecords() error {
	want := map[Format]string{
		Combined: `nginx/Apache combined lines: 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /path HTTP/1.1" 200 123 "referer" "agent"` +
			extraHint(rd.cfg),
		JSON: fmt.Sprintf("JSON lines, one object a line with fields %q (time), %q and %q (or %q), and the key",
			rd.cfg.Fields.Time, rd.cfg.Fields.Method, rd.cfg.Fields.Path, rd.cfg.Fields.Request),
		CSV: fmt.Sprintf("CSV with a header row naming columns %q (time), %q and %q (or %q), and the key",
			rd.cfg.Fields.Time, rd.cfg.Fields.Method, rd.cfg.Fields.Path, rd.cfg.Fields.Request),
	}
	example := ""
	if rd.bad.Count > 0 {
		ex := rd.bad.Examples[0]
		example = fmt.Sprintf(" (line %d: %s)", ex.Line, ex.Reason)
	}
	return fmt.Errorf("%s format: %w in %d lines%s; expected %s; other formats: %s, %s",
		rd.cfg.Format, ErrNoRecords, rd.line, example, want[rd.cfg.Format],
		otherFormat(rd.cfg.Format, 0), otherFormat(rd.cfg.Format, 1))
}

func extraHint(cfg Config) string {
	if cfg.Key.Kind == KeyHeader {
		return fmt.Sprintf(` followed by the %s header as quoted field %d after the agent`, cfg.Key.Name, cfg.Extra)
	}
	return ""
}

func otherFormat(f Format, i int) string {
	others := []string{}
	for _, o := range []Format{Combined, JSON, CSV} {
		if o != f {
			others = append(others, string(o))
		}
	}
	return others[i]
}
