package accesslog

import (
	"bytes"
	"io"
	"slices"
)

// Chunks cuts a log into chunks of whole lines, so that several goroutines
// can parse it at once (a Reader from Chunks.Reader per chunk) with the
// very records, bad lines and line numbers a single Reader finds. One
// goroutine calls Next; a chunk's Data is valid until that goroutine's
// next call of Next with the same buffer.
//
// A chunk holds about the size asked for; a line longer than a Reader's
// buffer (MaxLine+2 bytes, at least 64 KiB) is cut there, as a Reader
// cuts it, and its rest dropped, so memory stays bounded by the chunk size
// plus one such line. A CSV log's header (its first non-blank line) is
// read by Next itself, before the first chunk of records.
type Chunks struct {
	r        io.Reader
	tmpl     *Reader // the configuration, and a CSV log's header once read
	keep     int     // the longest line kept whole
	size     int
	carry    []byte // read bytes after the last whole line
	skipping bool   // dropping the rest of a line cut at keep
	fast     bool   // the last read filled the room it had
	err      error
	// ReadFailed is set when Next's error came from reading the log (not
	// io.EOF, not a CSV header's).
	ReadFailed bool
}

// Chunk is one piece of a log: Data holds whole lines (the last perhaps
// without its line end, at the end of the log). Skipped lines came before
// Data in the log (a CSV log's header and the lines before it, with Bad
// their bad lines, numbered within the chunk); Bytes is how many bytes of
// the log the chunk stands for.
type Chunk struct {
	Data    []byte
	Skipped int64
	Bad     BadLines
	Bytes   int64
}

// NewChunks returns the chunks of r, about size bytes each (at least
// 4 KiB), or an error naming the bad field of cfg (as NewReader).
func NewChunks(r io.Reader, cfg Config, size int) (*Chunks, error) {
	tmpl, err := NewReader(nil, cfg)
	if err != nil {
		return nil, err
	}
	return &Chunks{r: r, tmpl: tmpl, keep: tmpl.br.max, size: max(size, 4<<10)}, nil
}

// Next reads the next chunk into buf (grown as needed) and returns it.
// At the end of the log it returns io.EOF with no data; on a read error,
// the error (the partial line before it is not part of the log, as for a
// Reader), after the whole lines before it. For a CSV log whose header
// cannot be used it returns the header's error (Reader.Err's).
func (c *Chunks) Next(buf []byte) (Chunk, error) {
	for {
		ch, err := c.next(buf)
		if err != nil || c.tmpl.csv == nil || c.tmpl.csv.header != nil {
			return ch, err
		}
		// A CSV log: its first non-blank line is the header.
		rd := c.tmpl
		rd.setData(ch.Data)
		for {
			line, _ := rd.readLine()
			if line == nil {
				break
			}
			if why := rd.csv.readHeader(line, rd.cfg); why == reasonFatal {
				return Chunk{}, rd.csv.err
			}
			break
		}
		ch.Skipped, ch.Bad = rd.line, rd.bad
		ch.Data = ch.Data[rd.br.start:]
		rd.line, rd.bad = 0, BadLines{}
		if len(ch.Data) > 0 || ch.Skipped > 0 {
			return ch, nil
		}
	}
}

// next reads whole lines, about c.size bytes of them. Each byte is
// searched for a line end once, so small reads cost no more than large.
func (c *Chunks) next(buf []byte) (Chunk, error) {
	ch := Chunk{Data: append(buf[:0], c.carry...)}
	c.carry = c.carry[:0]
	lastNL := -1 // the carry holds no line end
	for empty := 0; c.err == nil; {
		if len(ch.Data) >= c.size && lastNL >= 0 {
			c.carry = append(c.carry, ch.Data[lastNL+1:]...)
			ch.Data = ch.Data[:lastNL+1]
			return ch, nil
		}
		// The line being read is longer than a Reader keeps: keep its
		// first c.keep bytes and a line end, and drop the rest.
		if start := lastNL + 1; !c.skipping && len(ch.Data)-start > c.keep {
			ch.Data = append(ch.Data[:start+c.keep], '\n')
			lastNL = start + c.keep
			c.skipping = true
		}
		// Room to read into: a whole chunk's once a read has filled the
		// room it had (the log comes fast: a file), else as much again as
		// the chunk holds, from 4 KiB up, so a log that arrives slowly (an
		// upload) holds a buffer about as big as what came.
		room := c.size
		if !c.fast {
			room = min(max(len(ch.Data), 4<<10), c.size)
		}
		ch.Data = slices.Grow(ch.Data, room)
		at := len(ch.Data)
		n, err := c.r.Read(ch.Data[at:cap(ch.Data)])
		c.fast = n == cap(ch.Data)-at
		ch.Bytes += int64(n)
		ch.Data = ch.Data[:at+n]
		if c.skipping {
			if i := bytes.IndexByte(ch.Data[at:], '\n'); i >= 0 {
				ch.Data = append(ch.Data[:at], ch.Data[at+i+1:]...)
				c.skipping = false
			} else {
				ch.Data = ch.Data[:at]
			}
		}
		if i := bytes.LastIndexByte(ch.Data[at:], '\n'); i >= 0 {
			lastNL = at + i
		}
		switch {
		case err != nil:
			c.err = err
		case n > 0:
			empty = 0
		default:
			if empty++; empty >= maxEmptyReads {
				c.err = io.ErrNoProgress
			}
		}
	}
	if c.err != io.EOF {
		// A read error: the partial line before it is not a line of the
		// log; the whole lines before it are returned first.
		ch.Data = ch.Data[:lastNL+1]
	}
	if len(ch.Data) == 0 {
		c.ReadFailed = c.err != io.EOF
		return ch, c.err
	}
	return ch, nil
}

// Reader returns a Reader of the lines of data (a Chunk's Data), numbered
// from 1, with the log's configuration and CSV header; rd, when not nil,
// is reused. The Reader's Err is to be ignored (data has no read error,
// and a chunk without records is no error of the log's).
func (c *Chunks) Reader(data []byte, rd *Reader) *Reader {
	if rd == nil {
		rd = &Reader{cfg: c.tmpl.cfg, json: c.tmpl.json}
		if t := c.tmpl.csv; t != nil {
			rd.csv = &csvState{header: t.header, col: t.col, need: t.need}
		}
	}
	rd.setData(data)
	rd.line, rd.records, rd.noKey, rd.bytes = 0, 0, 0, 0
	rd.bad, rd.err, rd.done = BadLines{}, nil, false
	return rd
}

// NoRecords is the error of a log with no parseable line in lines lines,
// whose bad lines are bad (as Reader.Err's).
func (c *Chunks) NoRecords(lines int64, bad BadLines) error {
	rd := &Reader{cfg: c.tmpl.cfg, line: lines, bad: bad}
	return rd.noRecords()
}

// setData makes rd read the lines of data, from its start.
func (rd *Reader) setData(data []byte) {
	rd.br = lineReader{buf: data, end: len(data), max: len(data) + 1, err: io.EOF}
}

// Examples is how many example lines are kept per bad-line reason.
func (c *Chunks) Examples() int { return c.tmpl.cfg.Examples }
