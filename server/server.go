package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ratelab/ratelab/static"
	"github.com/ratelab/ratelab/views"
)

// newServer builds the HTTP handler. Every route is listed here, and nowhere
// else, so tests exercise the very server that runs.
func newServer(cfg config) *echo.Echo {
	logger := cfg.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errorHandler(logger)
	e.IPExtractor = ipExtractor(cfg.trustedProxies)
	m := newMetrics()
	e.Use(
		m.middleware(), // outermost, so it sees the status the client got
		securityHeaders(),
		requestID(), // outside the logger, which logs the id
		requestLogger(logger),
		recoverPanics(),
		apiCORS(cfg.corsOrigins), // before the limits, so a refusal carries CORS too
		bodyLimit(cfg.apiBodyLimit),
		apiRateLimit(cfg, m),  // /api/ and POST /import
		pageRateLimit(cfg, m), // the heavy pages
		compress(),
	)

	get := func(path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
		// HEAD answers like GET without the body (net/http drops it), so
		// uptime checks and caches that probe with HEAD work.
		e.Match([]string{http.MethodGet, http.MethodHead}, path, h, mw...)
	}
	gate := newHeavyGate(cfg.maxHeavy)
	hv := heavy(gate, cfg.heavyTimeout)
	pg := &pages{gate: gate, timeout: cfg.heavyTimeout, cache: newPageCache(cfg.pageCache), publicURL: cfg.publicURL}
	get(designerPath, pg.handleDesigner) // the cached ones take the gate on a miss
	get(resultsPath, pg.handleDesignerResults)
	get(views.DocsPanelPath+":panel", pg.handleDesignerDocs)
	get("/healthz", handleHealthz)
	get(schemaPath, handleSchema)
	get(exportPath, handleExport)
	get(exportTargetPath, handleExportTarget, hv)
	get(exportsPath, handleExports, hv)
	get(embedPath, pg.handleEmbed)
	get(reversePath, handleReversePage)
	get(comparePath, handleCompare, hv)
	get(measurePath, handleMeasurePage)
	e.POST(measurePath, handleMeasure(cfg))
	e.POST(rejectionsPath, handleRejections(cfg))
	e.POST(importPath, pg.handleImport)
	e.POST("/api/v1/calc", handleCalc)
	e.POST("/api/v1/calc/reverse", handleReverse)
	e.POST("/api/v1/simulate", handleSimulate(cfg.maxArrivals), hv)
	e.POST(lintPath, handleLint)
	get("/api/openapi.json", handleOpenAPI)
	get("/static/*", echo.StaticDirectoryHandler(static.FS, true), staticCache(), precompressed())
	if !cfg.noMetrics {
		get("/metrics", m.handler)
	}

	return e
}

func handleHealthz(c echo.Context) error {
	return c.String(http.StatusOK, "ok")
}

// render renders comp into a buffer and only then writes it with status, so
// a failing component becomes a clean 500 from errorHandler instead of half
// a page.
func render(c echo.Context, status int, comp templ.Component) error {
	b, err := renderBytes(c, comp)
	if err != nil {
		return err
	}
	return c.HTMLBlob(status, b)
}

// renderBytes renders comp for c into memory.
func renderBytes(c echo.Context, comp templ.Component) ([]byte, error) {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", c.Request().URL.Path, err)
	}
	return buf.Bytes(), nil
}

// statusClientClosed is the status logged for a request whose client went
// away before the answer (nginx's 499); nothing is sent.
const statusClientClosed = 499

// clientGone reports whether err says the client went away: its request
// context was cancelled, or its body stopped short (a closed or reset
// connection while uploading).
func clientGone(err error) bool {
	var bre *bodyReadError
	return errors.Is(err, context.Canceled) || errors.As(err, &bre) || errors.Is(err, io.ErrUnexpectedEOF)
}

// refusedBodyWait is how long a refused request's unread body is read
// before the answer (see errorHandler).
const refusedBodyWait = 2 * time.Second

// errorHandler is the one place where errors become responses. An
// invalidRequest is a 422 listing every problem by field; an
// *echo.HTTPError keeps its status and message; a client that went away
// (clientGone) gets nothing and is logged as 499; work past its deadline
// (context.DeadlineExceeded) is a 503 with Retry-After; any other error is
// a 500 whose details go to the log, never to the client. Under /api/
// every error, an unknown path (404) and a wrong method (405, with Allow)
// included, is RFC 9457 problem details (application/problem+json, see
// Problem) whose errors member lists the problems by field
// ([{"field":…,"message":…}]); elsewhere errors are plain text, or for a
// browser (Accept naming text/html) the same message as a page of the
// site, but for an invalidRequest, problem details on every route; none
// are cached.
func errorHandler(logger *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			// The request logger hands errors over first; this is the
			// second call for the same error, or a handler failed after
			// writing. Either way there is nothing left to send.
			return
		}
		req := c.Request()
		if clientGone(err) {
			c.Response().Status = statusClientClosed
			return
		}
		if errors.Is(err, context.DeadlineExceeded) {
			c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(busyRetryAfter))
			err = echo.NewHTTPError(http.StatusServiceUnavailable,
				"the request ran past its deadline and was stopped; the server is busy, retry later")
		}
		var inv *invalidRequest
		if errors.As(err, &inv) {
			// JSON on every route: outside /api/ only the export
			// downloads (GET /export/...) answer an invalidRequest.
			if werr := writeProblem(c, newProblem(http.StatusUnprocessableEntity, inv.Error(), inv.problems)); werr != nil {
				logger.WarnContext(req.Context(), "writing error response", "path", req.URL.Path, "err", werr)
			}
			return
		}
		code := http.StatusInternalServerError
		msg := http.StatusText(code)
		var he *echo.HTTPError
		if errors.As(err, &he) {
			code = he.Code
			if he.Message != nil {
				msg = fmt.Sprint(he.Message)
			}
		}
		if he == nil || code >= http.StatusInternalServerError && code != http.StatusServiceUnavailable {
			// A 503 (busy, or past the deadline) is load, not a fault:
			// the request log has it at WARN.
			logger.ErrorContext(req.Context(), "request failed",
				"method", req.Method, "path", req.URL.Path, "status", code, "err", err)
		}

		h := c.Response().Header()
		h.Del(echo.HeaderCacheControl)
		h.Set(echo.HeaderXContentTypeOptions, "nosniff")
		if req.ContentLength != 0 && code >= http.StatusBadRequest {
			// A refused request may leave its body unread (an upload cut
			// off as too slow or too large). Before answering, net/http
			// reads up to 256 KiB more of it, so that a client still
			// sending gets the answer and not a reset; bound that read, or
			// a client that stalled would wait for an answer that waits
			// for it. Past the bound the connection closes after the
			// answer.
			_ = http.NewResponseController(c.Response().Writer).SetReadDeadline(time.Now().Add(refusedBodyWait))
		}
		var werr error
		switch {
		case req.Method == http.MethodHead:
			werr = c.NoContent(code)
		case isAPI(req.URL.Path):
			// API clients get problem details, the same shape as a 422.
			werr = writeProblem(c, newProblem(code, apiDetail(c, he, msg), nil))
		case acceptsHTML(req):
			// A browser gets the message as a page of the site, readable on
			// a phone, with the way back.
			werr = render(c, code, views.ErrorPage(views.ErrorView{Title: http.StatusText(code), Message: msg}))
		default:
			werr = c.String(code, msg)
		}
		if werr != nil {
			logger.WarnContext(req.Context(), "writing error response", "path", req.URL.Path, "err", werr)
		}
	}
}

// apiDetail is the detail of an API error answered with an *echo.HTTPError
// he (nil for another error) whose message is msg: for the router's 404
// and 405, which say no more than the status, what was asked and what is
// there; msg otherwise.
func apiDetail(c echo.Context, he *echo.HTTPError, msg string) string {
	req := c.Request()
	switch {
	case he == echo.ErrNotFound:
		return fmt.Sprintf("%s is not a route of the API; /api/openapi.json lists them", req.URL.Path)
	case he == echo.ErrMethodNotAllowed:
		allow := c.Response().Header().Get(echo.HeaderAllow)
		if allow == "" {
			return fmt.Sprintf("%s does not answer %s", req.URL.Path, req.Method)
		}
		return fmt.Sprintf("%s does not answer %s; it answers %s", req.URL.Path, req.Method, allow)
	}
	return msg
}

// requestLogger writes one slog line per request. It passes errors to the
// error handler first, so the logged status is the one the client got:
// 499 (at INFO, outcome "client closed") when the client went away, even
// after the answer had started; a 503 (busy, or past the deadline) at
// WARN; any other 5xx at ERROR.
func requestLogger(logger *slog.Logger) echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		HandleError:     true,
		LogMethod:       true,
		LogURI:          true,
		LogRemoteIP:     true,
		LogStatus:       true,
		LogLatency:      true,
		LogResponseSize: true,
		LogError:        true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			status := v.Status
			if v.Error != nil && clientGone(v.Error) {
				status = statusClientClosed
			}
			level := slog.LevelInfo
			switch {
			case status == http.StatusServiceUnavailable:
				level = slog.LevelWarn
			case status >= http.StatusInternalServerError:
				level = slog.LevelError
			}
			attrs := []slog.Attr{
				slog.String("method", v.Method),
				slog.String("uri", v.URI),
				slog.String("route", routeLabel(c)),
				slog.String("remote_ip", v.RemoteIP),
				slog.Int("status", status),
				slog.Duration("latency", v.Latency),
				slog.Int64("bytes", v.ResponseSize),
				slog.String("request_id", requestIDOf(c)),
			}
			switch {
			case status == statusClientClosed:
				attrs = append(attrs, slog.String("outcome", "client closed"))
			case v.Error != nil && errors.Is(v.Error, context.DeadlineExceeded):
				attrs = append(attrs, slog.String("outcome", "timeout"))
			}
			if v.Error != nil {
				attrs = append(attrs, slog.String("err", v.Error.Error()))
			}
			logger.LogAttrs(c.Request().Context(), level, "request", attrs...)
			return nil
		},
	})
}

// recoverPanics turns a panic in a handler into an error for errorHandler,
// which logs it (with the stack) and answers 500.
func recoverPanics() echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			return fmt.Errorf("panic: %w\n%s", err, stack)
		},
	})
}

// acceptsHTML reports whether req asks for HTML, as a browser navigating
// to a page does.
func acceptsHTML(req *http.Request) bool {
	return strings.Contains(req.Header.Get(echo.HeaderAccept), "text/html")
}
