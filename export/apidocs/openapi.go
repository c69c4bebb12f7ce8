package apidocs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/goccy/go-yaml"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// OpenAPI is the OpenAPI 3.1 fragment: components.headers (the header
// styles the policy sends, and Retry-After), components.schemas.Problem
// (RFC 9457 application/problem+json), components.responses.TooManyRequests
// (the rejected response, whatever status the policy answers with), and a
// top-level x-ratelimit extension listing each limit with its parameters
// and its description in words. It is YAML, not JSON, because JSON has no
// comments: the header saying where the fragment goes and how to reference
// the response is part of the file.
var OpenAPI = export.Target{Name: "openapi", Title: "OpenAPI 3.1 fragment (429 response)", Group: export.Docs, Render: renderOpenAPI}

// item is one ordered YAML mapping entry; a string value is written as
// [text].
func item(k string, v any) yaml.MapItem {
	if s, ok := v.(string); ok {
		v = text(s)
	}
	return yaml.MapItem{Key: k, Value: v}
}

// text is a string value written double-quoted with JSON's escapes, the
// one YAML scalar style no content turns into something else: goccy/go-yaml
// leaves plain a policy name or a tier name such as 1e3, true, << or "? a",
// which YAML then reads as a number, a boolean, a merge key or a mapping.
type text string

// MarshalYAML implements yaml.BytesMarshaler.
func (t text) MarshalYAML() ([]byte, error) { return json.Marshal(string(t)) }

// headerDocs describes each header a rejected response may carry: what it
// says, in the words of draft-ietf-httpapi-ratelimit-headers and RFC 9110.
var headerDocs = map[string]string{
	"RateLimit-Policy":      "The quota policy (IETF draft, structured field): q is how many requests the quota allows, w the window in seconds it applies to.",
	"RateLimit":             "The quota left (IETF draft, structured field): r is how many requests remain, t the seconds until more quota is available.",
	"RateLimit-Limit":       "The request quota (older draft).",
	"RateLimit-Remaining":   "Requests remaining in the quota (older draft).",
	"RateLimit-Reset":       "Seconds until the quota is fully restored (older draft).",
	"X-RateLimit-Limit":     "The request quota.",
	"X-RateLimit-Remaining": "Requests remaining in the quota.",
	"X-RateLimit-Reset":     "Seconds until the quota is fully restored.",
	"Retry-After":           "Seconds to wait before retrying (RFC 9110 delay-seconds, never 0). Retry no earlier.",
}

func renderOpenAPI(p policy.Policy, _ export.Options) (export.Export, error) {
	code := p.Defaults.Response.Code()
	lim, rej, err := example(p)
	if err != nil {
		return export.Export{}, &export.Error{Target: "openapi", Field: lim.Field, Reason: err.Error()}
	}
	headers := sent(p, rej.Headers)

	var comps, refs yaml.MapSlice
	for _, h := range headers {
		schema := yaml.MapSlice{item("type", "string")}
		var ex any = h.Value
		if h.Form != calc.FormIETF { // the numeric headers
			min := 0
			if h.Name == "Retry-After" {
				min = 1
			}
			schema = yaml.MapSlice{item("type", "integer"), item("minimum", min)}
			n, _ := strconv.ParseInt(h.Value, 10, 64)
			ex = n
		}
		comps = append(comps, item(h.Name, yaml.MapSlice{
			item("description", headerDocs[h.Name]),
			item("schema", schema),
			item("example", ex),
		}))
		refs = append(refs, item(h.Name, yaml.MapSlice{item("$ref", "#/components/headers/"+h.Name)}))
	}

	limits := p.Limits()
	body := yaml.MapSlice{
		item("type", "about:blank"),
		item("title", http.StatusText(code)),
		item("status", code),
		item("detail", "Rate limit exceeded: "+Phrase(lim.Spec)+"."),
	}
	desc := fmt.Sprintf("%s: a rate limit was exceeded. Wait as the headers say before retrying; x-ratelimit lists the limits.", http.StatusText(code))
	if p.Defaults.Mode == policy.ModeShadow {
		desc += " These limits are being introduced."
	}
	resp := yaml.MapSlice{item("description", desc)}
	if len(refs) > 0 {
		resp = append(resp, item("headers", refs))
	}
	resp = append(resp, item("content", yaml.MapSlice{
		item("application/problem+json", yaml.MapSlice{
			item("schema", yaml.MapSlice{item("$ref", "#/components/schemas/Problem")}),
			item("example", body),
		}),
	}))

	problem := yaml.MapSlice{
		item("type", "object"),
		item("description", "RFC 9457 problem details."),
		item("properties", yaml.MapSlice{
			item("type", yaml.MapSlice{item("type", "string"), item("format", "uri-reference"), item("default", "about:blank")}),
			item("title", yaml.MapSlice{item("type", "string")}),
			item("status", yaml.MapSlice{item("type", "integer"), item("const", code)}),
			item("detail", yaml.MapSlice{item("type", "string")}),
			item("instance", yaml.MapSlice{item("type", "string"), item("format", "uri-reference")}),
		}),
	}

	var xl []yaml.MapSlice
	for _, l := range limits {
		m := yaml.MapSlice{item("name", l.Name), item("field", l.Field), item("scope", string(l.Scope))}
		switch l.Scope {
		case policy.ScopeTier:
			m = append(m, item("tier", l.Tier))
		case policy.ScopeEndpoint:
			m = append(m, item("method", l.Match.Method), item("path", l.Match.Path))
		}
		m = append(m, item("key", string(l.Key)), item("algorithm", string(l.Spec.Algorithm)))
		switch l.Spec.Algorithm {
		case algorithms.NameTokenBucket, algorithms.NameGCRA:
			m = append(m, item("rate", l.Spec.Rate), item("burst", l.Spec.Burst))
		case algorithms.NameLeakyBucket:
			m = append(m, item("rate", l.Spec.Rate), item("queue", l.Spec.Queue))
		default:
			m = append(m, item("limit", l.Spec.Limit), item("window_seconds", l.Spec.Window.Seconds()))
		}
		m = append(m, item("description", Phrase(l.Spec)))
		xl = append(xl, m)
	}
	x := yaml.MapSlice{item("policy", p.Metadata.Name), item("status", code), item("limits", xl)}
	if costs := export.Costs(p); len(costs) > 0 {
		var xc []yaml.MapSlice
		for _, c := range costs {
			xc = append(xc, yaml.MapSlice{item("method", c.Match.Method), item("path", c.Match.Path), item("cost", c.Cost)})
		}
		x = append(x, item("costs", xc))
	}

	compsAll := yaml.MapSlice{}
	if len(comps) > 0 {
		compsAll = append(compsAll, item("headers", comps))
	}
	compsAll = append(compsAll,
		item("schemas", yaml.MapSlice{item("Problem", problem)}),
		item("responses", yaml.MapSlice{item("TooManyRequests", resp)}))
	doc := yaml.MapSlice{item("components", compsAll), item("x-ratelimit", x)}
	out, err := yaml.MarshalWithOptions(doc, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return export.Export{}, &export.Error{Target: "openapi", Reason: err.Error()}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# OpenAPI 3.1 fragment for rate-limit policy %s, generated by ratelab.\n", strconv.Quote(p.Metadata.Name))
	fmt.Fprintf(&b, "# Merge components (and x-ratelimit) into your document and reference the response\n")
	fmt.Fprintf(&b, "# from each rate-limited operation: responses: {\"%d\": {$ref: \"#/components/responses/TooManyRequests\"}}\n", code)
	b.Write(out)

	e := export.Export{Target: "openapi", Filename: "openapi-ratelimit.yaml", MediaType: "application/yaml; charset=utf-8", Body: b.Bytes()}
	limitMappings(&e, p, func(i int, l policy.Limit) string {
		return fmt.Sprintf("x-ratelimit.limits[%d]: %s", i, Phrase(l.Spec))
	})
	e.Add(export.Mapping{Field: "defaults.response", From: fmt.Sprintf("status %d, headers %v, retry_after %v", code, p.Defaults.Response.Styles(), p.Defaults.Response.SendsRetryAfter()),
		To: fmt.Sprintf("components.responses.TooManyRequests (reference it under %q) with %d headers", strconv.Itoa(code), len(headers)), Fidelity: export.Exact})
	if p.Defaults.Mode == policy.ModeShadow {
		e.Add(export.Mapping{Field: "defaults.mode", From: "shadow", To: "the response description says the limits are being introduced", Fidelity: export.Exact})
	}
	if len(export.Costs(p)) > 0 {
		e.Add(export.Mapping{Field: "endpoints[].cost", From: "costs > 1", To: "x-ratelimit.costs", Fidelity: export.Exact})
	}
	e.Notes = append(e.Notes,
		fmt.Sprintf("Merge components into your OpenAPI 3.1 document and add \"%d\": {$ref: \"#/components/responses/TooManyRequests\"} to each rate-limited operation's responses.", code),
		fmt.Sprintf("Header examples are the %s limit's rejected response (%s) as ratelab's header preview computes it.", lim.Name, lim.Spec),
		"Check it: wrap it in a document with openapi: 3.1.0, info and paths, then run any OpenAPI 3.1 validator.")
	e.Notes = append(e.Notes, styleNotes(p)...)
	return e, nil
}
