package design_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/algorithms"
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

// TestUnpinned: the design without its pinned numbers keeps everything
// else, each limit's algorithm and the endpoints' limits included, and
// resolves to the calculator's proposal for them (rate = p99 × 2 = 10,
// burst = 10 s of it = 100); a design with no pinned number says so.
func TestUnpinned(t *testing.T) {
	d := design.ParseQuery("capacity=2000&p99=5&limit.algorithm=gcra&limit.burst=40&tiers.0.name=paid&tiers.0.clients=20&tiers.0.limit.rate=7&global.limit.algorithm=none&pattern=ramp")
	q, pinned := d.Unpinned()
	if !pinned {
		t.Error("a design that pins a burst and a rate: not pinned")
	}
	want := "capacity=2000&p99=5&limit.algorithm=gcra&global.limit.algorithm=none&pattern=ramp&tiers.0.name=paid&tiers.0.clients=20"
	if !sameParams(t, q, want) {
		t.Errorf("unpinned: %s\nwant the same parameters as %s", q, want)
	}
	r := resolved(t, q)
	def := r.Limits[0]
	if def.Spec.Algorithm != "gcra" || def.Spec.Rate != 10 || def.Spec.Burst != 100 {
		t.Errorf("the default limit unpinned: %v, want gcra at the proposal's rate 10 and burst 100", def.Spec)
	}
	for _, l := range r.Limits {
		for _, p := range l.Params {
			if p.Pinned {
				t.Errorf("%s: %s still pinned", l.Label, p.Name)
			}
		}
	}
	// An endpoint's limit is the policy's own, never a proposal: it
	// stays, and alone it pins nothing.
	const endpoint = "capacity=2000&clients=200&p99=5&endpoints.0.method=GET&endpoints.0.path=%2Fv1%2Fr&endpoints.0.limit.algorithm=gcra&endpoints.0.limit.rate=5&endpoints.0.limit.burst=10"
	if q, pinned := design.ParseQuery(endpoint + "&limit.algorithm=gcra").Unpinned(); pinned || !sameParams(t, q, endpoint+"&limit.algorithm=gcra") {
		t.Errorf("a design that only chooses an algorithm and limits an endpoint: pinned %v, unpinned %s", pinned, q)
	}
	q, pinned = design.ParseQuery(endpoint + "&limit.rate=3").Unpinned()
	if !pinned || !sameParams(t, q, endpoint) {
		t.Errorf("a design that pins the default rate beside an endpoint's limit: pinned %v, unpinned %s", pinned, q)
	}
	if r := design.ParseQuery(q).Resolve(); len(r.Problems) > 0 {
		t.Errorf("unpinned beside an endpoint's limit: %v", r.Problems)
	}
}

// resolved is the design of query q resolved, failing t on any problem.
func resolved(t *testing.T, q string) *design.Resolved {
	t.Helper()
	r := design.ParseQuery(q).Resolve()
	if len(r.Problems) > 0 {
		t.Fatal(r.Problems)
	}
	return r
}

// sameParams reports whether two queries hold the same parameters and
// values, in any order.
func sameParams(t *testing.T, a, b string) bool {
	t.Helper()
	pa, err := url.ParseQuery(a)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := url.ParseQuery(b)
	if err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(pa, pb)
}

// TestWithDefaultAlgorithm: the design with another algorithm for its
// default limit drops that limit's pinned numbers (a burst means nothing
// to a sliding window) and keeps the rest, the other limits' pins
// included; the calculator's window limit for it is then the p99 × 2 =
// 10 r/s of its rate over the proposal's window.
func TestWithDefaultAlgorithm(t *testing.T) {
	d := design.ParseQuery("capacity=2000&clients=200&p99=5&limit.algorithm=gcra&limit.burst=40&global.limit.algorithm=gcra&global.limit.burst=2000&pattern=ramp")
	q := d.WithDefaultAlgorithm(algorithms.NameSlidingWindow).Query()
	want := "capacity=2000&clients=200&p99=5&limit.algorithm=sliding_window&global.limit.algorithm=gcra&global.limit.burst=2000&pattern=ramp"
	if !sameParams(t, q, want) {
		t.Errorf("with sliding_window: %s\nwant the same parameters as %s", q, want)
	}
	def := resolved(t, q).Limits[0]
	if def.Spec.Algorithm != algorithms.NameSlidingWindow || def.Spec.Window <= 0 || float64(def.Spec.Limit) != 10*def.Spec.Window.Seconds() {
		t.Errorf("the default limit: %v; want a sliding window admitting 10 r/s over its window", def.Spec)
	}
}
