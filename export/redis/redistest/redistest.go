// Package redistest starts a private redis-server (Start) or a private
// three-master Redis Cluster (StartCluster) for a test, and checks that
// generated Go files compile: what the redis-lua and Go library exports'
// tests share.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelab/ratelab/internal/integration"
)

// Start runs redis-server on a free loopback port with a temporary
// directory, no persistence, and returns its address. The server is
// stopped when the test ends. Without redis-server the test skips (or
// fails when integration tests are required).
func Start(t testing.TB) string {
	t.Helper()
	bin := integration.Need(t, "redis-server", "redis-server")
	dir := t.TempDir()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := integration.FreePort(t)
		var out bytes.Buffer
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting redis-server: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() {
			_ = cmd.Process.Kill()
			<-exited
		}
		addr := integration.Addr(port)
		rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		// Starting is setup: a loaded machine may take seconds to run
		// redis-server, so wait up to 30 s, and try three free ports.
		deadline := time.Now().Add(30 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			lastErr = rdb.Ping(ctx).Err()
			cancel()
			if lastErr == nil || time.Now().After(deadline) {
				break
			}
			dead := false
			select {
			case err := <-exited:
				exited <- err // for stop
				lastErr, dead = fmt.Errorf("redis-server exited: %v", err), true
			case <-time.After(50 * time.Millisecond):
			}
			if dead {
				break
			}
		}
		rdb.Close()
		if lastErr == nil {
			t.Cleanup(stop)
			return addr
		}
		stop()
		t.Logf("redis-server on port %d did not start (%v): %s", port, lastErr, out.String())
	}
	t.Fatalf("redis-server did not start: %v", lastErr)
	return ""
}

// Client is a go-redis client of addr, closed when the test ends.
func Client(t testing.TB, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// Compile writes files (by path, "pkg/file.go") into a temporary module
// whose go.mod and go.sum are the repository's (module renamed), runs go
// build and go vet on it offline (GOFLAGS=-mod=mod, GOPROXY=off: the
// module cache already holds every dependency), and returns the module's
// directory. It skips when the go command is missing, unless integration
// tests are required.
func Compile(t testing.TB, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if _, err := os.Stat(filepath.Join(os.Getenv("GOROOT"), "bin", "go")); err != nil {
			if integration.Required() {
				t.Fatal("the go command is missing, and integration tests are required")
			}
			t.Skip("skipping: the go command is not in PATH")
		}
	}
	root := repoRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod = regexp.MustCompile(`(?m)^module .*$`).ReplaceAll(mod, []byte("module ratelabexport"))
	// The repository's tool directives name its own tools; the snippet
	// module needs none.
	mod = regexp.MustCompile(`(?m)^tool .*$`).ReplaceAll(mod, nil)
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "go.mod"), mod)
	write(filepath.Join(dir, "go.sum"), sum)
	for name, src := range files {
		write(filepath.Join(dir, filepath.FromSlash(name)), []byte(src))
	}
	Go(t, dir, nil, "build", "./...")
	Go(t, dir, nil, "vet", "./...")
	return dir
}

// Go runs the go command in dir, offline, with env added, and fails the
// test when it fails.
func Go(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	// A step may take what is left of the test binary's deadline but
	// 30 s: on a loaded machine building and testing the snippets takes
	// minutes, and a step that cannot finish then fails naming itself,
	// with its output, instead of the binary panicking at its timeout.
	ctx := context.Background()
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
			defer cancel()
		}
	}
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local"), env...)
	began := time.Now()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("go %s in the snippet module: stopped after %v, 30 s before the test's deadline (run the tests with a longer -timeout on a loaded machine)\n%s", strings.Join(args, " "), time.Since(began).Round(time.Second), out)
	}
	if err != nil {
		t.Fatalf("go %s in the snippet module: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// repoRoot is the directory of the repository's go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}
