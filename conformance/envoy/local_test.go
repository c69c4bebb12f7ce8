package envoy

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	lrlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/ratelab/ratelab/export"
	envoyexport "github.com/ratelab/ratelab/export/envoy"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// minDynamicDescriptors is the least LRU size per wildcard descriptor
// export/envoy promises: Envoy's default of 20 distinct clients would
// evict (and so refill) a busy API's buckets constantly.
const minDynamicDescriptors = 10000

// validator is a message with protoc-gen-validate's rules.
type validator interface{ ValidateAll() error }

// decodeProtoErr reads YAML into m the way Envoy reads its config: YAML to
// JSON, then strict protojson (unknown fields and bad enums, durations
// and Any types are errors), then every PGV rule.
func decodeProtoErr(data []byte, m proto.Message) error {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("yaml: %w", err)
	}
	if err := protojson.Unmarshal(j, m); err != nil {
		return fmt.Errorf("protojson: %w", err)
	}
	return validateErr(m)
}

// validate runs PGV's rules on m.
func validate(t *testing.T, m proto.Message) {
	t.Helper()
	if err := validateErr(m); err != nil {
		t.Fatal(err)
	}
}

func validateErr(m proto.Message) error {
	v, ok := m.(validator)
	if !ok {
		return fmt.Errorf("%T has no PGV rules", m)
	}
	if err := v.ValidateAll(); err != nil {
		return fmt.Errorf("PGV %T: %w", m, err)
	}
	return nil
}

// localConfig is the parts of the envoy-local bootstrap the tests read,
// each Any unpacked and validated (PGV does not look inside an Any).
type localConfig struct {
	hcm *hcmv3.HttpConnectionManager
	lrl *lrlv3.LocalRateLimit
}

// parseLocal decodes and validates an envoy-local export.
func parseLocal(t *testing.T, body []byte) localConfig {
	t.Helper()
	c, err := parseLocalErr(body)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func parseLocalErr(body []byte) (localConfig, error) {
	var c localConfig
	var bs bootstrapv3.Bootstrap
	if err := decodeProtoErr(body, &bs); err != nil {
		return c, err
	}
	ls := bs.GetStaticResources().GetListeners()
	if len(ls) != 1 || len(ls[0].GetFilterChains()) != 1 || len(ls[0].GetFilterChains()[0].GetFilters()) != 1 {
		return c, fmt.Errorf("want one listener with one filter, got %v", ls)
	}
	m, err := ls[0].GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalNew()
	if err != nil {
		return c, fmt.Errorf("HCM Any: %w", err)
	}
	c.hcm = m.(*hcmv3.HttpConnectionManager)
	if err := validateErr(c.hcm); err != nil {
		return c, err
	}
	fs := c.hcm.GetHttpFilters()
	if len(fs) != 2 || fs[1].GetName() != "envoy.filters.http.router" {
		return c, fmt.Errorf("want local_ratelimit then router, got %v", fs)
	}
	for _, f := range fs {
		m, err := f.GetTypedConfig().UnmarshalNew()
		if err != nil {
			return c, fmt.Errorf("%s Any: %w", f.GetName(), err)
		}
		if err := validateErr(m); err != nil {
			return c, err
		}
		if l, ok := m.(*lrlv3.LocalRateLimit); ok {
			c.lrl = l
		}
	}
	if c.lrl == nil {
		return c, fmt.Errorf("no LocalRateLimit filter")
	}
	return c, envoyRules(c.lrl)
}

// envoyRules applies the rules Envoy enforces at start-up that PGV does
// not: fill intervals of at least 50 ms in whole milliseconds, each
// descriptor's a multiple of the default's, no duplicate descriptor.
func envoyRules(l *lrlv3.LocalRateLimit) error {
	base := l.GetTokenBucket().GetFillInterval().AsDuration()
	if base < 50*time.Millisecond || base%time.Millisecond != 0 {
		return fmt.Errorf("default fill_interval %v: want ≥ 50ms in whole ms", base)
	}
	seen := map[string]bool{}
	for i, d := range l.GetDescriptors() {
		fi := d.GetTokenBucket().GetFillInterval().AsDuration()
		if fi < 50*time.Millisecond || fi%time.Millisecond != 0 {
			return fmt.Errorf("descriptors[%d] fill_interval %v: want ≥ 50ms in whole ms", i, fi)
		}
		if fi%base != 0 {
			return fmt.Errorf("descriptors[%d] fill_interval %v is not a multiple of the default's %v", i, fi, base)
		}
		k := fmt.Sprint(d.GetEntries())
		if seen[k] {
			return fmt.Errorf("duplicate descriptor %s", k)
		}
		seen[k] = true
	}
	return nil
}

// TestLocalRefuses proves each check can fail: the public-api export with
// one thing broken must be refused.
func TestLocalRefuses(t *testing.T) {
	ex, err := envoyexport.Local.Render(exporttest.Named(t, "public-api"), export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	body := string(ex.Body)
	// from is a regular expression; its first match is replaced.
	tests := []struct{ name, from, to string }{
		{"duration in Go form (protojson)", `fill_interval: "0.6s"`, `fill_interval: 600ms`},
		{"unknown field (protojson)", "max_dynamic_descriptors:", "max_dynamic_descriptor:"},
		{"bad enum (protojson)", "code: TooManyRequests", "code: TooManyRequest"},
		{"empty stat_prefix (PGV)", "stat_prefix: http_local_rate_limiter", `stat_prefix: ""`},
		{"no dynamic descriptors (PGV)", "max_dynamic_descriptors: 10000", "max_dynamic_descriptors: 0"},
		{"fill interval below 50 ms (Envoy)", `fill_interval: "0.15s"`, `fill_interval: "0.04s"`},
		{"not a multiple of the default's (Envoy)", `fill_interval: "0.6s"`, `fill_interval: "0.65s"`},
		{"duplicate descriptor (Envoy)", "- key: no_tier\n(\\s+)value: \"true\"", "- key: tier\n${1}value: paid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			re := regexp.MustCompile(tt.from)
			loc := re.FindStringSubmatchIndex(body)
			if loc == nil {
				t.Fatalf("%q is not in the export", tt.from)
			}
			bad := body[:loc[0]] + string(re.ExpandString(nil, tt.to, body, loc)) + body[loc[1]:]
			if _, err := parseLocalErr([]byte(bad)); err == nil {
				t.Errorf("accepted %s", tt.to)
			}
		})
	}
}

// TestLocalValidates renders every test policy and reads it back with
// go-control-plane: strict protojson, PGV on the bootstrap, the HCM and
// both filters, and Envoy's own start-up rules (parseLocal).
func TestLocalValidates(t *testing.T) {
	for _, tp := range exporttest.Policies(t) {
		t.Run(tp.Name, func(t *testing.T) {
			ex, err := envoyexport.Local.Render(tp.Policy, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := parseLocal(t, ex.Body)
			if got, want := len(c.lrl.GetDescriptors()), len(tp.Policy.Limits()); got != want {
				t.Errorf("%d descriptors, want one per limit (%d)", got, want)
			}
			if got := c.lrl.GetMaxDynamicDescriptors().GetValue(); got < minDynamicDescriptors {
				t.Errorf("max_dynamic_descriptors %d, want ≥ %d", got, minDynamicDescriptors)
			}
			if c.lrl.GetFilterEnabled().GetDefaultValue().GetNumerator() != 100 {
				t.Error("filter_enabled is not 100%")
			}
			wantEnforced := uint32(100)
			if tp.Policy.Defaults.Mode == policy.ModeShadow {
				wantEnforced = 0
			}
			if got := c.lrl.GetFilterEnforced().GetDefaultValue().GetNumerator(); got != wantEnforced {
				t.Errorf("filter_enforced %d%%, want %d%%", got, wantEnforced)
			}
			if got, want := int(c.lrl.GetStatus().GetCode()), tp.Policy.Defaults.Response.Code(); got != want {
				t.Errorf("status %d, want %d", got, want)
			}
			again, _ := envoyexport.Local.Render(tp.Policy, export.Options{})
			if !bytes.Equal(ex.Body, again.Body) {
				t.Error("two renders differ")
			}
			if !strings.Contains(string(ex.Body), "generated by ratelab") {
				t.Error("no header comment")
			}
			checkMappings(t, ex, tp.Policy)
		})
	}
}

// checkMappings checks that every limit has one mapping and the export's
// fidelity is the worst of its mappings.
func checkMappings(t *testing.T, ex export.Export, p policy.Policy) {
	t.Helper()
	fields := map[string]int{}
	worst := export.Exact
	for _, m := range ex.Mappings {
		fields[m.Field]++
		worst = export.Worst(worst, m.Fidelity)
		if m.Fidelity != export.Exact && m.Why == "" {
			t.Errorf("%s is %s without a reason", m.Field, m.Fidelity)
		}
	}
	for _, l := range p.Limits() {
		if fields[l.Field] != 1 {
			t.Errorf("%s has %d mappings, want 1", l.Field, fields[l.Field])
		}
	}
	for _, f := range []string{"defaults.mode", "defaults.response", "service.enforcement"} {
		if fields[f] != 1 {
			t.Errorf("%s has %d mappings, want 1", f, fields[f])
		}
	}
	if ex.Fidelity != worst {
		t.Errorf("export fidelity %s, want the worst mapping's %s", ex.Fidelity, worst)
	}
}
