package envoy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/ratelab/ratelab/export"
	envoyexport "github.com/ratelab/ratelab/export/envoy"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// maxRuleSelector is Envoy Gateway's bound on client selectors per rule
// (api/v1alpha1 v1.9.1), as export/envoy keeps it.
const maxRuleSelector = 8

// crdPath is the BackendTrafficPolicy CRD inside the Envoy Gateway module.
const crdPath = "charts/gateway-crds-helm/templates/generated/gateway.envoyproxy.io_backendtrafficpolicies.yaml"

var (
	btpSchemaOnce sync.Once
	btpSchema     *jsonschema.Schema
	btpSchemaErr  error
)

// schemaBTP compiles the CRD's openAPIV3Schema from the module that the
// build uses (go list -m), the Helm template lines dropped. Objects that
// list their properties get additionalProperties: false unless they
// preserve unknown fields, as kubectl's strict field validation does.
func schemaBTP(t *testing.T) *jsonschema.Schema {
	t.Helper()
	btpSchemaOnce.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/envoyproxy/gateway").Output()
		if err != nil {
			btpSchemaErr = err
			return
		}
		raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), crdPath))
		if err != nil {
			btpSchemaErr = err
			return
		}
		var kept []string
		for _, l := range strings.Split(string(raw), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "{{") {
				kept = append(kept, l)
			}
		}
		var crd struct {
			Spec struct {
				Versions []struct {
					Name   string
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					}
				}
			}
		}
		if btpSchemaErr = yaml.Unmarshal([]byte(strings.Join(kept, "\n")), &crd); btpSchemaErr != nil {
			return
		}
		var schema map[string]any
		for _, v := range crd.Spec.Versions {
			if v.Name == "v1alpha1" {
				schema = v.Schema.OpenAPIV3Schema
			}
		}
		closeObjects(schema)
		c := jsonschema.NewCompiler()
		if btpSchemaErr = c.AddResource("btp.json", schema); btpSchemaErr != nil {
			return
		}
		btpSchema, btpSchemaErr = c.Compile("btp.json")
	})
	if btpSchemaErr != nil {
		t.Fatalf("CRD schema: %v", btpSchemaErr)
	}
	return btpSchema
}

// closeObjects forbids properties a schema does not list.
func closeObjects(v any) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["properties"]; ok {
			if _, ok := v["additionalProperties"]; !ok && v["x-kubernetes-preserve-unknown-fields"] != true {
				v["additionalProperties"] = false
			}
		}
		for _, c := range v {
			closeObjects(c)
		}
	case []any:
		for _, c := range v {
			closeObjects(c)
		}
	}
}

// checkBTP decodes a BackendTrafficPolicy strictly into Envoy Gateway's
// Go type and validates it against the CRD schema.
func checkBTP(t *testing.T, body []byte) (egv1a1.BackendTrafficPolicy, error) {
	t.Helper()
	var btp egv1a1.BackendTrafficPolicy
	if err := yaml.UnmarshalStrict(body, &btp); err != nil {
		return btp, err
	}
	j, err := yaml.YAMLToJSON(body)
	if err != nil {
		return btp, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return btp, err
	}
	return btp, schemaBTP(t).Validate(doc)
}

// TestGatewayValidates decodes every test policy's BackendTrafficPolicy
// strictly into the v1.9.1 Go type and validates it against the CRD, then
// checks each rule against the limit it maps.
func TestGatewayValidates(t *testing.T) {
	for _, tp := range exporttest.Policies(t) {
		t.Run(tp.Name, func(t *testing.T) {
			ex, err := envoyexport.Gateway.Render(tp.Policy, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			btp, err := checkBTP(t, ex.Body)
			if err != nil {
				t.Fatalf("%v\n%s", err, ex.Body)
			}
			rl := btp.Spec.RateLimit
			if rl == nil || rl.Global == nil {
				t.Fatal("no global rate limit")
			}
			windows := gatewayWindows(t, ex, tp.Policy)
			// Rules follow the limits, two for an ip key.
			i := 0
			for _, l := range tp.Policy.Limits() {
				want := windows[l.Field]
				n := 1
				if l.Key == policy.KeyIP && l.Scope != policy.ScopeGlobal {
					n = 2
				}
				for k := 0; k < n; k++ {
					if i >= len(rl.Global.Rules) {
						t.Fatalf("%s: rules run out", l.Field)
					}
					r := rl.Global.Rules[i]
					i++
					if int64(r.Limit.Requests) != want.requests || string(r.Limit.Unit) != egUnit(want.unit) {
						t.Errorf("%s: rule limit %d/%s, want %s", l.Field, r.Limit.Requests, r.Limit.Unit, want)
					}
					if got := r.ShadowMode != nil && *r.ShadowMode; got != (tp.Policy.Defaults.Mode == policy.ModeShadow) {
						t.Errorf("%s: shadowMode %t", l.Field, got)
					}
					if len(r.ClientSelectors) > maxRuleSelector {
						t.Errorf("%s: %d selectors", l.Field, len(r.ClientSelectors))
					}
					// The CRD's CEL rule the schema check cannot run: a
					// selector names at least one attribute.
					for _, c := range r.ClientSelectors {
						if len(c.Headers) == 0 && len(c.Methods) == 0 && c.Path == nil && c.SourceCIDR == nil && len(c.QueryParams) == 0 {
							t.Errorf("%s: an empty client selector", l.Field)
						}
					}
					if (l.Scope == policy.ScopeGlobal) != (len(r.ClientSelectors) == 0) {
						t.Errorf("%s: %d client selectors", l.Field, len(r.ClientSelectors))
					}
				}
			}
			if i != len(rl.Global.Rules) {
				t.Errorf("%d rules, want %d", len(rl.Global.Rules), i)
			}
			checkMappings(t, ex, tp.Policy)
		})
	}
}

// TestGatewayRefuses proves both checks can fail: a misspelt field fails
// the strict decode, a unit outside the enum fails the schema.
func TestGatewayRefuses(t *testing.T) {
	ex, err := envoyexport.Gateway.Render(exporttest.Named(t, "public-api"), export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, from, to string }{
		{"field", "clientSelectors:", "clientSelector:"},
		{"unit", "unit: Second", "unit: Fortnight"},
		{"type", "type: Distinct", "type: Unique"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := strings.Replace(string(ex.Body), tt.from, tt.to, 1)
			if bad == string(ex.Body) {
				t.Fatalf("%q is not in the export", tt.from)
			}
			if _, err := checkBTP(t, []byte(bad)); err == nil {
				t.Errorf("accepted %s", tt.to)
			}
		})
	}
}
