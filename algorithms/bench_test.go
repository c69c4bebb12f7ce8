package algorithms_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/internal/cputime"
)

// Every decision benchmark offers the same stream: one request every 1.37 ms
// (730 r/s) against rate 500 r/s and burst 100, so after the burst is spent
// about a third of requests are rejected and both paths are exercised.
const (
	benchRate  = 500
	benchBurst = 100
	benchGap   = 1370 * time.Microsecond
)

// benchKeyCounts are the key counts of BenchmarkDecide: one key (the
// cached-last-key path), 10 000 keys (the state fits the caches) and 1 M keys
// (it does not).
var benchKeyCounts = []struct {
	name string
	n    int
}{{"1key", 1}, {"10000keys", 10_000}, {"1Mkeys", 1_000_000}}

// benchNames returns the keys "client-1" … "client-n".
func benchNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "client-" + strconv.Itoa(i+1)
	}
	return names
}

// benchStream yields BenchmarkDecide's arrivals: the keys round-robin,
// arrival i at ⌊i·benchGap/len(names)⌋. The step's quotient and remainder
// are worked out once, so the loop adds no division to a decision (a 64-bit
// division takes tens of cycles, as much as a decision at one key).
type benchStream struct {
	names []string
	i     int           // index into names of the next arrival
	at    time.Duration // its time
	acc   int64         // i·benchGap mod len(names), the fraction at dropped
	step  time.Duration // ⌊benchGap/len(names)⌋
	rem   int64         // benchGap mod len(names)
}

func newBenchStream(names []string) *benchStream {
	n := int64(len(names))
	return &benchStream{names: names, step: time.Duration(int64(benchGap) / n), rem: int64(benchGap) % n}
}

func (s *benchStream) arrival() (string, time.Duration) {
	key, at := s.names[s.i], s.at
	if s.i++; s.i == len(s.names) {
		s.i = 0
	}
	s.at += s.step
	if s.acc += s.rem; s.acc >= int64(len(s.names)) {
		s.at++
		s.acc -= int64(len(s.names))
	}
	return key, at
}

// benchWarmup is how many arrivals run before the timer: 1000 rounds of
// the keys (1.37 s, past the burst and the first window) up to 10 000
// keys, two rounds of more.
func benchWarmup(keys int) int {
	if keys > 10_000 {
		return 2 * keys
	}
	return 1000 * keys
}

// BenchmarkDecide compares one decision of each algorithm with
// x/time/rate's AllowN (one *rate.Limiter per key in a
// map[string]*rate.Limiter) on the same rate, burst, keys and arrival times,
// at 1, 10 000 and 1 M keys. Arrivals visit the keys round-robin, each key
// one request every 1.37 ms, so every decision looks up an existing key:
// before the timer starts, benchWarmup rounds create the keys and, up to
// 10 000 keys, bring every one to its steady state (the burst spent, the
// window full, about a third rejected); 1 M keys are measured in their
// first seconds, still within the burst. Run:
//
//	go test -run '^$' -bench Decide -benchmem -count 5 ./algorithms
func BenchmarkDecide(b *testing.B) {
	for _, kc := range benchKeyCounts {
		names := benchNames(kc.n)
		b.Run(kc.name+"/x-time-rate", func(b *testing.B) {
			lims := make(map[string]*rate.Limiter)
			start := time.Unix(1_700_000_000, 0)
			next := newBenchStream(names)
			allow := func() bool {
				key, at := next.arrival()
				lim := lims[key]
				if lim == nil {
					lim = rate.NewLimiter(benchRate, benchBurst)
					lims[key] = lim
				}
				return lim.AllowN(start.Add(at), 1)
			}
			for range benchWarmup(len(names)) {
				allow()
			}
			b.ReportAllocs()
			allowed, cpu := 0, cputime.Self()
			for b.Loop() {
				if allow() {
					allowed++
				}
			}
			b.ReportMetric(float64(cputime.Self()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(allowed)/float64(b.N), "admitted/op")
		})
		for _, spec := range benchSpecs() {
			b.Run(kc.name+"/"+string(spec.Algorithm), func(b *testing.B) {
				lim, err := algorithms.New(spec)
				if err != nil {
					b.Fatal(err)
				}
				next := newBenchStream(names)
				for range benchWarmup(len(names)) {
					key, at := next.arrival()
					lim.Allow(key, at, 1)
				}
				b.ReportAllocs()
				allowed, cpu := 0, cputime.Self()
				for b.Loop() {
					key, at := next.arrival()
					if lim.Allow(key, at, 1).Allowed {
						allowed++
					}
				}
				b.ReportMetric(float64(cputime.Self()-cpu)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(allowed)/float64(b.N), "admitted/op")
			})
		}
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
// 10 million arrivals, 10 000 keys over 1 million and 1 M keys over 10
// million (each key then sends ten requests, 1 ms apart). Run:
//
//	go test -run '^$' -bench Simulate -benchmem -benchtime 3x -count 7 ./algorithms
func BenchmarkSimulate(b *testing.B) {
	for _, c := range []struct {
		name    string
		n, keys int
	}{
		{"1key-10M", 10_000_000, 1},
		{"10000keys-1M", 1_000_000, 10_000},
		{"1Mkeys-10M", 10_000_000, 1_000_000},
	} {
		arrivals := steadyArrivals(c.n, c.keys)
		for _, spec := range benchSpecs() {
			b.Run(fmt.Sprintf("%s/%s/bare", c.name, spec.Algorithm), func(b *testing.B) {
				b.ReportAllocs()
				cpu := cputime.Self()
				for b.Loop() {
					lim, _ := algorithms.New(spec)
					for i := range arrivals {
						a := &arrivals[i]
						lim.Allow(a.Key, a.At, a.Cost)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(arrivals)), "ns/arrival")
				b.ReportMetric(float64(cputime.Self()-cpu)/float64(b.N*len(arrivals)), "cpu-ns/arrival")
			})
			b.Run(fmt.Sprintf("%s/%s/simulate", c.name, spec.Algorithm), func(b *testing.B) {
				sim := algorithms.Simulation{
					Lanes:   []algorithms.Lane{{Spec: spec}},
					Traffic: algorithms.Traffic{Arrivals: arrivals},
				}
				b.ReportAllocs()
				cpu := cputime.Self()
				for b.Loop() {
					if _, err := algorithms.Simulate(sim); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(arrivals)), "ns/arrival")
				b.ReportMetric(float64(cputime.Self()-cpu)/float64(b.N*len(arrivals)), "cpu-ns/arrival")
			})
		}
	}
}
