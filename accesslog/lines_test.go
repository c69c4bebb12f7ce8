package accesslog

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReaderBufferLazy: NewReader allocates no line buffer (validating a
// form cost 1 MiB per upload), and a log of short lines is read with a
// few KiB however large MaxLine is; a long line still fits.
func TestReaderBufferLazy(t *testing.T) {
	cfg := Config{MaxLine: 1 << 20}
	if n := allocated(func() {
		if _, err := NewReader(strings.NewReader(""), cfg); err != nil {
			t.Fatal(err)
		}
	}); n > 8<<10 {
		t.Errorf("NewReader allocated %d bytes; want no line buffer", n)
	}
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "10.0.0.%d - - [30/Nov/2026:10:00:00 +0000] \"GET /x HTTP/1.1\" 200 1 \"-\" \"t\"\n", i%250)
	}
	log := b.String()
	var records int
	if n := allocated(func() {
		rd, _ := NewReader(strings.NewReader(log), cfg)
		for rd.Scan() {
			records++
		}
	}); n > 32<<10 {
		t.Errorf("reading %d short lines allocated %d bytes; want a few KiB", records, n)
	}
	if records != 1000 {
		t.Errorf("%d records, want 1000", records)
	}

	long := "10.0.0.1 - - [30/Nov/2026:10:00:00 +0000] \"GET /" + strings.Repeat("a", 300<<10) + " HTTP/1.1\" 200 1 \"-\" \"t\"\n"
	short := strings.SplitAfterN(log, "\n", 3)
	got, rd := readAll(t, short[0]+short[1]+long+"\n"+long, cfg)
	if len(got) != 4 || len(got[2].Path) != 300<<10+1 || len(got[3].Path) != 300<<10+1 || rd.Bad().Count != 0 {
		t.Errorf("with a 300 KiB line: %d records, bad %d", len(got), rd.Bad().Count)
	}
}

// failingReader yields its text, then err.
type failingReader struct {
	text string
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.text == "" {
		return 0, f.err
	}
	n := copy(p, f.text)
	f.text = f.text[n:]
	return n, nil
}

// TestReadErrorDropsPartialLine: a read error midway (an upload cut off)
// ends the log with the error; the partial line before it is not parsed
// as a request.
func TestReadErrorDropsPartialLine(t *testing.T) {
	cut := errors.New("connection reset")
	log := "10.0.0.1 - - [30/Nov/2026:10:00:00 +0000] \"GET /v1/orders HTTP/1.1\" 200 1 \"-\" \"t\"\n" +
		"10.0.0.2 - - [30/Nov/2026:10:00:00 +0000] \"GET /v1/orde"
	rd, _ := NewReader(&failingReader{text: log, err: cut}, Config{})
	var paths []string
	for i := 0; rd.Scan() && i < 10; i++ {
		paths = append(paths, string(rd.Record().Path))
	}
	if len(paths) != 1 || !errors.Is(rd.Err(), cut) || rd.Bad().Count != 0 {
		t.Errorf("records %q, err %v, bad %d; want one record and the read error", paths, rd.Err(), rd.Bad().Count)
	}
}

// TestLineReaderNoProgress: a reader that never yields anything ends the
// log with io.ErrNoProgress instead of spinning.
func TestLineReaderNoProgress(t *testing.T) {
	rd, _ := NewReader(emptyReader{}, Config{})
	if rd.Scan() || !errors.Is(rd.Err(), io.ErrNoProgress) {
		t.Errorf("err %v, want io.ErrNoProgress", rd.Err())
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }
