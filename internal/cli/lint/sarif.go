package lint

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/internal/buildinfo"
	"github.com/ratelab/ratelab/policy"
)

// The SARIF 2.1.0 log --format sarif prints: one run of the tool
// "ratelab" whose rules are the lint IDs found (policy.Lint* and the
// calculator's calc.Check* IDs, plus policy.LintInvalid for a file that
// does not decode), and one result per finding or decoding error. A
// result's level is its severity (error, warning; info is SARIF's note),
// its location the file as given on the command line (a URI reference:
// relative paths stay relative, as code-scanning services expect them
// from the repository's root) with the finding's line and column when the
// policy was decoded from YAML, and the field's path ("tiers[1].limit") as
// a logical location. Only the members used here are declared.
const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

// sarifRegion is 1-based, as policy's lines and columns are.
type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
}

// sarifLevel maps a lint severity to a SARIF level.
func sarifLevel(s calc.Severity) string {
	switch s {
	case calc.SeverityError:
		return "error"
	case calc.SeverityWarning:
		return "warning"
	default:
		return "note"
	}
}

// artifactURI is a file name as a SARIF URI reference: a relative path
// stays relative (forward slashes, escaped), an absolute one becomes a
// file URI.
func artifactURI(name string) string {
	p := filepath.ToSlash(name)
	if filepath.IsAbs(name) {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

// ruleDescription is the one-line description of lint ID id.
func ruleDescription(id string) string {
	if d := policy.LintDescription[id]; d != "" {
		return d
	}
	return "ratelab lint finding " + id + "."
}

// toolVersion is the build's version as SARIF tools compare it, starting
// with a number: a tag without its "v" (v1.4.0 is 1.4.0), and a build
// without one (go build in a clone: "(devel)") 0.0.0-devel, with the
// commit when it is known.
func toolVersion(b buildinfo.Info) string {
	v := strings.TrimPrefix(b.Version, "v")
	if v != "" && '0' <= v[0] && v[0] <= '9' {
		return v
	}
	v = "0.0.0-devel"
	if b.Revision != "" && b.Revision != "unknown" {
		v += "+" + b.Revision[:min(12, len(b.Revision))]
	}
	return v
}

// newSARIF builds the log of the reports, in their order.
func newSARIF(reports []report) sarifLog {
	driver := sarifDriver{
		Name:           "ratelab",
		Version:        toolVersion(buildinfo.Read()),
		InformationURI: "https://github.com/ratelab/ratelab",
		Rules:          []sarifRule{},
	}
	results := []sarifResult{}
	add := func(file, id string, level string, line, col int, field, text string) {
		i := slices.IndexFunc(driver.Rules, func(r sarifRule) bool { return r.ID == id })
		if i < 0 {
			i = len(driver.Rules)
			driver.Rules = append(driver.Rules, sarifRule{ID: id, ShortDescription: sarifMessage{Text: ruleDescription(id)}})
		}
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: artifactURI(file)}}}
		if line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: line, StartColumn: max(col, 0)}
		}
		if field != "" {
			loc.LogicalLocations = []sarifLogical{{FullyQualifiedName: field}}
		}
		results = append(results, sarifResult{RuleID: id, RuleIndex: i, Level: level, Message: sarifMessage{Text: text}, Locations: []sarifLocation{loc}})
	}
	for _, r := range reports {
		for _, e := range r.Errors {
			text := e.Message
			if e.Field != "" {
				text = e.Field + ": " + text
			}
			if e.Hint != "" {
				text += "; " + e.Hint
			}
			add(r.File, policy.LintInvalid, "error", e.Line, e.Column, e.Field, text)
		}
		for _, f := range r.Findings {
			text := f.Message
			if f.Fix != "" {
				text += " Fix: " + f.Fix
			}
			add(r.File, f.ID, sarifLevel(f.Severity), f.Line, f.Column, f.Field, text)
		}
	}
	return sarifLog{
		Schema:  sarifSchema,
		Version: sarifVersion,
		Runs:    []sarifRun{{Tool: sarifTool{Driver: driver}, Results: results}},
	}
}

// writeSARIF prints the log of the reports as indented JSON.
func writeSARIF(w io.Writer, reports []report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(newSARIF(reports))
}
