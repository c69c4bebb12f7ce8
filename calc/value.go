package calc

import (
	"math"
	"strconv"
	"strings"
)

// Unit names the unit of a Value.
type Unit string

// Units of the calculator's outputs. Rates are per second unless a unit says
// otherwise; durations are seconds.
const (
	UnitPerSecond Unit = "requests/s"
	UnitPerMinute Unit = "requests/min"
	UnitRequests  Unit = "requests"
	UnitSeconds   Unit = "s"
	UnitFraction  Unit = "fraction"
	UnitRatio     Unit = "ratio"
)

// Units are the units of the calculator's outputs.
var Units = []Unit{UnitPerSecond, UnitPerMinute, UnitRequests, UnitSeconds, UnitFraction, UnitRatio}

// Value is one number the calculator outputs, with its unit and the
// one-line reason a user reads, the actual numbers substituted:
// "burst = (300 − 100) × 2 = 400".
type Value struct {
	Value float64 `json:"value"`
	Unit  Unit    `json:"unit"`
	// One line a user reads, with the numbers substituted.
	Reason string `json:"reason"`
}

// epsilon is the relative tolerance of ceil and floor on derived numbers:
// 100/60 × 60 is 100.00000000000001 in float64 and must stay 100.
const epsilon = 1e-9

// ceil rounds x up to a whole number, ignoring float noise.
func ceil(x float64) float64 { return math.Ceil(x - epsilon*math.Max(1, math.Abs(x))) }

// floor rounds x down to a whole number, ignoring float noise.
func floor(x float64) float64 { return math.Floor(x + epsilon*math.Max(1, math.Abs(x))) }

// count converts a whole non-negative number to int64, saturating just above
// algorithms.MaxCount so that an out-of-range size fails validation instead
// of wrapping.
func count(x float64) int64 {
	const over = 1e9 + 1
	switch {
	case !(x > 0):
		return 0
	case x >= over:
		return over
	}
	return int64(x)
}

// num formats x for a reason or an error: whole numbers exactly, others to
// four significant digits, without trailing zeros.
func num(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return strconv.FormatFloat(x, 'g', -1, 64)
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case math.Abs(x) < 1e-4 || math.Abs(x) >= 1e15:
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	decimals := 3 - int(math.Floor(math.Log10(math.Abs(x))))
	decimals = max(0, min(decimals, 8))
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// perSec formats a rate: "100/s".
func perSec(r float64) string { return num(r) + "/s" }

// perMin formats a rate given per second as per minute: "120/min".
func perMin(r float64) string { return num(r*60) + "/min" }

// secs formats a duration in seconds: "2.5 s".
func secs(s float64) string { return num(s) + " s" }

// publishSeconds is a wait as Retry-After publishes it (RFC 9110
// delay-seconds): whole seconds, rounded up, and never 0 for a rejection.
func publishSeconds(wait float64) float64 { return math.Max(1, ceil(wait)) }
