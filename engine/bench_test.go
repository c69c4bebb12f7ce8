package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/policy"
)

// BenchmarkDecide decides requests of 1000 clients in two tiers, half of
// them to a templated endpoint with its own limit, under a global limit:
// three limits per request. BenchmarkDecideOneLimit is a policy of one
// default limit, the floor the composition adds to.
func BenchmarkDecide(b *testing.B) {
	p := basePolicy()
	p.Defaults.Limit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 100}
	p.Tiers = []policy.Tier{{Name: "free"}, {Name: "paid", Limit: algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 50, Burst: 500}}}
	p.Endpoints = []policy.Endpoint{
		{Match: policy.Match{Method: "GET", Path: "/v1/reports/{id}"}, Cost: 4},
		{Match: policy.Match{Method: "POST", Path: "/v1/orders/{id}/items"},
			Limit: algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 100, Window: time.Minute}},
	}
	p.Global.Limit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 5000, Burst: 5000}
	benchDecide(b, p, func(i int) Request {
		q := Request{Key: keys[i%len(keys)], Tier: []string{"free", "Paid"}[i%2], Method: "POST", Path: "/v1/orders/42/items"}
		if i%4 < 2 {
			q.Method, q.Path = "GET", "/v1/reports/7"
		}
		return q
	})
}

func BenchmarkDecideOneLimit(b *testing.B) {
	p := basePolicy()
	p.Defaults.Limit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 100}
	benchDecide(b, p, func(i int) Request { return Request{Key: keys[i%len(keys)], Method: "GET", Path: "/"} })
}

var keys = func() []string {
	out := make([]string, 1000)
	for i := range out {
		out[i] = fmt.Sprint("client-", i)
	}
	return out
}()

func benchDecide(b *testing.B, p policy.Policy, req func(int) Request) {
	e, err := New(p)
	if err != nil {
		b.Fatal(err)
	}
	qs := make([]Request, 4096)
	for i := range qs {
		qs[i] = req(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		q := qs[i%len(qs)]
		q.At = time.Duration(i) * time.Microsecond
		e.Decide(q)
	}
}
