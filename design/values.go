package design

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of the query format. A row index is at most MaxRowIndex, so a
// hostile URL cannot make the form render thousands of rows; a value is at
// most maxValueLen bytes (an endpoint path may have 1024) unless its field
// allows more (a description may have 4096 characters).
const (
	MaxRowIndex = 99
	maxValueLen = 2048
)

// maxWhole bounds whole numbers before the ranges of calc, algorithms and
// policy apply: anything larger is out of every range and might not fit
// an int.
const maxWhole = 1e15

// maxSeconds bounds a duration before conversion to time.Duration (which
// holds about 292 years); every range that applies is far tighter.
const maxSeconds = 1e9

// quote shows a value in a message, shortened if long.
func quote(v string) string {
	if utf8.RuneCountInString(v) > 40 {
		r := []rune(v)
		v = string(r[:40]) + "…"
	}
	return strconv.Quote(v)
}

// parseNumber reads a finite number.
func parseNumber(v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%s is out of range; want a number of ordinary size", quote(v))
	case err != nil:
		return 0, fmt.Errorf("%s is not a number", quote(v))
	case math.IsNaN(x) || math.IsInf(x, 0):
		return 0, fmt.Errorf("%s is not a finite number", quote(v))
	}
	return x, nil
}

// parseWhole reads a whole number: 1000, 1e3 and 1000.0 all count.
func parseWhole(v string) (int64, error) {
	x, err := parseNumber(v)
	if err != nil {
		return 0, err
	}
	if x != math.Trunc(x) {
		return 0, fmt.Errorf("%s is not a whole number", quote(v))
	}
	if math.Abs(x) > maxWhole {
		return 0, fmt.Errorf("%s is out of range; want a whole number up to %g", quote(v), maxWhole)
	}
	return int64(x), nil
}

// parseSeconds reads a duration given in seconds. A plain decimal with at
// most nine decimals ("60", "0.25", "1.000000001") is read exactly; other
// spellings ("1e3", more decimals) are rounded to the nanosecond.
func parseSeconds(v string) (time.Duration, error) {
	if d, ok := exactSeconds(v); ok {
		return d, nil
	}
	x, err := parseNumber(v)
	if err != nil {
		return 0, err
	}
	if math.Abs(x) > maxSeconds {
		return 0, fmt.Errorf("%s seconds is out of range; want at most %g", quote(v), maxSeconds)
	}
	return time.Duration(math.Round(x * 1e9)), nil
}

// exactSeconds reads [-]digits[.digits] with at most nine decimals and at
// most nine whole digits exactly, without going through a float.
func exactSeconds(v string) (time.Duration, bool) {
	neg := strings.HasPrefix(v, "-")
	v = strings.TrimPrefix(v, "-")
	whole, frac, _ := strings.Cut(v, ".")
	if whole == "" || len(whole) > 9 || len(frac) > 9 || !digits(whole) || !digits(frac) {
		return 0, false
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	}
	d := time.Duration(w*1e9 + f)
	if neg {
		d = -d
	}
	return d, true
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseBool reads true or false (and the spellings strconv.ParseBool
// takes: 1, 0, t, f…).
func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s is not true or false", quote(v))
	}
	return b, nil
}

// parseEnum checks that v is one of options.
func parseEnum(v string, options []string) error {
	if !slices.Contains(options, v) {
		return fmt.Errorf("%s is not one of %s", quote(v), strings.Join(options, ", "))
	}
	return nil
}

// parseText checks that v is UTF-8, as a policy file must be.
func parseText(v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s is not UTF-8 text; a policy file holds only UTF-8", quote(v))
	}
	return nil
}

// formatNumber writes x so that parseNumber reads it back exactly: plain
// decimals for ordinary sizes, exponent form for the very large and small.
func formatNumber(x float64) string {
	if a := math.Abs(x); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// formatSeconds writes d in seconds, exactly: 60, 0.25, 0.000000001.
func formatSeconds(d time.Duration) string {
	sign := ""
	u := uint64(d)
	if d < 0 {
		sign, u = "-", uint64(-d)
	}
	s := sign + strconv.FormatUint(u/1e9, 10)
	if frac := u % 1e9; frac != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%09d", frac), "0")
	}
	return s
}

// ceil is ⌈x⌉ forgiving a rounding error of a few ulps, as calc rounds.
func ceil(x float64) float64 { return math.Ceil(x - 1e-9*math.Max(1, math.Abs(x))) }

// secondsDuration converts seconds to a Duration, to the nearest
// nanosecond, saturating beyond ±292 years and mapping NaN to 0.
func secondsDuration(s float64) time.Duration {
	ns := math.Round(s * 1e9)
	switch {
	case math.IsNaN(ns):
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(ns)
}
