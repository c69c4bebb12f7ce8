// Package lint is the ratelab lint command: it checks ratelab policy
// files (DESIGN.md §6) for CI, decoding each file strictly and linting it.
//
//	ratelab lint [--json] [file ...]
//
// With no file, or "-", it reads standard input. Output is one line per
// problem, "file:line:column: severity id: message", each followed by its
// fix; --json prints one JSON object per file instead:
//
//	{"file": "policy.yaml", "errors": [...], "findings": [...]}
//
// where errors are the decoder's (policy.Error) and findings the lint's
// (policy.Finding). The exit status is the worst over all files: 0 clean
// (warnings and info allowed), 1 findings at error severity, 2 a file that
// cannot be read or is not a valid policy, or bad usage.
package lint

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/internal/cli"
	"github.com/ratelab/ratelab/policy"
)

// Exit statuses.
const (
	exitClean    = cli.ExitOK
	exitFindings = cli.ExitFindings
	exitInvalid  = cli.ExitUsage
)

// Run is the command with its arguments (without the program name) and
// streams; it returns the exit status.
func Run(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(args, stdin, stdout, stderr)
}

// report is one file's result, as --json prints it.
type report struct {
	File     string           `json:"file"`
	Errors   policy.Errors    `json:"errors"`
	Findings []policy.Finding `json:"findings"`
}

// run is the command with its arguments (without the program name) and
// streams; it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ratelab lint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ratelab lint [--json] [file ...]   (no file or - reads standard input)")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "exit status: 0 clean, 1 findings at error severity, 2 unreadable or invalid")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitClean
		}
		return exitInvalid
	}
	files := fs.Args()
	if len(files) == 0 {
		files = []string{"-"}
	}
	status := exitClean
	enc := json.NewEncoder(stdout)
	for _, name := range files {
		r := check(name, stdin)
		s := exitClean
		switch {
		case len(r.Errors) > 0:
			s = exitInvalid
		case hasErrors(r.Findings):
			s = exitFindings
		}
		status = max(status, s)
		if *asJSON {
			if r.Errors == nil {
				r.Errors = policy.Errors{}
			}
			if r.Findings == nil {
				r.Findings = []policy.Finding{}
			}
			if err := enc.Encode(r); err != nil {
				fmt.Fprintln(stderr, "ratelab lint:", err)
				return exitInvalid
			}
			continue
		}
		printHuman(stdout, r)
	}
	return status
}

// check reads, decodes and lints one file ("-" is stdin).
func check(name string, stdin io.Reader) report {
	r := report{File: name}
	p, err := policy.DecodeFile(name, stdin)
	if err != nil {
		if !errors.As(err, &r.Errors) {
			r.Errors = policy.Errors{{Message: err.Error()}}
		}
		return r
	}
	r.Findings = policy.Lint(p)
	return r
}

func hasErrors(fs []policy.Finding) bool {
	for _, f := range fs {
		if f.Severity == calc.SeverityError {
			return true
		}
	}
	return false
}

// printHuman prints a report as "file:line:col: severity id: message"
// lines, each finding's fix indented below it.
func printHuman(w io.Writer, r report) {
	at := func(line, col int) string {
		if line == 0 {
			return r.File
		}
		return fmt.Sprintf("%s:%d:%d", r.File, line, col)
	}
	for _, e := range r.Errors {
		msg := e.Message
		if e.Field != "" {
			msg = e.Field + ": " + msg
		}
		if e.Hint != "" {
			msg += "; " + e.Hint
		}
		fmt.Fprintf(w, "%s: invalid: %s\n", at(e.Line, e.Column), msg)
	}
	for _, f := range r.Findings {
		field := ""
		if f.Field != "" {
			field = " (" + f.Field + ")"
		}
		fmt.Fprintf(w, "%s: %s %s%s: %s\n    fix: %s\n", at(f.Line, f.Column), f.Severity, f.ID, field, f.Message, f.Fix)
	}
	if len(r.Errors) == 0 && len(r.Findings) == 0 {
		fmt.Fprintf(w, "%s: ok\n", r.File)
	}
}
