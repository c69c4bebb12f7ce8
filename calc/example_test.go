package calc_test

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// A service sustains 12 500 requests/s, keeps 20 % free and serves 100
// clients whose p99 is 50 requests/s; a client must be able to send 300/s
// for 2 s. Each number comes with its reason.
func ExampleSize() {
	res, err := calc.Size(calc.Input{Capacity: 12500, Clients: 100, P99: 50, Peak: 300, PeakSeconds: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Rate.Reason)
	fmt.Println(res.Burst.Value)
	for _, p := range res.Algorithms {
		fmt.Printf("%-40s largest burst %5v, Retry-After %v s\n", p.Spec(), p.LargestBurst.Value, p.RetryAfter.Value)
	}
	for _, c := range res.Checks {
		fmt.Println(c.Severity, c.ID)
	}
	// Output:
	// rate = p99 × margin = 50/s × 2 = 100/s: a limit below p99 throttles legitimate clients
	// 401
	// token_bucket(rate=100/s, burst=401)      largest burst   401, Retry-After 1 s
	// gcra(rate=100/s, burst=401)              largest burst   401, Retry-After 1 s
	// leaky_bucket(rate=100/s, queue=400)      largest burst   401, Retry-After 1 s
	// fixed_window(limit=6000, window=1m0s)    largest burst 12000, Retry-After 60 s
	// sliding_log(limit=6000, window=1m0s)     largest burst  6000, Retry-After 60 s
	// sliding_window(limit=6000, window=1m0s)  largest burst  6000, Retry-After 61 s
	// warning fixed_window_boundary
}

// Bad input names every bad field, its value and the allowed range.
func ExampleSize_errors() {
	_, err := calc.Size(calc.Input{Capacity: -1, Clients: 10, P95: 60, P99: 50})
	for _, e := range err.(calc.Errors) {
		fmt.Println(e)
	}
	// Output:
	// capacity: -1 is out of range; want requests per second in [0.001, 1e9]
	// p99: 50 is out of range; want at least p95 (60): percentiles cannot decrease
}

// What "1000 requests per hour" in a fixed window means for a client.
func ExampleReverse() {
	res, err := calc.Reverse(calc.Limit{Algorithm: "fixed_window", Limit: 1000, Window: 3600})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.MinInterval.Reason)
	fmt.Println(res.Params.LargestBurst.Reason)
	fmt.Println(res.Params.RetryAfter.Value)
	for _, p := range res.Equivalents {
		fmt.Println(p.Fidelity, p.Spec())
	}
	// Output:
	// min interval = 1/pace = 3.6 s
	// 2 × limit = 2000: 1000 at the end of one window and 1000 at the start of the next
	// 3600
	// approximate token_bucket(rate=0.2777777777777778/s, burst=1000)
	// approximate gcra(rate=0.2777777777777778/s, burst=1000)
	// approximate leaky_bucket(rate=0.2777777777777778/s, queue=999)
	// approximate sliding_log(limit=1000, window=1h0m0s)
	// approximate sliding_window(limit=1000, window=1h0m0s)
}

// A client's retries after a 429 with Retry-After: 3.
func ExampleSchedule() {
	b, err := calc.Schedule(calc.Retry{Attempts: 4, Jitter: new(0.5)}, 3)
	if err != nil {
		panic(err)
	}
	for _, a := range b.Attempts {
		fmt.Printf("attempt %d: wait [%v, %v) s\n", a.Attempt, a.Min, a.Max)
	}
	fmt.Println(b.Rules[0])
	// Output:
	// attempt 1: wait [3, 4.5) s
	// attempt 2: wait [3, 4.5) s
	// attempt 3: wait [4, 6) s
	// attempt 4: wait [8, 12) s
	// Retry only 429 and 503 (and lost connections). Never retry other 4xx such as 400, 401, 403, 404 or 422: the request itself is wrong and fails the same way every time.
}

// The headers a fixed window of 100 per minute sends when a client has
// used 58 of them 42 s into the window, and on the request after its last.
func ExampleHeadersAt() {
	ex, err := calc.HeadersAt(algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 100, Window: time.Minute}, calc.Moment{At: 42, Used: 58})
	if err != nil {
		panic(err)
	}
	for _, r := range []calc.Response{ex.Allowed, ex.Rejected} {
		fmt.Println(r.Status)
		for _, h := range r.Headers {
			if h.Form == calc.FormIETF || h.Form == calc.FormRetryAfter {
				fmt.Printf("  %s: %s\n", h.Name, h.Value)
			}
		}
	}
	// Output:
	// 200
	//   RateLimit-Policy: "default";q=100;w=60
	//   RateLimit: "default";r=42;t=18
	// 429
	//   RateLimit-Policy: "default";q=100;w=60
	//   RateLimit: "default";r=0;t=18
	//   Retry-After: 18
}
