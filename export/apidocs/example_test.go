package apidocs_test

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export/apidocs"
)

func ExamplePhrase() {
	for _, s := range []algorithms.Spec{
		{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 10},
		{Algorithm: algorithms.NameSlidingWindow, Limit: 100, Window: time.Minute},
		{Algorithm: algorithms.NameLeakyBucket, Rate: 0.5, Queue: 2},
	} {
		fmt.Println(apidocs.Phrase(s))
	}
	// Output:
	// up to 10 requests at once, then 1 per second
	// 100 per minute, sliding
	// 30 per minute, evenly spaced; up to 2 more wait their turn (at most 4 seconds of delay)
}
