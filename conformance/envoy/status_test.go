package envoy

import (
	"fmt"
	"strings"
	"testing"

	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/ratelab/ratelab/export"
	envoyexport "github.com/ratelab/ratelab/export/envoy"
	"github.com/ratelab/ratelab/export/exporttest"
)

// TestStatusNames: export/envoy keeps its own table of Envoy's StatusCode
// names (so the server does not link the protobuf runtime). For every
// status a policy may set (400–599), the envoy-local export writes
// Envoy's enum name for it, name for name, which Envoy reads back as that
// status; a status Envoy has no name for is sent as 429 and the mapping
// says so, so the table has nothing else.
func TestStatusNames(t *testing.T) {
	n := 0
	for code := 400; code <= 599; code++ {
		p := exporttest.Named(t, "minimal")
		p.Defaults.Response.Status = code
		ex, err := envoyexport.Local.Render(p, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := parseLocal(t, ex.Body)
		m := mappingOf(t, ex, "defaults.response")
		name, ok := typev3.StatusCode_name[int32(code)]
		got := int(c.lrl.GetStatus().GetCode())
		unnamed := fmt.Sprintf("Envoy's StatusCode enum has no %d; 429 is sent", code)
		if ok {
			n++
			if got != code || !strings.Contains(m.To, "status {code: "+name+"}") || strings.Contains(m.Why, unnamed) {
				t.Errorf("%d: Envoy reads status %d; the mapping says %q (%s), Envoy's name is %s", code, got, m.To, m.Why, name)
			}
		} else if got != 429 || m.Fidelity == export.Exact || !strings.Contains(m.Why, unnamed) {
			t.Errorf("%d, which Envoy has no name for: Envoy reads status %d; the mapping is %s, %q", code, got, m.Fidelity, m.Why)
		}
	}
	if n == 0 {
		t.Error("Envoy names no status in 400–599")
	}
}
