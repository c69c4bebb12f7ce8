package algorithms

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Name is an algorithm's name as the API, the policy file and the UI spell it.
type Name string

// The six algorithms.
const (
	NameTokenBucket   Name = "token_bucket"
	NameGCRA          Name = "gcra"
	NameLeakyBucket   Name = "leaky_bucket"
	NameFixedWindow   Name = "fixed_window"
	NameSlidingLog    Name = "sliding_log"
	NameSlidingWindow Name = "sliding_window"
)

// Names lists every algorithm in the order the UI shows them.
var Names = []Name{NameTokenBucket, NameGCRA, NameLeakyBucket, NameFixedWindow, NameSlidingLog, NameSlidingWindow}

// Limits on parameters. They keep every derived duration inside int64
// nanoseconds and every count inside int64, so no arithmetic overflows.
const (
	MinRate   = 1e-6 // requests per second: one per 11.6 days
	MaxRate   = 1e9  // requests per second: one per nanosecond
	MaxCount  = 1e9  // largest burst, queue or window limit
	MinWindow = time.Millisecond
	MaxWindow = 366 * 24 * time.Hour
	// MaxRefill bounds burst/rate (and queue/rate): the time a rested
	// limiter takes to go from empty to full.
	MaxRefill = 100 * 365 * 24 * time.Hour
)

// Spec names an algorithm and its parameters. Which fields matter depends on
// the algorithm:
//
//	token_bucket, gcra   Rate (requests per second), Burst (requests)
//	leaky_bucket         Rate (requests per second drained), Queue (requests that may wait)
//	fixed_window, sliding_log, sliding_window
//	                     Limit (requests per window), Window
//
// Fields an algorithm does not use must be zero.
type Spec struct {
	Algorithm Name
	Rate      float64
	Burst     int64
	Queue     int64
	Limit     int64
	Window    time.Duration
}

// ParamError is a parameter outside its allowed range. Its message names the
// field, the value and the range, so a user can fix it without reading code.
type ParamError struct {
	Field string // the parameter's name as users spell it: "rate", "burst", "window"…
	Value string // the offending value, formatted
	Want  string // the allowed range or values
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s: %s is out of range; want %s", e.Field, e.Value, e.Want)
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Validate reports the first parameter of s outside its range.
func (s Spec) Validate() error {
	checkRate := func() error {
		if math.IsNaN(s.Rate) || s.Rate < MinRate || s.Rate > MaxRate {
			return &ParamError{"rate", formatFloat(s.Rate), "a number of requests per second in [1e-06, 1e+09]"}
		}
		return nil
	}
	checkCount := func(field string, v, lo int64) error {
		if v < lo || v > MaxCount {
			return &ParamError{field, strconv.FormatInt(v, 10), fmt.Sprintf("a whole number in [%d, 1000000000]", lo)}
		}
		return nil
	}
	checkUnused := func(fields ...string) error {
		for _, f := range fields {
			var set bool
			var value string
			switch f {
			case "rate":
				set, value = s.Rate != 0, formatFloat(s.Rate)
			case "burst":
				set, value = s.Burst != 0, strconv.FormatInt(s.Burst, 10)
			case "queue":
				set, value = s.Queue != 0, strconv.FormatInt(s.Queue, 10)
			case "limit":
				set, value = s.Limit != 0, strconv.FormatInt(s.Limit, 10)
			case "window":
				set, value = s.Window != 0, s.Window.String()
			}
			if set {
				return &ParamError{f, value, fmt.Sprintf("0 (%s is not a parameter of %s)", f, s.Algorithm)}
			}
		}
		return nil
	}
	// checkRefill checks that n units (value plus what the algorithm adds)
	// refill within MaxRefill; the error shows value as the user gave it.
	checkRefill := func(field string, value, n int64) error {
		if float64(n)/s.Rate*1e9 > float64(MaxRefill) {
			units := field
			if n != value {
				units = fmt.Sprintf("(%s+%d)", field, n-value)
			}
			return &ParamError{field, strconv.FormatInt(value, 10),
				fmt.Sprintf("at most rate × 100 years (%s/rate = %s s is longer)", units, formatFloat(float64(n)/s.Rate))}
		}
		return nil
	}
	switch s.Algorithm {
	case NameTokenBucket, NameGCRA:
		if err := checkRate(); err != nil {
			return err
		}
		if err := checkCount("burst", s.Burst, 1); err != nil {
			return err
		}
		if err := checkRefill("burst", s.Burst, s.Burst); err != nil {
			return err
		}
		return checkUnused("queue", "limit", "window")
	case NameLeakyBucket:
		if err := checkRate(); err != nil {
			return err
		}
		if err := checkCount("queue", s.Queue, 0); err != nil {
			return err
		}
		if err := checkRefill("queue", s.Queue, s.Queue+1); err != nil {
			return err
		}
		return checkUnused("burst", "limit", "window")
	case NameFixedWindow, NameSlidingLog, NameSlidingWindow:
		if err := checkCount("limit", s.Limit, 1); err != nil {
			return err
		}
		if s.Window < MinWindow || s.Window > MaxWindow {
			return &ParamError{"window", s.Window.String(), "a duration in [1ms, 8784h0m0s]"}
		}
		return checkUnused("rate", "burst", "queue")
	default:
		return &ParamError{"algorithm", strconv.Quote(string(s.Algorithm)),
			"one of token_bucket, gcra, leaky_bucket, fixed_window, sliding_log, sliding_window"}
	}
}

// New returns a limiter for s, or the error of s.Validate.
func New(s Spec) (Limiter, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	switch s.Algorithm {
	case NameTokenBucket:
		return newTokenBucket(s.Rate, s.Burst), nil
	case NameGCRA:
		return newGCRA(s.Rate, s.Burst), nil
	case NameLeakyBucket:
		return newLeakyBucket(s.Rate, s.Queue), nil
	case NameFixedWindow:
		return newFixedWindow(s.Limit, s.Window), nil
	case NameSlidingLog:
		return newSlidingLog(s.Limit, s.Window), nil
	default:
		return newSlidingWindow(s.Limit, s.Window), nil
	}
}

// Capacity is the largest cost a single request may have and still pass
// from a rested state: the burst for token_bucket and gcra, queue+1 for
// leaky_bucket (one served at once, queue waiting), the limit for windows.
func (s Spec) Capacity() int64 {
	switch s.Algorithm {
	case NameTokenBucket, NameGCRA:
		return s.Burst
	case NameLeakyBucket:
		return s.Queue + 1
	default:
		return s.Limit
	}
}

// String formats s the way the UI labels a series: "gcra(rate=10/s, burst=20)".
func (s Spec) String() string {
	switch s.Algorithm {
	case NameTokenBucket, NameGCRA:
		return fmt.Sprintf("%s(rate=%s/s, burst=%d)", s.Algorithm, formatFloat(s.Rate), s.Burst)
	case NameLeakyBucket:
		return fmt.Sprintf("%s(rate=%s/s, queue=%d)", s.Algorithm, formatFloat(s.Rate), s.Queue)
	default:
		return fmt.Sprintf("%s(limit=%d, window=%s)", s.Algorithm, s.Limit, s.Window)
	}
}
