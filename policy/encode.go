package policy

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// Encode writes p as YAML: the canonical field order of DESIGN.md §6
// (apiVersion, kind, metadata, service, defaults, sizing, tiers,
// endpoints, global), zero fields left out, limits on one line, numbers in
// their shortest exact decimal form and durations as Go duration strings
// in one unit ("60s", "1h", "500ms"). The same policy always gives the
// same bytes, and Decode of them gives the same policy.
func Encode(w io.Writer, p Policy) error {
	e := &encoder{w: bufio.NewWriter(w)}
	e.line(0, "apiVersion", str(p.APIVersion))
	e.line(0, "kind", str(p.Kind))
	e.section(0, "metadata", []kv{
		{"name", str(p.Metadata.Name)},
		{"description", optStr(p.Metadata.Description)},
	})
	sv := p.Service
	e.section(0, "service", []kv{
		{"capacity", optNum(sv.Capacity)},
		{"headroom", ptrNum(sv.Headroom)},
		{"replicas", optInt(int64(sv.Replicas))},
		{"enforcement", optStr(string(sv.Enforcement))},
		{"on_store_failure", optStr(string(sv.OnStoreFailure))},
	})
	d := p.Defaults
	resp := flow([]kv{
		{"status", optInt(int64(d.Response.Status))},
		{"headers", headerList(d.Response.Headers)},
		{"retry_after", ptrBool(d.Response.RetryAfter)},
	})
	e.section(0, "defaults", []kv{
		{"key", optStr(string(d.Key))},
		{"mode", optStr(string(d.Mode))},
		{"response", resp},
		{"limit", limit(d.Limit)},
	})
	s := p.Sizing
	var maxDelay string
	if s.MaxDelay != nil {
		maxDelay = duration(*s.MaxDelay)
	}
	e.section(0, "sizing", []kv{
		{"clients", optInt(int64(s.Clients))},
		{"p50", optNum(s.P50)},
		{"p95", optNum(s.P95)},
		{"p99", optNum(s.P99)},
		{"percentile_unit", optStr(string(s.PercentileUnit))},
		{"margin", optNum(s.Margin)},
		{"peak", optNum(s.Peak)},
		{"peak_seconds", optNum(s.PeakSeconds)},
		{"window", optDuration(s.Window)},
		{"max_delay", maxDelay},
		{"retry", flow([]kv{
			{"base", optDuration(s.Retry.Base)},
			{"factor", optNum(s.Retry.Factor)},
			{"cap", optDuration(s.Retry.Cap)},
			{"attempts", optInt(int64(s.Retry.Attempts))},
			{"jitter", ptrNum(s.Retry.Jitter)},
			{"jitter_mode", optStr(s.Retry.JitterMode)},
		})},
	})
	if len(p.Tiers) > 0 {
		e.line(0, "tiers", "")
		for _, t := range p.Tiers {
			e.item(1, []kv{
				{"name", str(t.Name)},
				{"key", optStr(string(t.Key))},
				{"clients", optInt(int64(t.Clients))},
				{"multiplier", optNum(t.Multiplier)},
				{"limit", limit(t.Limit)},
			})
		}
	}
	if len(p.Endpoints) > 0 {
		e.line(0, "endpoints", "")
		for _, ep := range p.Endpoints {
			e.item(1, []kv{
				{"match", flow([]kv{{"method", str(ep.Match.Method)}, {"path", str(ep.Match.Path)}})},
				{"cost", optInt(ep.Cost)},
				{"limit", limit(ep.Limit)},
			})
		}
	}
	e.section(0, "global", []kv{{"limit", limit(p.Global.Limit)}})
	return e.w.Flush()
}

// kv is a key and its value already in YAML; "" leaves the key out.
type kv struct{ k, v string }

type encoder struct{ w *bufio.Writer }

// line writes "key: value" (or "key:" to open a block) at an indent level.
func (e *encoder) line(indent int, key, value string) {
	e.w.WriteString(strings.Repeat("  ", indent))
	e.w.WriteString(key)
	e.w.WriteByte(':')
	if value != "" {
		e.w.WriteByte(' ')
		e.w.WriteString(value)
	}
	e.w.WriteByte('\n')
}

// section writes a block mapping of the non-empty values, or nothing.
func (e *encoder) section(indent int, key string, fields []kv) {
	if !anySet(fields) {
		return
	}
	e.line(indent, key, "")
	for _, f := range fields {
		if f.v != "" {
			e.line(indent+1, f.k, f.v)
		}
	}
}

// item writes one sequence entry as a block mapping.
func (e *encoder) item(indent int, fields []kv) {
	first := true
	for _, f := range fields {
		if f.v == "" {
			continue
		}
		prefix := strings.Repeat("  ", indent)
		if first {
			prefix = strings.Repeat("  ", indent-1) + "  - "
			first = false
		} else {
			prefix += "  "
		}
		e.w.WriteString(prefix + f.k + ": " + f.v + "\n")
	}
	if first {
		e.w.WriteString(strings.Repeat("  ", indent) + "- {}\n")
	}
}

func anySet(fields []kv) bool {
	for _, f := range fields {
		if f.v != "" {
			return true
		}
	}
	return false
}

// flow is a flow mapping of the non-empty values, or "".
func flow(fields []kv) string {
	var parts []string
	for _, f := range fields {
		if f.v != "" {
			parts = append(parts, f.k+": "+f.v)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// limit is a spec as a flow mapping, or "" for none. Every parameter of
// the algorithm is written, even 0, so a reader sees them all.
func limit(s algorithms.Spec) string {
	if s == (algorithms.Spec{}) {
		return ""
	}
	fields := []kv{{"algorithm", str(string(s.Algorithm))}}
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		fields = append(fields, kv{"rate", num(s.Rate)}, kv{"burst", strconv.FormatInt(s.Burst, 10)})
	case algorithms.NameLeakyBucket:
		fields = append(fields, kv{"rate", num(s.Rate)}, kv{"queue", strconv.FormatInt(s.Queue, 10)})
	case algorithms.NameFixedWindow, algorithms.NameSlidingLog, algorithms.NameSlidingWindow:
		fields = append(fields, kv{"limit", strconv.FormatInt(s.Limit, 10)}, kv{"window", duration(s.Window)})
	}
	// Parameters the algorithm does not use are written only when set, so
	// that a wrong one survives to be reported.
	used := map[string]bool{}
	for _, f := range fields {
		used[f.k] = true
	}
	for _, f := range []kv{
		{"rate", optNum(s.Rate)}, {"burst", optInt(s.Burst)}, {"queue", optInt(s.Queue)},
		{"limit", optInt(s.Limit)}, {"window", optDuration(s.Window)},
	} {
		if !used[f.k] {
			fields = append(fields, f)
		}
	}
	return flow(fields)
}

func headerList(hs []HeaderStyle) string {
	if hs == nil {
		return ""
	}
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = str(string(h))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// plain matches strings that YAML reads back as the same string unquoted,
// in block and flow context alike.
var plain = regexp.MustCompile(`^[A-Za-z_/][A-Za-z0-9_./-]*$`)

// reserved are plain scalars YAML reads as something other than a string.
var reserved = map[string]bool{"true": true, "false": true, "null": true, "yes": true, "no": true, "on": true, "off": true, "y": true, "n": true}

// str is s as a YAML scalar: plain when that is unambiguous, else double
// quoted with escapes.
func str(s string) string {
	if plain.MatchString(s) && !reserved[strings.ToLower(s)] && !strings.HasPrefix(s, ".") {
		return s
	}
	return strconv.Quote(s)
}

func optStr(s string) string {
	if s == "" {
		return ""
	}
	return str(s)
}

// num is x in its shortest exact decimal form, without an exponent, so
// that every YAML reader takes it for a number.
func num(x float64) string {
	switch {
	case math.IsNaN(x):
		return ".nan"
	case math.IsInf(x, 1):
		return ".inf"
	case math.IsInf(x, -1):
		return "-.inf"
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

func optNum(x float64) string {
	if x == 0 {
		return ""
	}
	return num(x)
}

func ptrNum(x *float64) string {
	if x == nil {
		return ""
	}
	return num(*x)
}

func optInt(x int64) string {
	if x == 0 {
		return ""
	}
	return strconv.FormatInt(x, 10)
}

func ptrBool(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

// duration writes d in the largest unit that keeps it whole: 1h, 90s,
// 500ms, 250us, 7ns.
func duration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "us"}} {
		if d%u.unit == 0 {
			return fmt.Sprintf("%d%s", d/u.unit, u.name)
		}
	}
	return fmt.Sprintf("%dns", d)
}

func optDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return duration(d)
}
