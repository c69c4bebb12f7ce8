package measure

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/internal/cputime"
)

// benchLines is the size of the benchmark's log: about 260 bytes a line.
const benchLines = 1_000_000

// BenchmarkMeasureVsAwk measures a generated combined log of benchLines
// lines (20000 clients, keyed by IP, 1 s and 1 min windows, endpoints
// collapsed) side by side with an awk pass that only counts requests per
// first field over the same file:
//
//	awk '{c[$1]++} END {for (k in c) n++; print n}'
//
// Both report MB/s, ns/line and the CPU time per line (cpu-ns/line:
// measure's threads, or awk's process) and the GOMAXPROCS each ran at
// (procs). Run one -cpu value per command:
//
//	go test -run '^$' -bench MeasureVsAwk -cpu 1 -count 5 ./measure/
//	go test -run '^$' -bench MeasureVsAwk -cpu 2 -count 5 ./measure/
//
// With a list (-cpu 1,2) the first result of each sub-benchmark is taken
// at the list's last value, not its first (golang/go#49980): its procs
// says so.
func BenchmarkMeasureVsAwk(b *testing.B) {
	path, size := writeCombinedLog(b, b.TempDir(), benchLines, 20000, 1)
	b.Run("measure", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		cpu0 := cputime.Self()
		defer func() { reportCPU(b, cputime.Self()-cpu0) }()
		var clients int
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			res, err := Measure(context.Background(), f, accesslog.Config{}, Options{})
			f.Close()
			if err != nil {
				b.Fatal(err)
			}
			if res.Requests != benchLines {
				b.Fatalf("%d requests, want %d", res.Requests, benchLines)
			}
			clients = res.Clients
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchLines, "ns/line")
		b.ReportMetric(float64(clients), "clients")
		b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
	})
	b.Run("awk", func(b *testing.B) {
		awk, err := exec.LookPath("awk")
		if err != nil {
			b.Skip("awk not found")
		}
		b.SetBytes(size)
		b.ReportAllocs()
		cpu0 := cputime.Children()
		defer func() { reportCPU(b, cputime.Children()-cpu0) }()
		var clients int
		for b.Loop() {
			out, err := exec.Command(awk, `{c[$1]++} END {for (k in c) n++; print n}`, path).Output()
			if err != nil {
				b.Fatal(err)
			}
			if clients, err = strconv.Atoi(strings.TrimSpace(string(out))); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchLines, "ns/line")
		b.ReportMetric(float64(clients), "clients")
		b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
	})
}

// reportCPU reports cpu, the CPU time of b's loop, per line.
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/benchLines, "cpu-ns/line")
}

// BenchmarkCombinedScan is the parser alone over the same kind of log.
func BenchmarkCombinedScan(b *testing.B) {
	path, size := writeCombinedLog(b, b.TempDir(), 200_000, 20000, 2)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		rd, err := accesslog.NewReader(f, accesslog.Config{Key: accesslog.Key{Kind: accesslog.KeyHeader, Name: "X-API-Key"}})
		if err != nil {
			b.Fatal(err)
		}
		for rd.Scan() {
		}
		f.Close()
		if rd.Err() != nil || rd.Records() != 200_000 {
			b.Fatalf("%d records, %v", rd.Records(), rd.Err())
		}
	}
}

// TestNoAllocationsPerLine checks that, once every key and endpoint has
// been seen, reading and measuring a line allocates nothing.
func TestNoAllocationsPerLine(t *testing.T) {
	path, _ := writeCombinedLog(t, t.TempDir(), 20000, 50, 3)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	pass := func() *accesslog.Reader {
		rd, err := accesslog.NewReader(strings.NewReader(string(data)), accesslog.Config{Key: accesslog.Key{Kind: accesslog.KeyHeader, Name: "X-API-Key"}, MaxLine: 4096})
		if err != nil {
			t.Fatal(err)
		}
		return rd
	}
	// Warm up: every key and endpoint pattern becomes known.
	rd := pass()
	for rd.Scan() {
		m.Add(rd.Record())
	}
	rd = pass()
	allocs := testing.AllocsPerRun(1, func() {
		for rd.Scan() {
			m.Add(rd.Record())
		}
	})
	if rd.Records() != 20000 || allocs > 10 {
		t.Errorf("%v allocations for %d lines, want at most 10 (none per line)", allocs, rd.Records())
	}
}
