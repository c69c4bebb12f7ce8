package accesslog

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// refPattern is Pattern as its doc states the rules, written plainly:
// the segments split at '/', the path ended at '?' or '#', each
// segment's bytes counted by kind and an id told by those counts. The
// tests compare Pattern with it.
func refPattern(target []byte) []byte {
	for _, scheme := range []string{"http://", "https://"} {
		if len(target) > 8 && len(target) > len(scheme) && bytes.EqualFold(target[:len(scheme)], []byte(scheme)) {
			if s := bytes.IndexByte(target[len(scheme):], '/'); s >= 0 {
				target = target[len(scheme)+s:]
			} else {
				target = []byte("/")
			}
			break
		}
	}
	if e := bytes.IndexAny(target, "?#"); e >= 0 {
		target = target[:e]
	}
	if len(target) == 0 {
		return []byte("/")
	}
	segs := bytes.Split(target, []byte("/"))
	for i, seg := range segs {
		if refIsID(seg) {
			segs[i] = []byte(IDSegment)
		}
	}
	return bytes.Join(segs, []byte("/"))
}

func refIsID(seg []byte) bool {
	var digits, hex, letters, seps int
	for _, c := range seg {
		switch {
		case '0' <= c && c <= '9':
			digits++
		case 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F':
			hex++
		case 'g' <= c && c <= 'z' || 'G' <= c && c <= 'Z':
			letters++
		case c == '-' || c == '.' || c == ':' || c == '_':
			seps++
		case c == '~' || c == '+' || c == '=':
		default:
			return false
		}
	}
	size := len(seg)
	switch {
	case size == 0:
		return false
	case digits > 0 && digits+seps == size && seg[0] != '.' && seps < digits:
		return true
	case size == 36 && refIsUUID(seg):
		return true
	case digits+hex == size && (size >= 16 || size >= 8 && digits > 0 && hex > 0):
		return true
	case size >= 16 && digits > 0 && hex+letters > 0:
		return true
	}
	return false
}

// refIsUUID reports whether seg is 8-4-4-4-12 hex digits between dashes.
func refIsUUID(seg []byte) bool {
	for i, c := range seg {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return len(seg) == 36
}

// TestPatternAsReference compares Pattern with refPattern on a million
// random paths: segments drawn from the alphabets each rule looks at
// (digits and separators, hex digits, hex letters alone, tokens, UUIDs),
// at the lengths where the rules change (7, 8, 15, 16, 36), and from
// every byte that decides a rule.
func TestPatternAsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabets := []string{
		"0123456789", "0123456789-.:_", "abcdefABCDEF", "0123456789abcdef", "0123456789abcdefABCDEF-",
		"0123456789abcdefghijklmnopqrstuvwxyzXYZ-_.~+=", "0123456789abcdefABCxyzXYZ-.:_~+=?#% é",
	}
	lengths := []int{1, 2, 7, 8, 9, 15, 16, 17, 36}
	buf := make([]byte, 0, 256)
	for range 1_000_000 {
		var in []byte
		if rng.IntN(4) > 0 {
			in = append(in, '/')
		}
		for k := range 1 + rng.IntN(3) {
			if k > 0 {
				in = append(in, '/')
			}
			a := alphabets[rng.IntN(len(alphabets))]
			n := lengths[rng.IntN(len(lengths))]
			if rng.IntN(8) == 0 {
				// A UUID's shape, its dashes in place, of hex digits (now
				// and then a letter past f), or of hex letters alone, which
				// only the UUID rule makes an id.
				u := []string{"0123456789abcdefABCDEFg", "abcdefABCDEF"}[rng.IntN(2)]
				for i := range 36 {
					if i == 8 || i == 13 || i == 18 || i == 23 {
						in = append(in, '-')
					} else {
						in = append(in, u[rng.IntN(len(u))])
					}
				}
				continue
			}
			for range n {
				in = append(in, a[rng.IntN(len(a))])
			}
		}
		if got, want := Pattern(buf[:0], in), refPattern(in); !bytes.Equal(got, want) {
			t.Fatalf("Pattern(%q) = %q, the rules give %q", in, got, want)
		}
	}
}

// FuzzPattern compares Pattern with refPattern on any path.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"/v1/orders/123", "/v1/users/6ba7b810-9dad-11d1-80b4-00c04fd430c8/keys", "/commits/a1b2c3d4",
		"/customers/cus_9s6XKzkNRiz8i3", "/reports/2024-01-02", "https://api.example.com/v1/orders/42?x", "/1.2.3", "/.5", "/1-2-", "//", "?"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if got, want := Pattern(nil, in), refPattern(in); !bytes.Equal(got, want) {
			t.Fatalf("Pattern(%q) = %q, the rules give %q", in, got, want)
		}
	})
}

// BenchmarkPattern collapses a mix of request targets like the ones
// BenchmarkMeasureVsAwk's log holds: numeric ids, a query string, a UUID,
// two ids in one path, and a path with none.
//
//	go test -run '^$' -bench Pattern -count 5 ./accesslog
func BenchmarkPattern(b *testing.B) {
	targets := [][]byte{
		[]byte("/v1/orders/482913"),
		[]byte("/v1/orders"),
		[]byte("/v1/search?q=item731&page=2"),
		[]byte("/v1/users/6ba7b810-9dad-11d1-80b4-00c04fd43912/keys"),
		[]byte("/v1/orders/771022/items/13"),
		[]byte("/v1/orders/90311"),
		[]byte("/v2/very-long-resource-name"),
		[]byte("/customers/cus_9s6XKzkNRiz8i3/invoices"),
	}
	b.ReportAllocs()
	buf := make([]byte, 0, 256)
	for b.Loop() {
		for _, t := range targets {
			buf = Pattern(buf[:0], t)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(targets)), "ns/target")
}
