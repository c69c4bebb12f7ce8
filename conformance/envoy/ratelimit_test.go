package envoy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	commonrl "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/ratelimit/src/config"
	"github.com/envoyproxy/ratelimit/src/settings"
	"github.com/envoyproxy/ratelimit/src/stats"
	gostats "github.com/lyft/gostats"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/ratelab/ratelab/export"
	envoyexport "github.com/ratelab/ratelab/export/envoy"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// loadRLS loads a service configuration with the service's own loader,
// which panics with a RateLimitConfigError on a file it refuses.
func loadRLS(name string, body []byte) (cfg config.RateLimitConfig, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(config.RateLimitConfigError); ok {
				err = e
				return
			}
			err = fmt.Errorf("loader panicked: %v", r)
		}
	}()
	root := config.ConfigFileContentToYaml(name, string(body))
	sm := stats.NewStatManager(gostats.NewStore(gostats.NewNullSink(), false), settings.Settings{})
	return config.NewRateLimitConfigImpl([]config.RateLimitConfigToLoad{{Name: name, ConfigYaml: root}}, sm, false), nil
}

// descriptor is a request descriptor with a value for every entry, as
// Envoy sends it: wildcard entries get a client's value.
func descriptor(es []entry) *commonrl.RateLimitDescriptor {
	d := &commonrl.RateLimitDescriptor{}
	for _, e := range es {
		v := e.value
		if v == "" {
			v = "client-1"
		}
		d.Entries = append(d.Entries, &commonrl.RateLimitDescriptor_Entry{Key: e.key, Value: v})
	}
	return d
}

// TestRateLimitServiceLoads loads every test policy's export with the
// service's loader, then asks it for each limit's descriptor: the limit it
// finds must be the one the export maps (the descriptor and window its
// mapping states), in shadow mode when the policy is.
func TestRateLimitServiceLoads(t *testing.T) {
	for _, tp := range exporttest.Policies(t) {
		t.Run(tp.Name, func(t *testing.T) {
			ex, err := envoyexport.RateLimitService.Render(tp.Policy, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := loadRLS(ex.Filename, ex.Body)
			if err != nil {
				t.Fatalf("the service refuses the file: %v\n%s", err, ex.Body)
			}
			shadow := tp.Policy.Defaults.Mode == policy.ModeShadow
			limits := serviceLimits(t, ex, tp.Policy)
			for _, l := range tp.Policy.Limits() {
				want := limits[l.Field]
				got := cfg.GetLimit(context.Background(), domain(tp.Policy), descriptor(want.entries))
				if got == nil {
					t.Errorf("%s: the service finds no limit for {%s}", l.Field, entriesText(want.entries))
					continue
				}
				if int64(got.Limit.GetRequestsPerUnit()) != want.requests || !strings.EqualFold(got.Limit.GetUnit().String(), want.unit) {
					t.Errorf("%s: service limit %d/%s, want %s", l.Field, got.Limit.GetRequestsPerUnit(), got.Limit.GetUnit(), want.window)
				}
				if got.ShadowMode != shadow {
					t.Errorf("%s: shadow_mode %t, want %t", l.Field, got.ShadowMode, shadow)
				}
			}
			// A descriptor the policy does not name finds nothing.
			if got := cfg.GetLimit(context.Background(), domain(tp.Policy), descriptor([]entry{{"tier", "no-such-tier"}, {"api_key", ""}})); got != nil {
				t.Errorf("an unknown tier found limit %v", got.Limit)
			}
			checkMappings(t, ex, tp.Policy)
		})
	}
}

// TestRateLimitServiceRefuses proves the loader check can fail: the same
// file with a unit or key the service does not know is refused.
func TestRateLimitServiceRefuses(t *testing.T) {
	ex, err := envoyexport.RateLimitService.Render(exporttest.Named(t, "public-api"), export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, from, to string }{
		{"unit", "unit: second", "unit: fortnight"},
		{"key", "requests_per_unit:", "requests_per_minute:"},
		{"domain", "domain: public_api", "domain: \"\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := strings.Replace(string(ex.Body), tt.from, tt.to, 1)
			if bad == string(ex.Body) {
				t.Fatalf("%q is not in the export", tt.from)
			}
			if _, err := loadRLS(ex.Filename, []byte(bad)); err == nil {
				t.Errorf("the service loaded a file with %s", tt.to)
			}
		})
	}
}

// TestRateLimitFilterValidates reads the Envoy filter of the Notes back
// with go-control-plane (strict protojson and PGV).
func TestRateLimitFilterValidates(t *testing.T) {
	for _, tp := range exporttest.Policies(t) {
		t.Run(tp.Name, func(t *testing.T) {
			ex, err := envoyexport.RateLimitService.Render(tp.Policy, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The note's YAML follows its first line.
			var doc string
			for _, n := range ex.Notes {
				if _, yml, ok := strings.Cut(n, "\n"); ok && strings.HasPrefix(yml, "http_filters:") {
					doc = yml
				}
			}
			if doc == "" {
				t.Fatal("no http_filters in the notes")
			}
			j, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			var h hcmv3.HttpConnectionManager
			if err := protojson.Unmarshal(j, &h); err != nil {
				t.Fatalf("protojson: %v", err)
			}
			if len(h.GetHttpFilters()) != 1 {
				t.Fatalf("want one filter, got %d", len(h.GetHttpFilters()))
			}
			validate(t, h.GetHttpFilters()[0])
			m, err := h.GetHttpFilters()[0].GetTypedConfig().UnmarshalNew()
			if err != nil {
				t.Fatal(err)
			}
			validate(t, m)
			rl := m.(*rlv3.RateLimit)
			if want := tp.Policy.Service.OnStoreFailure == policy.FailClosed; rl.GetFailureModeDeny() != want {
				t.Errorf("failure_mode_deny %t, want %t", rl.GetFailureModeDeny(), want)
			}
			if rl.GetDomain() != domain(tp.Policy) {
				t.Errorf("domain %q, want %q", rl.GetDomain(), domain(tp.Policy))
			}
			if got, want := int(rl.GetRateLimitedStatus().GetCode()), tp.Policy.Defaults.Response.Code(); got != want {
				t.Errorf("status %d, want %d", got, want)
			}
		})
	}
}
