package traefik_test

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/traefik"
	"github.com/ratelab/ratelab/policy"
)

// A gcra limit of 2.5 requests/s becomes average 5 per period 2s, so that
// Traefik's average/period is exactly the policy's rate.
func Example() {
	p, err := policy.Decode(strings.NewReader(`apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: example}
service: {capacity: 100}
defaults:
  key: ip
  limit: {algorithm: gcra, rate: 2.5, burst: 5}
`))
	if err != nil {
		panic(err)
	}
	e, err := traefik.Dynamic.Render(p, export.Options{})
	if err != nil {
		panic(err)
	}
	for _, m := range e.Mappings {
		if m.Field == "defaults.limit" {
			fmt.Println(m.To)
		}
	}
	// Output:
	// middleware default: average=5 period=2s burst=5 sourceCriterion.ipStrategy (client address)
}
