package server

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/labstack/echo/v4"
)

// requestIDKey is the echo.Context key under which requestID keeps the
// request's id.
const requestIDKey = "request_id"

// maxRequestIDLen is the longest X-Request-Id, in bytes, taken from a
// request; a longer one is replaced, so a client cannot fill log lines.
const maxRequestIDLen = 128

// requestID gives every request an id, so a client's report, a proxy's log
// and this server's request log line can be matched up. The id is the
// request's X-Request-Id when that is 1 to maxRequestIDLen bytes of visible
// ASCII (0x21 to 0x7E: no spaces, control characters or other bytes, which
// could forge or break a log line); otherwise it is 16 bytes from
// crypto/rand in lower-case hex (32 characters). It is set on the
// response's X-Request-Id before the handler runs, so errors and
// rejections carry it too, and kept for requestIDOf. Register it outside
// the request logger.
//
// Echo's middleware.RequestIDWithConfig takes any non-empty incoming value
// as it is, so it cannot do this.
func requestID() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			id := c.Request().Header.Get(echo.HeaderXRequestID)
			if !validRequestID(id) {
				id = newRequestID()
			}
			c.Set(requestIDKey, id)
			c.Response().Header().Set(echo.HeaderXRequestID, id)
			return next(c)
		}
	}
}

// validRequestID reports whether id can be taken as a request's id: 1 to
// maxRequestIDLen bytes, each visible ASCII.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// newRequestID returns 16 random bytes from crypto/rand as 32 lower-case
// hex digits. (crypto/rand.Read never fails: it crashes the program
// rather than return fewer bytes.)
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// requestIDOf returns the id requestID gave c's request, or "" when that
// middleware did not run.
func requestIDOf(c echo.Context) string {
	id, _ := c.Get(requestIDKey).(string)
	return id
}
