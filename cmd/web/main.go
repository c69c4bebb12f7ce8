// Command web serves ratelab's designer over HTTP.
//
// Usage:
//
//	web [-addr host:port]
//
// It logs JSON lines to stdout, and stops gracefully on SIGINT or SIGTERM; a
// second signal stops it at once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Timeouts of the HTTP server. WriteTimeout leaves room for simulations,
// which are the slowest pages.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	shutdownTimeout   = 10 * time.Second
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, restore the default behaviour so that a second
	// one kills the process instead of waiting for the graceful shutdown.
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ratelab: %v\n", err)
		os.Exit(1)
	}
}

// config is what newServer and run need to know. Tests build one directly.
type config struct {
	// addr is the TCP address to listen on, as in net.Listen.
	addr string
	// logger receives request logs and errors. Nil discards them.
	logger *slog.Logger
}

// run parses args (without the program name), serves HTTP until ctx is
// cancelled, then shuts down gracefully and returns nil. getenv is how the
// environment reaches the program; no variable is read yet. Logs go to
// stdout as JSON lines; once the listener is bound, one line with msg
// "listening" carries the bound address in "addr" (useful with port 0).
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ratelab", flag.ContinueOnError)
	fs.SetOutput(stdout)
	addr := fs.String("addr", ":8080", "TCP `address` to listen on")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg := config{
		addr:   *addr,
		logger: slog.New(slog.NewJSONHandler(stdout, nil)),
	}

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler:           newServer(cfg),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(cfg.logger.Handler(), slog.LevelWarn),
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	cfg.logger.Info("listening", "addr", ln.Addr().String())

	select {
	case err := <-serveErr:
		// Serve only returns early on a broken listener.
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}

	cfg.logger.Info("shutting down", "timeout", shutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	cfg.logger.Info("stopped")
	return nil
}
