package envoy

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// This file holds what the suite needs of export/envoy's unexported
// code, restated: the tests compare the files the exports render with
// what their mappings say, and the main module's tests of export/envoy
// (TestPerUnit, TestMappingsStateTheirWindows) pin the mappings to the
// code that computes them.

// entry is one entry of a rate limit descriptor; an empty value is a
// wildcard (a client's value).
type entry struct{ key, value string }

// domain is the policy's rate limit domain (export/envoy's domain).
func domain(p policy.Policy) string { return policy.Ident(p.Metadata.Name) }

// window is a limit as the ratelimit service and Envoy Gateway count it:
// requests per unit ("second", "minute", …, as the service spells it).
type window struct {
	requests int64
	unit     string
}

// serviceLimit is what the envoy-ratelimit export's mapping of a limit
// says: the descriptor the filter builds for it and the window the
// service counts it in.
type serviceLimit struct {
	entries []entry
	window
}

var (
	serviceTo = regexp.MustCompile(`^descriptor \{(.*)\}: rate_limit \{unit: ([a-z]+), requests_per_unit: ([0-9]+)\}$`)
	gatewayTo = regexp.MustCompile(`rule \{.*\}: limit \{requests: ([0-9]+), unit: ([A-Z][a-z]+)\}`)
	entryKey  = regexp.MustCompile(`^[a-z_]+$`)
)

// serviceLimits reads each limit's mapping of an envoy-ratelimit export
// ("descriptor {tier=paid, api_key}: rate_limit {unit: hour,
// requests_per_unit: 1000}"); every limit of p must have one.
func serviceLimits(t *testing.T, ex export.Export, p policy.Policy) map[string]serviceLimit {
	t.Helper()
	out := map[string]serviceLimit{}
	for _, m := range ex.Mappings {
		s := serviceTo.FindStringSubmatch(m.To)
		if s == nil {
			continue
		}
		var sl serviceLimit
		for _, e := range strings.Split(s[1], ", ") {
			k, v, _ := strings.Cut(e, "=")
			if !entryKey.MatchString(k) {
				t.Fatalf("%s: descriptor {%s} does not read back (key %q)", m.Field, s[1], k)
			}
			sl.entries = append(sl.entries, entry{k, v})
		}
		n, err := strconv.ParseInt(s[3], 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", m.Field, err)
		}
		sl.window = window{requests: n, unit: s[2]}
		out[m.Field] = sl
	}
	for _, l := range p.Limits() {
		if _, ok := out[l.Field]; !ok {
			t.Fatalf("%s: no descriptor mapping in the envoy-ratelimit export", l.Field)
		}
	}
	return out
}

// gatewayWindows reads each limit's mapping of an envoy-gateway export
// ("rule {…}: limit {requests: 1000, unit: Hour}"); every limit of p must
// have one. The unit is as the service spells it ("hour").
func gatewayWindows(t *testing.T, ex export.Export, p policy.Policy) map[string]window {
	t.Helper()
	out := map[string]window{}
	for _, m := range ex.Mappings {
		s := gatewayTo.FindStringSubmatch(m.To)
		if s == nil {
			continue
		}
		n, err := strconv.ParseInt(s[1], 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", m.Field, err)
		}
		out[m.Field] = window{requests: n, unit: strings.ToLower(s[2])}
	}
	for _, l := range p.Limits() {
		if _, ok := out[l.Field]; !ok {
			t.Fatalf("%s: no rule mapping in the envoy-gateway export", l.Field)
		}
	}
	return out
}

// String is "60/minute".
func (w window) String() string { return strconv.FormatInt(w.requests, 10) + "/" + w.unit }

// egUnit is a unit as Envoy Gateway spells it: "Hour".
func egUnit(unit string) string { return strings.ToUpper(unit[:1]) + unit[1:] }

// entriesText is a descriptor's entries as the file writes them: "tier=paid, api_key".
func entriesText(es []entry) string {
	var s []string
	for _, e := range es {
		if e.value == "" {
			s = append(s, e.key)
		} else {
			s = append(s, e.key+"="+e.value)
		}
	}
	return strings.Join(s, ", ")
}
