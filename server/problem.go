package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// mimeProblemJSON is the media type of an API error (RFC 9457).
const mimeProblemJSON = "application/problem+json"

// problemType is the type URI of every API error. The status already says
// what kind of problem it is, so ratelab uses RFC 9457's "about:blank",
// whose title is the status's reason phrase; detail says what was wrong in
// words and errors lists it by field. openapi.json documents the same.
const problemType = "about:blank"

// problemDetails is an API error as RFC 9457 problem details. Errors is
// the extension member clients read the problems from, one by field
// (Field "" for the whole request); it is never empty, so a client that
// only reads errors, as before problem details, still finds the message.
type problemDetails struct {
	Type     string         `json:"type"`
	Title    string         `json:"title"`
	Status   int            `json:"status"`
	Detail   string         `json:"detail"`
	Instance string         `json:"instance,omitempty"`
	Errors   []fieldProblem `json:"errors"`
}

// newProblem returns the problem details of an error answered with status:
// detail in words, and the problems by field (nil means one for the whole
// request, whose message is detail).
func newProblem(status int, detail string, problems []fieldProblem) problemDetails {
	if len(problems) == 0 {
		problems = []fieldProblem{{Message: detail}}
	}
	title := http.StatusText(status)
	if title == "" {
		title = fmt.Sprintf("HTTP status %d", status)
	}
	return problemDetails{Type: problemType, Title: title, Status: status, Detail: detail, Errors: problems}
}

// writeProblem answers c with p as application/problem+json, status
// p.Status, HTML characters unescaped (messages hold "≥" and "<") like
// writeJSON.
func writeProblem(c echo.Context, p problemDetails) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("encode %s problem: %w", c.Request().URL.Path, err)
	}
	return c.Blob(p.Status, mimeProblemJSON, buf.Bytes())
}
