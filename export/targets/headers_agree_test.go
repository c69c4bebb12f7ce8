package targets

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// published finds every quota a target's file publishes for a limit: a
// RateLimit-Policy item "name";q=Q;w=W (gateways, docs), or the Go
// files' limit table {name: "name", … quota: Q, window: W}.
var published = []*regexp.Regexp{
	regexp.MustCompile(`\\?"([a-z0-9_]+)\\?";q=(\d+);w=(\d+)`),
	regexp.MustCompile(`name: "([a-z0-9_]+)", [^}\n]*quota: (\d+), window: (\d+)`),
}

type quota struct{ q, w int64 }

// quotas is what ex publishes, by limit name.
func quotas(t *testing.T, ex export.Export) map[string]quota {
	t.Helper()
	out := map[string]quota{}
	for _, body := range []string{string(ex.Body)} {
		for _, re := range published {
			for _, m := range re.FindAllStringSubmatch(body, -1) {
				q, _ := strconv.ParseInt(m[2], 10, 64)
				w, _ := strconv.ParseInt(m[3], 10, 64)
				if old, ok := out[m[1]]; ok && old != (quota{q, w}) {
					t.Errorf("%s publishes %s as q=%d;w=%d and as q=%d;w=%d", ex.Target, m[1], old.q, old.w, q, w)
				}
				out[m[1]] = quota{q, w}
			}
		}
	}
	return out
}

// TestTargetsPublishOneQuota renders every target for every test policy
// and checks that all targets publish the same q and w for each limit.
// For one design the numbers are worked out by hand: a bucket of 401 at
// 100/s refills in 4.01 s, published as w=5 (rounding to 4 would promise
// more than the bucket gives; nginx and HAProxy once did).
func TestTargetsPublishOneQuota(t *testing.T) {
	design := `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: odd-window}
service: {capacity: 1000}
defaults:
  key: api_key
  response: {headers: [ietf]}
  limit: {algorithm: token_bucket, rate: 100, burst: 401}
tiers:
  - {name: paid, limit: {algorithm: sliding_window, limit: 30, window: 1500ms}}
`
	p, err := policy.Decode(strings.NewReader(design))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]quota{"default": {401, 5}, "tier_paid": {30, 2}}
	publishing := map[string]bool{}
	for _, tg := range All {
		ex, err := Render(tg.Name, p, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for name, got := range quotas(t, ex) {
			publishing[tg.Name] = true
			if w, ok := want[name]; ok && got != w {
				t.Errorf("%s publishes %s as q=%d;w=%d, want q=%d;w=%d", tg.Name, name, got.q, got.w, w.q, w.w)
			}
		}
	}
	// The targets that send or document RateLimit-Policy.
	for _, name := range []string{"nginx", "haproxy", "markdown", "openapi", "xtime-rate", "throttled", "redis-rate", "redis-lua"} {
		if !publishing[name] {
			t.Errorf("%s publishes no quota for this design", name)
		}
	}

	for _, tp := range exporttest.Policies(t) {
		seen := map[string]struct {
			quota
			by string
		}{}
		for _, tg := range All {
			ex, err := Render(tg.Name, tp.Policy, export.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for name, got := range quotas(t, ex) {
				if s, ok := seen[name]; ok && s.quota != got {
					t.Errorf("%s: %s publishes %s as q=%d;w=%d, %s as q=%d;w=%d", tp.Name, tg.Name, name, got.q, got.w, s.by, s.q, s.w)
				}
				seen[name] = struct {
					quota
					by string
				}{got, tg.Name}
			}
		}
	}
}
