package server

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// The simulate answer's decisions, written by hand.
//
// A million decisions are five numbers each; through segmentio/encoding's
// Append (reflection over the struct, strconv's shortest-float search for
// every number) they cost about twice algorithms.Simulate on the same
// arrivals. Each of those numbers but remaining is a duration in seconds,
// a whole number of nanoseconds, and appendSeconds writes it from the
// integer: the decimal of d/1e9 is the shortest text that reads back as
// the float encoding/json would format whenever that float is the one
// nearest d/1e9 and the decimal has at most 15 significant digits (two
// decimals of at most 15 digits never read back as the same float, so no
// shorter one exists). Anything else takes encoding/json's own path, so
// the bytes are encoding/json's in every case (TestDecisionJSONAsEncodingJSON).

// appendJSON appends d as encoding/json, without HTML escaping, writes
// Decision's exported fields.
func (d *Decision) appendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, `{"allowed":`...)
	b = strconv.AppendBool(b, d.Allowed)
	b = append(b, `,"delay":`...)
	if b, err = appendSeconds(b, d.delay, d.Delay); err != nil {
		return b, err
	}
	b = append(b, `,"remaining":`...)
	b = strconv.AppendInt(b, d.Remaining, 10)
	b = append(b, `,"retry_after":`...)
	if b, err = appendSeconds(b, d.retryAfter, d.RetryAfter); err != nil {
		return b, err
	}
	b = append(b, `,"reset":`...)
	if b, err = appendSeconds(b, d.reset, d.Reset); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// newDecisionJSON is the answer's element for one decision: the seconds
// as encoding/json reads them, and the durations they came from.
func newDecisionJSON(allowed bool, delay time.Duration, remaining int64, retryAfter, reset time.Duration) Decision {
	return Decision{
		Allowed: allowed, Delay: toSeconds(delay), Remaining: remaining, RetryAfter: retrySeconds(retryAfter), Reset: toSeconds(reset),
		delay: delay, retryAfter: retryAfter, reset: reset,
	}
}

// exactSeconds bounds the durations appendSeconds writes from the
// integer: from 1 µs (below it encoding/json writes an exponent) to just
// under 10^15 ns (15 significant digits, about 11.6 days).
const (
	exactSecondsMin = time.Microsecond
	exactSecondsMax = 1e15
)

// appendSeconds appends f, the seconds of d as the answer carries them,
// as encoding/json formats a float64.
func appendSeconds(b []byte, d time.Duration, f float64) ([]byte, error) {
	if d == 0 && f == 0 {
		return append(b, '0'), nil
	}
	if d < exactSecondsMin || d >= exactSecondsMax || f != float64(d)/1e9 {
		return appendJSONFloat(b, f)
	}
	b = strconv.AppendInt(b, int64(d/time.Second), 10)
	ns := int64(d % time.Second)
	if ns == 0 {
		return b, nil
	}
	var digits [9]byte
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = byte('0' + ns%10)
		ns /= 10
	}
	n := len(digits)
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...), nil
}

// appendJSONFloat appends f as encoding/json writes a float64: the
// shortest decimal that reads back as f, with an exponent below 1e-6 and
// from 1e21 (e-07 written e-7); NaN and infinities are errors.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
