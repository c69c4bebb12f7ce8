// Package health is the ratelab healthcheck command: it asks a running
// server's /healthz whether it is up, for a container's HEALTHCHECK in an
// image without a shell or curl.
//
//	ratelab healthcheck [-url http://127.0.0.1:8080/healthz] [-timeout 2s]
//
// The exit status is 0 when the server answers with a 2xx status within
// the timeout, 1 when it answers otherwise, too late or not at all, 2 for
// bad usage.
package health

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/ratelab/ratelab/internal/cli"
)

// Defaults: the server's default address, and a timeout well inside
// Docker's default health check timeout (30 s) that a healthy server,
// whose /healthz does no work, never comes near.
const (
	DefaultURL     = "http://127.0.0.1:8080/healthz"
	DefaultTimeout = 2 * time.Second
)

// Run is the command with its arguments (without the program name) and
// streams; it returns the exit status.
func Run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ratelab healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("url", DefaultURL, "the server's health `URL` (http or https)")
	timeout := fs.Duration("timeout", DefaultTimeout, "give up after this `duration`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ratelab healthcheck [-url "+DefaultURL+"] [-timeout 2s]")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "exit status: 0 healthy (a 2xx answer), 1 unhealthy or unreachable, 2 bad usage")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ratelab healthcheck: unexpected argument %q\n", fs.Arg(0))
		return cli.ExitUsage
	}
	u, err := url.Parse(*target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "ratelab healthcheck: -url %q; want an http or https URL\n", *target)
		return cli.ExitUsage
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "ratelab healthcheck: -timeout %v; want more than 0\n", *timeout)
		return cli.ExitUsage
	}
	if err := check(ctx, u.String(), *timeout); err != nil {
		fmt.Fprintln(stderr, "ratelab healthcheck:", err)
		return cli.ExitFindings
	}
	fmt.Fprintln(stdout, "ok")
	return cli.ExitOK
}

// check GETs target and returns nil for a 2xx answer within timeout.
func check(ctx context.Context, target string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	// No proxy from the environment: the server is the one beside us.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s: %s", target, resp.Status)
	}
	return nil
}
