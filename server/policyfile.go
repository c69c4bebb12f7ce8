package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/design"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/views"
)

// Paths of the policy file: its JSON Schema, the export of a design, the
// import form's target and the lint API.
const (
	schemaPath = "/schema/policy.json"
	exportPath = "/export/policy.yaml"
	importPath = "/import"
	lintPath   = "/api/v1/policy/lint"
)

// policyBodyLimit bounds a policy on every route that decodes one (the
// lint API, /import, the simulate API's policy member): real policies are
// a few KB, and 256 KiB leaves room for hundreds of tiers and endpoints
// with their comments, while keeping the YAML decoder's work small.
const policyBodyLimit = 256 << 10

// importBodyLimit bounds the /import form: a policy file and a pasted one
// (the form has both fields), each up to policyBodyLimit, and the
// multipart framing.
const importBodyLimit = 2*policyBodyLimit + 16<<10

// handleSchema answers GET /schema/policy.json: the policy file's JSON
// Schema, for editors with a YAML language server.
func handleSchema(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/schema+json", policy.Schema)
}

// handleExport answers GET /export/policy.yaml?<design query>: the design,
// parsed exactly as the designer parses it, as a policy file. A design the
// page would show problems for instead of results is a 422 listing them by
// the URL's parameter names; the chart pattern is not part of a policy, so
// its problems do not count.
func handleExport(c echo.Context) error {
	p, probs := parseDesignQuery(c.Request().URL.RawQuery).policy()
	if len(probs) > 0 {
		return &invalidRequest{problems: probs}
	}
	var buf bytes.Buffer
	if err := policy.Encode(&buf, p); err != nil {
		return fmt.Errorf("encode policy: %w", err)
	}
	c.Response().Header().Set(echo.HeaderContentDisposition,
		fmt.Sprintf("attachment; filename=%q", policyFilename(p.Metadata.Name)))
	return c.Blob(http.StatusOK, "application/yaml; charset=utf-8", buf.Bytes())
}

// policyFilename is the download name of a policy: its metadata name with
// ".yaml", or ratelab-policy.yaml when the name is empty or holds anything
// but letters, digits, '.', '_' and '-'.
func policyFilename(name string) string {
	ok := name != "" && !strings.HasPrefix(name, ".") && len(name) <= 128
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			ok = false
			break
		}
	}
	if !ok {
		name = "ratelab-policy"
	}
	return name + ".yaml"
}

// LintResult is the answer of POST /api/v1/policy/lint: whether the
// document decodes, every decoding error, and the lint findings of a
// document that decodes.
type LintResult struct {
	// Whether the document decodes; lint findings, even at error severity,
	// do not make it invalid.
	Valid bool `json:"valid"`
	// Why it does not decode; empty when valid.
	Errors policy.Errors `json:"errors"`
	// The lint findings; empty when not valid.
	Findings []policy.Finding `json:"findings"`
}

// yamlTypes are the Content-Types the lint API reads as YAML.
var yamlTypes = []string{"application/yaml", "application/x-yaml", "text/yaml", "text/plain"}

// handleLint answers POST /api/v1/policy/lint: a policy file as YAML in,
// its decoding errors or its lint findings out. A document that does not
// decode is still a 200, with valid false; only a body over
// policyBodyLimit (413) or of another media type (415) is refused.
func handleLint(c echo.Context) error {
	req := c.Request()
	if ct := req.Header.Get(echo.HeaderContentType); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !isYAMLType(mt) {
			return echo.NewHTTPError(http.StatusUnsupportedMediaType,
				"send the policy as application/yaml (or application/x-yaml, text/yaml, text/plain)")
		}
	}
	if req.ContentLength > policyBodyLimit {
		return tooLarge(policyBodyLimit)
	}
	data, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, policyBodyLimit))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return tooLarge(mbe.Limit)
		}
		return &bodyReadError{err}
	}
	res := LintResult{Valid: true, Errors: policy.Errors{}, Findings: []policy.Finding{}}
	p, err := decodePolicy(req.Context(), data)
	if ended(err) {
		return err
	}
	if err != nil {
		res.Valid = false
		res.Errors = decodeErrors(err)
	} else {
		res.Findings = policy.Lint(p)
	}
	return writeJSON(c, http.StatusOK, res)
}

func isYAMLType(mt string) bool {
	for _, t := range yamlTypes {
		if mt == t {
			return true
		}
	}
	return false
}

// decodeErrors are the problems of a failed policy.Decode.
func decodeErrors(err error) policy.Errors {
	var es policy.Errors
	if errors.As(err, &es) && len(es) > 0 {
		return es
	}
	return policy.Errors{{Message: err.Error()}}
}

// tooLarge is the 413 of a body over limit bytes.
func tooLarge(limit int64) error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", limit))
}

// importMemory is how much of a multipart import form is kept in memory:
// the whole of any form the import body limit lets through.
const importMemory = importBodyLimit

// handleImport answers POST /import, the designer's import form: a policy
// file uploaded as the field "policy" (multipart) or pasted into "yaml".
// A policy that decodes is a 303 to the designer with its design, so the
// page shows exactly that design; one whose design URL is too long for a
// Location header (maxEchoedURL) is that designer page itself, status
// 200 (the address stays /import, and the page's links carry the
// design). One that does not decode is the import form alone with every
// decoding error at its top, focused, status 422: not the example design,
// which would pass for the file's, with the errors far below it.
func (pg *pages) handleImport(c echo.Context) error {
	req := c.Request()
	if req.ContentLength > importBodyLimit {
		return tooLarge(importBodyLimit)
	}
	req.Body = http.MaxBytesReader(c.Response(), req.Body, importBodyLimit)
	var err error
	if mt, _, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType)); mt == echo.MIMEMultipartForm {
		err = req.ParseMultipartForm(importMemory)
	} else {
		err = req.ParseForm()
	}
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return tooLarge(mbe.Limit)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || req.Context().Err() != nil {
			return &bodyReadError{err}
		}
		return echo.NewHTTPError(http.StatusBadRequest, "cannot read the import form")
	}

	text := req.PostFormValue("yaml")
	var data []byte
	if fh, ferr := c.FormFile("policy"); ferr == nil && fh.Size > 0 {
		f, err := fh.Open()
		if err != nil {
			return fmt.Errorf("open uploaded policy: %w", err)
		}
		defer f.Close()
		data, err = io.ReadAll(io.LimitReader(f, policyBodyLimit+1))
		if err != nil {
			return fmt.Errorf("read uploaded policy: %w", err)
		}
		if len(data) > policyBodyLimit {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
				fmt.Sprintf("the policy file is larger than %d bytes (256 KiB)", policyBodyLimit))
		}
	} else {
		data = []byte(text)
	}

	var errs policy.Errors
	if len(bytes.TrimSpace(data)) == 0 {
		errs = policy.Errors{{Message: "no policy: choose a file or paste the YAML"}}
	} else if p, err := decodePolicy(c.Request().Context(), data); ended(err) {
		return err
	} else if err != nil {
		errs = decodeErrors(err)
	} else {
		d := design.FromPolicy(p, algorithms.Pattern{})
		if u := designerPath + "?" + d.Query(); len(u) <= maxEchoedURL {
			return c.Redirect(http.StatusSeeOther, u)
		}
		return pg.importedPage(c, d)
	}

	v := views.ImportView{Action: importPath, YAML: text}
	for _, e := range errs {
		v.Errors = append(v.Errors, views.ImportError{
			Line: e.Line, Column: e.Column, Field: e.Field, Message: e.Message, Hint: e.Hint,
		})
	}
	return render(c, http.StatusUnprocessableEntity, views.ImportFailed(v))
}

// importedPage answers an import whose design URL is too long to redirect
// to: the designer page of d itself, within the heavy budget.
func (pg *pages) importedPage(c echo.Context, d *design.Design) error {
	w, err := enterHeavy(c, pg.gate, pg.timeout)
	if err != nil {
		return err
	}
	defer w.leave()
	v, err := designerViewOf(c.Request().Context(), newDesignPage(d))
	if err != nil {
		return err
	}
	v.Results.Base = pg.baseURL(c)
	return render(c, http.StatusOK, views.Designer(v))
}
