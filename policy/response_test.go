package policy

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/calc"
)

func TestResponseDefaults(t *testing.T) {
	var zero Response
	if zero.Code() != 429 || len(zero.Styles()) != 1 || zero.Styles()[0] != HeadersIETF || !zero.SendsRetryAfter() {
		t.Errorf("zero response: %d %v %v, want 429 [ietf] true", zero.Code(), zero.Styles(), zero.SendsRetryAfter())
	}
	set := Response{Status: 503, Headers: []HeaderStyle{}, RetryAfter: new(false)}
	if set.Code() != 503 || len(set.Styles()) != 0 || set.SendsRetryAfter() {
		t.Errorf("set response: %d %v %v, want 503 [] false", set.Code(), set.Styles(), set.SendsRetryAfter())
	}
}

func TestServiceAndModeDefaults(t *testing.T) {
	var s Service
	var d Defaults
	if s.Enforcing() != "shared" || s.StoreFailureMode() != FailOpen || d.EffectiveMode() != ModeEnforce {
		t.Errorf("zero: %q %q %q, want shared fail_open enforce", s.Enforcing(), s.StoreFailureMode(), d.EffectiveMode())
	}
	s = Service{Enforcement: "local", OnStoreFailure: FailClosed}
	d = Defaults{Mode: ModeShadow}
	if s.Enforcing() != "local" || s.StoreFailureMode() != FailClosed || d.EffectiveMode() != ModeShadow {
		t.Errorf("set: %q %q %q, want local fail_closed shadow", s.Enforcing(), s.StoreFailureMode(), d.EffectiveMode())
	}
}

func TestDecodeFile(t *testing.T) {
	const path = "testdata/examples/minimal.yaml"
	fromFile, err := DecodeFile(path, nil)
	if err != nil || fromFile.Metadata.Name != "minimal" {
		t.Fatalf("file: %v, %v", fromFile.Metadata, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fromStdin, err := DecodeFile("-", bytes.NewReader(data))
	if err != nil || fromStdin.Metadata.Name != "minimal" {
		t.Errorf("stdin: %v, %v", fromStdin.Metadata, err)
	}
	var pe *fs.PathError
	if _, err := DecodeFile("testdata/no-such.yaml", nil); !errors.As(err, &pe) {
		t.Errorf("missing file: %v, want an *fs.PathError", err)
	}
	var es Errors
	if _, err := DecodeFile("-", strings.NewReader("kind: nope\n")); !errors.As(err, &es) {
		t.Errorf("bad document: %v, want Errors", err)
	}
}

// TestFromSizedIsFromDesign: a design sized by the caller gives the same
// policy as FromDesign sizing it.
func TestFromSizedIsFromDesign(t *testing.T) {
	in := calc.Input{Capacity: 2000, P99: 5, Tiers: []calc.TierInput{{Name: "free", Clients: 180}, {Name: "paid", Clients: 20, Multiplier: 4}}}
	res, err := calc.Size(in)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := Encode(&a, FromDesign(in)); err != nil {
		t.Fatal(err)
	}
	if err := Encode(&b, FromSized(in, res)); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("FromSized differs from FromDesign:\n%s\n---\n%s", b.String(), a.String())
	}
}
