// Package cputime reads the CPU time a process has used, for benchmarks
// that report it per operation beside the wall time: on a shared machine
// it moves far less with the neighbours' load than the wall time does.
// Where the platform has no getrusage it reads 0.
package cputime

import "time"

// Self is the CPU time, user and system, of this process's threads so far
// (the garbage collector's included).
func Self() time.Duration { return usage(self) }

// Children is the CPU time, user and system, of the child processes this
// process has waited for.
func Children() time.Duration { return usage(children) }
