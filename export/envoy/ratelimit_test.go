package envoy

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// TestRateLimitFilterMatching checks the regular expressions the
// ratelimit filter's actions use, as Envoy applies them (RE2, the whole
// value): a tier name ignoring ASCII case only, an endpoint template with
// its {name} as one segment and any query string.
func TestRateLimitFilterMatching(t *testing.T) {
	tests := []struct {
		re    string
		value string
		want  bool
	}{
		{asciiFold("Paid Plus"), "paid plus", true},
		{asciiFold("Paid Plus"), "PAID PLUS", true},
		{asciiFold("Paid Plus"), "Paid  Plus", false},
		{asciiFold("k"), "\u212a", false}, // the Kelvin sign folds to k in Unicode only
		{asciiFold("a.b"), "aXb", false},
		{pathRE(t, "/v1/items/{id}"), "/v1/items/42", true},
		{pathRE(t, "/v1/items/{id}"), "/v1/items/42?page=2", true},
		{pathRE(t, "/v1/items/{id}"), "/v1/items/", false},
		{pathRE(t, "/v1/items/{id}"), "/v1/items/4/2", false},
		{pathRE(t, "/v1/items"), "/v1/items", true},
		{pathRE(t, "/v1/items"), "/v1/itemsx", false},
	}
	for _, tt := range tests {
		re := regexp.MustCompile(`^(?:` + tt.re + `)$`)
		if got := re.MatchString(tt.value); got != tt.want {
			t.Errorf("%q on %q: %t, want %t", tt.re, tt.value, got, tt.want)
		}
	}
}

// pathRE is the regex of pathMatcher.
func pathRE(t *testing.T, template string) string {
	t.Helper()
	m := pathMatcher(template, false)
	return m[1].val.(obj)[0].val.(obj)[0].val.(string)
}

// TestRateLimitEndpointFirstMatch: an endpoint limit's action excludes the
// paths of the earlier endpoints that overlap it, and only those.
func TestRateLimitEndpointFirstMatch(t *testing.T) {
	p := policy.Policy{Metadata: policy.Metadata{Name: "first"}, Defaults: policy.Defaults{Key: policy.KeyAPIKey},
		Endpoints: []policy.Endpoint{
			{Match: policy.Match{Method: "GET", Path: "/v1/items/special"}},
			{Match: policy.Match{Method: "POST", Path: "/v1/items/other"}},
			{Match: policy.Match{Method: "GET", Path: "/v1/items/{id}"}, Limit: exporttest.Named(t, "minimal").Defaults.Limit},
		}}
	for _, pl := range plans(p, export.Options{}) {
		if pl.Scope != policy.ScopeEndpoint {
			continue
		}
		text := strings.Join(lines(pl.actions), "\n")
		if got := strings.Count(text, "invert_match: true"); got != 1 || !strings.Contains(text, "special") || strings.Contains(text, "other") {
			t.Errorf("endpoint action excludes %d paths, want only GET /v1/items/special:\n%s", got, text)
		}
	}
}
