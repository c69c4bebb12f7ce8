package policy

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/calc"
)

// randomDesign draws a design the way the designer's form can produce one:
// any field may be left out, numbers have a few decimals, and some values
// are out of range (the round trip must keep them too).
func randomDesign(r *rand.Rand) calc.Input {
	maybe := func() bool { return r.IntN(2) == 0 }
	dec := func(lo, hi float64, places int) float64 {
		x := lo + r.Float64()*(hi-lo)
		scale := 1.0
		for range places {
			scale *= 10
		}
		return float64(int64(x*scale)) / scale
	}
	fptr := func(x float64) *float64 { return &x }
	in := calc.Input{Capacity: dec(0, 1e5, 3)}
	if maybe() {
		in.Headroom = fptr(dec(0, 0.95, 2))
	}
	if maybe() {
		in.Clients = r.IntN(10000)
	}
	for i := range r.IntN(4) {
		t := calc.TierInput{Name: []string{"anonymous", "free", "paid", "partner: \"gold\"", "#1", "yes", "", "12"}[r.IntN(8)] + strings.Repeat("x", i), Clients: r.IntN(1000)}
		if maybe() {
			t.Multiplier = dec(0.001, 100, 3)
		}
		in.Tiers = append(in.Tiers, t)
	}
	if maybe() {
		in.P50 = dec(0, 10, 2)
		in.P95 = in.P50 + dec(0, 10, 2)
		in.P99 = in.P95 + dec(0, 10, 2)
	}
	in.PercentileUnit = []calc.PercentileUnit{"", calc.PerSecond, calc.PerMinute}[r.IntN(3)]
	if maybe() {
		in.Margin = dec(0.1, 10, 1)
	}
	if maybe() {
		in.Peak, in.PeakSeconds = dec(1, 1000, 2), dec(0.001, 60, 3)
	}
	if maybe() {
		in.Window = dec(0.001, 86400, 3)
	}
	if maybe() {
		in.MaxDelay = fptr(dec(0, 10, 3))
	}
	if maybe() {
		in.Replicas = r.IntN(20)
	}
	in.Enforcement = []calc.Enforcement{"", calc.Shared, calc.Local}[r.IntN(3)]
	for i := range r.IntN(4) {
		// Unique routes: a route given twice is invalid in calc and in the policy.
		e := calc.Endpoint{Method: []string{"GET", "POST", "delete"}[r.IntN(3)], Path: []string{"/v1/reports", "/v1/orders/{id}", "/a b", "/ü"}[r.IntN(4)] + strings.Repeat("/x", i)}
		if maybe() {
			e.Cost = int64(r.IntN(50))
		}
		in.Endpoints = append(in.Endpoints, e)
	}
	if maybe() {
		in.Retry = calc.Retry{Base: dec(0.001, 10, 3), Factor: dec(1, 10, 1), Cap: dec(10, 100, 3), Attempts: r.IntN(10)}
		if maybe() {
			in.Retry.Jitter = fptr(dec(0, 1, 2))
		}
		in.Retry.JitterMode = []string{"", "proportional", "full", "equal", "decorrelated"}[r.IntN(5)]
	}
	return in
}

// encode is Encode into bytes.
func encode(t *testing.T, p Policy) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// decodeShape is Decode without the value checks, for designs that are
// out of range on purpose.
func decodeShape(t *testing.T, data []byte) Policy {
	t.Helper()
	p, err := decodeOnly(data)
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, data)
	}
	return p
}

// TestRoundTrip: design → YAML → design is lossless, and the encoder's own
// output is stable: YAML → design → YAML gives the same bytes.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	valid := 0
	for i := range 300 {
		in := randomDesign(r)
		y1 := encode(t, FromDesign(in))
		p := decodeShape(t, y1)
		if got := p.Design(); !reflect.DeepEqual(got, in) {
			t.Fatalf("design %d: round trip:\n got %s\nwant %s\n%s", i, js(got), js(in), y1)
		}
		if y2 := encode(t, FromDesign(p.Design())); !bytes.Equal(y1, y2) {
			t.Fatalf("design %d: not stable:\n%s\n---\n%s", i, y1, y2)
		}
		if in.Validate() == nil {
			valid++
			if _, err := Decode(bytes.NewReader(y1)); err != nil {
				t.Fatalf("design %d: a valid design's policy does not decode: %v\n%s", i, err, y1)
			}
		}
	}
	if valid < 30 {
		t.Errorf("only %d of 300 random designs are valid; the generator should exercise Decode's checks more", valid)
	}
}

// TestExamples: every example policy decodes cleanly and re-encodes to a
// document that decodes to the same policy.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("testdata/examples/*.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("want at least 3 examples, got %v (%v)", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			y := encode(t, p)
			q, err := Decode(bytes.NewReader(y))
			if err != nil {
				t.Fatalf("decode of the encoding: %v\n%s", err, y)
			}
			if !bytes.Equal(encode(t, q), y) {
				t.Errorf("encoding not stable:\n%s", y)
			}
			p.pos, q.pos = nil, nil
			if !reflect.DeepEqual(p, q) {
				t.Errorf("policy changed through Encode:\n got %+v\nwant %+v", q, p)
			}
		})
	}
}

// js formats v for a failure message.
func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
