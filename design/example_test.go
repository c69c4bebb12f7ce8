package design_test

import (
	"fmt"
	"os"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/design"
	"github.com/ratelab/ratelab/policy"
)

// A design URL picks GCRA for the default limit and pins its burst below
// the proposal; the rate and the global limit follow the calculator.
func ExampleDesign_Resolve() {
	d := design.ParseQuery("capacity=2000&clients=200&p99=5&limit.algorithm=gcra&limit.burst=40")
	r := d.Resolve()
	for _, l := range r.Limits {
		fmt.Printf("%s: %v\n", l.Label, l.Spec)
		for _, p := range l.Params {
			if p.Note != "" {
				fmt.Printf("  %s: %s\n", p.Field, p.Note)
			}
		}
	}
	fmt.Println(len(r.Problems), "problems")
	// Output:
	// default limit: gcra(rate=10/s, burst=40)
	//   limit.burst: pinned 40, proposal 100: a burst below the proposal rejects the designed peak
	// global limit: token_bucket(rate=1600/s, burst=1600)
	// 0 problems
}

// An imported policy becomes a design URL: numbers the calculator would
// propose anyway are left out (unpinned), every other one is pinned, and
// the design resolves to the same policy.
func ExampleFromPolicy() {
	p, err := design.ParseQuery("capacity=100&tiers.0.name=paid&tiers.0.clients=4&tiers.0.limit.algorithm=sliding_log").Policy()
	if err != nil {
		fmt.Println(err)
		return
	}
	p.Metadata.Name = "orders"
	p.Defaults.Mode = policy.ModeShadow
	p.Tiers[0].Limit.Limit = 300 // below the proposal of 1200
	p.Global.Limit.Burst = 300   // the largest per-client burst is now 300
	d := design.FromPolicy(p, algorithms.DefaultPattern(algorithms.PatternIdleThenBurst))
	fmt.Println(d.Query())
	again, _ := d.Policy()
	_ = policy.Encode(os.Stdout, again)
	// Output:
	// name=orders&capacity=100&tiers.0.name=paid&tiers.0.clients=4&tiers.0.limit.algorithm=sliding_log&tiers.0.limit.limit=300&mode=shadow&pattern=idle_then_burst
	// apiVersion: ratelab/v1
	// kind: RateLimitPolicy
	// metadata:
	//   name: orders
	// service:
	//   capacity: 100
	// defaults:
	//   mode: shadow
	//   limit: {algorithm: token_bucket, rate: 20, burst: 200}
	// tiers:
	//   - name: paid
	//     clients: 4
	//     limit: {algorithm: sliding_log, limit: 300, window: 60s}
	// global:
	//   limit: {algorithm: token_bucket, rate: 80, burst: 300}
}
