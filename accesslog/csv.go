package accesslog

import (
	"bytes"
	"fmt"
	"strings"
)

// CSV logs are read a line at a time (RFC 4180 quoting: "a ""b""" is
// a "b"), so a quoted field cannot span lines: a line with an unbalanced
// quote is bad. The first non-blank line is the header; a UTF-8 byte order
// mark before it is ignored.

type csvState struct {
	header  []string
	col     [jFields]int // column index of each wanted field, or -1
	need    int          // columns a line must have
	fields  [][]byte
	scratch []byte
	err     error
}

func (c *csvState) readHeader(line []byte, cfg Config) Reason {
	line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	fields, _, why := splitCSV(line, cfg.Comma, nil, nil)
	if why != "" {
		c.err = fmt.Errorf("csv header: %s", why)
		return reasonFatal
	}
	c.header = make([]string, len(fields))
	for i, f := range fields {
		c.header[i] = strings.TrimSpace(string(f))
	}
	names := [jFields]string{
		jTime: cfg.Fields.Time, jKey: keyName(cfg), jMethod: cfg.Fields.Method,
		jPath: cfg.Fields.Path, jRequest: cfg.Fields.Request, jTier: cfg.Fields.Tier,
	}
	for f, n := range names {
		c.col[f] = -1
		for i, h := range c.header {
			if n != "" && h == n {
				c.col[f] = i
				break
			}
		}
	}
	missing := ""
	switch {
	case c.col[jTime] < 0:
		missing = fmt.Sprintf("%q (time)", names[jTime])
	case c.col[jKey] < 0:
		missing = fmt.Sprintf("%q (key %s)", names[jKey], cfg.Key)
	case (c.col[jMethod] < 0 || c.col[jPath] < 0) && c.col[jRequest] < 0:
		missing = fmt.Sprintf("%q and %q, or %q (method and path)", names[jMethod], names[jPath], names[jRequest])
	}
	if missing != "" {
		c.err = fmt.Errorf("csv header %q has no column %s", c.header, missing)
		return reasonFatal
	}
	for _, i := range c.col {
		c.need = max(c.need, i+1)
	}
	return ""
}

func (rd *Reader) parseCSV(line []byte) Reason {
	c := rd.csv
	var why Reason
	c.fields, c.scratch, why = splitCSV(line, rd.cfg.Comma, c.fields[:0], c.scratch)
	if why != "" {
		return why
	}
	if len(c.fields) < c.need {
		return ReasonFewColumns
	}
	t, ok := parseTimeText(bytes.TrimSpace(c.fields[c.col[jTime]]), &rd.clf)
	if !ok {
		return ReasonBadTime
	}
	var method, path []byte
	if c.col[jMethod] >= 0 && c.col[jPath] >= 0 {
		method, path = c.fields[c.col[jMethod]], c.fields[c.col[jPath]]
	}
	if len(method) == 0 || len(path) == 0 {
		if c.col[jRequest] < 0 {
			return ReasonMissing
		}
		if method, path, ok = splitRequest(c.fields[c.col[jRequest]]); !ok {
			if len(c.fields[c.col[jRequest]]) == 0 {
				return ReasonMissing
			}
			return ReasonBadRequest
		}
	}
	rd.rec.Tier = nil
	if c.col[jTier] >= 0 {
		rd.rec.Tier = c.fields[c.col[jTier]]
	}
	rd.rec.UnixNano = t
	rd.rec.Key = c.fields[c.col[jKey]]
	rd.rec.Method = method
	rd.rec.Path = path
	return ""
}

// splitCSV appends line's fields to fields. Quoted fields with doubled
// quotes are unescaped into scratch, whose capacity is kept at least the
// line's length so that earlier fields stay valid.
func splitCSV(line []byte, comma byte, fields [][]byte, scratch []byte) ([][]byte, []byte, Reason) {
	if cap(scratch) < len(line) {
		scratch = make([]byte, 0, len(line)+len(line)/2)
	}
	scratch = scratch[:0]
	i := 0
	for {
		if i < len(line) && line[i] == '"' {
			// Quoted field.
			start := len(scratch)
			j := i + 1
			for {
				q := bytes.IndexByte(line[j:], '"')
				if q < 0 {
					return fields, scratch, ReasonUnquoted
				}
				scratch = append(scratch, line[j:j+q]...)
				j += q + 1
				if j < len(line) && line[j] == '"' {
					scratch = append(scratch, '"')
					j++
					continue
				}
				break
			}
			fields = append(fields, scratch[start:len(scratch):len(scratch)])
			if j == len(line) {
				return fields, scratch, ""
			}
			if line[j] != comma {
				return fields, scratch, ReasonUnquoted
			}
			i = j + 1
			continue
		}
		e := bytes.IndexByte(line[i:], comma)
		if e < 0 {
			f := line[i:]
			if bytes.IndexByte(f, '"') >= 0 {
				return fields, scratch, ReasonUnquoted
			}
			return append(fields, f), scratch, ""
		}
		f := line[i : i+e]
		if bytes.IndexByte(f, '"') >= 0 {
			return fields, scratch, ReasonUnquoted
		}
		fields = append(fields, f)
		i += e + 1
	}
}
