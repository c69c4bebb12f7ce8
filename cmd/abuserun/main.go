// Command abuserun attacks ratelab's web server the ways that once took it
// down, and checks that it holds: it builds ./cmd/web, starts it on
// 127.0.0.1 under a 2 GiB address-space cap (prlimit), and fires every
// reproduction of the server's known abuse findings — huge and endless
// simulate bodies, patterns of a million arrivals at once, YAML bombs to
// lint and import, thousands of slow uploads, logs of millions of distinct
// clients and of one crowded second, heavy pages at once, hostile text for
// the exports, a design too long for a header, an upload cut off, SIGTERM
// during an upload — concurrently where the finding needs it, while a
// well-formed client keeps using the service.
//
// It fails (exit 1) if the server dies or exits uncleanly, if /healthz or
// the well-formed client gets anything but its answer, if a hostile request
// gets a 5xx other than a 503 with Retry-After (load shed on purpose), if a
// response header passes 4 KiB, if the server logs an ERROR, or if its peak
// resident set passes 512 MiB. Every request loop is bounded in count and
// time, and it only ever connects to the loopback server it started.
//
//	go run ./cmd/abuserun
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "abuserun:", err)
		os.Exit(1)
	}
}

// options are the run's bounds.
type options struct {
	addressSpace int64         // the server's RLIMIT_AS
	rssLimit     int64         // the most peak RSS allowed
	timeout      time.Duration // the whole run
	only         string        // run only the attack of this name ("" all)
	bin          string        // a server binary to run instead of building one
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("abuserun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.Int64Var(&o.addressSpace, "address-space", 2<<30, "the server's address-space limit in `bytes`")
	fs.Int64Var(&o.rssLimit, "rss-limit", 512<<20, "the most peak resident memory the server may reach, in `bytes`")
	fs.DurationVar(&o.timeout, "timeout", 4*time.Minute, "the longest the whole run may take")
	fs.StringVar(&o.only, "only", "", "run only the attack of this `name`")
	fs.StringVar(&o.bin, "bin", "", "run this server `binary` instead of building ./cmd/web")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	rep, err := abuse(ctx, o, stderr)
	if rep != nil {
		rep.write(stdout)
	}
	if err != nil {
		return err
	}
	if fails := rep.failures(o); len(fails) > 0 {
		for _, f := range fails {
			fmt.Fprintln(stderr, "abuserun: FAIL:", f)
		}
		return fmt.Errorf("%d failures", len(fails))
	}
	return nil
}
