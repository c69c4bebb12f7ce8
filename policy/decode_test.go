package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// head is the start every test document shares, with a valid service.
const head = "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: t}\n"

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		// want has one entry per error, in order: "line:col field" then
		// a part of "message; hint".
		want [][2]string
	}{
		{"unknown field with hint", head + "service: {capacity: 100}\ndefaults:\n  limit: {algorithm: gcra, rate: 1, brust: 5}\n",
			[][2]string{{"6:3 defaults.limit.burst", "missing; want a whole number in [1, 1000000000]"}, {"6:37 defaults.limit.brust", "unknown field `brust`; did you mean `burst`?"}}},
		{"unknown top-level field", head + "service: {capacity: 100}\nteirs: []\n",
			[][2]string{{"5:1 teirs", "did you mean `tiers`?"}}},
		{"unknown field without a near name", head + "service: {capacity: 100, zzzzzzzz: 1}\n",
			[][2]string{{"4:26 service.zzzzzzzz", "want one of capacity, headroom"}}},
		{"wrong type", head + "service: {capacity: fast}\n",
			[][2]string{{"4:21 service.capacity", "want a number, got the string \"fast\""}}},
		{"quoted number", head + "service: {capacity: \"100\"}\n",
			[][2]string{{"4:21 service.capacity", "leave out the quotes"}}},
		{"mapping for a scalar", head + "service: {capacity: {a: 1}}\n",
			[][2]string{{"4:22 service.capacity", "want a number, got a mapping"}}},
		{"bad duration", head + "service: {capacity: 100}\nsizing: {window: 5 minutes}\n",
			[][2]string{{"5:18 sizing.window", "\"5 minutes\" is not a duration; write a Go duration such as 60s"}}},
		{"number for a duration", head + "service: {capacity: 100}\nsizing: {window: 60}\n",
			[][2]string{{"5:18 sizing.window", "write `60s` for 60 seconds"}}},
		{"unknown algorithm", head + "service: {capacity: 100}\nglobal: {limit: {algorithm: token_buckit, rate: 1, burst: 1}}\n",
			[][2]string{{"5:29 global.limit.algorithm", "did you mean `token_bucket`?"}}},
		{"out of range limit", head + "service: {capacity: 100}\nglobal: {limit: {algorithm: fixed_window, limit: 10, window: 0s}}\n",
			[][2]string{{"5:54 global.limit.window", "0s is out of range; want a duration in [1ms"}}},
		{"parameter of another algorithm", head + "service: {capacity: 100}\nglobal: {limit: {algorithm: gcra, rate: 1, burst: 2, window: 1s}}\n",
			[][2]string{{"5:54 global.limit.window", "window is not a parameter of gcra"}}},
		{"duplicate tier", head + "service: {capacity: 100}\ntiers:\n  - {name: paid}\n  - {name: paid}\n",
			[][2]string{{"7:6 tiers[1].name", "tier \"paid\" is already defined at 6:6"}}},
		{"duplicate endpoint", head + "service: {capacity: 100}\nendpoints:\n  - match: {method: GET, path: /a}\n  - match: {method: get, path: /a}\n",
			[][2]string{{"7:5 endpoints[1].match", "endpoint \"GET /a\" is already defined at 6:5"}}},
		{"duplicate key", head + "service: {capacity: 100}\nservice: {capacity: 200}\n",
			[][2]string{{"5:1 ", "mapping key \"service\" already defined"}}},
		{"missing required", "apiVersion: ratelab/v1\nkind: RateLimitPolicy\n",
			[][2]string{{"1:1 metadata", "missing required field `metadata`"}, {"1:1 service", "missing required field `service`"}}},
		{"calc range", head + "service: {capacity: 100, headroom: 2}\nsizing: {clients: 10, p50: 5, p99: 1}\n",
			[][2]string{{"4:26 service.headroom", "2 is out of range; want a fraction in [0, 0.95]"}, {"5:31 sizing.p99", "percentiles cannot decrease"}}},
		{"tier ranges without sizing", head + "service: {capacity: 100}\ntiers:\n  - {name: paid, multiplier: 5000}\n",
			[][2]string{{"6:18 tiers[0].multiplier", "want a multiplier of the per-client rate in [0.001, 1000]"}}},
		// Line 5: "sizing: {retry: {jitter_mode: " is 30 columns, so the
		// value starts at column 31.
		{"jitter mode", head + "service: {capacity: 100}\nsizing: {retry: {jitter_mode: fulll}}\n",
			[][2]string{{"5:31 sizing.retry.jitter_mode", "\"fulll\" is not one of proportional, full, equal, decorrelated; did you mean `full`?"}}},
		{"jitter mode not a string", head + "service: {capacity: 100}\nsizing: {retry: {jitter_mode: 2}}\n",
			[][2]string{{"5:31 sizing.retry.jitter_mode", "want a string"}}},
		{"status", head + "service: {capacity: 100}\ndefaults: {response: {status: 200}}\n",
			[][2]string{{"5:23 defaults.response.status", "want an HTTP status in [400, 599]"}}},
		{"version and kind", "apiVersion: ratelab/v2\nkind: Policy\nmetadata: {name: t}\nservice: {capacity: 100}\n",
			[][2]string{{"1:1 apiVersion", "want ratelab/v1"}, {"2:1 kind", "want RateLimitPolicy"}}},
		{"a list, not a policy", "- 1\n", [][2]string{{"1:1 ", "want a mapping with apiVersion"}}},
		{"syntax", "a: [\n", [][2]string{{"1:4 ", "YAML syntax"}}},
		{"empty", "", [][2]string{{"1:1 ", "the document is empty"}}},
		{"two documents", head + "service: {capacity: 100}\n---\na: 1\n", [][2]string{{"6:1 ", "more than one YAML document"}}},
		{"tag", head + "service: {capacity: !!str 100}\n", [][2]string{{"4:21 ", "tags are not supported"}}},
		{"merge key", head + "service: &s {capacity: 100}\nglobal:\n  <<: *s\n", [][2]string{{"6:3 ", "merge keys"}}},
		{"unknown alias", head + "service: *nothing\n", [][2]string{{"4:10 ", "names no anchor"}}},
		{"invalid UTF-8", head + "service: {capacity: 100}\n# \xff\n", [][2]string{{"5:3 ", "not valid UTF-8"}}},
		{"deep flow nesting", head + "x: " + strings.Repeat("[", 40), [][2]string{{"4:35 ", "nested 33 deep; the most is 32"}}},
		{"deep block nesting", head + deepBlock(40), [][2]string{{"36:33 ", "nested 33 deep; the most is 32"}}},
		{"deep compact nesting", head + strings.Repeat("- ", 4000), [][2]string{{"4:65 ", "nested 33 deep; the most is 32"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tt.doc))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("got %v, want Errors", err)
			}
			if len(es) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(es), len(tt.want), err)
			}
			for i, e := range es {
				at := fmt.Sprintf("%d:%d %s", e.Line, e.Column, e.Field)
				text := e.Message + "; " + e.Hint
				if want := tt.want[i]; (want[0] != "" && at != want[0]) || !strings.Contains(text, want[1]) {
					t.Errorf("error %d: got %q %q, want %q %q", i, at, text, want[0], want[1])
				}
			}
		})
	}
}

func deepBlock(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	b.WriteString(strings.Repeat(" ", n) + "b: 1\n")
	return b.String()
}

// TestDecodeLimits: oversized and alias-bomb documents are refused before
// the work they would cause. No timers: a billion-laughs document would
// take hours and gigabytes to expand, so finishing at all is the test.
func TestDecodeLimits(t *testing.T) {
	big := head + "service: {capacity: 100}\n# " + strings.Repeat("x", MaxSize) + "\n"
	if _, err := Decode(strings.NewReader(big)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("1 MiB + document: got %v", err)
	}

	var b strings.Builder
	b.WriteString(head + "service: {capacity: 100}\nsizing:\n  retry: &a0 {base: 1s}\n")
	// Nine levels of nine aliases each: 9^9 ≈ 387 million nodes expanded.
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x%d: &a%d [", i, i)
		for j := range 9 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("tiers: *a9\n")
	_, err := Decode(strings.NewReader(b.String()))
	if err == nil || !strings.Contains(err.Error(), "nodes with its aliases expanded") {
		t.Errorf("billion laughs: got %v", err)
	}

	// A few aliases are fine.
	ok := head + "service: {capacity: 100}\ndefaults: {limit: &l {algorithm: gcra, rate: 5, burst: 10}}\ntiers:\n  - {name: a, limit: *l}\n  - {name: b, limit: *l}\n"
	p, err := Decode(strings.NewReader(ok))
	if err != nil {
		t.Fatal(err)
	}
	if p.Tiers[1].Limit != p.Defaults.Limit {
		t.Errorf("alias: got %v, want %v", p.Tiers[1].Limit, p.Defaults.Limit)
	}
}

func TestDecodePositions(t *testing.T) {
	doc := head + "service:\n  capacity: 100\ntiers:\n  - name: a\n    limit: {algorithm: gcra, rate: 5, burst: 10}\n"
	p, err := Decode(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]Pos{
		"service.capacity":      {5, 3},
		"tiers[0]":              {7, 5},
		"tiers[0].limit":        {8, 5},
		"tiers[0].limit.burst":  {8, 39},
		"tiers[0].limit.nosuch": {8, 5},
	} {
		if got, _ := p.Pos(path); got != want {
			t.Errorf("Pos(%q) = %v, want %v", path, got, want)
		}
	}
	if _, ok := (Policy{}).Pos("service"); ok {
		t.Error("a policy built in code has positions")
	}
}

// TestJitterModeRoundTrip: every jitter mode decodes into the policy and
// its design, encodes as written, and decodes back the same; blank
// (proportional by default) is left out of the file.
func TestJitterModeRoundTrip(t *testing.T) {
	for _, mode := range []string{"", "proportional", "full", "equal", "decorrelated"} {
		t.Run("mode "+mode, func(t *testing.T) {
			retry := "sizing: {clients: 10, retry: {attempts: 3, jitter: 0.2}}\n"
			if mode != "" {
				retry = "sizing: {clients: 10, retry: {attempts: 3, jitter: 0.2, jitter_mode: " + mode + "}}\n"
			}
			p, err := Decode(strings.NewReader(head + "service: {capacity: 100}\n" + retry))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Sizing.Retry.JitterMode; got != mode {
				t.Errorf("decoded jitter mode %q, want %q", got, mode)
			}
			if got := p.Design().Retry.JitterMode; got != mode {
				t.Errorf("design's jitter mode %q, want %q", got, mode)
			}
			y := string(encode(t, p))
			if want := "jitter_mode: " + mode; mode != "" && !strings.Contains(y, want) {
				t.Errorf("encoding has no %q:\n%s", want, y)
			}
			if mode == "" && strings.Contains(y, "jitter_mode") {
				t.Errorf("encoding spells out the default mode:\n%s", y)
			}
			q, err := Decode(strings.NewReader(y))
			if err != nil {
				t.Fatalf("decode of the encoding: %v\n%s", err, y)
			}
			if r := q.Sizing.Retry; r.JitterMode != mode || r.Jitter == nil || *r.Jitter != 0.2 || r.Attempts != 3 {
				t.Errorf("round trip: %+v, want mode %q, jitter 0.2, 3 attempts", r, mode)
			}
		})
	}
}

func TestEncodeDeterministic(t *testing.T) {
	r := bytes.NewReader([]byte(head + "service: {capacity: 100}\ndefaults:\n  response: {headers: [x, ietf]}\n  limit: {algorithm: sliding_log, limit: 100, window: 1m30s}\nsizing: {max_delay: 0s, window: 1.5s}\n"))
	p, err := Decode(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata:
  name: t
service:
  capacity: 100
defaults:
  response: {headers: [x, ietf]}
  limit: {algorithm: sliding_log, limit: 100, window: 90s}
sizing:
  window: 1500ms
  max_delay: 0s
`
	for range 3 {
		if got := string(encode(t, p)); got != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	}
}

// TestDecodeTabs: a tab outside quoted strings, comments and block
// scalars is refused where it is, in YAML; a JSON policy indented with
// tabs decodes as the same policy without them; tabs inside a single
// quoted string, a comment and a block scalar are kept.
func TestDecodeTabs(t *testing.T) {
	const compact = `{"apiVersion": "ratelab/v1", "kind": "RateLimitPolicy", "metadata": {"name": "tabs", "description": "a\tb"},` +
		` "service": {"capacity": 100}, "defaults": {"limit": {"algorithm": "gcra", "rate": 5, "burst": 10}}}`
	want, err := Decode(strings.NewReader(compact))
	if err != nil {
		t.Fatal(err)
	}
	if want.Metadata.Description != "a\tb" {
		t.Fatalf("description %q, want the escaped tab", want.Metadata.Description)
	}
	var tabbed bytes.Buffer
	if err := json.Indent(&tabbed, []byte(compact), "", "\t"); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(tabbed.Bytes()))
	if err != nil {
		t.Fatalf("JSON indented with tabs: %v\n%s", err, tabbed.Bytes())
	}
	got.pos, want.pos = nil, nil // where each field was differs
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JSON indented with tabs decodes as %+v, want %+v", got, want)
	}
	for _, tt := range []struct{ name, doc, at string }{
		{"indentation", head + "service:\n\tcapacity: 100\n", "5:1"},
		{"after a key", head + "service: {capacity:\t100}\n", "4:20"},
		{"in a plain scalar", head + "service: {capacity: 100}\ndefaults: {mode: a\tb}\n", "5:19"},
		{"JSON that is not valid", "{\"apiVersion\":\t\"ratelab/v1\",}", "1:15"},
	} {
		_, err := Decode(strings.NewReader(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.at+": a tab outside a quoted string") {
			t.Errorf("%s: got %v, want a tab refused at %s", tt.name, err, tt.at)
		}
	}
	kept := "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata:\n  name: t\n  description: |\n    one\ttwo\n" +
		"# a\tcomment\nservice: {capacity: 100}\ndefaults: {limit: {algorithm: gcra, rate: 5, burst: 10}}\ntiers:\n- name: 'free\tplan'\n"
	p, err := Decode(strings.NewReader(kept))
	if err != nil {
		t.Fatalf("tabs in a comment, a quoted string and a block scalar: %v", err)
	}
	if p.Tiers[0].Name != "free\tplan" || p.Metadata.Description != "one\ttwo\n" {
		t.Errorf("tier name %q, description %q: want their tabs", p.Tiers[0].Name, p.Metadata.Description)
	}
}
