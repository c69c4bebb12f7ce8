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
	if sec := d / time.Second; sec < 10 {
		b = append(b, byte('0'+sec))
	} else {
		b = strconv.AppendInt(b, int64(sec), 10)
	}
	ns := uint32(d % time.Second)
	if ns == 0 {
		return b, nil
	}
	// The nine decimals, two at a time: a division by a constant is a
	// multiplication, and four of them cost less than nine.
	var digits [9]byte
	digits[0] = byte('0' + ns/1e8)
	r := ns % 1e8
	for i, p := range [4]uint32{r / 1e6, r / 1e4 % 100, r / 100 % 100, r % 100} {
		digits[1+2*i], digits[2+2*i] = pairs[2*p], pairs[2*p+1]
	}
	n := len(digits)
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...), nil
}

// pairs are the two digits of 0 to 99, in turn.
const pairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

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
