package policy

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// validate checks the values of a well-shaped policy: the version, the
// names, the response, every limit against algorithms' ranges, and the
// design against calc's.
func (d *decoder) validate(p *Policy) {
	// A field with a shape error holds a zero value: checking its range
	// (or one of the fields it is part of) would only repeat the problem.
	var shaped []string
	for _, e := range d.errs {
		shaped = append(shaped, e.Field)
	}
	related := func(path string) bool {
		for _, s := range shaped {
			if s == "" || path == "" || s == path || strings.HasPrefix(s, path+".") || strings.HasPrefix(s, path+"[") ||
				strings.HasPrefix(path, s+".") || strings.HasPrefix(path, s+"[") {
				return true
			}
		}
		return false
	}
	at := func(path string) (int, int) {
		pos, _ := Policy{pos: d.pos}.Pos(path)
		return pos.Line, pos.Column
	}
	add := func(path, msg, hint string) {
		if related(path) {
			return
		}
		if rest, ok := strings.CutPrefix(msg, "0 is out of range; "); ok {
			if _, given := d.pos[path]; !given {
				msg = "missing; " + rest
			}
		}
		line, col := at(path)
		d.errs = append(d.errs, &Error{Line: line, Column: col, Field: path, Message: msg, Hint: hint})
	}
	for _, pe := range valueErrors(*p) {
		add(pe.Field, pe.Message, pe.Hint)
	}
}

// Validate reports every value of p out of its range, as Decode checks a
// document, for a policy built in code (its errors carry field paths but
// no line or column): the version and kind, names, duplicate tiers (also
// names equal ignoring ASCII case) and routes, the response status, every
// limit against package algorithms and the sizing against package calc.
func Validate(p Policy) Errors { return valueErrors(p) }

// valueErrors are the problems with the values of p, positions not set.
func valueErrors(p Policy) Errors {
	var out Errors
	add := func(path, msg, hint string) {
		out = append(out, &Error{Field: path, Message: msg, Hint: hint})
	}
	if p.APIVersion != APIVersion {
		add("apiVersion", fmt.Sprintf("%s is not a supported version", clip(p.APIVersion)), "want "+APIVersion)
	}
	if p.Kind != Kind {
		add("kind", fmt.Sprintf("%s is not a policy", clip(p.Kind)), "want "+Kind)
	}
	if n := strings.TrimSpace(p.Metadata.Name); n == "" || utf8.RuneCountInString(n) > 128 {
		add("metadata.name", fmt.Sprintf("%s is out of range; want a name of 1 to 128 characters", clip(p.Metadata.Name)), "")
	}
	if utf8.RuneCountInString(p.Metadata.Description) > 4096 {
		add("metadata.description", "is longer than 4096 characters", "")
	}
	// where names the first use of a name: "6:5", or its path in a
	// policy built in code.
	where := func(path string) string {
		if at, ok := p.Pos(path); ok {
			return fmt.Sprintf("%d:%d", at.Line, at.Column)
		}
		return path
	}
	// Tier names are unique ignoring ASCII case: a request's tier header
	// is matched to them ignoring case, and no gateway can prefer an
	// exact match the way the engine does, so "Paid" and "paid" would
	// pick different tiers in different places.
	names := map[string]string{}
	folded := map[string]int{} // name in ASCII lower case → index of its first tier
	for i, t := range p.Tiers {
		path := fmt.Sprintf("tiers[%d]", i)
		low := LowerASCII(t.Name)
		if first, dup := names[t.Name]; dup {
			add(path+".name", fmt.Sprintf("tier %s is already defined at %s", clip(t.Name), first), "give each tier its own name")
		} else if j, dup := folded[low]; dup {
			other := fmt.Sprintf("tiers[%d]", j)
			at := ""
			if w := where(other); w != other {
				at = " at " + w
			}
			add(path+".name", fmt.Sprintf("tier %s equals %s.name (%s%s) ignoring ASCII case", clip(t.Name), other, clip(p.Tiers[j].Name), at),
				"tier names must be unique ignoring ASCII case (the tier header is matched ignoring case)")
		} else {
			names[t.Name] = where(path)
			folded[low] = i
		}
	}
	routes := map[string]string{}
	dupRoute := map[string]bool{} // calc fields of repeated routes, reported here with their position
	for i, e := range p.Endpoints {
		path := fmt.Sprintf("endpoints[%d]", i)
		k := strings.ToUpper(e.Match.Method) + " " + e.Match.Path
		if first, dup := routes[k]; dup {
			add(path+".match", fmt.Sprintf("endpoint %s is already defined at %s", clip(k), first), "merge the two entries")
			dupRoute[path+".path"] = true
		} else {
			routes[k] = where(path)
		}
	}
	if s := p.Defaults.Response.Status; s != 0 && (s < 400 || s > 599) {
		add("defaults.response.status", fmt.Sprintf("%d is out of range; want an HTTP status in [400, 599] (429 is the standard)", s), "")
	}
	limitErrors := func(path string, s algorithms.Spec) {
		if s == (algorithms.Spec{}) {
			return
		}
		if err := s.Validate(); err != nil {
			var pe *algorithms.ParamError
			if errors.As(err, &pe) {
				add(path+"."+pe.Field, fmt.Sprintf("%s is out of range; want %s", pe.Value, pe.Want), "")
			} else {
				add(path, err.Error(), "")
			}
		}
	}
	limitErrors("defaults.limit", p.Defaults.Limit)
	for i, t := range p.Tiers {
		limitErrors(fmt.Sprintf("tiers[%d].limit", i), t.Limit)
	}
	for i, e := range p.Endpoints {
		limitErrors(fmt.Sprintf("endpoints[%d].limit", i), e.Limit)
	}
	limitErrors("global.limit", p.Global.Limit)

	// The design, by calc's ranges. Without sizing there is no client
	// count to check; the rest still is.
	in := p.Design()
	sized := p.Sized()
	if !sized {
		in.Clients = 1
	}
	var ces calc.Errors
	if err := in.Validate(); errors.As(err, &ces) {
		for _, ce := range ces {
			if (!sized && unsizedClients.MatchString(ce.Field)) || dupRoute[ce.Field] {
				continue
			}
			add(policyPath(ce.Field), fmt.Sprintf("%s is out of range; want %s", ce.Value, ce.Want), "")
		}
	} else if err != nil {
		add("", err.Error(), "")
	}
	return out
}

// unsizedClients matches the calc fields that only a sized policy has.
var unsizedClients = regexp.MustCompile(`^(clients|tiers\[\d+\]\.clients)$`)

// policyPath is the policy's path of a calc.Input field as calc's errors
// name it: "p99" → "sizing.p99", "endpoints[2].path" →
// "endpoints[2].match.path".
func policyPath(field string) string {
	head, rest, _ := strings.Cut(field, ".")
	switch head {
	case "capacity", "headroom", "replicas", "enforcement":
		return "service." + field
	case "clients", "p50", "p95", "p99", "percentile_unit", "margin", "peak", "peak_seconds", "window", "max_delay", "retry":
		return "sizing." + field
	}
	if strings.HasPrefix(head, "endpoints[") && (rest == "method" || rest == "path") {
		return head + ".match." + rest
	}
	return field
}
