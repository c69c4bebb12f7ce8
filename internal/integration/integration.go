// Package integration starts the real programs that integration tests run
// against (nginx, haproxy, redis-server, postgres, clickhouse-server,
// chromium) and decides what happens when one is missing: the test skips
// with a message naming the Debian package to install, unless
// RATELAB_INTEGRATION=required (as in .ci/run), where it fails.
package integration

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// Required reports whether integration tests must run rather than skip.
func Required() bool { return os.Getenv("RATELAB_INTEGRATION") == "required" }

// Need returns the path of the program name, looked up in PATH and then in
// the given directories (Debian puts nginx and haproxy in /usr/sbin, outside
// a normal user's PATH). Without it the test skips, or fails when
// integration tests are required; pkg is the Debian package that has it.
func Need(t testing.TB, name, pkg string, dirs ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range append(dirs, "/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin") {
		p := d + "/" + name
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if Required() {
		t.Fatalf("%s not found, and integration tests are required (RATELAB_INTEGRATION=required); install Debian's %s package", name, pkg)
	}
	t.Skipf("skipping: %s not found; install Debian's %s package (apt-get install %s) to run this test", name, pkg, pkg)
	return ""
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, for a
// program that takes its port from its command line or config. Another
// process may take it first; tests that start servers retry on a bind
// failure where that matters.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free loopback port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Addr is 127.0.0.1:port.
func Addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
