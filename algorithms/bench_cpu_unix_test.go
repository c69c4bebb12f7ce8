//go:build unix

package algorithms_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, user and system. On a
// shared machine it moves far less than wall time with the neighbours'
// load, so benchmarks report it per operation beside ns/op.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
