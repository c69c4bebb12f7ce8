package views

import (
	"fmt"
	"math"
	"time"

	"github.com/ratelab/ratelab/algorithms"
)

// durationUnits are the units Duration writes, largest first.
var durationUnits = []struct {
	size time.Duration
	name string
}{
	{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "min"}, {time.Second, "s"},
	{time.Millisecond, "ms"}, {time.Microsecond, "µs"}, {time.Nanosecond, "ns"},
}

// Duration formats d as people write it: "60 s", "1.5 min", "500 ms",
// "2 h". Above a second it takes the largest unit that d fills more than
// once and writes with at most two decimals ("90 s" is "1.5 min", "100 s"
// stays "100 s", one minute is "60 s", one hour "60 min", one day "24 h");
// below a second, milliseconds and smaller, rounded to two decimals. Every
// page and chart formats durations with it, never with time.Duration's
// String ("1m0s").
func Duration(d time.Duration) string {
	if d < 0 {
		return "−" + Duration(-d)
	}
	if d == 0 {
		return "0 s"
	}
	for _, u := range durationUnits {
		if d < u.size || (u.size > time.Second && (d == u.size || d%(u.size/100) != 0)) {
			continue
		}
		return Num(math.Round(float64(d)/float64(u.size)*100)/100) + " " + u.name
	}
	return Num(float64(d)) + " ns"
}

// SecondsText formats a number of seconds as Duration does.
func SecondsText(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) || math.Abs(s) > math.MaxInt64/1e9 {
		return Num(s) + " s"
	}
	return Duration(time.Duration(math.Round(s * 1e9)))
}

// SpecLabel is s as the page and the charts label a limit: Spec.String
// with the window written as Duration writes it, as in
// "fixed_window(limit=100, window=60 s)". Spec.String stays the spelling
// of the JSON API, the exports and the reports, which tools read.
func SpecLabel(s algorithms.Spec) string {
	switch s.Algorithm {
	case algorithms.NameFixedWindow, algorithms.NameSlidingLog, algorithms.NameSlidingWindow:
		return fmt.Sprintf("%s(limit=%d, window=%s)", s.Algorithm, s.Limit, Duration(s.Window))
	}
	return s.String()
}
