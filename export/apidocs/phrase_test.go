package apidocs_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export/apidocs"
)

// TestPhrase: each algorithm in a consumer's words, the numbers worked out
// by hand from the parameters.
func TestPhrase(t *testing.T) {
	tests := []struct {
		name string
		spec algorithms.Spec
		want string
	}{
		{"token bucket", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 10},
			"up to 10 requests at once, then 1 per second"},
		{"token bucket of one", algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 3, Burst: 1},
			"up to 1 request at once, then 3 per second"},
		// gcra admits what a token bucket of the same rate and burst does.
		{"gcra, rate below 1/s", algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 0.5, Burst: 3},
			"up to 3 requests at once, then 30 per minute"}, // 0.5 × 60 = 30
		{"gcra, fractional rate", algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 7.5, Burst: 15},
			"up to 15 requests at once, then 7.5 per second"},
		// queue 5 drained at 2.5/s: the last waits 5 / 2.5 = 2 s.
		{"leaky bucket", algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2.5, Queue: 5},
			"2.5 per second, evenly spaced; up to 5 more wait their turn (at most 2 seconds of delay)"},
		{"leaky bucket, no queue", algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 2, Queue: 0},
			"2 per second, evenly spaced; requests arriving faster are rejected"},
		// 4 / 8 = 0.5 s of delay.
		{"leaky bucket, short wait", algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 8, Queue: 4},
			"8 per second, evenly spaced; up to 4 more wait their turn (at most 0.5 seconds of delay)"},
		{"fixed window", algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 1000, Window: time.Hour},
			"1000 per hour, fixed window (the count restarts every hour)"},
		{"sliding log", algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 30, Window: 10 * time.Second},
			"no more than 30 in any 10 seconds"},
		{"sliding window", algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 100, Window: 60 * time.Second},
			"100 per minute, sliding"},
		{"sliding window of two days", algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 5000, Window: 48 * time.Hour},
			"5000 per 2 days, sliding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.spec.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := apidocs.Phrase(tt.spec); got != tt.want {
				t.Errorf("Phrase(%s) = %q, want %q", tt.spec, got, tt.want)
			}
		})
	}
}

func TestRate(t *testing.T) {
	tests := []struct {
		rate float64 // requests per second
		want string
	}{
		{1, "1 per second"},
		{1600, "1600 per second"},
		{2.5, "2.5 per second"},
		{1.23456, "1.235 per second"}, // to the millisecond
		{0.5, "30 per minute"},        // 0.5 × 60
		{0.1, "6 per minute"},         // 0.1 × 60, despite 0.1 × 60 = 6.000000000000001
		{1.0 / 120, "30 per hour"},    // 3600 / 120
		{1.0 / 3600, "1 per hour"},
		{1.0 / 86400, "1 per day"},
		{1.0 / 7, "1 every 7 seconds"},           // 60/7, 3600/7, 86400/7 are not whole
		{0.001, "1 every 1000 seconds"},          // 0.06/min, 3.6/h, 86.4/day
		{1.0 / 172800, "1 every 172800 seconds"}, // half a request a day
	}
	for _, tt := range tests {
		if got := apidocs.Rate(tt.rate); got != tt.want {
			t.Errorf("Rate(%v) = %q, want %q", tt.rate, got, tt.want)
		}
	}
}

func TestWindow(t *testing.T) {
	tests := []struct {
		w    time.Duration
		want string
	}{
		{time.Second, "second"},
		{10 * time.Second, "10 seconds"},
		{time.Minute, "minute"},
		{90 * time.Second, "90 seconds"},
		{2 * time.Hour, "2 hours"},
		{24 * time.Hour, "day"},
		{1500 * time.Millisecond, "1.5 seconds"},
		{time.Millisecond, "0.001 seconds"},
	}
	for _, tt := range tests {
		if got := apidocs.Window(tt.w); got != tt.want {
			t.Errorf("Window(%s) = %q, want %q", tt.w, got, tt.want)
		}
	}
}
