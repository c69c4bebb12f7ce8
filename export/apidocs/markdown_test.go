package apidocs_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/apidocs"
	"github.com/ratelab/ratelab/export/exporttest"
	"github.com/ratelab/ratelab/policy"
)

// tables reads the pipe tables of a Markdown document: for each table its
// header cells and body rows, keyed by the section heading above it
// ("Limits", "Expensive endpoints", "Retrying").
func tables(t *testing.T, md string) map[string][][]string {
	t.Helper()
	out := map[string][][]string{}
	section := ""
	var cur [][]string
	flush := func() {
		if cur != nil {
			if _, dup := out[section]; dup {
				t.Errorf("two tables under %q", section)
			}
			out[section] = cur
			cur = nil
		}
	}
	for line := range strings.SplitSeq(md, "\n") {
		if h, ok := strings.CutPrefix(line, "### "); ok {
			flush()
			section = h
			continue
		}
		if !strings.HasPrefix(line, "|") {
			flush()
			continue
		}
		if !strings.HasSuffix(line, "|") {
			t.Errorf("table row without a closing pipe: %q", line)
		}
		var cells []string
		for c := range strings.SplitSeq(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		if len(cur) > 0 && len(cells) != len(cur[0]) {
			t.Errorf("row %q has %d cells, the header %d", line, len(cells), len(cur[0]))
		}
		if len(cur) == 1 { // the delimiter row
			for _, c := range cells {
				if strings.Trim(c, "-:") != "" {
					t.Errorf("second row %q is not a delimiter row", line)
				}
			}
			cur = append(cur, nil)
			continue
		}
		cur = append(cur, cells)
	}
	flush()
	for k, rows := range out { // drop the delimiter placeholder
		out[k] = slices.DeleteFunc(rows, func(r []string) bool { return r == nil })
	}
	return out
}

func markdown(t *testing.T, p policy.Policy) (export.Export, string) {
	t.Helper()
	e, err := apidocs.Markdown.Render(p, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e, string(e.Body)
}

// TestMarkdownLimitsTable: the limits table of every example policy, each
// row written by hand from the policy file.
func TestMarkdownLimitsTable(t *testing.T) {
	tests := []struct {
		policy string
		rows   [][]string
		costs  [][]string
	}{
		{"minimal", [][]string{
			{"Default", "API key", "up to 100 requests at once, then 10 per second"},
		}, nil},
		{"public-api", [][]string{
			{"Default", "API key", "up to 50 requests at once, then 5 per second"},
			{"anonymous tier", "IP address", "up to 10 requests at once, then 1 per second"},
			{"paid tier", "API key", "up to 500 requests at once, then 50 per second"},
			{"`POST /v1/orders`", "API key", "100 per minute, sliding"},
			{"All clients together", "the whole API", "up to 3200 requests at once, then 1600 per second"},
		}, [][]string{{"`GET /v1/reports`", "8 requests"}}},
		{"every-algorithm", [][]string{
			// queue 5 at 2.5/s: the last waits 5 / 2.5 = 2 s.
			{"Default", "API key", "2.5 per second, evenly spaced; up to 5 more wait their turn (at most 2 seconds of delay)"},
			{"anonymous tier", "IP address", "up to 10 requests at once, then 1 per second"},
			// 0.5/s = 30 per minute.
			{"partner tier", "account", "up to 3 requests at once, then 30 per minute"},
			{"batch tier", "API key", "1000 per hour, fixed window (the count restarts every hour)"},
			{"search tier", "API key", "no more than 30 in any 10 seconds"},
			{"Paid Plus tier", "API key", "600 per minute, sliding"},
			{"`POST /v1/orders`", "API key", "100 per minute, sliding"},
			{"`GET /v1/search`", "API key", "up to 15 requests at once, then 7.5 per second"},
			// The policy's limit, not the per-replica share: clients see
			// the designed limit.
			{"All clients together", "the whole API", "up to 1600 requests at once, then 800 per second"},
		}, [][]string{{"`GET /v1/reports`", "8 requests"}, {"`GET /v1/search`", "2 requests"}}},
		{"shadow", [][]string{
			{"Default", "IP address", "up to 40 requests at once, then 20 per second"},
			{"All clients together", "the whole API", "12000 per minute, fixed window (the count restarts every minute)"},
		}, nil},
		{"tiered", [][]string{
			{"Default", "API key", "up to 40 requests at once, then 4 per second"},
			{"anonymous tier", "IP address", "up to 20 requests at once, then 2 per second"},
			{"free tier", "API key", "up to 40 requests at once, then 4 per second"},
			{"paid tier", "API key", "up to 200 requests at once, then 20 per second"},
			{"`POST /v1/exports`", "API key", "200 per hour, fixed window (the count restarts every hour)"},
			{"All clients together", "the whole API", "up to 3750 requests at once, then 3750 per second"},
		}, [][]string{{"`GET /v1/reports`", "8 requests"}, {"`POST /v1/exports`", "20 requests"}}},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			p := exporttest.Named(t, tt.policy)
			e, md := markdown(t, p)
			tb := tables(t, md)
			limits := tb["Limits"]
			if len(limits) == 0 || !slices.Equal(limits[0], apidocs.LimitsHeader) {
				t.Fatalf("limits table header %v", limits)
			}
			if got := limits[1:]; !slices.EqualFunc(got, tt.rows, slices.Equal) {
				t.Errorf("limits rows\n got %q\nwant %q", got, tt.rows)
			}
			var costs [][]string
			if c := tb["Expensive endpoints"]; len(c) > 0 {
				costs = c[1:]
			}
			if !slices.EqualFunc(costs, tt.costs, slices.Equal) {
				t.Errorf("cost rows %q, want %q", costs, tt.costs)
			}
			for _, l := range p.Limits() {
				if !slices.ContainsFunc(e.Mappings, func(m export.Mapping) bool { return m.Field == l.Field && m.Fidelity == export.Exact }) {
					t.Errorf("no exact mapping for %s", l.Field)
				}
			}
			if !strings.HasPrefix(md, "<!-- Rate limits of policy") || !strings.Contains(md[:120], "generated by ratelab") {
				t.Error("no header comment")
			}
			if _, again := markdown(t, p); again != md {
				t.Error("two renders differ")
			}
		})
	}
}

// TestMarkdownRetry: the retry table follows sizing.retry, else calc's
// defaults; the numbers by hand.
func TestMarkdownRetry(t *testing.T) {
	tests := []struct {
		policy string
		rows   [][]string
	}{
		// No sizing.retry: base 1 s, factor 2, cap 30 s, 5 attempts,
		// jitter 50 %: waits 1, 2, 4, 8, 16 s, each up to 1.5× with jitter.
		{"minimal", [][]string{
			{"1", "1 s", "1 to 1.5 s"}, {"2", "2 s", "2 to 3 s"}, {"3", "4 s", "4 to 6 s"},
			{"4", "8 s", "8 to 12 s"}, {"5", "16 s", "16 to 24 s"},
		}},
		// tiered: base 1s, cap 30s, attempts 4, jitter 0.5, factor 2.
		{"tiered", [][]string{
			{"1", "1 s", "1 to 1.5 s"}, {"2", "2 s", "2 to 3 s"}, {"3", "4 s", "4 to 6 s"}, {"4", "8 s", "8 to 12 s"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			_, md := markdown(t, exporttest.Named(t, tt.policy))
			rows := tables(t, md)["Retrying"]
			if len(rows) == 0 {
				t.Fatal("no retry table")
			}
			if got := rows[1:]; !slices.EqualFunc(got, tt.rows, slices.Equal) {
				t.Errorf("retry rows\n got %q\nwant %q", got, tt.rows)
			}
			if want := "Give up after " + string(rune('0'+len(tt.rows))) + " attempts"; !strings.Contains(md, want) {
				t.Errorf("no %q", want)
			}
		})
	}
	// The jitter modes, on the defaults (waits d = 1, 2, 4, 8, 16 s, cap
	// 30 s): full [0, d), equal [d/2, d), decorrelated [1, min(30, 3^n)).
	for _, tt := range []struct {
		mode, says string
		ranges     []string
	}{
		{"full", "full jitter", []string{"0 to 1 s", "0 to 2 s", "0 to 4 s", "0 to 8 s", "0 to 16 s"}},
		{"equal", "equal jitter", []string{"0.5 to 1 s", "1 to 2 s", "2 to 4 s", "4 to 8 s", "8 to 16 s"}},
		{"decorrelated", "decorrelated jitter", []string{"1 to 3 s", "1 to 9 s", "1 to 27 s", "1 to 30 s", "1 to 30 s"}},
	} {
		p := exporttest.Named(t, "minimal")
		p.Sizing.Retry = policy.Retry{JitterMode: tt.mode}
		_, md := markdown(t, p)
		rows := tables(t, md)["Retrying"][1:]
		var got []string
		for _, r := range rows {
			got = append(got, r[2])
		}
		if !slices.Equal(got, tt.ranges) {
			t.Errorf("%s: ranges %q, want %q", tt.mode, got, tt.ranges)
		}
		if !strings.Contains(md, tt.says) || strings.Contains(md, "random extra of up to") {
			t.Errorf("%s: the retry steps do not describe %s:\n%s", tt.mode, tt.says, md)
		}
	}

	// Cap: base 2 s, factor 3, cap 10 s: 2, 6, 10 (not 18), no jitter.
	p := exporttest.Named(t, "minimal")
	p.Sizing.Retry = policy.Retry{Base: 2e9, Factor: 3, Cap: 10e9, Attempts: 3, Jitter: new(0.0)}
	_, md := markdown(t, p)
	want := [][]string{{"1", "2 s", "2 to 2 s"}, {"2", "6 s", "6 to 6 s"}, {"3", "10 s", "10 to 10 s"}}
	if got := tables(t, md)["Retrying"][1:]; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("capped retry rows %q, want %q", got, want)
	}
}

// TestMarkdownExampleResponse: the example shows the styles the policy
// sends, with the numbers worked out by hand.
func TestMarkdownExampleResponse(t *testing.T) {
	tests := []struct {
		policy string
		want   []string
		absent []string
	}{
		// token_bucket(10/s, 100): q=100, w=⌈100/10⌉=10; the next token
		// comes in 0.1 s, published as 1 s.
		{"minimal", []string{"HTTP/1.1 429 Too Many Requests", `RateLimit-Policy: "default";q=100;w=10`, `RateLimit: "default";r=0;t=1`, "Retry-After: 1"},
			[]string{"X-RateLimit-Limit", "RateLimit-Limit"}},
		// gcra(20/s, 40) with every style.
		{"shadow", []string{`RateLimit-Policy: "default";q=40;w=2`, "RateLimit-Limit: 40", "RateLimit-Remaining: 0", "X-RateLimit-Limit: 40", "Retry-After: 1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			_, md := markdown(t, exporttest.Named(t, tt.policy))
			for _, w := range tt.want {
				if !strings.Contains(md, "\n"+w+"\n") {
					t.Errorf("no line %q in\n%s", w, md)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(md, a) {
					t.Errorf("%q shown though the policy does not send it", a)
				}
			}
		})
	}
	p := exporttest.Named(t, "minimal")
	p.Defaults.Response.Status = 503
	p.Defaults.Response.RetryAfter = new(false)
	e, md := markdown(t, p)
	if !strings.Contains(md, "HTTP/1.1 503 Service Unavailable") || strings.Contains(md, "\nRetry-After:") {
		t.Errorf("503 without Retry-After:\n%s", md)
	}
	if !slices.Contains(e.Notes, "Not documented: Retry-After — defaults.response.retry_after is false.") {
		t.Errorf("no note about Retry-After: %v", e.Notes)
	}
}

// TestMarkdownShadowMode: consumers are told the limits are being
// introduced, and nothing about shadow mode.
func TestMarkdownShadowMode(t *testing.T) {
	_, md := markdown(t, exporttest.Named(t, "shadow"))
	// The first line is an HTML comment naming the policy (here "shadow"),
	// which renderers do not show.
	comment, md, _ := strings.Cut(md, "\n")
	if !strings.HasPrefix(comment, "<!--") || !strings.HasSuffix(comment, "-->") {
		t.Fatalf("first line %q is not a comment", comment)
	}
	if !strings.Contains(md, "These limits are being introduced") {
		t.Error("shadow mode: no 'being introduced'")
	}
	for _, word := range []string{"shadow", "dry run", "dry-run", "not enforced", "log"} {
		if strings.Contains(strings.ToLower(md), word) {
			t.Errorf("the consumer docs mention %q", word)
		}
	}
	_, enforced := markdown(t, exporttest.Named(t, "public-api"))
	if strings.Contains(enforced, "being introduced") {
		t.Error("an enforced policy says its limits are being introduced")
	}
	if !bytes.Contains([]byte(enforced), []byte("### Expensive endpoints")) {
		t.Error("public-api: no costs section")
	}
}

// TestNoLimitIsAnError: a policy without any limit has nothing to
// document; both targets say so instead of failing on an empty list.
func TestNoLimitIsAnError(t *testing.T) {
	p := policy.Policy{APIVersion: policy.APIVersion, Kind: policy.Kind, Metadata: policy.Metadata{Name: "none"}, Service: policy.Service{Capacity: 10}}
	for _, target := range []export.Target{apidocs.Markdown, apidocs.OpenAPI} {
		_, err := target.Render(p, export.Options{})
		var xe *export.Error
		if !errors.As(err, &xe) || xe.Field != "defaults.limit" {
			t.Errorf("%s: %v, want an export error on defaults.limit", target.Name, err)
		}
	}
}

// lintBlocks lists where md breaks the block rules of markdownlint that a
// generator can get wrong, as "line N: rule": more than one blank line in
// a row (MD012), trailing whitespace (MD009), an end other than exactly
// one newline (MD047), and a heading (MD022), fenced code block (MD031),
// list (MD032) or table (MD058) not set off by blank lines. A heading may
// follow an HTML comment line directly, as CommonMark ends the comment's
// block there. Lines are numbered from 1.
func lintBlocks(md string) []string {
	var out []string
	if !strings.HasSuffix(md, "\n") || strings.HasSuffix(md, "\n\n") {
		out = append(out, "end: MD047")
	}
	lines := strings.Split(strings.TrimSuffix(md, "\n"), "\n")
	kind := func(i int) string {
		if i < 0 || i >= len(lines) {
			return "edge"
		}
		l := lines[i]
		switch {
		case strings.TrimSpace(l) == "":
			return "blank"
		case strings.HasPrefix(l, "```"):
			return "fence"
		case strings.HasPrefix(l, "#"):
			return "heading"
		case strings.HasPrefix(l, "<!--"):
			return "comment"
		case strings.HasPrefix(l, "|"):
			return "table"
		case strings.HasPrefix(l, "- "), len(l) > 2 && l[0] >= '0' && l[0] <= '9' && strings.Contains(l[:min(len(l), 4)], ". "):
			return "list"
		}
		return "text"
	}
	apart := func(i int) bool { k := kind(i); return k == "blank" || k == "edge" }
	report := func(i int, rule string) { out = append(out, fmt.Sprintf("line %d: %s", i+1, rule)) }
	inFence := false
	for i, l := range lines {
		if l != strings.TrimRight(l, " \t") {
			report(i, "MD009")
		}
		k := kind(i)
		if inFence {
			if k == "fence" {
				inFence = false
				if !apart(i + 1) {
					report(i, "MD031")
				}
			}
			continue
		}
		switch k {
		case "blank":
			if kind(i-1) == "blank" {
				report(i, "MD012")
			}
		case "fence":
			inFence = true
			if !apart(i - 1) {
				report(i, "MD031")
			}
		case "heading":
			if !apart(i-1) && kind(i-1) != "comment" || !apart(i+1) {
				report(i, "MD022")
			}
		case "list", "table":
			rule := map[string]string{"list": "MD032", "table": "MD058"}[k]
			if kind(i-1) != k && !apart(i-1) || kind(i+1) != k && !apart(i+1) {
				report(i, rule)
			}
		}
	}
	if inFence {
		out = append(out, "end: MD031")
	}
	return out
}

// TestLintBlocks: lintBlocks finds each rule's break, and passes a
// document that keeps them.
func TestLintBlocks(t *testing.T) {
	tests := []struct {
		name, md string
		want     []string
	}{
		{"clean", "<!-- c -->\n## A\n\nText.\n\n- a\n- b\n\n| x |\n| --- |\n| 1 |\n\n```http\nGET /\n```\n\n1. one\n2. two\n", nil},
		{"two blank lines", "## A\n\n\nText.\n", []string{"line 3: MD012"}},
		{"blank line at the end", "## A\n\nText.\n\n", []string{"end: MD047"}},
		{"no newline at the end", "## A\n\nText.", []string{"end: MD047"}},
		{"trailing space", "## A\n\nText. \n", []string{"line 3: MD009"}},
		{"heading after text", "Text.\n## A\n\nMore.\n", []string{"line 2: MD022"}},
		{"text after heading", "## A\nText.\n", []string{"line 1: MD022"}},
		{"fence after text", "Text.\n```\nx\n```\n", []string{"line 2: MD031"}},
		{"text after fence", "```\nx\n```\nText.\n", []string{"line 3: MD031"}},
		{"unclosed fence", "```\nx\n", []string{"end: MD031"}},
		{"list after text", "Text.\n- a\n", []string{"line 2: MD032"}},
		{"text after list", "1. a\n2. b\nText.\n", []string{"line 2: MD032"}},
		{"table after text", "Text.\n| x |\n| --- |\n", []string{"line 2: MD058"}},
		{"text after table", "| x |\n| --- |\nText.\n", []string{"line 2: MD058"}},
		{"blank lines in a fence", "```\n\n\n```\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lintBlocks(tt.md); !slices.Equal(got, tt.want) {
				t.Errorf("lintBlocks = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestMarkdownBlocks: every test policy's Markdown, and variants that
// take the renderer's other branches (no headers, no Retry-After, each
// jitter mode, hostile names), keeps markdownlint's block rules. With
// RATELAB_MARKDOWN_OUT set to a directory it also writes each one there
// (as <variant>.md) for markdownlint itself to check (.ci/run does).
func TestMarkdownBlocks(t *testing.T) {
	out := os.Getenv("RATELAB_MARKDOWN_OUT")
	type variant struct {
		name string
		p    policy.Policy
	}
	var variants []variant
	for _, tp := range exporttest.Policies(t) {
		variants = append(variants, variant{tp.Name, tp.Policy})
	}
	p := exporttest.Named(t, "minimal")
	p.Defaults.Response = policy.Response{Status: 503, Headers: []policy.HeaderStyle{}, RetryAfter: new(false)}
	variants = append(variants, variant{"no headers, no Retry-After", p})
	for _, mode := range []string{"full", "equal", "decorrelated"} {
		p := exporttest.Named(t, "tiered")
		p.Sizing.Retry.JitterMode = mode
		variants = append(variants, variant{mode + " jitter", p})
	}
	variants = append(variants, variant{"hostile", exporttest.Hostile(t)})
	if len(variants) < 8 {
		t.Fatalf("%d variants; exporttest has fewer policies than expected", len(variants))
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			_, md := markdown(t, v.p)
			if probs := lintBlocks(md); len(probs) > 0 {
				t.Errorf("%q in\n%s", probs, md)
			}
			if out != "" {
				name := strings.ReplaceAll(strings.ReplaceAll(v.name, ",", ""), " ", "-") + ".md"
				if err := os.WriteFile(filepath.Join(out, name), []byte(md), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
