package algorithms_test

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// A spec names the algorithm and its parameters; New checks them.
func ExampleNew() {
	_, err := algorithms.New(algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 0})
	fmt.Println(err)

	spec := algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 20}
	lim, err := algorithms.New(spec)
	if err != nil {
		panic(err)
	}
	fmt.Println(lim.Spec(), "capacity", spec.Capacity())
	// Output:
	// burst: 0 is out of range; want a whole number in [1, 1000000000]
	// gcra(rate=10/s, burst=20) capacity 20
}

// An idle client sends 7 requests at once to a bucket that refills 1 token
// per second and holds 5. The full bucket lets 5 through; the other two must
// wait a second for the next token. Two seconds later two tokens are back.
func ExampleTokenBucket() {
	lim, err := algorithms.New(algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 5})
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 7; i++ {
		d := lim.Allow("client", 0, 1)
		fmt.Printf("request %d: allowed=%v remaining=%d retry-after=%v\n", i, d.Allowed, d.Remaining, d.RetryAfter())
	}
	d := lim.Allow("client", 2*time.Second, 0)
	fmt.Printf("at 2s: remaining=%d, full in %v\n", d.Remaining, d.Reset)
	// Output:
	// request 1: allowed=true remaining=4 retry-after=0s
	// request 2: allowed=true remaining=3 retry-after=0s
	// request 3: allowed=true remaining=2 retry-after=0s
	// request 4: allowed=true remaining=1 retry-after=0s
	// request 5: allowed=true remaining=0 retry-after=0s
	// request 6: allowed=false remaining=0 retry-after=1s
	// request 7: allowed=false remaining=0 retry-after=1s
	// at 2s: remaining=2, full in 3s
}

// GCRA keeps one time per client, its theoretical arrival time (TAT). At 2
// requests per second with burst 3 (T = 500ms, τ = 1s), a client's export of
// cost 3 uses the whole burst and pushes TAT 1.5s ahead; the next request
// must wait until TAT − now ≤ τ again. Reset is how far TAT is ahead.
func ExampleGCRA() {
	lim, err := algorithms.New(algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 2, Burst: 3})
	if err != nil {
		panic(err)
	}
	steps := []struct {
		at   time.Duration
		cost int64
	}{{0, 3}, {0, 1}, {200 * time.Millisecond, 1}, {500 * time.Millisecond, 1}, {3 * time.Second, 0}}
	for _, s := range steps {
		d := lim.Allow("client", s.at, s.cost)
		fmt.Printf("at %v cost %d: allowed=%v remaining=%d retry-after=%v reset=%v\n",
			s.at, s.cost, d.Allowed, d.Remaining, d.RetryAfter(), d.Reset)
	}
	// Output:
	// at 0s cost 3: allowed=true remaining=0 retry-after=0s reset=1.5s
	// at 0s cost 1: allowed=false remaining=0 retry-after=500ms reset=1.5s
	// at 200ms cost 1: allowed=false remaining=0 retry-after=300ms reset=1.3s
	// at 500ms cost 1: allowed=true remaining=0 retry-after=0s reset=1.5s
	// at 3s cost 0: allowed=true remaining=3 retry-after=0s reset=0s
}

// A leaky bucket shapes instead of rejecting: an idle client sends 5
// requests at once to a queue drained at 2 per second that lets 3 wait. The
// first is served at once, the next three are delayed to be 500ms apart, and
// the fifth finds 3 already waiting and is rejected.
func ExampleLeakyBucket() {
	lim, err := algorithms.New(algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2, Queue: 3})
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 5; i++ {
		d := lim.Allow("client", 0, 1)
		fmt.Printf("request %d: allowed=%v delay=%v retry-after=%v\n", i, d.Allowed, d.Delay(), d.RetryAfter())
	}
	// Output:
	// request 1: allowed=true delay=0s retry-after=0s
	// request 2: allowed=true delay=500ms retry-after=0s
	// request 3: allowed=true delay=1s retry-after=0s
	// request 4: allowed=true delay=1.5s retry-after=0s
	// request 5: allowed=false delay=0s retry-after=500ms
}

// boundaryBurst sends 3 requests at 0:59 and 3 at 1:00, the window_boundary
// situation, to a limit of 3 per minute.
func boundaryBurst(name algorithms.Name) {
	lim, err := algorithms.New(algorithms.Spec{Algorithm: name, Limit: 3, Window: time.Minute})
	if err != nil {
		panic(err)
	}
	for _, at := range []time.Duration{59 * time.Second, 60 * time.Second} {
		for range 3 {
			d := lim.Allow("client", at, 1)
			fmt.Printf("at %v: allowed=%v remaining=%d retry-after=%v\n", at, d.Allowed, d.Remaining, d.RetryAfter())
		}
	}
}

// A fixed window counts per calendar minute, so 3 requests at 0:59 and 3 at
// 1:00 all pass: 6 in one second under a limit of 3 per minute.
func ExampleFixedWindow() {
	boundaryBurst(algorithms.NameFixedWindow)
	// Output:
	// at 59s: allowed=true remaining=2 retry-after=0s
	// at 59s: allowed=true remaining=1 retry-after=0s
	// at 59s: allowed=true remaining=0 retry-after=0s
	// at 1m0s: allowed=true remaining=2 retry-after=0s
	// at 1m0s: allowed=true remaining=1 retry-after=0s
	// at 1m0s: allowed=true remaining=0 retry-after=0s
}

// The sliding log remembers when each request passed, so the same traffic
// finds the minute (0:00, 1:00] already holding 3 and waits until the
// requests of 0:59 leave at 1:59.
func ExampleSlidingLog() {
	boundaryBurst(algorithms.NameSlidingLog)
	// Output:
	// at 59s: allowed=true remaining=2 retry-after=0s
	// at 59s: allowed=true remaining=1 retry-after=0s
	// at 59s: allowed=true remaining=0 retry-after=0s
	// at 1m0s: allowed=false remaining=0 retry-after=59s
	// at 1m0s: allowed=false remaining=0 retry-after=59s
	// at 1m0s: allowed=false remaining=0 retry-after=59s
}

// The sliding window counter keeps only the last minute's count and weighs
// it by how much of it still overlaps: at 1:00 the previous minute's 3 count
// fully, and the next request may pass once 3·(1 − e/60s) + 1 ≤ 3, i.e. at
// e = 20s. At 1:30 they count 1.5, so one more request fits.
func ExampleSlidingWindow() {
	boundaryBurst(algorithms.NameSlidingWindow)
	lim, err := algorithms.New(algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 3, Window: time.Minute})
	if err != nil {
		panic(err)
	}
	lim.Allow("client", 59*time.Second, 3)
	for range 2 {
		d := lim.Allow("client", 90*time.Second, 1)
		fmt.Printf("at 1m30s: allowed=%v remaining=%d retry-after=%v\n", d.Allowed, d.Remaining, d.RetryAfter())
	}
	// Output:
	// at 59s: allowed=true remaining=2 retry-after=0s
	// at 59s: allowed=true remaining=1 retry-after=0s
	// at 59s: allowed=true remaining=0 retry-after=0s
	// at 1m0s: allowed=false remaining=0 retry-after=20s
	// at 1m0s: allowed=false remaining=0 retry-after=20s
	// at 1m0s: allowed=false remaining=0 retry-after=20s
	// at 1m30s: allowed=true remaining=0 retry-after=0s
	// at 1m30s: allowed=false remaining=0 retry-after=10s
}
