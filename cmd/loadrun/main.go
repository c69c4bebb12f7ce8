// Command loadrun is a bounded load run against ratelab's web server on the
// loopback interface: requests per second and latency percentiles for the
// designer, the calculator API and the simulate API, with /healthz as the
// baseline in the same run, and a check that the server answers no 5xx,
// logs no errors and keeps its memory flat.
//
// Usage:
//
//	loadrun [-c 8] [-n 5000] [-n-heavy 1000] [-duration 10s] [flags]
//
// Without -url it builds ./cmd/web into a temporary directory (or takes
// -bin), starts it on 127.0.0.1:0 with its per-client limits off (serverArgs), and reads its memory
// (VmRSS) from /proc. With -url it drives a server that is already running,
// which must listen on a loopback address and have its API rate limit off;
// memory then comes from the server's /metrics.
//
// Each target gets a warm-up and then a closed loop of -c workers, each
// sending its next request as soon as the last one is answered, until -n
// requests (-n-heavy for the designer and simulate) or -duration, whichever
// comes first. The report is Markdown, ready for the README. The exit status
// is 1 when a check fails.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ratelab/ratelab/internal/liveserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadrun: %v\n", err)
		os.Exit(1)
	}
}

// options bound a load run; run fills them from flags, tests directly.
type options struct {
	// baseURL is a running server's root (loopback only); empty starts bin.
	baseURL string
	// bin is the server binary to start; empty builds ./cmd/web.
	bin string
	// concurrency is the number of closed-loop workers.
	concurrency int
	// requests and heavyRequests cap the measured requests per target: the
	// cheap targets (/healthz, calc) and the heavy ones (/, simulate).
	requests, heavyRequests int
	// warmup is the number of unmeasured requests per target before any
	// measurement, so the memory baseline is that of a warm server.
	warmup int
	// duration caps the time of each target's warm-up and of its measured
	// loop; a request in flight at the cap still completes.
	duration time.Duration
	// timeout bounds one request.
	timeout time.Duration
}

// run parses args (without the program name), does one load run and writes
// its report to stdout and its progress to stderr. It returns an error when
// the run could not be done or a check failed.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadrun", flag.ContinueOnError)
	fs.SetOutput(stdout)
	var o options
	fs.StringVar(&o.baseURL, "url", "", "`root URL` of a running server on a loopback address (started with -api-rate 0 -page-rate 0); empty starts the server itself")
	fs.StringVar(&o.bin, "bin", "", "server `binary` to start; empty builds ./cmd/web into a temporary directory")
	fs.IntVar(&o.concurrency, "c", 8, "concurrent `workers`, each with one request in flight")
	fs.IntVar(&o.requests, "n", 5000, "measured `requests` per cheap target (/healthz, /api/v1/calc)")
	fs.IntVar(&o.heavyRequests, "n-heavy", 1000, "measured `requests` per heavy target (/, /api/v1/simulate)")
	fs.IntVar(&o.warmup, "warmup", 200, "unmeasured warm-up `requests` per target")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "longest `time` of each target's warm-up and of its measured loop")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "longest `time` for one request")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := o.validate(); err != nil {
		return err
	}
	rep, err := loadRun(ctx, o, stdout, stderr)
	if err != nil {
		return err
	}
	if failed := rep.failures(); len(failed) > 0 {
		return fmt.Errorf("%d checks failed: %v", len(failed), failed)
	}
	return nil
}

func (o options) validate() error {
	switch {
	case o.concurrency < 1:
		return fmt.Errorf("-c: %d; want at least 1", o.concurrency)
	case o.requests < 1:
		return fmt.Errorf("-n: %d; want at least 1", o.requests)
	case o.heavyRequests < 1:
		return fmt.Errorf("-n-heavy: %d; want at least 1", o.heavyRequests)
	case o.warmup < 0:
		return fmt.Errorf("-warmup: %d; want 0 or more", o.warmup)
	case o.duration <= 0:
		return fmt.Errorf("-duration: %s; want more than 0", o.duration)
	case o.timeout <= 0:
		return fmt.Errorf("-timeout: %s; want more than 0", o.timeout)
	case o.baseURL != "" && o.bin != "":
		return errors.New("-url and -bin: give one or neither")
	}
	if o.baseURL != "" {
		if _, err := loopbackURL(o.baseURL); err != nil {
			return fmt.Errorf("-url: %w", err)
		}
	}
	return nil
}

// loopbackURL parses raw as an http URL whose host is a loopback address
// or localhost; this tool sends traffic nowhere else.
func loopbackURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("%q: scheme %q; want http", raw, u.Scheme)
	}
	if !liveserver.IsLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("%q: host %q is not a loopback address; loadrun only sends traffic to 127.0.0.1, ::1 or localhost", raw, u.Hostname())
	}
	u.Path, u.RawQuery, u.Fragment = "", "", ""
	return u, nil
}
