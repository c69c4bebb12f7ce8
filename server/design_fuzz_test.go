package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/policy"
)

// FuzzDesignQuery holds the query parser to its promises on any query
// string: it never panics; every problem has a message and, when it names
// a parameter, a place next to that field on the form; the canonical
// query parses back to the same design and the same canonical query; and
// the design unpinned has no pinned number left.
func FuzzDesignQuery(f *testing.F) {
	for _, s := range []string{
		"",
		fullDesign.Encode(),
		"capacity=NaN&clients=10",
		"capacity=1e400&clients=-1&p99=Inf",
		"capacity=1000&tiers.0.name=a&tiers.0.clients=5&tiers.7.name=b&tiers.7.clients=x",
		"capacity=1000&tiers.100.name=x&endpoints.3.method=GET&endpoints.3.path=/x&endpoints.3.cost=1e18",
		"capacity=1000&clients=10&pattern=retry_storm&pattern.clients=100000&pattern.jitter=2",
		"capacity=1000&clients=10&pattern=periodic_bursts&pattern.period=100&pattern.duration=10",
		"capacity=1000&clients=10&pattern=nope&pattern.seed=-1",
		"capacity=%zz&p99=%ff%fe&;=1&&=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		d := parseDesignQuery(raw)
		d.results()
		onForm := map[string]bool{}
		for _, fl := range d.form().Messages() {
			onForm[fl.Name] = true
		}
		// A query net/url reads nothing from is shown as the example
		// design with a problem that says so; its canonical query is that
		// design's, without the problem.
		unreadable := false
		for _, p := range d.problems() {
			if p.Message == "" {
				t.Errorf("problem on %q without a message", p.Field)
			}
			if p.Field == "" && strings.HasPrefix(p.Message, "the address cannot be read as a design") {
				unreadable = true
			}
			if p.Field != "" && !onForm[p.Field] {
				t.Errorf("problem on %q has no place on the form: %s", p.Field, p.Message)
			}
		}

		canon := d.query()
		again := parseDesignQuery(canon)
		if got := again.query(); got != canon {
			t.Errorf("canonical query is not stable:\n%q\n%q", canon, got)
		}
		a, _ := json.Marshal(d.d.Input())
		b, _ := json.Marshal(again.d.Input())
		if string(a) != string(b) {
			t.Errorf("canonical query reads as another input:\n%s\n%s", a, b)
		}
		pa, oka := d.pattern()
		pb, okb := again.pattern()
		if oka != okb || pa != pb {
			t.Errorf("canonical query reads as another pattern: %+v, %+v", pa, pb)
		}
		// The design without its pinned numbers has none left to drop.
		u, _ := d.d.Unpinned()
		if u2, pinned := parseDesignQuery(u).d.Unpinned(); pinned || u2 != u {
			t.Errorf("unpinned twice: %q, then %q (pinned %v)", u, u2, pinned)
		}
		p1, e1 := d.policy()
		p2, e2 := again.policy()
		if unreadable {
			if e2 != nil {
				t.Fatalf("canonical query %q of an unreadable query has problems %v", canon, e2)
			}
			return
		}
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("canonical query has problems %v, the query %v", e2, e1)
		}
		if e1 == nil {
			var a, b bytes.Buffer
			if policy.Encode(&a, p1) != nil || policy.Encode(&b, p2) != nil || a.String() != b.String() {
				t.Errorf("canonical query reads as another policy:\n%s\n%s", a.String(), b.String())
			}
		}
	})
}
