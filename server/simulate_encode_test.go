package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
)

// TestDecisionJSONAsEncodingJSON compares appendJSON with encoding/json's
// Marshal of the same decision, byte for byte: durations at the edges of
// the integer path (1 µs, 10^15 ns, whole seconds, one nanosecond off),
// below and above it, negative ones, the never-passes retry, and a
// million random ones spread over every magnitude.
func TestDecisionJSONAsEncodingJSON(t *testing.T) {
	edges := []time.Duration{
		0, 1, 9, 10, 999, 1000, 1001, 1999, 10_000, 123_456, 999_999_999, time.Second, time.Second + 1,
		1500 * time.Millisecond, 3 * time.Second, time.Minute, 59*time.Second + 999_999_999,
		exactSecondsMax - 1, exactSecondsMax, exactSecondsMax + 1, math.MaxInt64 - 1, algorithms.Never,
		-1, -1000, -time.Second, math.MinInt64,
	}
	check := func(allowed bool, delay time.Duration, remaining int64, retry, reset time.Duration) {
		t.Helper()
		d := newDecisionJSON(allowed, delay, remaining, retry, reset)
		want, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.appendJSON([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "prefix"+string(want) {
			t.Fatalf("delay %d, retry %d, reset %d:\n got %s\nwant prefix%s", delay, retry, reset, got, want)
		}
	}
	for _, a := range edges {
		for _, b := range edges {
			check(a%2 == 0, a, int64(b), b, a)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 1_000_000 {
		// A magnitude from 1 ns to 2^62 ns, then any value below it.
		d := func() time.Duration { return time.Duration(rng.Int64N(int64(1) << rng.IntN(63))) }
		check(rng.IntN(2) == 0, d(), rng.Int64N(1000)-1, d(), d())
	}
}

// TestAppendJSONFloatRefusesWhatEncodingJSONRefuses: NaN and the
// infinities are errors, as Marshal's.
func TestAppendJSONFloatRefusesWhatEncodingJSONRefuses(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := json.Marshal(f); err == nil {
			t.Fatalf("encoding/json wrote %v", f)
		}
		if b, err := appendJSONFloat(nil, f); err == nil {
			t.Errorf("appendJSONFloat(%v) = %q, want an error", f, b)
		}
	}
}

// TestBigAnswersPickTheirCoding: a big answer goes gzip (fast) to a
// client that accepts gzip, whatever else it accepts; to one that does
// not, and for a small answer, the compress middleware picks the coding.
func TestBigAnswersPickTheirCoding(t *testing.T) {
	body := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"limiter": {"algorithm": "gcra", "rate": 5, "burst": 10}, "arrivals": [`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"at": %d.25, "key": "k%d"}`, i/10, i%10)
		}
		b.WriteString(`]}`)
		return b.String()
	}
	big, small := body(bigAnswer), body(10)
	for _, tt := range []struct {
		body, accept, want string
	}{
		{big, "gzip, deflate, br, zstd", "gzip"},
		{big, "br;q=1, gzip;q=0.5", "gzip"},
		{big, "gzip", "gzip"},
		{big, "zstd, br", "br"}, // the stream's fast brotli (below)
		{big, "gzip;q=0", ""},
		{big, "identity", ""},
		{small, "gzip, br", "br"},
		{small, "gzip", "gzip"},
	} {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/simulate", strings.NewReader(tt.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept-Encoding", tt.accept)
		rec := httptest.NewRecorder()
		newServer(config{}).ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("Accept-Encoding %q: status %d: %.200s", tt.accept, rec.Code, rec.Body)
		}
		if got := rec.Header().Get("Content-Encoding"); got != tt.want {
			t.Errorf("%d-byte body, Accept-Encoding %q: Content-Encoding %q, want %q", len(tt.body), tt.accept, got, tt.want)
		}
	}

	// A big answer to a brotli-only client is the stream's brotli at
	// quality 0 (gzip's BestSpeed peer), not the middleware's quality 5,
	// which cost twenty times as much: its size is quality 0's of the
	// identity answer written in the stream's chunks, not quality 5's.
	plain := httptest.NewRequest(http.MethodPost, "/api/v1/simulate", strings.NewReader(big))
	plain.Header.Set("Content-Type", "application/json")
	plainRec := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(plainRec, plain)
	size := func(quality int) int {
		var b bytes.Buffer
		w := brotli.NewWriterOptions(&b, brotli.WriterOptions{Quality: quality, LGWin: brotliWindow})
		raw := plainRec.Body.Bytes()
		for i := 0; i < len(raw); i += streamChunk {
			if _, err := w.Write(raw[i:min(len(raw), i+streamChunk)]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Len()
	}
	q0, q5 := size(0), size(brotliQuality)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/simulate", strings.NewReader(big))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "br")
	rec := httptest.NewRecorder()
	newServer(config{}).ServeHTTP(rec, req)
	if got := rec.Body.Len(); q0 <= q5 || 2*got < q0+q5 {
		t.Errorf("brotli answer of %d bytes: want quality 0's size (%d), not quality %d's (%d)", got, q0, brotliQuality, q5)
	}
}

// TestParseNumberAsParseFloat compares parseNumber with strconv.ParseFloat
// on numbers at the edges of its fast path (2^53, 22 decimals, 19 and 20
// digits, leading zeros, exponents, signs) and on a million random
// decimals of every length, bit for bit; and the one-pass reader of a
// time (fastBody.seconds) with number and parseNumber on the same bytes,
// followed by a '}': the same value, the same end, the same refusals.
func TestParseNumberAsParseFloat(t *testing.T) {
	check := func(text string) {
		t.Helper()
		want, werr := strconv.ParseFloat(text, 64)
		got, err := parseNumber(text)
		if (err != nil) != (werr != nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseNumber(%q) = %v, %v; ParseFloat: %v, %v", text, got, err, want, werr)
		}
		checkSeconds(t, text)
	}
	for _, text := range []string{"1.", ".5", "01", "00.5", "+1", "1.e3", "1e", "-", "0.5e+2", "5E1", "", "0x1", "1.2.3"} {
		checkSeconds(t, text)
	}
	for _, text := range []string{
		"0", "-0", "1", "0.1", "0.3", "1.5", "123.456", "0.000001", "0.0000001", "9007199254740991", "9007199254740992",
		"9007199254740993", "900719925474099.3", "0.9007199254740993", "1234567890123456789", "12345678901234567890",
		"0.0000000000000000000001", "0.00000000000000000000001", "1e3", "1.5E-3", "-2.5", "1796144127.991655",
		"86400.000000001", "0.1234567890123456789",
	} {
		check(text)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1_000_000 {
		var b []byte
		if rng.IntN(8) == 0 {
			b = append(b, '-')
		}
		b = strconv.AppendUint(b, rng.Uint64N(uint64(1)<<rng.IntN(64)), 10)
		if rng.IntN(4) != 0 {
			b = append(b, '.')
			for range 1 + rng.IntN(24) {
				b = append(b, byte('0'+rng.IntN(10)))
			}
		}
		check(string(b))
	}
}

// checkSeconds compares fastBody.seconds with number and parseNumber on
// text followed by '}'.
func checkSeconds(t *testing.T, text string) {
	t.Helper()
	f := &fastBody{buf: []byte(text + "}"), eof: true}
	got, ok := f.seconds()
	g := &fastBody{buf: []byte(text + "}"), eof: true}
	var want float64
	wtext, _, wok := g.number()
	if wok {
		var err error
		want, err = parseNumber(wtext)
		wok = err == nil
	}
	if ok != wok || ok && (math.Float64bits(got) != math.Float64bits(want) || f.pos != g.pos) {
		t.Fatalf("seconds on %q = %v, %v, ending at %d; number and parseNumber: %v, %v, ending at %d", text, got, ok, f.pos, want, wok, g.pos)
	}
}

// TestAnswerStopsWhenTheClientLeaves cancels a simulate request's context
// at the answer's first write, as the server does when the client closes
// the connection, and checks that the answer stops within a few thousand
// decisions instead of writing them all to a connection nobody reads.
func TestAnswerStopsWhenTheClientLeaves(t *testing.T) {
	const n = 100_000
	body, _ := benchSimulateBody(n, true)
	srv := newServer(config{})
	answer := func(cancelAtFirstWrite bool) int {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/v1/simulate", bytes.NewReader(body))
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		w := &cancelSink{statusSink: statusSink{header: http.Header{}}}
		if cancelAtFirstWrite {
			w.cancel = cancel
		}
		srv.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			t.Fatalf("status %d", w.code)
		}
		return w.n
	}
	full, cut := answer(false), answer(true)
	// Each decision is about 75 bytes: the whole answer is over 7 MB, and
	// one that stops within chargeEvery decisions plus a buffered chunk
	// is under 400 KB.
	if full < 70*n || cut > 400<<10 {
		t.Errorf("answer %d bytes, %d once the client left at its first write; want over %d and under %d", full, cut, 70*n, 400<<10)
	}
}

// cancelSink is a statusSink that calls cancel at its first write.
type cancelSink struct {
	statusSink
	cancel context.CancelFunc
}

func (w *cancelSink) Write(p []byte) (int, error) {
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	return w.statusSink.Write(p)
}
