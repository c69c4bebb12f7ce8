package cputime

import (
	"runtime"
	"testing"
)

// TestSelfGrowsWithWork: a loop that burns CPU moves Self forward (on
// platforms that measure it), and Self never goes back.
func TestSelfGrowsWithWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no getrusage here")
	}
	before := Self()
	x := uint64(1)
	for Self()-before <= 0 {
		for range 1 << 20 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if Self() < before {
		t.Fatal("Self went back")
	}
	if x == 0 {
		t.Log(x)
	}
	if Children() < 0 {
		t.Fatal("Children is negative")
	}
}
