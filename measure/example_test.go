package measure_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/measure"
)

// Three clients keyed by an API key logged after the user agent: a sends
// 3 requests in one second, b 2, c 1. Their busiest-second rates are 3, 2
// and 1; by nearest rank p50 is rank ⌈1.5⌉ = 2 → 2, and p95 and p99 are
// rank 3 → 3.
func ExampleMeasure() {
	log := `10.0.0.1 - - [10/Oct/2024:13:55:36 +0000] "GET /v1/orders/1 HTTP/1.1" 200 5 "-" "app/1.0" "a"
10.0.0.1 - - [10/Oct/2024:13:55:36 +0000] "GET /v1/orders/2 HTTP/1.1" 200 5 "-" "app/1.0" "a"
10.0.0.1 - - [10/Oct/2024:13:55:36 +0000] "POST /v1/orders HTTP/1.1" 201 5 "-" "app/1.0" "a"
10.0.0.2 - - [10/Oct/2024:13:55:37 +0000] "GET /v1/orders/3 HTTP/1.1" 200 5 "-" "app/1.0" "b"
10.0.0.2 - - [10/Oct/2024:13:55:37 +0000] "GET /v1/orders/4 HTTP/1.1" 200 5 "-" "app/1.0" "b"
10.0.0.3 - - [10/Oct/2024:13:55:38 +0000] "GET /v1/orders/5 HTTP/1.1" 200 5 "-" "app/1.0" "c"
`
	cfg := accesslog.Config{Key: accesslog.Key{Kind: accesslog.KeyHeader, Name: "X-API-Key"}}
	res, err := measure.Measure(context.Background(), strings.NewReader(log), cfg, measure.Options{Windows: []time.Duration{time.Second}})
	if err != nil {
		fmt.Println(err)
		return
	}
	w := res.Windows[0]
	fmt.Printf("%d clients: p50 %d, p95 %d, p99 %d, max %d (%s) requests/s\n", res.Clients, w.P50, w.P95, w.P99, w.Max, w.MaxKey)
	fmt.Printf("busiest endpoint: %s %s, %d requests\n", res.Endpoints[0].Method, res.Endpoints[0].Path, res.Endpoints[0].Requests)
	in, _ := res.Input(time.Second)
	fmt.Println("/?" + measure.Query(in).Encode())
	// Output:
	// 3 clients: p50 2, p95 3, p99 3, max 3 (a) requests/s
	// busiest endpoint: GET /v1/orders/{id}, 5 requests
	// /?clients=3&p50=2&p95=3&p99=3&percentile_unit=second
}
