package envoy

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// decode decodes a policy document and validates it.
func decode(t *testing.T, doc string) policy.Policy {
	t.Helper()
	p, err := policy.Decode(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return p
}

// tierPolicy has tiers spelt with capitals and punctuation, one without a
// limit of its own.
const tierPolicy = `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: tiers}
service: {capacity: 1000}
defaults: {key: api_key, limit: {algorithm: token_bucket, rate: 5, burst: 50}}
tiers:
  - {name: paid, limit: {algorithm: gcra, rate: 50, burst: 500}}
  - {name: Free}
  - {name: PartNer.v2, limit: {algorithm: token_bucket, rate: 20, burst: 100}}
`

// TestCaseTwinTiersSaySo: a policy whose tier names differ only in case
// (validation refuses it, a render does not) matches the tier header
// case-sensitively, and both targets' default and tier mappings say so.
func TestCaseTwinTiersSaySo(t *testing.T) {
	p := decode(t, tierPolicy)
	p.Tiers = append(p.Tiers, policy.Tier{Name: "PAID"})
	for _, target := range []export.Target{Local, RateLimitService} {
		ex, err := target.Render(p, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ex.Mappings {
			if m.Field != "defaults.limit" && !strings.HasPrefix(m.Field, "tiers[") {
				continue
			}
			if m.Fidelity != export.Approximate || !strings.Contains(m.Why, "tiers[0] (paid) and tiers[3] (PAID) differ only in ASCII case") {
				t.Errorf("%s %s: %s, %q", target.Name, m.Field, m.Fidelity, m.Why)
			}
		}
	}
}
