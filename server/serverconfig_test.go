package server

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

func parseServerFlags(args ...string) (config, error) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := addServerFlags(fs)
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	var cfg config
	err := f.apply(&cfg)
	return cfg, err
}

func TestServerFlagDefaults(t *testing.T) {
	cfg, err := parseServerFlags()
	if err != nil {
		t.Fatal(err)
	}
	if want := (algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 20, Burst: 40}); cfg.apiLimit != want {
		t.Errorf("apiLimit: got %v, want %v (on by default)", cfg.apiLimit, want)
	}
	if cfg.apiBodyLimit != defaultAPIBodyLimit || len(cfg.trustedProxies) != 0 {
		t.Errorf("apiBodyLimit %d, trustedProxies %v", cfg.apiBodyLimit, cfg.trustedProxies)
	}
	if cfg.readTimeout != readTimeout || cfg.writeTimeout != writeTimeout || cfg.idleTimeout != idleTimeout {
		t.Errorf("timeouts: got %s %s %s", cfg.readTimeout, cfg.writeTimeout, cfg.idleTimeout)
	}
}

func TestServerFlags(t *testing.T) {
	cfg, err := parseServerFlags("-api-rate", "5.5", "-api-burst", "11", "-api-algorithm", "gcra",
		"-api-body-limit", "1024", "-trusted-proxies", "10.0.0.0/8,::1",
		"-read-timeout", "1m", "-write-timeout", "2m", "-idle-timeout", "3m")
	if err != nil {
		t.Fatal(err)
	}
	if want := (algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 5.5, Burst: 11}); cfg.apiLimit != want {
		t.Errorf("apiLimit: got %v, want %v", cfg.apiLimit, want)
	}
	if want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}; len(cfg.trustedProxies) != 2 ||
		cfg.trustedProxies[0] != want[0] || cfg.trustedProxies[1] != want[1] {
		t.Errorf("trustedProxies: got %v, want %v", cfg.trustedProxies, want)
	}
	srv := httpServer(cfg, nil, slog.New(slog.DiscardHandler))
	if srv.ReadTimeout != time.Minute || srv.WriteTimeout != 2*time.Minute || srv.IdleTimeout != 3*time.Minute ||
		srv.ReadHeaderTimeout != readHeaderTimeout {
		t.Errorf("server timeouts: read %s, write %s, idle %s, header %s", srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout, srv.ReadHeaderTimeout)
	}
	if cfg.apiBodyLimit != 1024 {
		t.Errorf("apiBodyLimit: got %d", cfg.apiBodyLimit)
	}
	if spool, err := parseServerFlags("-max-spool", "4096"); err != nil || spool.uploads.spooled.limit != 4096 {
		t.Errorf("-max-spool 4096: %v", err)
	}
	if def, _ := parseServerFlags(); def.uploads.spooled.limit != defaultMaxSpool {
		t.Errorf("-max-spool by default: %d, want %d", def.uploads.spooled.limit, defaultMaxSpool)
	}

	off, err := parseServerFlags("-api-rate", "0", "-api-burst", "0")
	if err != nil {
		t.Fatal(err)
	}
	if off.apiLimit.Rate != 0 {
		t.Errorf("-api-rate 0: apiLimit %v, want off", off.apiLimit)
	}
}

func TestHTTPServerDefaults(t *testing.T) {
	srv := httpServer(config{}, nil, slog.New(slog.DiscardHandler))
	if srv.ReadTimeout != readTimeout || srv.WriteTimeout != writeTimeout || srv.IdleTimeout != idleTimeout ||
		srv.ReadHeaderTimeout != readHeaderTimeout {
		t.Errorf("timeouts: read %s, write %s, idle %s, header %s", srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout, srv.ReadHeaderTimeout)
	}
}

func TestServerFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string // part of the error
	}{
		{[]string{"-api-rate", "-1"}, "-api-rate"},
		{[]string{"-api-burst", "0"}, "-api-burst"},
		{[]string{"-api-rate", "1e12"}, "-api-rate"},
		{[]string{"-api-algorithm", "fixed_window"}, "-api-algorithm"},
		{[]string{"-api-body-limit", "0"}, "-api-body-limit"},
		{[]string{"-trusted-proxies", "proxy.internal"}, "-trusted-proxies"},
		{[]string{"-read-timeout", "0s"}, "-read-timeout"},
		{[]string{"-write-timeout", "-1s"}, "-write-timeout"},
		{[]string{"-idle-timeout", "0s"}, "-idle-timeout"},
		{[]string{"-max-spool", "0"}, "-max-spool"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			// Through run, so the flags are wired; the cancelled context
			// makes run return even if one reached the listener.
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			err := run(ctx, "ratelab serve", append([]string{"-addr", "127.0.0.1:0"}, tt.args...), func(string) string { return "" }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error naming %s", err, tt.want)
			}
		})
	}
}

// TestNoMetricsAndLogFlags: -no-metrics takes /metrics out of the routes
// (404) and the other routes stay; -log-limit and -log-timeout reach the
// config and refuse nonsense.
func TestNoMetricsAndLogFlags(t *testing.T) {
	cfg, err := parseServerFlags("-no-metrics", "-log-limit", "2048", "-log-timeout", "30s")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.noMetrics || cfg.logLimit != 2048 || cfg.logTimeout != 30*time.Second {
		t.Fatalf("config %+v", cfg)
	}
	e := newServer(cfg)
	if rec := serve(t, e, http.MethodGet, "/metrics"); rec.Code != http.StatusNotFound {
		t.Errorf("/metrics with -no-metrics: %d, want 404", rec.Code)
	}
	if rec := serve(t, e, http.MethodGet, "/healthz"); rec.Code != http.StatusOK {
		t.Errorf("/healthz: %d", rec.Code)
	}
	if rec := serve(t, newServer(config{}), http.MethodGet, "/metrics"); rec.Code != http.StatusOK {
		t.Errorf("/metrics by default: %d, want 200", rec.Code)
	}
	for _, args := range [][]string{{"-log-limit", "0"}, {"-log-timeout", "0s"}} {
		if _, err := parseServerFlags(args...); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: err %v, want one naming the flag", args, err)
		}
	}
}
