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

// BenchmarkRoutes finds the endpoint of a request among n endpoints of a
// REST API (four methods on each of n/4 resources, "/v1/resource{i}/{id}"),
// the request to the last endpoint or to none, through the template tree
// and by trying every endpoint in turn (scan): the tree costs about the
// same at every n, the scan grows with it.
func BenchmarkRoutes(b *testing.B) {
	for _, n := range []int{4, 8, 16, 100} {
		var eps []endpoint
		var templates []string
		for i := range n {
			tp := fmt.Sprintf("/v1/resource%d/{id}", i/4)
			eps = append(eps, endpoint{method: []string{"GET", "POST", "PUT", "DELETE"}[i%4], parts: template(tp)})
			templates = append(templates, tp)
		}
		last := fmt.Sprintf("/v1/resource%d/42", (n-1)/4)
		tree := routes{eps: eps}
		tree.build(templates)
		for _, c := range []struct {
			name   string
			r      routes
			method string
			path   string
			want   int
		}{
			{"tree/last", tree, "DELETE", last, n - 1}, {"scan/last", routes{eps: eps}, "DELETE", last, n - 1},
			{"tree/none", tree, "GET", "/v1/orders/42", -1}, {"scan/none", routes{eps: eps}, "GET", "/v1/orders/42", -1},
		} {
			b.Run(fmt.Sprintf("%d/%s", n, c.name), func(b *testing.B) {
				if got := c.r.find(c.method, c.path); got != c.want {
					b.Fatalf("find %s %s = %d, want %d", c.method, c.path, got, c.want)
				}
				b.ReportAllocs()
				for b.Loop() {
					c.r.find(c.method, c.path)
				}
			})
		}
	}
}

// BenchmarkDecideEndpoints is BenchmarkDecideOneLimit for a policy of n
// endpoints (BenchmarkRoutes' REST API), each request to one of them in
// turn: a decision costs about the same with 100 endpoints as with 1.
func BenchmarkDecideEndpoints(b *testing.B) {
	for _, n := range []int{1, 100} {
		p := basePolicy()
		p.Defaults.Limit = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 100}
		methods := []string{"GET", "POST", "PUT", "DELETE"}
		for i := range n {
			p.Endpoints = append(p.Endpoints, policy.Endpoint{Match: policy.Match{Method: methods[i%4], Path: fmt.Sprintf("/v1/resource%d/{id}", i/4)}, Cost: 2})
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchDecide(b, p, func(i int) Request {
				j := i * 7 % n
				return Request{Key: keys[i%len(keys)], Method: methods[j%4], Path: fmt.Sprintf("/v1/resource%d/%d", j/4, i)}
			})
		})
	}
}
