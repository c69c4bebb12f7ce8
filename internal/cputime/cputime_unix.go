//go:build unix

package cputime

import (
	"syscall"
	"time"
)

const (
	self     = syscall.RUSAGE_SELF
	children = syscall.RUSAGE_CHILDREN
)

func usage(who int) time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(who, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
