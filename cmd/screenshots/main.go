// Command screenshots makes the designer's screenshots in docs/screenshots,
// which the README shows: the first viewport of `/` (the example design)
// and of one tiered design with a pinned limit, each at 1440×900 (desktop)
// and at 390×844 (a phone, with mobile emulation), in headless Chromium.
//
// Usage:
//
//	go run ./cmd/screenshots [-o docs/screenshots] [-bin ratelab-web] [-chromium /usr/bin/chromium] [-timeout 5m]
//
// Without -bin it builds ./cmd/web into a temporary directory (so run it
// from the module), starts the server on 127.0.0.1:0 (internal/liveserver),
// and stops it at the end. Each screenshot gets a fresh tab in light mode;
// it is taken once every chart of the page is drawn (every
// [data-chart-option] element has data-chart-drawn and a canvas), and only
// of the first viewport, which is what a reader sees on arrival. The files
// are named <page>-<width>x<height>.png and overwritten, so rerunning the
// command after a change to the page updates them in place.
//
// It connects only to the server it started: a page that requests any
// other host, throws an uncaught exception or answers other than 200 is an
// error, and no file of that run is written. The whole run, build included,
// is bounded by -timeout.
//
// chromedp, which the browser tests of cmd/web use, is a dependency of the
// main module through this package; cmd/ is part of the module, and no
// package a user imports pulls it in.
package main

import (
	"context"
	"errors"
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
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "screenshots: %v\n", err)
		os.Exit(1)
	}
}

// options are what run takes from its flags.
type options struct {
	// dir is where the PNGs go; it is created if missing.
	dir string
	// bin is the server binary to start; empty builds ./cmd/web.
	bin string
	// chromium is the browser's executable.
	chromium string
	// timeout bounds the whole run, build included.
	timeout time.Duration
}

// run parses args (without the program name), makes every screenshot and
// writes one line per file to stdout and progress to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("screenshots", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.dir, "o", "docs/screenshots", "`directory` the PNGs are written to")
	fs.StringVar(&o.bin, "bin", "", "server `binary` to start; empty builds ./cmd/web into a temporary directory")
	fs.StringVar(&o.chromium, "chromium", "/usr/bin/chromium", "Chromium `executable` (Debian's chromium package)")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "longest `time` for the whole run, build included")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case o.dir == "":
		return errors.New("-o: empty; want a directory")
	case o.chromium == "":
		return errors.New("-chromium: empty; want the browser's executable")
	case o.timeout <= 0:
		return fmt.Errorf("-timeout: %s; want more than 0", o.timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	return capture(ctx, o, stdout, stderr)
}
