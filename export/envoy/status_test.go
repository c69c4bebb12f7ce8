package envoy

import (
	"testing"

	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
)

// TestStatusNames: the local table is Envoy's StatusCode enum for every
// status a policy may set (400–599), name for name, and has nothing else.
func TestStatusNames(t *testing.T) {
	n := 0
	for code := 400; code <= 599; code++ {
		want, ok := typev3.StatusCode_name[int32(code)]
		got, has := statusNames[code]
		if ok != has || got != want {
			t.Errorf("%d: table has %q (%v), Envoy %q (%v)", code, got, has, want, ok)
		}
		if ok {
			n++
		}
	}
	if len(statusNames) != n {
		t.Errorf("table has %d names, Envoy %d in 400–599", len(statusNames), n)
	}
}
