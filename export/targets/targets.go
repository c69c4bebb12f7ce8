// Package targets is the list of every export target, in the order the
// designer and the command line show them, and the one place a new target
// is added.
package targets

import (
	"bytes"
	"strings"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/apidocs"
	"github.com/ratelab/ratelab/export/envoy"
	"github.com/ratelab/ratelab/export/golib"
	"github.com/ratelab/ratelab/export/haproxy"
	"github.com/ratelab/ratelab/export/kong"
	"github.com/ratelab/ratelab/export/nginx"
	"github.com/ratelab/ratelab/export/prometheus"
	"github.com/ratelab/ratelab/export/redis"
	"github.com/ratelab/ratelab/export/traefik"
	"github.com/ratelab/ratelab/policy"
)

// All is every target, grouped as export.Group orders them.
var All = []export.Target{
	nginx.Target,
	haproxy.Target,
	envoy.Local,
	envoy.RateLimitService,
	envoy.Gateway,
	traefik.Dynamic,
	traefik.CRD,
	kong.Target,
	redis.Target,
	golib.XTimeRate,
	golib.Throttled,
	golib.RedisRate,
	prometheus.Target,
	apidocs.OpenAPI,
	apidocs.Markdown,
	Policy,
}

// Find is the target called name.
func Find(name string) (export.Target, bool) {
	for _, t := range All {
		if t.Name == name {
			return t, true
		}
	}
	return export.Target{}, false
}

// Names lists the targets' names in order.
func Names() []string {
	out := make([]string, len(All))
	for i, t := range All {
		out[i] = t.Name
	}
	return out
}

// Policy is the policy file itself, which every other export is made from:
// exact by definition.
var Policy = export.Target{
	Name:  "policy",
	Title: "ratelab policy file (YAML)",
	Group: export.Docs,
	Render: func(p policy.Policy, _ export.Options) (export.Export, error) {
		var buf bytes.Buffer
		if err := policy.Encode(&buf, p); err != nil {
			return export.Export{}, &export.Error{Target: "policy", Reason: err.Error()}
		}
		e := export.Export{Target: "policy", Filename: "policy.yaml", MediaType: "application/yaml; charset=utf-8", Body: buf.Bytes()}
		for _, l := range p.Limits() {
			e.Add(export.Mapping{Field: l.Field, From: l.Spec.String(), To: l.Spec.String(), Fidelity: export.Exact})
		}
		e.Notes = []string{"Check it with ratelab lint policy.yaml; import it in the designer to see its charts."}
		return e, nil
	},
}

// Render renders p for the target called name, after export.Check: the
// one entry point for the server and the command line, so no text a user
// sends reaches a config file unchecked. An unknown name or a policy that
// Check refuses is an *export.Error.
func Render(name string, p policy.Policy, o export.Options) (export.Export, error) {
	t, ok := Find(name)
	if !ok {
		return export.Export{}, &export.Error{Target: name, Reason: "no such export target; want one of " + strings.Join(Names(), ", ")}
	}
	if err := export.Check(p, o); err != nil {
		return export.Export{}, err
	}
	return t.Render(p, o.WithDefaults())
}
