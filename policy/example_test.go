package policy_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/policy"
)

// A design becomes a policy file, and the file gives the design back.
func ExampleFromDesign() {
	in := calc.Input{Capacity: 2000, Clients: 200, P50: 1, P95: 3, P99: 5,
		Endpoints: []calc.Endpoint{{Method: "GET", Path: "/v1/reports", Cost: 8}}}
	var b strings.Builder
	if err := policy.Encode(&b, policy.FromDesign(in)); err != nil {
		panic(err)
	}
	fmt.Print(b.String())
	p, err := policy.Decode(strings.NewReader(b.String()))
	if err != nil {
		panic(err)
	}
	fmt.Println("capacity back:", p.Design().Capacity, "p99 back:", p.Design().P99)
	// Output:
	// apiVersion: ratelab/v1
	// kind: RateLimitPolicy
	// metadata:
	//   name: design
	// service:
	//   capacity: 2000
	//   on_store_failure: fail_open
	// defaults:
	//   key: api_key
	//   mode: enforce
	//   response: {status: 429, headers: [ietf], retry_after: true}
	//   limit: {algorithm: token_bucket, rate: 10, burst: 100}
	// sizing:
	//   clients: 200
	//   p50: 1
	//   p95: 3
	//   p99: 5
	// endpoints:
	//   - match: {method: GET, path: /v1/reports}
	//     cost: 8
	// global:
	//   limit: {algorithm: token_bucket, rate: 1600, burst: 1600}
	// capacity back: 2000 p99 back: 5
}

// Decode reports every problem with its place and a hint.
func ExampleDecode() {
	doc := `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: api}
service: {capacity: 100}
defaults:
  limit: {algorithm: token_bucket, rate: 5, brust: 50}
`
	_, err := policy.Decode(strings.NewReader(doc))
	fmt.Println(err)
	// Output:
	// 6:3: defaults.limit.burst: missing; want a whole number in [1, 1000000000]
	// 6:45: defaults.limit.brust: unknown field `brust`; did you mean `burst`?
}

// Lint finds what will surprise someone, with the place and a fix.
func ExampleLint() {
	doc := `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: api}
service: {capacity: 100}
defaults:
  mode: shadow
  limit: {algorithm: token_bucket, rate: 5, burst: 50}
`
	p, err := policy.Decode(strings.NewReader(doc))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	for _, f := range policy.Lint(p) {
		fmt.Printf("%d:%d %s %s\n", f.Line, f.Column, f.Severity, f.ID)
	}
	// Output:
	// 6:3 warning shadow_mode
}
