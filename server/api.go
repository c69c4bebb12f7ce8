package server

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/calc"
)

// FieldProblem is one thing wrong with a request, named by the field the
// client sent (JSON field names and array indices, "tiers[0].name"); field
// is empty for the request as a whole.
type FieldProblem struct {
	// The request field, as sent; empty for the whole body.
	Field string `json:"field"`
	// For a design URL parameter, the same field as a policy path
	// ("tiers[1].limit.burst").
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// invalidRequest is a request the API understood but cannot accept; the error
// handler answers it 422 with every problem.
type invalidRequest struct {
	problems []FieldProblem
}

func (e *invalidRequest) Error() string {
	msgs := make([]string, len(e.problems))
	for i, p := range e.problems {
		msgs[i] = p.Message
	}
	return strings.Join(msgs, "; ")
}

// invalid returns an invalidRequest with one problem.
func invalid(field, format string, args ...any) *invalidRequest {
	return &invalidRequest{[]FieldProblem{{Field: field, Message: fmt.Sprintf(format, args...)}}}
}

// fromCalc turns the calculator's field errors into an invalidRequest, or
// returns err unchanged when it is something else.
func fromCalc(err error) error {
	var es calc.Errors
	if errors.As(err, &es) {
		inv := &invalidRequest{}
		for _, e := range es {
			inv.problems = append(inv.problems, FieldProblem{Field: e.Field, Message: e.Error()})
		}
		return inv
	}
	var fe *calc.FieldError
	if errors.As(err, &fe) {
		return invalid(fe.Field, "%s", fe.Error())
	}
	return err
}

// decodeJSON reads exactly one JSON value from the request body into dst:
// at most limit bytes, no unknown fields, no trailing data. Every failure is
// an invalidRequest that names the field when there is one, or a 413.
func decodeJSON(c echo.Context, limit int64, dst any) error {
	req := c.Request()
	if ct := req.Header.Get(echo.HeaderContentType); ct != "" && !strings.HasPrefix(ct, echo.MIMEApplicationJSON) {
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "send the request body as application/json")
	}
	body := http.MaxBytesReader(c.Response(), req.Body, limit)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonProblem(err, limit)
	}
	if _, err := dec.Token(); err != io.EOF {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return jsonProblem(err, limit)
		}
		return invalid("", "the body holds more than one JSON value")
	}
	return nil
}

// jsonProblem explains a decoding error in the user's terms.
func jsonProblem(err error, limit int64) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		mbe *http.MaxBytesError
	)
	switch {
	case errors.As(err, &mbe):
		// mbe.Limit, not limit: the server's own cap (bodyLimit) may be
		// the tighter one.
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
			fmt.Sprintf("the request body is larger than %d bytes", mbe.Limit))
	case errors.As(err, &syn):
		return invalid("", "invalid JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		field := typ.Field
		return invalid(field, "%s: got a JSON %s; want %s", field, typ.Value, jsonKind(typ.Type.Kind().String()))
	case errors.Is(err, io.EOF):
		return invalid("", "the request body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("", "the JSON body ends too early")
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return invalid(name, "%s: unknown field", name)
	}
	return invalid("", "%s", err.Error())
}

// jsonKind names a Go kind the way a JSON user thinks of it.
func jsonKind(kind string) string {
	switch kind {
	case "float32", "float64":
		return "a number"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "ptr":
		return "a value"
	}
	return kind
}

// calcBodyLimit bounds a calculator request: inputs are a few hundred bytes.
const calcBodyLimit = 64 << 10

// handleCalc answers POST /api/v1/calc: the calculator's inputs as JSON in,
// every output, reason and check out.
func handleCalc(c echo.Context) error {
	var in calc.Input
	if err := decodeJSON(c, calcBodyLimit, &in); err != nil {
		return err
	}
	res, err := calc.Size(in)
	if err != nil {
		return fromCalc(err)
	}
	return writeJSON(c, http.StatusOK, res)
}

// handleReverse answers POST /api/v1/calc/reverse: an existing limit in,
// its pace, largest burst, Retry-After and equivalents in the other
// algorithms out.
func handleReverse(c echo.Context) error {
	var l calc.Limit
	if err := decodeJSON(c, calcBodyLimit, &l); err != nil {
		return err
	}
	res, err := calc.Reverse(l)
	if err != nil {
		return fromCalc(err)
	}
	return writeJSON(c, http.StatusOK, res)
}

// writeJSON encodes v with status. Reasons hold "≥" and "<", so HTML
// escaping is off: the API's JSON is never inlined into a page.
func writeJSON(c echo.Context, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s response: %w", c.Request().URL.Path, err)
	}
	return c.Blob(status, echo.MIMEApplicationJSON, buf.Bytes())
}

// openapiJSON is the OpenAPI 3.1 document of the JSON API; the handler
// tests validate live responses against its schemas.
//
//go:embed openapi.json
var openapiJSON []byte

// handleOpenAPI serves the OpenAPI document.
func handleOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openapiJSON)
}
