// Package cli holds what the ratelab command's subcommands (its
// subpackages, one per subcommand) share. Every subcommand exits with the
// same statuses: ExitOK when it did what was asked, ExitFindings when it did
// but found what the caller asked it to fail on (lint findings at the
// --fail-on severity, an export below its -require gate, an unhealthy
// server), ExitUsage for bad usage or input it cannot read.
package cli

import (
	"io"
	"os"
)

// Exit statuses of every subcommand.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitUsage    = 2
)

// IsTerminal reports whether w is a file that is a character device (a
// terminal), where progress lines are rewritten in place.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
