package exporttest

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// TestRoutingIsTheEngine: the live routing checks want what the engine
// decides, for both limit families the gateways use.
func TestRoutingIsTheEngine(t *testing.T) {
	for name, capacity := range map[string]func(int64) algorithms.Spec{
		"token bucket": func(b int64) algorithms.Spec {
			return algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 0.1, Burst: b}
		},
		"sliding window": func(l int64) algorithms.Spec {
			return algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: l, Window: 10 * time.Second}
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, steps := EndpointRouting(capacity)
			Expect(t, p, steps)
			p, steps = GlobalRouting(capacity)
			Expect(t, p, steps)
		})
	}
}
