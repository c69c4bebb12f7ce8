package design

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/policy"
)

// TestProblems: a bad value is a problem on its URL parameter whose
// message names the parameter, the value and what is allowed.
func TestProblems(t *testing.T) {
	const base = "capacity=1000&clients=10&"
	tests := []struct {
		query, field string
		want         []string // in the message, besides the field
	}{
		{"capacity=abc&clients=10", "capacity", []string{`"abc"`, "not a number"}},
		{"capacity=-1&clients=10", "capacity", []string{"-1", "[0.001, 1e9]"}},
		{"capacity=NaN&clients=10", "capacity", []string{"not a finite number"}},
		{"capacity=1e400&clients=10", "capacity", []string{"out of range"}},
		{"capacity=" + strings.Repeat("9", 5000) + "&clients=10", "capacity", []string{"5000 bytes", "at most 2048"}},
		{"capacity=1000&clients=2.5", "clients", []string{`"2.5"`, "not a whole number"}},
		{base + "p95=9&p99=3", "p99", []string{"3", "percentiles cannot decrease"}},
		{base + "enforcement=sideways", "enforcement", []string{`"sideways"`, "shared, local"}},
		{"capacity=1000&tiers.0.name=paid&tiers.4.name=free&tiers.4.clients=0", "tiers.4.clients", []string{"0", "[1, 100000000]"}},
		{"capacity=1000&tiers.0.clients=10", "tiers.0.name", []string{"1 to 64 characters"}},
		{base + "tiers.0.name=a&tiers.0.clients=5&tiers.2.name=a&tiers.2.clients=5", "tiers.2.name", []string{`"a"`}},
		{base + "endpoints.2.method=G E T&endpoints.2.path=/x", "endpoints.2.method", []string{`"G E T"`, "HTTP method"}},
		{base + "endpoints.0.method=GET&endpoints.0.path=/x&endpoints.1.method=GET&endpoints.1.path=/x", "endpoints.1.path", []string{"/x"}},
		{base + "endpoints.3.method=GET&endpoints.3.path=%2Fa%80", "endpoints.3.path", []string{"not UTF-8"}},
		{base + "endpoints.0.method=GET&endpoints.0.path=/x&endpoints.0.cost=1e18", "endpoints.0.cost", []string{"up to 1e+15"}},
		{base + "retry.attempts=50", "retry.attempts", []string{"50", "[1, 20]"}},
		{base + "retry.jitter_mode=random", "retry.jitter_mode", []string{`"random"`, "proportional, full, equal, decorrelated"}},
		{base + "tiers.100.name=x&tiers.100.clients=1", "tiers", []string{"0 to 99"}},
		{base + "pattern=nope", "pattern", []string{`"nope"`, "not a pattern"}},
		{base + "pattern=steady&pattern.rate=0", "pattern.rate", []string{"0", "[0.001, 1e+06]"}},
		{base + "pattern=periodic_bursts&pattern.period=100&pattern.duration=10", "pattern.period", []string{"no longer than duration"}},
		{base + "pattern=poisson&pattern.seed=-1", "pattern.seed", []string{`"-1"`}},

		// The rest of the policy.
		{base + "name=" + strings.Repeat("n", 200), "name", []string{"1 to 128 characters"}},
		{base + "description=" + strings.Repeat("d", 20000), "description", []string{"20000 bytes", "at most 16384"}},
		{base + "on_store_failure=maybe", "on_store_failure", []string{`"maybe"`, "fail_open, fail_closed"}},
		{base + "key=mac", "key", []string{`"mac"`, "api_key"}},
		{base + "mode=loud", "mode", []string{`"loud"`, "enforce, shadow"}},
		{base + "status=200", "status", []string{"200", "[400, 599]"}},
		{base + "headers=ietf,foo", "headers", []string{`"foo"`, "ietf, legacy, x"}},
		{base + "headers=ietf,ietf", "headers", []string{"twice"}},
		{base + "retry_after=maybe", "retry_after", []string{`"maybe"`, "true or false"}},
		{base + "tiers.0.name=a&tiers.0.key=mac", "tiers.0.key", []string{`"mac"`}},

		// Limits.
		{base + "limit.algorithm=bucket", "limit.algorithm", []string{`"bucket"`, "token_bucket", "none"}},
		{base + "limit.algorithm=default", "limit.algorithm", []string{`"default"`}},
		{base + "tiers.0.name=a&tiers.0.limit.algorithm=none", "tiers.0.limit.algorithm", []string{`"none"`, "default"}},
		{base + "limit.rate=0", "limit.rate", []string{"0", "[1e-06, 1e+09]"}},
		{base + "limit.burst=1.5", "limit.burst", []string{`"1.5"`, "not a whole number"}},
		{base + "limit.algorithm=leaky_bucket&limit.queue=-1", "limit.queue", []string{"-1", "[0, 1000000000]"}},
		{"capacity=1000&tiers.3.name=a&tiers.3.clients=5&tiers.3.limit.algorithm=fixed_window&tiers.3.limit.limit=0", "tiers.3.limit.limit", []string{"0", "[1, 1000000000]"}},
		{base + "global.limit.algorithm=sliding_log&global.limit.window=0.0001", "global.limit.window", []string{"100µs", "[1ms, 8784h0m0s]"}},
		{base + "limit.algorithm=sliding_log&limit.window=1e300", "limit.window", []string{"out of range"}},
		{base + "endpoints.5.method=GET&endpoints.5.path=/x&endpoints.5.limit.algorithm=gcra&endpoints.5.limit.rate=2", "endpoints.5.limit.burst",
			[]string{"missing", "no proposal", "rate, burst"}},
		{"capacity=1000&limit.burst=10", "limit.rate", []string{"no proposal without clients", "pin a value"}},
		{"capacity=1000", "clients", []string{"missing", "pin every limit parameter"}},
	}
	for _, tt := range tests {
		name := tt.query
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			r := ParseQuery(tt.query).Resolve()
			for _, p := range r.Problems {
				if p.Field != tt.field {
					continue
				}
				if !strings.HasPrefix(p.Message, tt.field+": ") {
					t.Errorf("message does not start with the field: %q", p.Message)
				}
				for _, w := range tt.want {
					if !strings.Contains(p.Message, w) {
						t.Errorf("message %q does not say %q", p.Message, w)
					}
				}
				return
			}
			t.Errorf("no problem on %s; got %v", tt.field, r.Problems)
		})
	}
}

// TestNoProblems: a few complete designs resolve cleanly, with the
// algorithms and numbers they ask for.
func TestNoProblems(t *testing.T) {
	tests := []struct {
		query string
		check func(t *testing.T, r *Resolved)
	}{
		{"capacity=2000&clients=200&p99=5&limit.algorithm=gcra&limit.burst=40", func(t *testing.T, r *Resolved) {
			if got := r.Policy.Defaults.Limit; got != (algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 40}) {
				t.Errorf("default limit %v", got)
			}
			burst := r.Limits[0].Params[1]
			if !burst.Pinned || burst.Value != "40" || burst.Proposal != "100" ||
				burst.Note != "pinned 40, proposal 100: a burst below the proposal rejects the designed peak" {
				t.Errorf("burst: %+v", burst)
			}
			if rate := r.Limits[0].Params[0]; rate.Pinned || rate.Note != "" || !strings.Contains(rate.Reason, "p99 × margin") {
				t.Errorf("rate: %+v", rate)
			}
		}},
		{"capacity=100&limit.rate=2&limit.burst=5&global.limit.algorithm=none", func(t *testing.T, r *Resolved) {
			if r.Sizing != nil || r.Policy.Global.Limit.Algorithm != "" || r.Policy.Defaults.Limit.Rate != 2 {
				t.Errorf("unsized policy: %+v", r.Policy)
			}
		}},
		{"capacity=100&clients=3&peak=300&peak_seconds=2&tiers.0.name=a&tiers.0.clients=3&tiers.0.limit.algorithm=default&clients=", func(t *testing.T, r *Resolved) {
			if r.Policy.Tiers[0].Limit.Algorithm != "" || !r.Limits[1].Inherits {
				t.Errorf("tier does not inherit: %+v", r.Limits[1])
			}
			// The global burst covers the designed client burst.
			if g, c := r.Policy.Global.Limit.Burst, r.Policy.Defaults.Limit.Burst; g < c || !strings.Contains(r.Limits[2].Params[1].Reason, "largest per-client burst") {
				t.Errorf("global burst %d below the client's %d: %+v", g, c, r.Limits[2].Params[1])
			}
		}},
		{"capacity=100&clients=2&limit.algorithm=fixed_window&limit.window=10", func(t *testing.T, r *Resolved) {
			// A pinned window keeps the proposed rate: ⌈rate × 10 s⌉.
			res := r.Sizing
			if got := r.Policy.Defaults.Limit; got.Limit != int64(ceil(res.Rate.Value*10)) {
				t.Errorf("limit %d for a 10 s window at %v/s", got.Limit, res.Rate.Value)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := ParseQuery(tt.query).Resolve()
			if len(r.Problems) > 0 {
				t.Fatalf("problems: %v", r.Problems)
			}
			tt.check(t, r)
		})
	}
}

// FuzzParse holds the parser to its promises on any query string: it never
// panics, every problem has a message and names a parameter of the form or
// the design as a whole, and the canonical query parses back to the same
// canonical query, the same policy and the same pattern.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"capacity=NaN&clients=10",
		"capacity=1e400&clients=-1&p99=Inf",
		"capacity=1000&tiers.0.name=a&tiers.0.clients=5&tiers.7.name=b&tiers.7.clients=x",
		"capacity=1000&tiers.100.name=x&endpoints.3.method=GET&endpoints.3.path=/x&endpoints.3.cost=1e18",
		"capacity=1000&clients=10&pattern=periodic_bursts&pattern.period=100&pattern.duration=10",
		"capacity=%zz&p99=%ff%fe&;=1&&=",
		"capacity=100&clients=3&limit.algorithm=gcra&limit.burst=4&tiers.0.name=a&tiers.0.limit.algorithm=default&global.limit.algorithm=none",
		"capacity=100&endpoints.0.method=GET&endpoints.0.path=/x&endpoints.0.limit.algorithm=sliding_log&endpoints.0.limit.window=0.5",
		"capacity=100&headers=none&retry_after=0&status=503&mode=shadow&name=x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		d := ParseQuery(raw)
		r := d.Resolve()
		for _, p := range r.Problems {
			if p.Message == "" {
				t.Errorf("problem on %q without a message", p.Field)
			}
			if p.Field != "" && p.Field != "tiers" && p.Field != "endpoints" && !known(p.Field) {
				t.Errorf("problem on %q, which is no field: %s", p.Field, p.Message)
			}
		}
		canon := d.Query()
		q, err := url.ParseQuery(canon)
		if err != nil {
			t.Fatalf("canonical query %q does not parse: %v", canon, err)
		}
		again := Parse(q)
		if got := again.Query(); got != canon {
			t.Errorf("canonical query is not stable:\n%q\n%q", canon, got)
		}
		r2 := again.Resolve()
		if a, b := encodeBytes(r.Policy), encodeBytes(r2.Policy); a != b {
			t.Errorf("canonical query reads as another policy:\n%s\n%s", a, b)
		}
		p1, ok1 := d.Pattern()
		p2, ok2 := again.Pattern()
		if ok1 != ok2 || p1 != p2 {
			t.Errorf("canonical query reads as another pattern: %+v, %+v", p1, p2)
		}
	})
}

func known(param string) bool {
	_, _, ok := Lookup(param)
	return ok
}

func encodeBytes(p policy.Policy) string {
	var b bytes.Buffer
	if err := policy.Encode(&b, p); err != nil {
		return err.Error()
	}
	return b.String()
}

// TestBlankIsMissing: a blank field the calculator needs is missing, never
// "0 is out of range".
func TestBlankIsMissing(t *testing.T) {
	for _, q := range []string{"clients=10&p99=2", "capacity=&clients=10&p99=2"} {
		r := ParseQuery(q).Resolve()
		found := false
		for _, p := range r.Problems {
			if p.Field == "capacity" {
				found = true
				if !strings.HasPrefix(p.Message, "capacity: missing; want") || strings.Contains(p.Message, "0 is out of range") {
					t.Errorf("%s: %q, want capacity missing", q, p.Message)
				}
			}
		}
		if !found {
			t.Errorf("%s: no problem on capacity: %v", q, r.Problems)
		}
	}
	// A zero typed is the calculator's to refuse, as typed.
	r := ParseQuery("capacity=0&clients=10&p99=2").Resolve()
	if len(r.Problems) == 0 || !strings.Contains(r.Problems[0].Message, "0 is out of range") {
		t.Errorf("capacity=0: %v, want 0 out of range", r.Problems)
	}
}
