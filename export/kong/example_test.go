package kong_test

import (
	"fmt"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export/kong"
)

// A token bucket of 10 requests/s and burst 100 becomes, per Kong window,
// the most a conforming client can send in one window: burst + rate × window.
func ExamplePeriods() {
	ps, exact, _ := kong.Periods(algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 100})
	for _, p := range ps {
		fmt.Println(p.Unit.Name, p.Limit)
	}
	fmt.Println("exact:", exact)
	// Output:
	// second 110
	// minute 700
	// hour 36100
	// day 864100
	// exact: false
}
