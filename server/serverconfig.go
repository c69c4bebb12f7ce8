package server

import (
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ratelab/ratelab/algorithms"
)

// serverFlags are the flags of the server's own protections: its rate
// limit, body cap, trusted proxies and connection timeouts.
type serverFlags struct {
	apiRate        *float64
	apiBurst       *int64
	apiAlgorithm   *string
	apiBodyLimit   *int64
	logLimit       *int64
	logTimeout     *time.Duration
	trustedProxies *string
	corsOrigins    *string
	noMetrics      *bool
	readTimeout    *time.Duration
	writeTimeout   *time.Duration
	idleTimeout    *time.Duration
	// The heavy requests' budget, the render cache and the public URL.
	pageRate        *float64
	pageBurst       *int64
	maxHeavy        *int
	heavyTimeout    *time.Duration
	pageCache       *int64
	publicURL       *string
	shutdownTimeout *time.Duration
	// The access-log uploads' bounds.
	uploadFlags
}

// addServerFlags defines the server's flags on fs.
func addServerFlags(fs *flag.FlagSet) serverFlags {
	return serverFlags{
		apiRate: fs.Float64("api-rate", defaultAPIRate,
			"`requests per second` each client address may send to /api/; 0 turns the API's rate limit off"),
		apiBurst: fs.Int64("api-burst", defaultAPIBurst,
			"`requests` a client address may send to /api/ at once (the bucket size)"),
		apiAlgorithm: fs.String("api-algorithm", string(algorithms.NameTokenBucket),
			"`algorithm` of the API's rate limit: token_bucket or gcra (they admit the same requests)"),
		apiBodyLimit: fs.Int64("api-body-limit", defaultAPIBodyLimit,
			"largest request body under /api/, in `bytes`"),
		logLimit: fs.Int64("log-limit", defaultLogLimit,
			"largest access log the measure page accepts, in `bytes`"),
		logTimeout: fs.Duration("log-timeout", defaultLogTimeout,
			"longest `duration` to upload and measure one access log"),
		uploadFlags: addUploadFlags(fs),
		noMetrics: fs.Bool("no-metrics", false,
			"do not serve /metrics (the server still counts, for nobody)"),
		trustedProxies: fs.String("trusted-proxies", "",
			"comma-separated `addresses or CIDR prefixes` of reverse proxies whose X-Forwarded-For names the client; "+
				"empty trusts no header and takes the connection's address"),
		corsOrigins: fs.String("cors-origins", "",
			"comma-separated `origins` (https://app.example.com) whose pages may call /api/ from a browser (CORS), or * for any; "+
				"empty turns CORS off"),
		readTimeout: fs.Duration("read-timeout", readTimeout,
			"longest `duration` to read a whole request, body included"),
		writeTimeout: fs.Duration("write-timeout", writeTimeout,
			"longest `duration` from the end of the request headers to the end of the response"),
		idleTimeout: fs.Duration("idle-timeout", idleTimeout,
			"longest `duration` a keep-alive connection waits for its next request"),
		pageRate: fs.Float64("page-rate", defaultPageRate,
			"`requests per second` each client address may send to the designer, results, embed and export pages; 0 turns their rate limit off"),
		pageBurst: fs.Int64("page-burst", defaultPageBurst,
			"`requests` a client address may send to those pages at once (the bucket size)"),
		maxHeavy: fs.Int("max-heavy", defaultMaxHeavy,
			"`slots` of heavy requests in flight (simulations, designer pages, embeds, exports; a simulation takes one more per 250000 arrivals); beyond them 503 with Retry-After"),
		heavyTimeout: fs.Duration("heavy-timeout", defaultHeavyTimeout,
			"longest `duration` of one heavy request's work; past it the work stops and the answer is 503"),
		pageCache: fs.Int64("page-cache", defaultPageCache,
			"`bytes` of rendered embeds and designer pages kept for repeat requests; 0 turns the cache off"),
		publicURL: fs.String("public-url", "",
			"absolute `URL` of the server (https://ratelab.example.com) for the links in docs snippets; empty builds them from each request's Host"),
		shutdownTimeout: fs.Duration("shutdown-timeout", defaultShutdownTimeout,
			"longest `duration` in-flight requests (uploads included) may take to finish after SIGTERM or SIGINT"),
	}
}

// apply checks the parsed flags and copies them into cfg.
func (f serverFlags) apply(cfg *config) error {
	switch {
	case *f.apiRate < 0:
		return fmt.Errorf("-api-rate: %g; want 0 (off) or more", *f.apiRate)
	case *f.apiBodyLimit < 1:
		return fmt.Errorf("-api-body-limit: %d; want at least 1 byte", *f.apiBodyLimit)
	case *f.logLimit < 1:
		return fmt.Errorf("-log-limit: %d; want at least 1 byte", *f.logLimit)
	case *f.logTimeout <= 0:
		return fmt.Errorf("-log-timeout: %s; want more than 0", *f.logTimeout)
	case *f.readTimeout <= 0:
		return fmt.Errorf("-read-timeout: %s; want more than 0", *f.readTimeout)
	case *f.writeTimeout <= 0:
		return fmt.Errorf("-write-timeout: %s; want more than 0", *f.writeTimeout)
	case *f.idleTimeout <= 0:
		return fmt.Errorf("-idle-timeout: %s; want more than 0", *f.idleTimeout)
	case *f.pageRate < 0:
		return fmt.Errorf("-page-rate: %g; want 0 (off) or more", *f.pageRate)
	case *f.maxHeavy < 1:
		return fmt.Errorf("-max-heavy: %d; want at least 1", *f.maxHeavy)
	case *f.heavyTimeout <= 0:
		return fmt.Errorf("-heavy-timeout: %s; want more than 0", *f.heavyTimeout)
	case *f.pageCache < 0:
		return fmt.Errorf("-page-cache: %d; want 0 (off) or more bytes", *f.pageCache)
	case *f.shutdownTimeout <= 0:
		return fmt.Errorf("-shutdown-timeout: %s; want more than 0", *f.shutdownTimeout)
	}
	if *f.pageRate > 0 {
		spec := algorithms.Spec{Algorithm: algorithms.Name(*f.apiAlgorithm), Rate: *f.pageRate, Burst: *f.pageBurst}
		if spec.Algorithm != algorithms.NameTokenBucket && spec.Algorithm != algorithms.NameGCRA {
			return fmt.Errorf("-api-algorithm: %q; want token_bucket or gcra", *f.apiAlgorithm)
		}
		if err := spec.Validate(); err != nil {
			return fmt.Errorf("-page-%w", err)
		}
		cfg.pageLimit = spec
	}
	publicURL, err := parsePublicURL(*f.publicURL)
	if err != nil {
		return fmt.Errorf("-public-url: %w", err)
	}
	cfg.publicURL = publicURL
	cfg.maxHeavy, cfg.heavyTimeout, cfg.shutdownTimeout = *f.maxHeavy, *f.heavyTimeout, *f.shutdownTimeout
	cfg.pageCache = *f.pageCache
	if cfg.pageCache == 0 {
		cfg.pageCache = -1 // the flag's 0 is off; the config's is the default
	}
	if *f.apiRate > 0 {
		spec := algorithms.Spec{Algorithm: algorithms.Name(*f.apiAlgorithm), Rate: *f.apiRate, Burst: *f.apiBurst}
		if spec.Algorithm != algorithms.NameTokenBucket && spec.Algorithm != algorithms.NameGCRA {
			return fmt.Errorf("-api-algorithm: %q; want token_bucket or gcra", *f.apiAlgorithm)
		}
		if err := spec.Validate(); err != nil {
			return fmt.Errorf("-api-%w", err)
		}
		cfg.apiLimit = spec
	}
	proxies, err := parseTrustedProxies(*f.trustedProxies)
	if err != nil {
		return fmt.Errorf("-trusted-proxies: %w", err)
	}
	cfg.trustedProxies = proxies
	origins, err := parseCORSOrigins(*f.corsOrigins)
	if err != nil {
		return fmt.Errorf("-cors-origins: %w", err)
	}
	cfg.corsOrigins = origins
	cfg.apiBodyLimit = *f.apiBodyLimit
	cfg.logLimit, cfg.logTimeout = *f.logLimit, *f.logTimeout
	if err := f.uploadFlags.apply(cfg); err != nil {
		return err
	}
	cfg.noMetrics = *f.noMetrics
	cfg.readTimeout, cfg.writeTimeout, cfg.idleTimeout = *f.readTimeout, *f.writeTimeout, *f.idleTimeout
	return nil
}

// httpServer returns the http.Server that run serves h with: cfg's
// timeouts (the defaults where zero) and errors logged through logger.
func httpServer(cfg config, h http.Handler, logger *slog.Logger) *http.Server {
	orDefault := func(d, def time.Duration) time.Duration {
		if d == 0 {
			return def
		}
		return d
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       orDefault(cfg.readTimeout, readTimeout),
		WriteTimeout:      orDefault(cfg.writeTimeout, writeTimeout),
		IdleTimeout:       orDefault(cfg.idleTimeout, idleTimeout),
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// apiRateLimit returns the middleware that limits each client of /api/ by
// cfg.apiLimit, and reports the limiter's keys to m. With the limit off
// (a zero Rate) it passes every request through. It panics on a spec that
// run would have rejected.
func apiRateLimit(cfg config, m *metrics) echo.MiddlewareFunc {
	if cfg.apiLimit.Rate == 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	lim, err := newAPILimiter(cfg.apiLimit, cfg.clock, m)
	if err != nil {
		panic(fmt.Sprintf("newServer: API rate limit: %v", err))
	}
	m.mu.Lock()
	m.keys = lim.keys
	m.mu.Unlock()
	return lim.middleware()
}

// parseCORSOrigins parses a comma-separated list of origins
// ("https://app.example.com, http://localhost:3000"): each a scheme (http
// or https) and a host with an optional port, nothing after it, or "*" for
// any origin. Empty entries are skipped; an empty list turns CORS off.
func parseCORSOrigins(s string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
			continue
		case f == "*":
			out = append(out, f)
			continue
		}
		u, err := url.Parse(f)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.ContainsAny(f, "*?#") {
			return nil, fmt.Errorf("origin %q: want a scheme and a host such as https://app.example.com, without a path, or *", f)
		}
		// Browsers send the origin in lower case, without a default port.
		out = append(out, strings.ToLower(f))
	}
	return out, nil
}

// apiCORSMaxAge is how long, in seconds, a browser may cache a preflight's
// answer (Access-Control-Max-Age).
const apiCORSMaxAge = 600

// apiCORS returns the middleware that lets pages from origins call /api/
// from a browser (Echo's CORS middleware): a preflight (OPTIONS) from an
// allowed origin is answered 204 with the methods the API answers (GET,
// HEAD, POST) and the request header it reads (Content-Type), and every
// API response to that origin exposes the rate limit's RateLimit,
// RateLimit-Policy and Retry-After, and the X-Request-Id that names the
// request in the server's log, to the page. No credentials are
// allowed: the API uses none. A request from another origin, and every
// request outside /api/, gets no CORS headers. With no origins it passes
// every request through.
func apiCORS(origins []string) echo.MiddlewareFunc {
	if len(origins) == 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	return middleware.CORSWithConfig(middleware.CORSConfig{
		Skipper:       func(c echo.Context) bool { return !isAPI(c.Request().URL.Path) },
		AllowOrigins:  origins,
		AllowMethods:  []string{http.MethodGet, http.MethodHead, http.MethodPost},
		AllowHeaders:  []string{echo.HeaderContentType},
		ExposeHeaders: []string{"RateLimit", "RateLimit-Policy", echo.HeaderRetryAfter, echo.HeaderXRequestID},
		MaxAge:        apiCORSMaxAge,
	})
}
