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
	c, err := traefik.Validate(e.Body)
	if err != nil {
		panic(err)
	}
	rl := c.HTTP.Middlewares["default"].RateLimit
	fmt.Println(rl.Average, rl.Period, rl.Burst, rl.SourceCriterion.IPStrategy != nil)
	// Output:
	// 5 2s 5 true
}
