package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ratelab/ratelab/internal/liveserver"
)

// The memory check: the server's memory after the run (RSS when loadrun
// started the server, else go_memstats_sys_bytes) may be at most
// memFactor × its memory after the warm-up, plus memSlack.
//
// Memory is not expected to stay byte-for-byte flat. Go's collector lets
// the heap grow to twice the live heap (GOGC=100) before it collects, and
// returns freed pages to the OS only gradually, so RSS right after a burst
// of heavy requests sits above the warm-up figure by a share of the heap:
// hence the factor. The warm server is small (about 20–30 MiB), so a factor
// alone would also trip on fixed costs that do not grow with requests: more
// goroutine stacks and connection buffers, allocator spans of another size
// class: hence the slack. A leak that keeps a few KiB per request does
// exceed the bound over the default run's 12 000 measured requests: for a
// 23 MiB warm server the leeway is 31.5 MiB, 2.7 KiB per request.
const (
	memFactor = 1.5
	memSlack  = 20 << 20
)

// memLimit is the most memory the server may hold after the run, given
// warm, its memory after the warm-up.
func memLimit(warm int64) int64 {
	return int64(memFactor*float64(warm)) + memSlack
}

// rssEvery is how often the RSS sampler reads /proc while the load runs.
const rssEvery = 50 * time.Millisecond

// report is a whole load run: the settings, each target's warm-up and
// measured loop, memory at each step, and the server's log and exit.
type report struct {
	opts       options
	ownsServer bool // loadrun started the server
	warmup     []result
	results    []result

	memory    []memRow
	memSource string // "VmRSS" or "go_memstats_sys_bytes"
	memWarm   int64  // after the warm-up, by memSource
	memAfter  int64  // after the last target
	memLimit  int64  // memFactor × memWarm + memSlack

	logLines, logErrors, logWarns int
	logKept                       []string
	exitErr                       error // of the server's graceful shutdown
}

// memRow is the server's memory after one step of the run, and the peak
// RSS during it.
type memRow struct {
	phase   string
	mem     memSample
	peakRSS int64 // -1 when unknown
}

// loadRun does one load run with o and writes its report to stdout;
// progress gets a line per step. It returns an error, and no report, when
// the run could not be done at all (build, start, a failing preflight, a
// cancelled ctx); failed checks are in the report.
// serverArgs turn the server's per-client limits off and give the heavy
// gate room for every worker (one client may hold half of it), so the load
// measures the routes rather than 429s from the one client it is.
var serverArgs = []string{"-api-rate", "0", "-page-rate", "0", "-max-heavy", "64"}

func loadRun(ctx context.Context, o options, stdout, progress io.Writer) (*report, error) {
	if o.baseURL != "" {
		u, err := loopbackURL(o.baseURL)
		if err != nil {
			return nil, fmt.Errorf("-url: %w", err)
		}
		rep, err := measure(ctx, o, strings.TrimSuffix(u.String(), "/"), nil, progress)
		if err != nil {
			return nil, err
		}
		rep.write(stdout)
		return rep, nil
	}

	bin := o.bin
	if bin == "" {
		dir, err := os.MkdirTemp("", "loadrun-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		fmt.Fprintln(progress, "loadrun: building ./cmd/web")
		if bin, err = liveserver.Build(ctx, dir); err != nil {
			return nil, err
		}
	}
	srv, err := liveserver.Start(ctx, bin, liveserver.Options{Args: serverArgs})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "loadrun: server pid %d listening on %s\n", srv.Pid(), srv.Addr())
	rep, err := measure(ctx, o, "http://"+srv.Addr(), srv, progress)
	exitErr := srv.Stop()
	if err != nil {
		return nil, err
	}
	rep.exitErr = exitErr
	rep.logLines, rep.logErrors, rep.logWarns, rep.logKept = srv.Log()
	rep.write(stdout)
	return rep, nil
}

// measure checks every target once, warms them all up, then runs each
// target's closed loop in turn, sampling the server's memory; srv is nil
// for a server that loadrun did not start.
func measure(ctx context.Context, o options, base string, srv *liveserver.Server, progress io.Writer) (*report, error) {
	rep := &report{opts: o, ownsServer: srv != nil, memSource: "go_memstats_sys_bytes"}
	client := newClient(o.concurrency, o.timeout)
	defer client.CloseIdleConnections()

	for _, t := range targets {
		if err := preflight(ctx, client, base, t); err != nil {
			return nil, fmt.Errorf("preflight %s: %w", t, err)
		}
	}

	sampler := &rssSampler{read: func() (int64, bool) { return 0, false }}
	if srv != nil {
		sampler.read = srv.RSS
		if _, ok := srv.RSS(); ok {
			rep.memSource = "VmRSS"
		}
	}
	samplerCtx, stopSampler := context.WithCancel(ctx)
	defer stopSampler()
	go sampler.run(samplerCtx, rssEvery)

	snapshot := func(phase string) (memRow, error) {
		row := memRow{phase: phase, mem: memSample{rss: -1}, peakRSS: -1}
		if peak := sampler.take(); peak > 0 {
			row.peakRSS = peak
		}
		if srv != nil {
			if v, ok := srv.RSS(); ok {
				row.mem.rss = v
			}
		}
		var err error
		row.mem.heap, row.mem.sys, err = metricsMemory(ctx, client, base)
		return row, err
	}
	record := func(phase string) error {
		row, err := snapshot(phase)
		if err != nil {
			return err
		}
		rep.memory = append(rep.memory, row)
		return nil
	}

	if err := record("idle, after one request each"); err != nil {
		return nil, err
	}
	rep.memory[0].peakRSS = -1 // the sampler has only just started
	if o.warmup > 0 {
		for _, t := range targets {
			fmt.Fprintf(progress, "loadrun: warm-up %s: %d requests\n", t, o.warmup)
			rep.warmup = append(rep.warmup, closedLoop(ctx, client, base, t, o.warmup, o.concurrency, o.duration))
		}
	}
	if err := record("after the warm-up"); err != nil {
		return nil, err
	}
	rep.memWarm = rep.memory[len(rep.memory)-1].basis(rep.memSource)

	for _, t := range targets {
		n := o.requests
		if t.heavy {
			n = o.heavyRequests
		}
		fmt.Fprintf(progress, "loadrun: %s: %d requests, %d workers, at most %s\n", t, n, o.concurrency, o.duration)
		r := closedLoop(ctx, client, base, t, n, o.concurrency, o.duration)
		rep.results = append(rep.results, r)
		if err := record("after `" + t.String() + "`"); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.memAfter = rep.memory[len(rep.memory)-1].basis(rep.memSource)
	rep.memLimit = memLimit(rep.memWarm)
	return rep, nil
}

// basis is the row's memory by source: VmRSS or go_memstats_sys_bytes.
func (m memRow) basis(source string) int64 {
	if source == "VmRSS" {
		return m.mem.rss
	}
	return m.mem.sys
}

// failures lists every failed check: any 5xx, any status but 200, any
// request without a response, a target without requests, memory over the
// limit, and, for a server loadrun started, a log line at ERROR or WARN or
// an unclean exit.
func (r *report) failures() []string {
	var f []string
	check := func(label string, res result) {
		if res.requests == 0 {
			f = append(f, label+": no requests")
		}
		if n := res.count5xx(); n > 0 {
			f = append(f, fmt.Sprintf("%s: %d responses 5xx", label, n))
		}
		if n := res.unexpected() - res.count5xx(); n > 0 {
			hint := ""
			if res.statuses[http.StatusTooManyRequests] > 0 {
				hint = "; 429 is the API's own rate limit: start the server with -api-rate 0"
			}
			f = append(f, fmt.Sprintf("%s: %d responses neither 200 nor 5xx (%s)%s", label, n, statusList(res.statuses), hint))
		}
		if res.errors > 0 {
			f = append(f, fmt.Sprintf("%s: %d errors, the first: %s", label, res.errors, res.firstErr))
		}
	}
	for _, res := range r.warmup {
		check("warm-up "+res.target.String(), res)
	}
	for _, res := range r.results {
		check(res.target.String(), res)
	}
	if r.memAfter > r.memLimit {
		f = append(f, fmt.Sprintf("memory: %s after the run, over %s (%.1f × %s after the warm-up + %s)",
			mib(r.memAfter), mib(r.memLimit), memFactor, mib(r.memWarm), mib(memSlack)))
	}
	if r.ownsServer {
		if r.logErrors+r.logWarns > 0 {
			f = append(f, fmt.Sprintf("server log: %d lines at ERROR, %d at WARN", r.logErrors, r.logWarns))
		}
		if r.exitErr != nil {
			f = append(f, fmt.Sprintf("server shutdown: %v", r.exitErr))
		}
	}
	return f
}

// write writes the report as Markdown.
func (r *report) write(w io.Writer) {
	o := r.opts
	fmt.Fprintf(w, "Load run: %s %s/%s, %d CPUs%s; load generator and server on the same machine.\n\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel())
	fmt.Fprintf(w, "Settings: -c %d -n %d -n-heavy %d -warmup %d -duration %s -timeout %s",
		o.concurrency, o.requests, o.heavyRequests, o.warmup, o.duration, o.timeout)
	if o.baseURL != "" {
		fmt.Fprintf(w, " -url %s", o.baseURL)
	}
	fmt.Fprint(w, "\n\n")

	fmt.Fprintln(w, "| target | requests | req/s | p50 ms | p99 ms | max ms | body | statuses | errors |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---|---:|")
	for i, res := range r.results {
		name := "`" + res.target.String() + "`"
		if i == 0 {
			name += " (baseline)"
		}
		resp := "–"
		if n := len(res.latencies); n > 0 {
			resp = size(res.bytes / int64(n))
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %s | %s | %s | %s | %s | %d |\n",
			name, res.requests, res.rate(),
			ms(percentile(res.latencies, 50)), ms(percentile(res.latencies, 99)), ms(percentile(res.latencies, 100)),
			resp, statusList(res.statuses), res.errors)
	}
	for _, res := range r.results {
		if res.capped {
			fmt.Fprintf(w, "\n`%s` stopped at -duration %s after %d requests.\n", res.target, r.opts.duration, res.requests)
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "| server memory | RSS | peak RSS during | Go heap | Go sys |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, m := range r.memory {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", m.phase, mib(m.mem.rss), mib(m.peakRSS), mib(m.mem.heap), mib(m.mem.sys))
	}
	fmt.Fprintln(w, "\nBody is the mean response body as sent: requests accept gzip, as browsers do.")
	fmt.Fprintf(w, "Memory (%s): %s after the warm-up, %s after the run; limit %.1f × %s + %s = %s.\n",
		r.memSource, mib(r.memWarm), mib(r.memAfter), memFactor, mib(r.memWarm), mib(memSlack), mib(r.memLimit))
	warm := 0
	for _, res := range r.warmup {
		warm += res.requests
	}
	fmt.Fprintf(w, "Warm-up: %d requests.", warm)
	if r.ownsServer {
		exit := "clean"
		if r.exitErr != nil {
			exit = r.exitErr.Error()
		}
		fmt.Fprintf(w, " Server log: %d lines, %d at ERROR, %d at WARN; graceful shutdown: %s.", r.logLines, r.logErrors, r.logWarns, exit)
	}
	fmt.Fprintln(w)
	for _, line := range r.logKept {
		fmt.Fprintf(w, "\n    %s\n", line)
	}
	if f := r.failures(); len(f) > 0 {
		fmt.Fprintf(w, "\nChecks FAILED:\n\n")
		for _, s := range f {
			fmt.Fprintf(w, "- %s\n", s)
		}
	} else {
		fmt.Fprintf(w, "\nChecks passed: no 5xx, every status 200, no errors, memory within the limit.\n")
	}
}

// statusList lists status counts by code: "200 × 5000, 503 × 2".
func statusList(statuses map[int]int) string {
	if len(statuses) == 0 {
		return "–"
	}
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(statuses)) {
		parts = append(parts, fmt.Sprintf("%d × %d", code, statuses[code]))
	}
	return strings.Join(parts, ", ")
}

// ms formats d in milliseconds with about three significant figures.
func ms(d time.Duration) string {
	v := d.Seconds() * 1000
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// mib formats bytes in MiB; negative means unknown.
func mib(b int64) string {
	if b < 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// size formats a response size in B or KiB.
func size(b int64) string {
	if b < 1<<10 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
}

// cpuModel is ", <model name>" from /proc/cpuinfo, or nothing.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return ", " + strings.TrimSpace(value)
		}
	}
	return ""
}
