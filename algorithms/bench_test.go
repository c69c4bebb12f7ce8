package algorithms_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/algorithms"
)

// Every decision benchmark offers the same stream: one request every 1.37 ms
// (730 r/s) against rate 500 r/s and burst 100, so after the burst is spent
// about a third of requests are rejected and both paths are exercised.
const (
	benchRate  = 500
	benchBurst = 100
	benchGap   = 1370 * time.Microsecond
)

// BenchmarkDecide compares one decision of each algorithm with
// x/time/rate's AllowN on the same rate, burst and arrival times. Run:
//
//	go test -run '^$' -bench Decide -benchmem ./algorithms
func BenchmarkDecide(b *testing.B) {
	b.Run("x-time-rate", func(b *testing.B) {
		lim := rate.NewLimiter(benchRate, benchBurst)
		start := time.Unix(1_700_000_000, 0)
		b.ReportAllocs()
		allowed := 0
		for i := 0; b.Loop(); i++ {
			if lim.AllowN(start.Add(time.Duration(i)*benchGap), 1) {
				allowed++
			}
		}
		b.ReportMetric(float64(allowed)/float64(b.N), "admitted/op")
	})
	for _, spec := range benchSpecs() {
		b.Run(string(spec.Algorithm), func(b *testing.B) {
			lim, err := algorithms.New(spec)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			allowed := 0
			for i := 0; b.Loop(); i++ {
				if lim.Allow("client-1", time.Duration(i)*benchGap, 1).Allowed {
					allowed++
				}
			}
			b.ReportMetric(float64(allowed)/float64(b.N), "admitted/op")
		})
	}
}

// benchSpecs are the six algorithms at the benchmark's rate and burst: the
// windows allow rate × 1 s per second-long window, the queue holds burst.
func benchSpecs() []algorithms.Spec {
	return []algorithms.Spec{
		{Algorithm: algorithms.NameTokenBucket, Rate: benchRate, Burst: benchBurst},
		{Algorithm: algorithms.NameGCRA, Rate: benchRate, Burst: benchBurst},
		{Algorithm: algorithms.NameLeakyBucket, Rate: benchRate, Queue: benchBurst},
		{Algorithm: algorithms.NameFixedWindow, Limit: benchRate, Window: time.Second},
		{Algorithm: algorithms.NameSlidingLog, Limit: benchRate, Window: time.Second},
		{Algorithm: algorithms.NameSlidingWindow, Limit: benchRate, Window: time.Second},
	}
}

// steadyArrivals returns n arrivals benchGap apart spread round-robin over keys.
func steadyArrivals(n, keys int) []algorithms.Arrival {
	names := make([]string, keys)
	for i := range names {
		names[i] = "client-" + strconv.Itoa(i+1)
	}
	as := make([]algorithms.Arrival, n)
	gap := benchGap / time.Duration(keys)
	for i := range as {
		as[i] = algorithms.Arrival{At: time.Duration(i) * gap, Key: names[i%keys], Cost: 1}
	}
	return as
}

// BenchmarkSimulate reports ns per arrival of Simulate beside the bare
// decisions on the same arrivals (a loop calling Allow), for one key over
// 10 million arrivals and 10 000 keys over 1 million. Run:
//
//	go test -run '^$' -bench Simulate -benchmem -benchtime 3x -count 7 ./algorithms
func BenchmarkSimulate(b *testing.B) {
	for _, c := range []struct {
		name    string
		n, keys int
	}{
		{"1key-10M", 10_000_000, 1},
		{"10000keys-1M", 1_000_000, 10_000},
	} {
		arrivals := steadyArrivals(c.n, c.keys)
		for _, spec := range benchSpecs() {
			b.Run(fmt.Sprintf("%s/%s/bare", c.name, spec.Algorithm), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					lim, _ := algorithms.New(spec)
					for i := range arrivals {
						a := &arrivals[i]
						lim.Allow(a.Key, a.At, a.Cost)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(arrivals)), "ns/arrival")
			})
			b.Run(fmt.Sprintf("%s/%s/simulate", c.name, spec.Algorithm), func(b *testing.B) {
				sim := algorithms.Simulation{
					Lanes:   []algorithms.Lane{{Spec: spec}},
					Traffic: algorithms.Traffic{Arrivals: arrivals},
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := algorithms.Simulate(sim); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(arrivals)), "ns/arrival")
			})
		}
	}
}
