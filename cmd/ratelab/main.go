// Command ratelab is ratelab in one binary: the designer's server and the
// command-line tools, one subcommand each.
//
//	ratelab serve [-addr host:port] [flags]      the designer over HTTP (package server)
//	ratelab lint [--format text|json|sarif] [--fail-on error|warning] [file ...]
//	ratelab export (-target name[,name…] | -all) [-o dir] [policy.yaml]
//	ratelab docs -o dir [policy.yaml]
//	ratelab measure [flags] [access.log]
//	ratelab healthcheck [-url http://127.0.0.1:8080/healthz]
//	ratelab version
//	ratelab help [command]
//
// Every subcommand exits 0 when it did what was asked, 1 when it found what
// it was asked to fail on (lint findings, an export below its fidelity
// gate, an unhealthy server; serve: the server could not listen or serve),
// 2 for bad usage or input it cannot read (package cli). The first SIGINT
// or SIGTERM cancels the subcommand's context (serve shuts down
// gracefully, measure stops reading); a second one kills the process.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ratelab/ratelab/internal/buildinfo"
	"github.com/ratelab/ratelab/internal/cli"
	"github.com/ratelab/ratelab/internal/cli/docs"
	"github.com/ratelab/ratelab/internal/cli/export"
	"github.com/ratelab/ratelab/internal/cli/health"
	"github.com/ratelab/ratelab/internal/cli/lint"
	"github.com/ratelab/ratelab/internal/cli/measure"
	"github.com/ratelab/ratelab/server"
)

// command is one subcommand: run takes its arguments (after its name) and
// streams and returns the exit status.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands are the subcommands, in the order help lists them.
var commands = []command{
	{"serve", "serve the designer over HTTP", serve},
	{"lint", "check policy files (text, JSON or SARIF)", lint.Run},
	{"export", "turn a policy into gateway and library configuration", export.Run},
	{"docs", "render a policy's charts and limits for documentation", docs.Run},
	{"measure", "measure an access log, or replay it through a policy", measure.Run},
	{"healthcheck", "ask a running server's /healthz (for a container's HEALTHCHECK)", health.Run},
	{"version", "print the version, VCS revision and Go version", version},
	{"help", "describe a command: ratelab help <command>", nil}, // run handles it
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, restore the default behaviour so that a second
	// one kills the process instead of waiting for the graceful shutdown.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches args (without the program name) to a subcommand and
// returns its exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return cli.ExitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		usage(stdout)
		return cli.ExitOK
	case "-version", "--version":
		return version(ctx, rest, stdin, stdout, stderr)
	case "help":
		if len(rest) > 1 {
			fmt.Fprintf(stderr, "ratelab help: %q: want one command\n", rest)
			return cli.ExitUsage
		}
		if len(rest) == 0 || rest[0] == "help" {
			usage(stdout)
			return cli.ExitOK
		}
		c, ok := lookup(rest[0])
		if !ok {
			fmt.Fprintf(stderr, "ratelab help: unknown command %q\n", rest[0])
			usage(stderr)
			return cli.ExitUsage
		}
		// A command's -h prints its usage and flags; asked for, they go to
		// stdout.
		return c.run(ctx, []string{"-h"}, stdin, stdout, stdout)
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "ratelab: unknown command %q\n", name)
		usage(stderr)
		return cli.ExitUsage
	}
	return c.run(ctx, rest, stdin, stdout, stderr)
}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ratelab <command> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "'ratelab help <command>' or 'ratelab <command> -h' lists a command's flags.")
	fmt.Fprintln(w, "exit status: 0 ok, 1 findings or rejections, 2 bad usage or unreadable input")
}

// serve is the server, reading the process's environment.
func serve(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	return server.Run(ctx, "ratelab serve", args, os.Getenv, stdout, stderr)
}

// version prints the build's version, VCS revision and Go version.
func version(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stderr, "usage: ratelab version   (the main module's version, vcs.revision and Go version)")
		return cli.ExitOK
	}
	if len(args) > 0 {
		fmt.Fprintf(stderr, "ratelab version: unexpected argument %q\n", args[0])
		return cli.ExitUsage
	}
	fmt.Fprintln(stdout, buildinfo.Read())
	return cli.ExitOK
}
