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

// ProblemType is the type URI of every API error. The status already says
// what kind of problem it is, so ratelab uses RFC 9457's "about:blank",
// whose title is the status's reason phrase; detail says what was wrong in
// words and errors lists it by field. openapi.json documents the same.
const ProblemType = "about:blank"

// Problem is an API error as RFC 9457 problem details, sent as
// application/problem+json for every error status under /api/ (an unknown
// path's 404 and a wrong method's 405 included). type is always
// "about:blank": the status says what kind of problem it is, and title is
// its reason phrase ("Unprocessable Entity", "Too Many Requests"). detail
// says what was wrong in words. The extension member errors lists the
// problems by field, as the API's errors did before problem details: every
// bad field of a 422, else one problem for the whole request (field "")
// whose message is detail; it is never empty.
type Problem struct {
	// The problem type; about:blank: the status is the type.
	Type string `json:"type"`
	// The status's reason phrase.
	Title string `json:"title"`
	// The response's status code.
	Status int `json:"status"`
	// What was wrong with this request, in words.
	Detail string `json:"detail"`
	// Not sent yet; reserved for a reference to this occurrence.
	Instance string `json:"instance,omitempty"`
	// Extension member: the problems by field.
	Errors []FieldProblem `json:"errors"`
}

// newProblem returns the problem details of an error answered with status:
// detail in words, and the problems by field (nil means one for the whole
// request, whose message is detail).
func newProblem(status int, detail string, problems []FieldProblem) Problem {
	if len(problems) == 0 {
		problems = []FieldProblem{{Message: detail}}
	}
	title := http.StatusText(status)
	if title == "" {
		title = fmt.Sprintf("HTTP status %d", status)
	}
	return Problem{Type: ProblemType, Title: title, Status: status, Detail: detail, Errors: problems}
}

// writeProblem answers c with p as application/problem+json, status
// p.Status, HTML characters unescaped (messages hold "≥" and "<") like
// writeJSON.
func writeProblem(c echo.Context, p Problem) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("encode %s problem: %w", c.Request().URL.Path, err)
	}
	return c.Blob(p.Status, mimeProblemJSON, buf.Bytes())
}
