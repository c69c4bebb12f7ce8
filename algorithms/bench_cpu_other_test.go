//go:build !unix

package algorithms_test

import "time"

// cpuTime is not measured here: benchmarks report a cpu-ns/op of 0.
func cpuTime() time.Duration { return 0 }
