// Package export is the ratelab export command: it turns a ratelab policy file into configuration for
// gateways and libraries (nginx, Envoy, Traefik, Kong, HAProxy, Redis, Go),
// alerting rules and API documentation, through the same code as the
// designer's downloads, and says how faithfully each target enforces the
// policy.
//
//	ratelab export -list
//	ratelab export -target nginx policy.yaml > ratelimit.conf
//	ratelab export -target nginx,haproxy -o out/ policy.yaml
//	ratelab export -all -o out/ policy.yaml
//	ratelab export -target kong -json policy.yaml
//
// With no file, or "-", it reads standard input. One target without -o
// prints its file on standard output; several targets (or -all) need -o
// DIR and write DIR/<target>/<file>. The fidelity of each export — exact,
// approximate or not_expressible — and every mapping that is not exact go
// to standard error; -json prints each export's target, file name,
// fidelity, mappings and notes as one JSON object per line instead of the
// files. -require exact (or approximate) fails when an export is worse.
//
// The exit status is 0 on success, 1 when an export's fidelity is worse
// than -require, 2 for bad usage, an unreadable or invalid policy, or a
// policy a target cannot render.
package export

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/targets"
	"github.com/ratelab/ratelab/internal/cli"
	"github.com/ratelab/ratelab/policy"
)

// Exit statuses.
const (
	exitOK       = cli.ExitOK
	exitFidelity = cli.ExitFindings
	exitInvalid  = cli.ExitUsage
)

// Run is the command with its arguments (without the program name) and
// streams; it returns the exit status.
func Run(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(args, stdin, stdout, stderr)
}

// run is the command with its arguments (without the program name) and
// streams; it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ratelab export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	list := fs.Bool("list", false, "list the targets and exit")
	targetList := fs.String("target", "", "comma-separated target names (see -list)")
	all := fs.Bool("all", false, "render every target (needs -o)")
	outDir := fs.String("o", "", "write DIR/<target>/<file> instead of standard output")
	asJSON := fs.Bool("json", false, "print each export's fidelity, mappings and notes as JSON instead of the file")
	require := fs.String("require", "", "exit 1 when an export's fidelity is worse than this (exact or approximate)")
	var o export.Options
	fs.StringVar(&o.APIKeyHeader, "api-key-header", export.DefaultOptions.APIKeyHeader, "header carrying the client's API key")
	fs.StringVar(&o.AccountHeader, "account-header", export.DefaultOptions.AccountHeader, "header carrying the authenticated account id")
	fs.StringVar(&o.TierHeader, "tier-header", export.DefaultOptions.TierHeader, "header carrying the client's tier, set by authentication")
	fs.StringVar(&o.Upstream, "upstream", export.DefaultOptions.Upstream, "the protected service, host:port")
	fs.StringVar(&o.Listen, "listen", export.DefaultOptions.Listen, "where the gateway listens: port or host:port")
	fs.StringVar(&o.Gateway, "gateway", "", "the gateway whose metrics the prometheus target watches (default nginx)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ratelab export (-target name[,name…] | -all) [-o dir] [-json] [options] [policy.yaml | -]")
		fmt.Fprintln(stderr, "       ratelab export -list")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "exit status: 0 ok, 1 an export worse than -require, 2 bad usage or an invalid policy")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitInvalid
	}
	usage := func(msg string) int {
		fmt.Fprintln(stderr, "ratelab export:", msg)
		fs.Usage()
		return exitInvalid
	}
	if *list {
		for _, t := range targets.All {
			fmt.Fprintf(stdout, "%-16s %-11s %s\n", t.Name, t.Group, t.Title)
		}
		return exitOK
	}
	var names []string
	switch {
	case *all && *targetList != "":
		return usage("give -target or -all, not both")
	case *all:
		names = targets.Names()
	case *targetList != "":
		for n := range strings.SplitSeq(*targetList, ",") {
			n = strings.TrimSpace(n)
			if _, ok := targets.Find(n); !ok {
				return usage(fmt.Sprintf("no target %q; want one of %s", n, strings.Join(targets.Names(), ", ")))
			}
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	default:
		return usage("give -target (see -list) or -all")
	}
	if len(names) > 1 && *outDir == "" && !*asJSON {
		return usage("several targets write several files: give -o DIR")
	}
	var worst export.Fidelity
	switch *require {
	case "":
	case string(export.Exact), string(export.Approximate):
		worst = export.Fidelity(*require)
	default:
		return usage(fmt.Sprintf("-require %q: want exact or approximate", *require))
	}
	if fs.NArg() > 1 {
		return usage("give one policy file")
	}
	file := "-"
	if fs.NArg() == 1 {
		file = fs.Arg(0)
	}

	p, err := policy.DecodeFile(file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "ratelab export: %s: %v\n", file, err)
		return exitInvalid
	}
	status := exitOK
	enc := json.NewEncoder(stdout)
	for _, name := range names {
		e, err := targets.Render(name, p, o)
		if err != nil {
			fmt.Fprintf(stderr, "ratelab export: %s: %v\n", file, err)
			return exitInvalid
		}
		if worst != "" && export.Worst(worst, e.Fidelity) != worst {
			status = exitFidelity
		}
		switch {
		case *asJSON:
			if err := enc.Encode(e); err != nil {
				fmt.Fprintln(stderr, "ratelab export:", err)
				return exitInvalid
			}
			continue
		case *outDir != "":
			path := filepath.Join(*outDir, name, e.Filename)
			if err := write(path, e.Body); err != nil {
				fmt.Fprintln(stderr, "ratelab export:", err)
				return exitInvalid
			}
			fmt.Fprintf(stderr, "%s: wrote %s\n", name, path)
		default:
			if _, err := stdout.Write(e.Body); err != nil {
				fmt.Fprintln(stderr, "ratelab export:", err)
				return exitInvalid
			}
		}
		summarize(stderr, e)
	}
	return status
}

// write writes data to path, creating its directory.
func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// summarize prints an export's fidelity and each mapping that is not
// exact, with its reason.
func summarize(w io.Writer, e export.Export) {
	fmt.Fprintf(w, "%s: %s\n", e.Target, e.Fidelity)
	for _, m := range e.Mappings {
		if m.Fidelity == export.Exact {
			continue
		}
		fmt.Fprintf(w, "  %s %s: %s → %s", m.Fidelity, m.Field, m.From, m.To)
		if m.Why != "" {
			fmt.Fprintf(w, " (%s)", m.Why)
		}
		fmt.Fprintln(w)
	}
}
