package design

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/algorithms"
)

// find is the form field called name, from any section or row.
func find(sections []Section, name string) (FormField, bool) {
	for _, s := range sections {
		for _, f := range s.Fields {
			if f.Name == name {
				return f, true
			}
		}
		for _, r := range s.Rows {
			for _, f := range r.Fields {
				if f.Name == name {
					return f, true
				}
			}
		}
	}
	return FormField{}, false
}

func TestForm(t *testing.T) {
	d := ParseQuery("capacity=2000&p99=5&limit.burst=40&key=mac" +
		"&tiers.2.name=paid&tiers.2.clients=20&tiers.2.limit.algorithm=fixed_window&pattern=steady")
	form := d.Form(d.Resolve())
	var ids []string
	for _, s := range form {
		ids = append(ids, s.ID)
	}
	if got := strings.Join(ids, " "); got != "policy service clients burst windows limit tiers endpoints global response retry pattern" {
		t.Errorf("sections: %s", got)
	}
	tiers := form[6]
	if len(tiers.Rows) != 2 || tiers.Rows[0].Index != 2 || tiers.Rows[0].Label != "Tier 1" || tiers.Rows[0].Added ||
		tiers.Rows[1].Index != 3 || !tiers.Rows[1].Added {
		t.Errorf("tier rows: %+v", tiers.Rows)
	}
	if len(form[7].Rows) != 2 || form[7].Rows[0].Index != 0 || !form[7].Rows[0].Added {
		t.Errorf("endpoint rows: %+v", form[7].Rows)
	}

	burst, _ := find(form, "limit.burst")
	if burst.Value != "40" || burst.Placeholder != "100" || !strings.Contains(burst.Note, "pinned 40, proposal 100") || !burst.Applies {
		t.Errorf("limit.burst: %+v", burst)
	}
	rate, _ := find(form, "limit.rate")
	if rate.Value != "" || rate.Placeholder != "10" || rate.Note != "" {
		t.Errorf("limit.rate: %+v", rate)
	}
	if q, _ := find(form, "limit.queue"); q.Applies {
		t.Errorf("limit.queue applies to a token bucket: %+v", q)
	}
	if w, _ := find(form, "tiers.2.limit.window"); !w.Applies || w.Placeholder != "60" {
		t.Errorf("tiers.2.limit.window: %+v", w)
	}
	if b, _ := find(form, "tiers.3.limit.burst"); !b.Applies || b.Value != "" {
		t.Errorf("a blank tier's burst: %+v", b)
	}
	key, _ := find(form, "key")
	if !strings.Contains(key.Error, `"mac"`) || key.Options[len(key.Options)-1].Label != "mac (not valid)" {
		t.Errorf("key: %+v", key)
	}
	if c, _ := find(form, "pattern.count"); c.Applies {
		t.Errorf("steady reads no count: %+v", c)
	}
	if r, _ := find(form, "pattern.rate"); !r.Applies || r.Placeholder != "10" || r.Unit != "requests/s" {
		t.Errorf("pattern.rate: %+v", r)
	}
	if _, ok := find(form, "endpoints.1.limit.algorithm"); !ok {
		t.Error("no endpoint limit on the form")
	}
}

// TestJitterModeField: retry.jitter_mode is a select of calc's jitter
// modes, blank meaning proportional, next to retry.jitter; each mode
// travels URL → design → calc input and policy → URL unchanged.
func TestJitterModeField(t *testing.T) {
	form := ParseQuery("").Form(nil)
	f, ok := find(form, "retry.jitter_mode")
	if !ok {
		t.Fatal("no retry.jitter_mode on the form")
	}
	var values []string
	for _, o := range f.Options {
		values = append(values, o.Value)
	}
	if f.Kind != KindEnum || f.Path != "sizing.retry.jitter_mode" || f.Placeholder != "proportional" ||
		strings.Join(values, ",") != "proportional,full,equal,decorrelated" || !strings.Contains(f.Help, "proportional only") {
		t.Errorf("retry.jitter_mode: %+v", f)
	}
	if j, _ := find(form, "retry.jitter"); !strings.Contains(j.Help, "proportional mode only") {
		t.Errorf("retry.jitter's help %q does not say it is the proportional mode's", j.Help)
	}
	var retry []string
	for _, s := range form {
		if s.ID == "retry" {
			for _, sf := range s.Fields {
				retry = append(retry, sf.Name)
			}
		}
	}
	if got := strings.Join(retry, " "); got != "retry.base retry.factor retry.cap retry.attempts retry.jitter retry.jitter_mode" {
		t.Errorf("retry section: %s", got)
	}

	for _, mode := range []string{"", "proportional", "full", "equal", "decorrelated"} {
		q := "capacity=1000&clients=10&retry.jitter=0.3"
		if mode != "" {
			q += "&retry.jitter_mode=" + mode
		}
		d := ParseQuery(q)
		if probs := d.Resolve().Problems; len(probs) != 0 {
			t.Fatalf("%s: problems %v", q, probs)
		}
		if got := d.Input().Retry.JitterMode; got != mode {
			t.Errorf("%s: input's jitter mode %q, want %q", q, got, mode)
		}
		p, err := d.Policy()
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Sizing.Retry.JitterMode; got != mode {
			t.Errorf("%s: policy's jitter mode %q, want %q", q, got, mode)
		}
		if got := d.Query(); got != q {
			t.Errorf("canonical query %q, want %q", got, q)
		}
		if got := FromPolicy(p, algorithms.Pattern{}).Query(); !strings.Contains(got, "retry.jitter=0.3") ||
			(mode != "" && !strings.Contains(got, "retry.jitter_mode="+mode)) || (mode == "" && strings.Contains(got, "jitter_mode")) {
			t.Errorf("%s: the policy's design URL is %s", q, got)
		}
		if v, _ := find(d.Form(nil), "retry.jitter_mode"); v.Value != mode || v.Error != "" {
			t.Errorf("%s: the form shows %+v", q, v)
		}
	}
}
