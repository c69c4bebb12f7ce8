package accesslog

// parseTimeText parses a time field of a JSON or CSV log to Unix
// nanoseconds. It accepts:
//
//   - RFC 3339 and nginx's $time_iso8601: "2000-10-10T13:55:36Z",
//     "2000-10-10T13:55:36.123+02:00", "2000-10-10 13:55:36" (no zone is
//     UTC; a space may stand for the T; "+0200" is accepted too);
//   - the common log format's time, nginx's $time_local:
//     "10/Oct/2000:13:55:36 -0700";
//   - a Unix time, as a number or a string of digits with an optional
//     fraction (nginx's $msec is "1700000000.123"): below 1e11 it is seconds,
//     below 1e14 milliseconds, below 1e17 microseconds, else nanoseconds.
func parseTimeText(b []byte, clf *clfCache) (int64, bool) {
	switch {
	case len(b) == clfLen && b[2] == '/':
		return clf.parse(b)
	case len(b) >= 19 && b[4] == '-':
		return parseRFC3339(b)
	}
	return parseEpoch(b)
}

// parseRFC3339 parses "yyyy-mm-ddThh:mm:ss[.frac][Z|±hh:mm|±hhmm]".
func parseRFC3339(b []byte) (int64, bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	y, ok1 := four(b[0:4])
	m, ok2 := two(b[5:7])
	d, ok3 := two(b[8:10])
	hh, ok4 := two(b[11:13])
	mm, ok5 := two(b[14:16])
	ss, ok6 := two(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return 0, false
	}
	rest := b[19:]
	var nanos int64
	if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
		i, scale := 1, int64(1e8)
		for ; i < len(rest); i++ {
			v, ok := digit(rest[i])
			if !ok {
				break
			}
			nanos += v * scale
			scale /= 10
		}
		if i == 1 {
			return 0, false
		}
		rest = rest[i:]
	}
	var off int64
	switch {
	case len(rest) == 0:
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	default:
		var ok bool
		if off, ok = zoneOffset(rest, len(rest) == 6); !ok {
			return 0, false
		}
	}
	sec, ok := civil(y, m, d, hh, mm, ss, off)
	if !ok {
		return 0, false
	}
	return sec*1e9 + nanos, true
}

// parseEpoch parses digits with an optional fraction as a Unix time whose
// unit is guessed from its size (see parseTimeText).
func parseEpoch(b []byte) (int64, bool) {
	var whole int64
	i := 0
	for ; i < len(b); i++ {
		v, ok := digit(b[i])
		if !ok {
			break
		}
		if whole > (1<<62)/10 {
			return 0, false
		}
		whole = whole*10 + v
	}
	if i == 0 || i > 19 {
		return 0, false
	}
	var frac, fracScale int64 = 0, 1
	if i < len(b) && b[i] == '.' {
		j := i + 1
		for ; j < len(b); j++ {
			v, ok := digit(b[j])
			if !ok {
				break
			}
			if fracScale < 1e9 {
				frac = frac*10 + v
				fracScale *= 10
			}
		}
		i = j
	}
	if i != len(b) {
		return 0, false
	}
	// unit is nanoseconds per unit of the number.
	var unit int64
	switch {
	case whole < 1e11:
		unit = 1e9
	case whole < 1e14:
		unit = 1e6
	case whole < 1e17:
		unit = 1e3
	default:
		unit = 1
	}
	if whole > (maxUnixSec*1e9)/unit {
		return 0, false
	}
	return whole*unit + frac*unit/fracScale, true
}

// maxUnixSec is the start of year maxYear+1, the bound parseEpoch keeps to,
// as civil does.
var maxUnixSec = daysFromCivil(maxYear+1, 1, 1) * 86400
