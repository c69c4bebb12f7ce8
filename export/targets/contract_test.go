package targets

import (
	"bytes"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
)

// TestEveryTargetContract holds what every export promises, for every test
// policy: the same bytes twice; a file that names the policy; a mapping
// for every limit of the policy; a reason for every mapping that is not
// exact; an export fidelity that is the worst of its mappings.
func TestEveryTargetContract(t *testing.T) {
	for _, tg := range All {
		for _, tp := range exporttest.Policies(t) {
			t.Run(tg.Name+"/"+tp.Name, func(t *testing.T) {
				a, err := Render(tg.Name, tp.Policy, export.Options{})
				if err != nil {
					t.Fatal(err)
				}
				b, _ := Render(tg.Name, tp.Policy, export.Options{})
				if !bytes.Equal(a.Body, b.Body) {
					t.Error("two renders of the same policy differ")
				}
				if !bytes.Contains(a.Body, []byte(tp.Policy.Metadata.Name)) {
					t.Errorf("the file does not name the policy %q", tp.Policy.Metadata.Name)
				}
				fields := map[string]bool{}
				worst := export.Exact
				for _, m := range a.Mappings {
					fields[m.Field] = true
					worst = export.Worst(worst, m.Fidelity)
					if m.Fidelity != export.Exact && m.Why == "" {
						t.Errorf("%s is %s without a reason", m.Field, m.Fidelity)
					}
				}
				if a.Fidelity != worst {
					t.Errorf("fidelity %s, the worst mapping is %s", a.Fidelity, worst)
				}
				for _, l := range tp.Policy.Limits() {
					if !fields[l.Field] {
						t.Errorf("no mapping for %s", l.Field)
					}
				}
			})
		}
	}
}
