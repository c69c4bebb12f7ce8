package accesslog

import (
	"bytes"
	"errors"
	"io"
)

// lineReader reads lines into a buffer that is allocated when the first
// line is wanted, at minLineBuffer bytes, and doubles, up to max bytes,
// only when a line does not fit: a log of short lines costs a few KiB
// however large MaxLine is, and a Reader that never reads costs nothing.
// Errors are sticky: after a read error every call returns it.
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int // the unread bytes are buf[start:end]
	max        int
	err        error
}

// minLineBuffer is a lineReader's first buffer, in bytes.
const minLineBuffer = 4 << 10

// errLineFull is readSlice's answer for a line longer than the largest
// buffer, as bufio.ErrBufferFull.
var errLineFull = errors.New("line longer than the buffer")

// maxEmptyReads is how many reads in a row may return nothing before
// readSlice gives up with io.ErrNoProgress (as bufio does).
const maxEmptyReads = 100

// readSlice returns the next line with its '\n', pointing into the buffer
// and valid until the next call. At the end of the input (or on a read
// error) it returns what is left and the error; for a line longer than max
// bytes it returns the first max bytes and errLineFull, and the next call
// goes on with the rest of the line.
func (l *lineReader) readSlice() ([]byte, error) {
	search := l.start
	for empty := 0; ; {
		if i := bytes.IndexByte(l.buf[search:l.end], '\n'); i >= 0 {
			line := l.buf[l.start : search+i+1]
			l.start = search + i + 1
			return line, nil
		}
		search = l.end
		if l.err != nil {
			line := l.buf[l.start:l.end]
			l.start = l.end
			return line, l.err
		}
		if l.end == len(l.buf) {
			switch {
			case l.start > 0:
				n := copy(l.buf, l.buf[l.start:l.end])
				search -= l.start
				l.start, l.end = 0, n
			case len(l.buf) < l.max:
				grown := make([]byte, min(max(2*len(l.buf), minLineBuffer), l.max))
				copy(grown, l.buf[:l.end])
				l.buf = grown
			default:
				line := l.buf[l.start:l.end]
				l.start = l.end
				return line, errLineFull
			}
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if err != nil {
			l.err = err
		}
		if n == 0 && err == nil {
			if empty++; empty >= maxEmptyReads {
				l.err = io.ErrNoProgress
			}
		} else {
			empty = 0
		}
	}
}
