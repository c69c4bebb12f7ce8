package engine_test

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/policy"
)

// A paid client may send 3 at once, an export costs 2, and the whole
// service takes 4 at once: the third request is the global limit's, and
// being rejected costs the client nothing.
func ExampleEngine_Decide() {
	p := policy.Policy{
		APIVersion: policy.APIVersion, Kind: policy.Kind, Metadata: policy.Metadata{Name: "example"},
		Service:  policy.Service{Capacity: 100},
		Defaults: policy.Defaults{Limit: algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 1}},
		Tiers: []policy.Tier{{Name: "paid",
			Limit: algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 1, Burst: 3}}},
		Endpoints: []policy.Endpoint{{Match: policy.Match{Method: "POST", Path: "/v1/exports/{id}"}, Cost: 2}},
		Global:    policy.Global{Limit: algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 4}},
	}
	e, err := engine.New(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, q := range []engine.Request{
		{Key: "alice", Tier: "Paid", Method: "GET", Path: "/v1/items"},
		{Key: "bob", Tier: "paid", Method: "POST", Path: "/v1/exports/7"},
		{Key: "alice", Tier: "paid", Method: "POST", Path: "/v1/exports/8"},
		{At: time.Second, Key: "alice", Tier: "paid", Method: "POST", Path: "/v1/exports/8"},
	} {
		d := e.Decide(q)
		by := ""
		if d.Rejected >= 0 {
			by = " by " + e.Limits()[d.Rejected].Name
		}
		fmt.Printf("%s cost %d: allowed %v%s, retry after %v\n", q.Key, d.Cost, d.Allowed, by, d.RetryAfter)
	}
	// Output:
	// alice cost 1: allowed true, retry after 0s
	// bob cost 2: allowed true, retry after 0s
	// alice cost 2: allowed false by global, retry after 1s
	// alice cost 2: allowed true, retry after 0s
}
