package main

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/ratelab/ratelab/calc"
)

// FuzzDesignQuery holds the query parser to its promises on any query
// string: it never panics; every problem has a message and, when it names
// a parameter, a place next to that field on the form; and the canonical
// query parses back to the same design and the same canonical query.
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
		if _, err := calc.Size(d.input); err != nil {
			d.calcProblems(err)
		}
		onForm := map[string]bool{}
		for _, fl := range d.form().Messages() {
			onForm[fl.Name] = true
		}
		for _, p := range d.problems {
			if p.Message == "" {
				t.Errorf("problem on %q without a message", p.Field)
			}
			if p.Field != "" && !onForm[p.Field] {
				t.Errorf("problem on %q has no place on the form: %s", p.Field, p.Message)
			}
		}

		canon := d.query()
		q, err := url.ParseQuery(canon)
		if err != nil {
			t.Fatalf("canonical query %q does not parse: %v", canon, err)
		}
		again := parseDesign(q)
		if got := again.query(); got != canon {
			t.Errorf("canonical query is not stable:\n%q\n%q", canon, got)
		}
		a, _ := json.Marshal(d.input)
		b, _ := json.Marshal(again.input)
		if string(a) != string(b) {
			t.Errorf("canonical query reads as another input:\n%s\n%s", a, b)
		}
		if d.patternOK != again.patternOK || d.pattern != again.pattern {
			t.Errorf("canonical query reads as another pattern: %+v, %+v", d.pattern, again.pattern)
		}
	})
}
