package accesslog

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// scanned is what a log reads as: its records (copied), lines, bad lines
// and error.
type scanned struct {
	recs  []Record
	lines int64
	bad   BadLines
	err   string
}

func copyRecord(r *Record) Record {
	c := *r
	for _, b := range []*[]byte{&c.Key, &c.Method, &c.Path, &c.Tier} {
		*b = bytes.Clone(*b)
	}
	return c
}

// readWhole reads r with one Reader.
func readWhole(t *testing.T, r io.Reader, cfg Config) scanned {
	rd, err := NewReader(r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var s scanned
	for rd.Scan() {
		s.recs = append(s.recs, copyRecord(rd.Record()))
	}
	s.lines, s.bad, s.err = rd.Lines(), rd.Bad(), fmt.Sprint(rd.Err())
	return s
}

// readChunks reads r in chunks of about size bytes, numbering and joining
// them as package measure does.
func readChunks(t *testing.T, r io.Reader, cfg Config, size int) scanned {
	c, err := NewChunks(r, cfg, size)
	if err != nil {
		t.Fatal(err)
	}
	var s scanned
	kept := map[Reason]int{}
	join := func(b BadLines, base int64) {
		if b.Count == 0 {
			return
		}
		s.bad.Count += b.Count
		if s.bad.ByReason == nil {
			s.bad.ByReason = map[Reason]int64{}
		}
		for why, n := range b.ByReason {
			s.bad.ByReason[why] += n
		}
		for _, ex := range b.Examples {
			if kept[ex.Reason] < c.Examples() {
				kept[ex.Reason]++
				ex.Line += base
				s.bad.Examples = append(s.bad.Examples, ex)
			}
		}
	}
	var rd *Reader
	var buf []byte
	for {
		ch, err := c.Next(buf)
		if err != nil {
			switch {
			case err != io.EOF && c.ReadFailed:
				s.err = fmt.Sprintf("reading line %d: %v", s.lines+1, err)
			case err != io.EOF:
				s.err = err.Error()
			case len(s.recs) == 0:
				s.err = c.NoRecords(s.lines, s.bad).Error()
			default:
				s.err = fmt.Sprint(nil)
			}
			return s
		}
		buf = ch.Data
		join(ch.Bad, s.lines)
		s.lines += ch.Skipped
		rd = c.Reader(ch.Data, rd)
		for rd.Scan() {
			r := copyRecord(rd.Record())
			r.Line += s.lines
			s.recs = append(s.recs, r)
		}
		join(rd.Bad(), s.lines)
		s.lines += rd.Lines()
	}
}

// checkChunks wants the same reading of log from one Reader and from
// chunks of several sizes, whole and a byte per read.
func checkChunks(t *testing.T, log []byte, cfg Config) {
	t.Helper()
	want := readWhole(t, bytes.NewReader(log), cfg)
	for _, size := range []int{1, 5000, 1 << 20} {
		for _, r := range []io.Reader{bytes.NewReader(log), iotest.OneByteReader(bytes.NewReader(log))} {
			got := readChunks(t, r, cfg, size)
			if strings.HasPrefix(want.err, "csv header") && got.err == want.err {
				continue // an error of the log's first line: the lines do not matter
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("chunks of %d: got\n%+v\nwant\n%+v", size, got, want)
			}
		}
	}
}

func TestChunksReadAsOneReader(t *testing.T) {
	line := `203.0.113.7 - - [10/Oct/2000:13:55:36 -0700] "GET /v1/orders/123 HTTP/1.1" 200 2326 "-" "curl/8.0" "key" "paid"` + "\n"
	tests := []struct {
		name string
		log  string
		cfg  Config
	}{
		{"combined", strings.Repeat(line, 300), Config{TierExtra: 1}},
		{"mixed", strings.Repeat(line+"bad\n\n\r\n"+strings.Repeat("z", 300)+"\n"+strings.TrimSuffix(line, "\n")+"\r\n", 80), Config{MaxLine: 200, Examples: 2}},
		{"a line past the buffer", line + strings.Repeat("q", 200<<10) + "\n" + line + strings.Repeat("r", 100<<10), Config{MaxLine: 64}},
		{"no trailing newline", strings.Repeat(line, 50) + strings.TrimSuffix(line, "\n"), Config{}},
		{"no records", strings.Repeat("nothing\n", 2000), Config{}},
		{"empty", "", Config{}},
		{"csv", "\n\r\n" + strings.Repeat("x", 300) + "\ntime,remote_addr,method,path\n" + strings.Repeat("1709294401,10.0.0.1,GET,/a\n1709294402,c\n", 400), Config{Format: CSV, MaxLine: 100}},
		{"csv bad header", "time,x\n1,2\n", Config{Format: CSV}},
		{"json", strings.Repeat(`{"time":1709294400.5,"remote_addr":"10.1.1.1","request":"GET / HTTP/1.1"}`+"\n{\n", 300), Config{Format: JSON}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkChunks(t, []byte(tt.log), tt.cfg) })
	}
}

func TestChunksReadError(t *testing.T) {
	line := `203.0.113.7 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1 "-" "c"` + "\n"
	log := strings.Repeat(line, 500)
	cut := len(log) - 30 // inside the last line
	for _, size := range []int{1, 5000} {
		want := readWhole(t, io.MultiReader(strings.NewReader(log[:cut]), iotest.ErrReader(io.ErrUnexpectedEOF)), Config{})
		got := readChunks(t, io.MultiReader(strings.NewReader(log[:cut]), iotest.ErrReader(io.ErrUnexpectedEOF)), Config{}, size)
		if !reflect.DeepEqual(got, want) || !strings.Contains(want.err, "reading line 500") {
			t.Errorf("chunks of %d: got %v lines, %q; want %v, %q", size, got.lines, got.err, want.lines, want.err)
		}
	}
}

// TestChunksBufferGrowsWithTheLog reads a chunk from a log that comes at
// once (a file) and from one that comes a few bytes at a time (an
// upload): the first takes a chunk's buffer after one small read instead
// of doubling its way up, the second holds a buffer about as big as what
// came.
func TestChunksBufferGrowsWithTheLog(t *testing.T) {
	const size = 256 << 10
	line := []byte(`203.0.113.7 - - [10/Oct/2000:13:55:36 -0700] "GET /v1/orders/123 HTTP/1.1" 200 2326 "-" "curl/8.0"` + "\n")
	log := bytes.Repeat(line, 2*size/len(line))
	allocated := func(r io.Reader) (uint64, int) {
		c, err := NewChunks(r, Config{}, size)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ch, err := c.Next(nil)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return after.TotalAlloc - before.TotalAlloc, cap(ch.Data)
	}
	// Doubling from 4 KiB would allocate about twice the chunk.
	if got, _ := allocated(bytes.NewReader(log)); got > size+size/4 {
		t.Errorf("a fast log's first chunk allocated %d bytes; want at most %d", got, size+size/4)
	}
	// Only 6 KiB arrive before the log ends.
	if _, c := allocated(iotest.HalfReader(bytes.NewReader(log[:6<<10]))); c > 16<<10 {
		t.Errorf("a slow log of 6 KiB got a buffer of %d bytes; want at most 16 KiB", c)
	}
}
