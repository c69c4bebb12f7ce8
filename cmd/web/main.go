// Command web serves ratelab's designer over HTTP: the server alone, as
// "ratelab serve" (cmd/ratelab) with the same flags; package server holds
// it. It stops gracefully on SIGINT or SIGTERM; a second signal stops it at
// once.
//
//	web [-addr host:port] [flags]
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ratelab/ratelab/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, restore the default behaviour so that a second
	// one kills the process instead of waiting for the graceful shutdown.
	context.AfterFunc(ctx, stop)
	code := server.Run(ctx, "web", os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
