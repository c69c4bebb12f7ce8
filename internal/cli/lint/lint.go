// Package lint is the ratelab lint command: it checks ratelab policy
// files (DESIGN.md §6) for CI, decoding each file strictly and linting it.
//
//	ratelab lint [--format text|json|sarif] [--fail-on error|warning] [file ...]
//
// With no file, or "-", it reads standard input. The text format is one
// line per problem, "file:line:column: severity id: message", each followed
// by its fix; json (or --json) prints one JSON object per file instead:
//
//	{"file": "policy.yaml", "errors": [...], "findings": [...]}
//
// where errors are the decoder's (policy.Error) and findings the lint's
// (policy.Finding); sarif prints one SARIF 2.1.0 log for all the files
// (sarif.go), for code-scanning tools. The exit status is the worst over
// all files: 0 clean, 1 findings at the --fail-on severity or worse (error
// by default, so warnings and info pass; warning fails on warnings too;
// info never fails), 2 a file that cannot be read or is not a valid
// policy, or bad usage.
package lint

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"

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
	format := fs.String("format", "text", "output `format`: text, json (one object per file) or sarif (SARIF 2.1.0)")
	asJSON := fs.Bool("json", false, "the same as --format json")
	failOn := fs.String("fail-on", "error", "exit 1 on findings at this `severity` or worse: error or warning")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ratelab lint [--format text|json|sarif] [--fail-on error|warning] [file ...]   (no file or - reads standard input)")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "exit status: 0 clean, 1 findings at the --fail-on severity or worse, 2 unreadable or invalid, or bad usage")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitClean
		}
		return exitInvalid
	}
	if *asJSON {
		*format = "json"
	}
	switch *format {
	case "text", "json", "sarif":
	default:
		fmt.Fprintf(stderr, "ratelab lint: --format %q; want text, json or sarif\n", *format)
		return exitInvalid
	}
	var failing func(calc.Severity) bool
	switch *failOn {
	case "error":
		failing = func(s calc.Severity) bool { return s == calc.SeverityError }
	case "warning":
		failing = func(s calc.Severity) bool { return s == calc.SeverityError || s == calc.SeverityWarning }
	default:
		fmt.Fprintf(stderr, "ratelab lint: --fail-on %q; want error or warning\n", *failOn)
		return exitInvalid
	}
	files := fs.Args()
	if len(files) == 0 {
		files = []string{"-"}
	}
	status := exitClean
	enc := json.NewEncoder(stdout)
	var reports []report
	for _, name := range files {
		r := check(name, stdin)
		s := exitClean
		switch {
		case len(r.Errors) > 0:
			s = exitInvalid
		case slices.ContainsFunc(r.Findings, func(f policy.Finding) bool { return failing(f.Severity) }):
			s = exitFindings
		}
		status = max(status, s)
		switch *format {
		case "json":
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
		case "sarif":
			reports = append(reports, r)
		default:
			printHuman(stdout, r)
		}
	}
	if *format == "sarif" {
		if err := writeSARIF(stdout, reports); err != nil {
			fmt.Fprintln(stderr, "ratelab lint:", err)
			return exitInvalid
		}
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
