// Package liveserver builds ratelab's web server and runs it as a real
// process on a loopback port, for the load and abuse runs: it waits for the
// "listening" log line, watches the JSON log (counting ERROR and WARN
// lines), reads the process's memory from /proc, optionally under an
// address-space and open-file limit (prlimit), and stops it with SIGTERM.
// It never connects anywhere: a server that listens on anything but a
// loopback address is stopped at once.
package liveserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bounds on starting and stopping the server.
const (
	buildTimeout  = 5 * time.Minute
	startTimeout  = 15 * time.Second
	stopTimeout   = 30 * time.Second // the server's own graceful shutdown takes less
	maxKeptLines  = 5                // ERROR and WARN log lines kept for the report
	maxKeptStderr = 8 << 10
)

// Build builds ratelab's web server into dir and returns the
// binary's path. It runs the go command, so it needs the module's source.
//
// The binary is built as the Dockerfile builds the shipped one, without
// cgo. That matters under an address-space cap: a cgo binary's threads each
// reserve an 8 MiB C stack and may open a 64 MiB malloc arena, about
// 370 MiB more address space at rest than the static binary's 1.25 GiB
// (mostly the Go runtime's own reservations), which leaves a 2 GiB cap
// little room for the heap.
func Build(ctx context.Context, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	bin := filepath.Join(dir, "ratelab-web")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/ratelab/ratelab/cmd/web")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/web: %w\n%s", err, out)
	}
	return bin, nil
}

// Server is a ratelab web server process that Start started and Stop will
// stop.
type Server struct {
	cmd    *exec.Cmd
	addr   string // host:port it listens on, always loopback
	log    *logWatcher
	stderr *cappedBuffer
	exited chan struct{} // closed once the process has exited
	err    error         // cmd.Wait's result, once exited is closed
}

// Options are how Start runs the server: its arguments after -addr
// 127.0.0.1:0, and the limits of the process (0: none), applied with
// prlimit(1).
type Options struct {
	Args []string
	// AddressSpace is RLIMIT_AS in bytes; Files RLIMIT_NOFILE.
	AddressSpace int64
	Files        int
}

// Start starts bin on 127.0.0.1:0 with o's arguments and limits, and waits
// for the "listening" log line that names the bound address.
func Start(ctx context.Context, bin string, o Options) (*Server, error) {
	s := &Server{
		log:    newLogWatcher(),
		stderr: &cappedBuffer{max: maxKeptStderr},
		exited: make(chan struct{}),
	}
	args := append([]string{"-addr", "127.0.0.1:0"}, o.Args...)
	name := bin
	if o.AddressSpace > 0 || o.Files > 0 {
		// prlimit sets the limits and execs the server, which keeps its
		// pid, so /proc/<pid> is the server's.
		limits := []string{}
		if o.AddressSpace > 0 {
			limits = append(limits, fmt.Sprintf("--as=%d", o.AddressSpace))
		}
		if o.Files > 0 {
			limits = append(limits, fmt.Sprintf("--nofile=%d", o.Files))
		}
		name = "prlimit"
		args = append(append(append(limits, "--"), bin), args...)
	}
	s.cmd = exec.Command(name, args...)
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.stderr
	s.cmd.WaitDelay = stopTimeout
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case addr := <-s.log.listening:
		if !IsLoopbackAddr(addr) {
			s.Kill()
			return nil, fmt.Errorf("server listens on %s, not a loopback address", addr)
		}
		s.addr = addr
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("server exited before listening: %v\n%s", s.err, s.stderr)
	case <-timer.C:
		s.Kill()
		return nil, fmt.Errorf("server did not log \"listening\" within %s\n%s", startTimeout, s.stderr)
	case <-ctx.Done():
		s.Kill()
		return nil, ctx.Err()
	}
}

// Stop asks the server to shut down gracefully (SIGTERM), and kills it if
// it has not exited within stopTimeout. It returns the server's exit error.
func (s *Server) Stop() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.Kill()
		return fmt.Errorf("signal server: %w", err)
	}
	select {
	case <-s.exited:
		return s.err
	case <-time.After(stopTimeout):
		s.Kill()
		return fmt.Errorf("server still running %s after SIGTERM; killed", stopTimeout)
	}
}

// Kill stops the process at once and waits for it.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// RSS is the server's resident set size (VmRSS in /proc/<pid>/status) in
// bytes, or false where /proc cannot tell.
func (s *Server) RSS() (int64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, false
	}
	return ParseVmRSS(data)
}

// ParseVmRSS reads the VmRSS line ("VmRSS:	   17444 kB") of a
// /proc/<pid>/status file.
func ParseVmRSS(status []byte) (int64, bool) { return parseStatus(status, "VmRSS:") }

// parseStatus reads a "Name:	   17444 kB" line of a /proc/<pid>/status
// file in bytes.
func parseStatus(status []byte, name string) (int64, bool) {
	for line := range strings.Lines(string(status)) {
		rest, ok := strings.CutPrefix(line, name)
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// logWatcher is the server's stdout: JSON log lines. It passes on the
// address of the "listening" line, counts lines, and keeps the first few
// lines at level ERROR or WARN.
type logWatcher struct {
	listening chan string // receives the bound address once

	mu      sync.Mutex
	partial []byte
	sent    bool
	lines   int
	errors  int
	warns   int
	kept    []string
}

func newLogWatcher() *logWatcher {
	return &logWatcher{listening: make(chan string, 1)}
}

func (w *logWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.line(w.partial[:i])
		w.partial = w.partial[i+1:]
	}
	// Keep the unfinished line in a buffer of its own, so the one
	// above does not grow for ever.
	w.partial = append([]byte(nil), w.partial...)
	return len(p), nil
}

func (w *logWatcher) line(line []byte) {
	w.lines++
	// Most lines are request logs at INFO: count them without decoding,
	// which would cost the load generator CPU that the server shares.
	if bytes.Contains(line, []byte(`"level":"INFO"`)) && !bytes.Contains(line, []byte(`"msg":"listening"`)) {
		return
	}
	var entry struct {
		Level string `json:"level"`
		Msg   string `json:"msg"`
		Addr  string `json:"addr"`
	}
	if err := json.Unmarshal(line, &entry); err != nil {
		// Not a log line of ours: count it as a warning, since the server
		// only ever writes JSON lines to stdout.
		entry.Level = "WARN"
	}
	if entry.Msg == "listening" && !w.sent {
		w.sent = true
		w.listening <- entry.Addr
	}
	switch entry.Level {
	case "ERROR":
		w.errors++
	case "WARN":
		w.warns++
	default:
		return
	}
	if len(w.kept) < maxKeptLines {
		w.kept = append(w.kept, Truncate(string(line), 400))
	}
}

// Counts returns the lines seen, those at ERROR and WARN, and the first few
// of the latter.
func (w *logWatcher) Counts() (lines, errs, warns int, kept []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lines, w.errors, w.warns, append([]string(nil), w.kept...)
}

// cappedBuffer keeps the first max bytes written to it.
type cappedBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// IsLoopbackHost reports whether host (no port) is localhost or a loopback
// IP address.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// IsLoopbackAddr reports whether addr (host:port) is a loopback IP address.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Addr is the host:port the server listens on, always loopback.
func (s *Server) Addr() string { return s.addr }

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Exited is closed once the process has exited; Err is then its
// cmd.Wait result.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Err is the process's exit error once Exited is closed.
func (s *Server) Err() error { return s.err }

// Stderr is the first bytes the server wrote to standard error.
func (s *Server) Stderr() string { return s.stderr.String() }

// Log reports the log lines seen, those at ERROR and WARN, and the first
// few of the latter.
func (s *Server) Log() (lines, errs, warns int, kept []string) { return s.log.Counts() }

// PeakRSS is the server's peak resident set size so far (VmHWM in
// /proc/<pid>/status) in bytes, or false where /proc cannot tell.
func (s *Server) PeakRSS() (int64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, false
	}
	return parseStatus(data, "VmHWM:")
}

// PeakAddressSpace is the server's peak virtual memory size so far (VmPeak
// in /proc/<pid>/status) in bytes, the figure an RLIMIT_AS cap bounds, or
// false where /proc cannot tell.
func (s *Server) PeakAddressSpace() (int64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, false
	}
	return parseStatus(data, "VmPeak:")
}

// Signal sends sig to the server.
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Wait waits for the server to exit after a signal sent with Signal, and
// kills it if it has not within stopTimeout. It returns the exit error.
func (s *Server) Wait() error {
	select {
	case <-s.exited:
		return s.err
	case <-time.After(stopTimeout):
		s.Kill()
		return fmt.Errorf("server still running %s after the signal; killed", stopTimeout)
	}
}
