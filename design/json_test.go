package design

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestJSON: a policy as JSON is valid JSON and decodes to the same policy.
func TestJSON(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(5, 8))}
	for n := 0; n < 100; {
		p := g.policy()
		if !valid(t, p) {
			continue
		}
		n++
		var j bytes.Buffer
		if err := EncodeJSON(&j, p); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(j.Bytes()) {
			t.Fatalf("not JSON:\n%s", j.Bytes())
		}
		q, err := DecodeJSON(bytes.NewReader(j.Bytes()))
		if err != nil {
			t.Fatalf("JSON does not decode: %v\n%s", err, j.Bytes())
		}
		if a, b := encode(t, p), encode(t, q); !bytes.Equal(a, b) {
			t.Fatalf("JSON changed the policy:\n%s\n---\n%s\n%s", a, b, j.Bytes())
		}
	}
}
