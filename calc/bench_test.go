package calc_test

import (
	"testing"

	"github.com/ratelab/ratelab/calc"
)

// BenchmarkSize is one full design: sizes, six algorithms, header examples
// (each runs its limiter in virtual time), backoff, share and checks.
func BenchmarkSize(b *testing.B) {
	b.ReportAllocs()
	in := calc.Input{Capacity: 12500, Clients: 100, P50: 10, P95: 30, P99: 50, Peak: 300, PeakSeconds: 2,
		Replicas: 5, Enforcement: calc.Local, Endpoints: []calc.Endpoint{{Method: "GET", Path: "/v1/reports", Cost: 8}}}
	for b.Loop() {
		if _, err := calc.Size(in); err != nil {
			b.Fatal(err)
		}
	}
}
