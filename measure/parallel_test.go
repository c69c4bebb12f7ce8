package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/accesslog"
)

// genLog is a generated combined log of n lines (with the API key as the
// extra field), with bad, blank, over-long and CRLF lines mixed in.
func genLog(n, clients int, seed uint64) string {
	var b strings.Builder
	var line []byte
	z := time.FixedZone("", 2*3600)
	i := 0
	genEvents(n, clients, seed, func(e *event) {
		i++
		line = appendCombined(line[:0], e, z)
		switch i % 997 {
		case 1:
			b.WriteString("garbage line\n")
		case 2:
			b.WriteString("\n\r\n")
		case 3:
			b.WriteString(strings.Repeat("x", 9000) + "\n") // over MaxLine 4096, and 64 KiB below
		case 4:
			b.WriteString(strings.Repeat("y", 70<<10) + "\n") // over a Reader's buffer
		case 5:
			line = append(line[:len(line)-1], "\r\n"...)
		}
		b.Write(line)
	})
	return b.String()
}

// jsonLog and csvLog are small logs of those formats, with bad lines.
func jsonLog(n int) string {
	var b strings.Builder
	for i := range n {
		switch i % 101 {
		case 7:
			b.WriteString("{not json\n")
		default:
			fmt.Fprintf(&b, `{"time":"2024-06-01T12:00:%02d.%03dZ","remote_addr":"10.0.%d.%d","method":"GET","path":"/v1/items/%d","tier":"t%d"}`+"\n",
				i/1000%60, i%1000, i%7, i%251, i, i%3)
		}
	}
	return b.String()
}

func csvLog(n int) string {
	var b strings.Builder
	b.WriteString("\n\ntime,remote_addr,method,path\n")
	for i := range n {
		switch i % 89 {
		case 5:
			b.WriteString("1717243200,10.0.0.1\n")
		default:
			fmt.Fprintf(&b, "%d,10.1.%d.%d,POST,/v1/orders/%d\n", 1717243200+i/50, i%5, i%199, i%13)
		}
	}
	return b.String()
}

// errAfter reads s and then fails with err.
type errAfter struct {
	r   io.Reader
	err error
}

func (e *errAfter) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		return n, e.err
	}
	return n, err
}

// TestParallelIsSequential measures logs on one goroutine and in the
// parallel pipeline, with several worker counts and chunk sizes, and wants
// the very same result (or the very same error).
func TestParallelIsSequential(t *testing.T) {
	big := genLog(30000, 800, 11)
	keyed := accesslog.Config{Key: accesslog.Key{Kind: accesslog.KeyHeader, Name: "X-API-Key"}, MaxLine: 4096}
	readErr := errors.New("disk on fire")
	tests := []struct {
		name string
		log  func() io.Reader
		cfg  accesslog.Config
		opts Options
	}{
		{"combined by ip", func() io.Reader { return strings.NewReader(big) }, accesslog.Config{}, Options{}},
		{"combined by key", func() io.Reader { return strings.NewReader(big) }, keyed, Options{Windows: []time.Duration{time.Second, 10 * time.Second, time.Minute, time.Hour}, TopClients: 50, TopEndpoints: 40}},
		{"few endpoints", func() io.Reader { return strings.NewReader(big) }, keyed, Options{MaxEndpoints: 3}},
		{"examples", func() io.Reader { return strings.NewReader(big) }, accesslog.Config{Examples: 7}, Options{}},
		{"no trailing newline", func() io.Reader { return strings.NewReader(strings.TrimSuffix(big, "\n")) }, accesslog.Config{}, Options{}},
		{"json", func() io.Reader { return strings.NewReader(jsonLog(20000)) }, accesslog.Config{Format: accesslog.JSON}, Options{}},
		{"csv", func() io.Reader { return strings.NewReader(csvLog(20000)) }, accesslog.Config{Format: accesslog.CSV}, Options{}},
		{"csv without a usable header", func() io.Reader { return strings.NewReader("a,b\n1,2\n") }, accesslog.Config{Format: accesslog.CSV}, Options{}},
		{"no records", func() io.Reader { return strings.NewReader(strings.Repeat("nothing here\n", 5000)) }, accesslog.Config{}, Options{}},
		{"empty", func() io.Reader { return strings.NewReader("") }, accesslog.Config{}, Options{}},
		{"too many clients", func() io.Reader { return strings.NewReader(big) }, accesslog.Config{}, Options{MaxClients: 500}},
		{"read error", func() io.Reader { return &errAfter{strings.NewReader(big[:len(big)/2]), readErr} }, accesslog.Config{}, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := measureSequential(context.Background(), tt.log(), tt.cfg, tt.opts)
			for _, workers := range []int{1, 2, 3, 4} {
				for _, size := range []int{4 << 10, 64 << 10, chunkSize} {
					got, err := measureParallel(context.Background(), tt.log(), tt.cfg, tt.opts, workers, size)
					if fmt.Sprint(err) != fmt.Sprint(wantErr) {
						t.Fatalf("workers %d, chunks of %d: error %v, want %v", workers, size, err, wantErr)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("workers %d, chunks of %d:\ngot  %+v\nwant %+v", workers, size, got, want)
					}
				}
			}
			if wantErr == nil && want.Requests == 0 {
				t.Fatal("no requests: the log tests nothing")
			}
		})
	}
}

// TestWorkersBoundTheGoroutines measures a log with Options.Workers set
// and counts, at its first Progress call, the goroutines that the
// goroutine calling Progress (the one that works in log order) started:
// the reader, and a parser and a shard per worker. The log's last tenth
// is held back until then, so that none has finished. The result is the
// sequential one.
func TestWorkersBoundTheGoroutines(t *testing.T) {
	log := genLog(100_000, 500, 3)
	want, err := measureSequential(context.Background(), strings.NewReader(log), accesslog.Config{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	started := func() int {
		buf := make([]byte, 1<<20)
		self := string(buf[:runtime.Stack(buf, false)])
		id, _, _ := strings.Cut(strings.TrimPrefix(self, "goroutine "), " ")
		all := string(buf[:runtime.Stack(buf, true)])
		return strings.Count(all, "created by sync.(*WaitGroup).Go in goroutine "+id+"\n")
	}
	for _, workers := range []int{1, 3, 5} {
		during := -1
		gate := make(chan struct{})
		opts := Options{Workers: workers, Progress: func(lines, bytes int64) {
			if during < 0 {
				during = started()
				close(gate)
			}
		}}
		r := &gatedReader{r: strings.NewReader(log), hold: len(log) / 10, gate: gate}
		got, err := Measure(context.Background(), r, accesslog.Config{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if during != 1+2*workers {
			t.Errorf("workers %d: %d goroutines started, want %d", workers, during, 1+2*workers)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("workers %d: the result differs from the sequential one", workers)
		}
	}
}

// gatedReader reads r, but its last hold bytes only once gate is closed.
type gatedReader struct {
	r    *strings.Reader
	hold int
	gate chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if left := g.r.Len() - g.hold; left > 0 {
		return g.r.Read(p[:min(len(p), left)])
	}
	<-g.gate
	return g.r.Read(p)
}
