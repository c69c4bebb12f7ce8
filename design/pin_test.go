package design_test

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/design"
)

// TestPinKeptWhenInputsChange: a pinned number stays when the
// measurements change, an unpinned one follows the proposal (rate =
// p99 × 2, burst = ⌈10 s of rate⌉), and only the pin gets a note.
func TestPinKeptWhenInputsChange(t *testing.T) {
	for _, tt := range []struct {
		p99              string
		rate             float64
		burst            int64
		proposal, noteOf string
	}{
		{"5", 10, 40, "100", "pinned 40, proposal 100"},
		{"10", 20, 40, "200", "pinned 40, proposal 200"},
	} {
		d := design.ParseQuery("capacity=2000&clients=200&p99=" + tt.p99 + "&limit.algorithm=gcra&limit.burst=40")
		r := d.Resolve()
		if len(r.Problems) > 0 {
			t.Fatal(r.Problems)
		}
		l := r.Limits[0]
		if l.Spec.Rate != tt.rate || l.Spec.Burst != tt.burst {
			t.Errorf("p99 %s: %v, want gcra at rate %g with the pinned burst %d", tt.p99, l.Spec, tt.rate, tt.burst)
		}
		for _, p := range l.Params {
			switch p.Name {
			case "rate":
				if p.Pinned || p.Note != "" {
					t.Errorf("p99 %s: the rate is not pinned, yet %+v", tt.p99, p)
				}
			case "burst":
				if !p.Pinned || p.Proposal != tt.proposal || !strings.HasPrefix(p.Note, tt.noteOf) {
					t.Errorf("p99 %s: burst %+v, want pinned with proposal %s and a note %q…", tt.p99, p, tt.proposal, tt.noteOf)
				}
			}
		}
	}
}
