package targets

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// FuzzRender feeds every target any policy the decoder accepts, with any
// options: rendering never panics, refuses only with an *export.Error, and
// gives the same bytes twice. Seeds are the export test policies.
func FuzzRender(f *testing.F) {
	for _, p := range exporttest.Policies(f) {
		var buf bytes.Buffer
		if err := policy.Encode(&buf, p.Policy); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), "X-Tier", "127.0.0.1:8081", "")
	}
	f.Fuzz(func(t *testing.T, doc []byte, tierHeader, upstream, gateway string) {
		p, err := policy.Decode(bytes.NewReader(doc))
		if err != nil {
			return
		}
		o := export.Options{TierHeader: tierHeader, Upstream: upstream, Gateway: gateway}
		for _, tg := range All {
			e, err := Render(tg.Name, p, o)
			if err != nil {
				var xe *export.Error
				if !errors.As(err, &xe) {
					t.Fatalf("%s: %v is not an *export.Error", tg.Name, err)
				}
				continue
			}
			again, err := Render(tg.Name, p, o)
			if err != nil || !bytes.Equal(e.Body, again.Body) {
				t.Fatalf("%s: a second render differs (err %v)", tg.Name, err)
			}
			if e.Fidelity == "" || len(e.Body) == 0 {
				t.Fatalf("%s: no fidelity or an empty file", tg.Name)
			}
		}
	})
}
