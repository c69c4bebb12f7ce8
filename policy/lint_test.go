package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

func TestLint(t *testing.T) {
	const svc = "service: {capacity: 1000}\n"
	const limit = "defaults: {limit: {algorithm: token_bucket, rate: 5, burst: 50}}\n"
	tests := []struct {
		name string
		doc  string
		// want are "id severity line:col" of the findings that matter
		// here (0:0: no position); other findings may come too.
		want []string
		// not are IDs that must not be found.
		not []string
	}{
		{"clean", svc + limit, nil, []string{LintShadowMode, LintFailClosed, LintNoLimit, LintInvalid}},
		{"shadow mode", svc + "defaults:\n  mode: shadow\n  limit: {algorithm: gcra, rate: 5, burst: 50}\n",
			[]string{"shadow_mode warning 6:3"}, nil},
		{"fail closed", "service: {capacity: 1000, on_store_failure: fail_closed}\n" + limit,
			[]string{"fail_closed warning 4:27"}, nil},
		{"local replicas", "service: {capacity: 1000, replicas: 4, enforcement: local}\n" + limit,
			[]string{"local_replicas_multiply warning 4:40"}, nil},
		{"shared replicas", "service: {capacity: 1000, replicas: 4, enforcement: shared}\n" + limit, nil, []string{LintLocalReplicas}},
		{"no limit", svc, []string{"no_limit error 0:0"}, nil},
		{"tier above global", svc + limit + "tiers:\n  - {name: big, limit: {algorithm: token_bucket, rate: 500, burst: 100}}\nglobal: {limit: {algorithm: token_bucket, rate: 100, burst: 200}}\n",
			[]string{"tier_above_global warning 7:17"}, nil},
		{"tier below global", svc + limit + "tiers:\n  - {name: small, limit: {algorithm: token_bucket, rate: 50, burst: 100}}\nglobal: {limit: {algorithm: token_bucket, rate: 100, burst: 200}}\n",
			nil, []string{LintTierOverGlobal}},
		{"burst below cost", svc + "defaults: {limit: {algorithm: token_bucket, rate: 5, burst: 5}}\nendpoints:\n  - {match: {method: GET, path: /r}, cost: 8}\n",
			[]string{"burst_below_cost error 5:12"}, nil},
		{"endpoint's own limit below its cost", svc + limit + "endpoints:\n  - {match: {method: GET, path: /r}, cost: 8, limit: {algorithm: fixed_window, limit: 4, window: 60s}}\n  - {match: {method: GET, path: /s}, limit: {algorithm: fixed_window, limit: 4, window: 60s}}\n",
			[]string{"burst_below_cost error 7:47", "fixed_window_boundary warning 7:47"}, nil},
		{"fixed window", svc + "defaults: {limit: {algorithm: fixed_window, limit: 100, window: 60s}}\n",
			[]string{"fixed_window_boundary warning 5:12"}, nil},
		{"burst of one", svc + "defaults: {limit: {algorithm: gcra, rate: 5, burst: 1}}\n",
			[]string{"burst_of_one warning 5:12"}, nil},
		{"overcommit from sizing", "service: {capacity: 100}\n" + limit + "sizing: {clients: 1000, p99: 1}\n",
			[]string{"overcommit warning 4:11"}, nil},
		{"undersized from sizing", "service: {capacity: 100}\n" + limit + "sizing: {clients: 1000, p50: 1, p99: 2}\n",
			[]string{"undersized error 4:11"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Decode(strings.NewReader(head + tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			fs := Lint(p)
			var got []string
			for _, f := range fs {
				got = append(got, f.ID+" "+string(f.Severity)+" "+strconv.Itoa(f.Line)+":"+strconv.Itoa(f.Column))
				if f.Message == "" || f.Fix == "" {
					t.Errorf("%s: want a message and a fix, got %+v", f.ID, f)
				}
			}
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("want %q, got %q", w, got)
				}
			}
			for _, id := range tt.not {
				if slices.ContainsFunc(fs, func(f Finding) bool { return f.ID == id }) {
					t.Errorf("want no %s, got %q", id, got)
				}
			}
			for i := 1; i < len(fs); i++ {
				if rank(fs[i].Severity) < rank(fs[i-1].Severity) {
					t.Errorf("findings not ordered by severity: %q", got)
				}
			}
		})
	}
}

// TestLintInvalid: Lint on a policy built in code reports values out of
// range, which Decode would refuse, as errors.
func TestLintInvalid(t *testing.T) {
	p := FromDesign(calc.Input{Capacity: 100, Clients: 10})
	p.Defaults.Response.Status = 200
	fs := Lint(p)
	if len(fs) == 0 || fs[0].ID != LintInvalid || fs[0].Field != "defaults.response.status" || fs[0].Severity != calc.SeverityError {
		t.Errorf("got %+v, want an invalid error on defaults.response.status first", fs)
	}
}

// TestLintExamples: the example policies have no error findings, and none
// of the checks below: their text exports, their global limits are above
// every client's rate and capacity (and none has a designed peak), their
// endpoints have distinct literal paths, they answer 429 with
// Retry-After, and only their anonymous tiers are keyed by IP. (tiered's
// hourly fixed window on POST /v1/exports keeps its boundary warning.)
func TestLintExamples(t *testing.T) {
	none := []string{LintNotExportable, LintGlobalBelowClient, LintShadowedEndpoint, LintRejectStatus, LintNoRetryAfter, LintTierKeyedByIP}
	for _, name := range []string{"public-api", "minimal", "tiered"} {
		p := decodeFile(t, "testdata/examples/"+name+".yaml")
		for _, f := range Lint(p) {
			if f.Severity == calc.SeverityError || slices.Contains(none, f.ID) {
				t.Errorf("%s: %+v", name, f)
			}
		}
	}
}

// decodeFile decodes a policy file, failing the test on any error.
func decodeFile(t *testing.T, name string) Policy {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

// TestLintFindings checks findings one at a time: the ID with its
// severity, field, position and the numbers its message must name, and,
// for each, a policy that must not get it.
func TestLintFindings(t *testing.T) {
	const svc = "service: {capacity: 1000}\n"
	const limit = "defaults: {limit: {algorithm: token_bucket, rate: 5, burst: 50}}\n"
	// The designed peak of the known case: 300 requests/s for 2 s from one
	// client, 600 requests, through a per-client token bucket sized for
	// it (rate 100, burst 401) and a global one of rate 100, burst 100.
	// What each limit admits is counted here by running the limiters.
	peakClient := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 100, Burst: 401}
	peakGlobal := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 100, Burst: 100}
	clientPasses := admittedOfPeak(t, peakClient, 300, 600)
	globalPasses := admittedOfPeak(t, peakGlobal, 300, 600)
	if clientPasses != 600 || globalPasses >= 600 {
		t.Fatalf("the known case is not one: the client limit admits %d, the global %d of 600", clientPasses, globalPasses)
	}
	const peak = svc + "defaults: {limit: {algorithm: token_bucket, rate: 100, burst: 401}}\nsizing: {clients: 1, peak: 300, peak_seconds: 2}\n"

	tests := []struct {
		name     string
		doc      string // after head, unless it starts with "apiVersion"
		id       string
		sev      calc.Severity // "" = the policy must not get id
		field    string
		line     int
		col      int
		contains []string // in the message
	}{
		// Global limit below one client.
		{"global cuts the designed peak", peak + "global: {limit: {algorithm: token_bucket, rate: 100, burst: 100}}\n",
			LintGlobalBelowClient, calc.SeverityError, "global.limit", 7, 10, []string{strconv.Itoa(globalPasses), "600", "300", "defaults.limit"}},
		// A fixed window of 100 per second: the 2 s of the peak touch at
		// most 3 windows, 300 requests, half the peak.
		{"window global cuts the peak", peak + "global: {limit: {algorithm: fixed_window, limit: 100, window: 1s}}\n",
			LintGlobalBelowClient, calc.SeverityError, "global.limit", 7, 10, []string{strconv.Itoa(100 * 3), "600"}},
		{"global cuts a tier's peak", svc + limit + "sizing: {peak: 300, peak_seconds: 2}\ntiers:\n  - {name: paid, clients: 1, limit: {algorithm: gcra, rate: 100, burst: 401}}\nglobal: {limit: {algorithm: token_bucket, rate: 100, burst: 100}}\n",
			LintGlobalBelowClient, calc.SeverityError, "global.limit", 9, 10, []string{"tier paid", strconv.Itoa(globalPasses), "600"}},
		{"global admits the peak", peak + "global: {limit: {algorithm: token_bucket, rate: 100, burst: 401}}\n",
			LintGlobalBelowClient, "", "", 0, 0, nil},
		{"global below a client's burst", svc + limit + "global: {limit: {algorithm: token_bucket, rate: 100, burst: 20}}\n",
			LintGlobalBelowClient, calc.SeverityWarning, "global.limit", 6, 10, []string{"50", "20"}},
		{"global below a client's rate", svc + "defaults: {limit: {algorithm: token_bucket, rate: 50, burst: 50}}\nglobal: {limit: {algorithm: gcra, rate: 10, burst: 1000}}\n",
			LintGlobalBelowClient, calc.SeverityWarning, "global.limit", 6, 10, []string{"10 requests/s", "50 requests/s"}},
		{"global above every client", svc + limit + "tiers:\n  - {name: free}\nglobal: {limit: {algorithm: token_bucket, rate: 100, burst: 200}}\n",
			LintGlobalBelowClient, "", "", 0, 0, nil},

		// Shadowed endpoints.
		{"variable shadows a literal", svc + limit + "endpoints:\n  - {match: {method: GET, path: \"/v1/items/{id}\"}}\n  - {match: {method: GET, path: /v1/items/latest}, cost: 5}\n",
			LintShadowedEndpoint, calc.SeverityWarning, "endpoints[1].match", 8, 6, []string{"endpoints[1] (GET /v1/items/latest)", "endpoints[0] (GET /v1/items/{id})"}},
		{"variable shadows a variable", svc + limit + "endpoints:\n  - {match: {method: get, path: \"/a/{id}/b\"}}\n  - {match: {method: GET, path: \"/a/{key}/b\"}, cost: 5}\n",
			LintShadowedEndpoint, calc.SeverityWarning, "endpoints[1].match", 8, 6, []string{"/a/{key}/b", "/a/{id}/b"}},
		{"literal before variable", svc + limit + "endpoints:\n  - {match: {method: GET, path: /v1/items/latest}}\n  - {match: {method: GET, path: \"/v1/items/{id}\"}}\n",
			LintShadowedEndpoint, "", "", 0, 0, nil},
		{"other method", svc + limit + "endpoints:\n  - {match: {method: POST, path: \"/v1/items/{id}\"}}\n  - {match: {method: GET, path: /v1/items/latest}}\n",
			LintShadowedEndpoint, "", "", 0, 0, nil},
		{"more segments", svc + limit + "endpoints:\n  - {match: {method: GET, path: \"/a/{id}\"}}\n  - {match: {method: GET, path: /a/b/c}}\n",
			LintShadowedEndpoint, "", "", 0, 0, nil},
		{"variable needs a segment", svc + limit + "endpoints:\n  - {match: {method: GET, path: \"/a/{id}\"}}\n  - {match: {method: GET, path: /a/}}\n",
			LintShadowedEndpoint, "", "", 0, 0, nil},

		// The response.
		{"status 403", svc + "defaults:\n  response: {status: 403}\n  limit: {algorithm: token_bucket, rate: 5, burst: 50}\n",
			LintRejectStatus, calc.SeverityWarning, "defaults.response.status", 6, 14, []string{"403"}},
		{"status 503", svc + "defaults:\n  response: {status: 503}\n  limit: {algorithm: token_bucket, rate: 5, burst: 50}\n",
			LintRejectStatus, "", "", 0, 0, nil},
		{"status 429", svc + "defaults:\n  response: {status: 429}\n  limit: {algorithm: token_bucket, rate: 5, burst: 50}\n",
			LintRejectStatus, "", "", 0, 0, nil},
		{"no Retry-After", svc + "defaults:\n  response: {retry_after: false}\n  limit: {algorithm: token_bucket, rate: 5, burst: 50}\n",
			LintNoRetryAfter, calc.SeverityWarning, "defaults.response.retry_after", 6, 14, []string{"retry_after is false"}},
		{"Retry-After", svc + "defaults:\n  response: {retry_after: true}\n  limit: {algorithm: token_bucket, rate: 5, burst: 50}\n",
			LintNoRetryAfter, "", "", 0, 0, nil},

		// Tiers keyed by IP.
		{"paid tier keyed by ip", svc + limit + "tiers:\n  - {name: paid, key: ip}\n",
			LintTierKeyedByIP, calc.SeverityWarning, "tiers[0].key", 7, 18, []string{"paid"}},
		{"tier inherits ip", svc + "defaults:\n  key: ip\n  limit: {algorithm: token_bucket, rate: 5, burst: 50}\ntiers:\n  - {name: Anon}\n  - {name: partner}\n",
			LintTierKeyedByIP, calc.SeverityWarning, "defaults.key", 6, 3, []string{"partner"}},
		{"anonymous tiers keyed by ip", svc + "defaults:\n  key: ip\n  limit: {algorithm: token_bucket, rate: 5, burst: 50}\ntiers:\n  - {name: GUEST}\n  - {name: Public, key: ip}\n  - {name: Unauthenticated}\n  - {name: paid, key: api_key}\n",
			LintTierKeyedByIP, "", "", 0, 0, nil},

		// Text no export carries.
		{"line separator in name", "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: \"a\\u2028location / {}\"}\n" + svc + limit,
			LintNotExportable, calc.SeverityError, "metadata.name", 3, 12, []string{`\u2028`, "U+2028"}},
		{"next line in description", "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata:\n  name: t\n  description: \"ok\\u0085-- injected\"\n" + svc + limit,
			LintNotExportable, calc.SeverityError, "metadata.description", 5, 3, []string{`\u0085`, "U+0085"}},
		{"quote in tier name", svc + limit + "tiers:\n  - {name: 'pa\"id'}\n",
			LintNotExportable, calc.SeverityError, "tiers[0].name", 7, 6, []string{`pa\"id`}},
		{"space in path", svc + limit + "endpoints:\n  - {match: {method: GET, path: /a b}}\n",
			LintNotExportable, calc.SeverityError, "endpoints[0].match.path", 7, 27, []string{`"/a b"`}},
		{"exportable text", "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: Public API, description: \"Limits – sized from May's traffic 🚦\"}\n" + svc + limit + "tiers:\n  - {name: paid-plus.v2}\nendpoints:\n  - {match: {method: GET, path: \"/v1/a%20b/{id}\"}}\n",
			LintNotExportable, "", "", 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := tt.doc
			if !strings.HasPrefix(doc, "apiVersion") {
				doc = head + doc
			}
			p, err := Decode(strings.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			fs := Lint(p)
			var got []Finding
			for _, f := range fs {
				if f.ID == tt.id {
					got = append(got, f)
				}
			}
			if tt.sev == "" {
				if len(got) > 0 {
					t.Fatalf("want no %s, got %+v", tt.id, got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one %s, got %+v (all: %+v)", tt.id, got, fs)
			}
			f := got[0]
			if f.Severity != tt.sev || f.Field != tt.field || f.Line != tt.line || f.Column != tt.col {
				t.Errorf("got %s %s at %d:%d, want %s %s at %d:%d", f.Severity, f.Field, f.Line, f.Column, tt.sev, tt.field, tt.line, tt.col)
			}
			for _, c := range tt.contains {
				if !strings.Contains(f.Message, c) {
					t.Errorf("message lacks %q: %s", c, f.Message)
				}
			}
			if f.Fix == "" {
				t.Errorf("no fix: %+v", f)
			}
		})
	}
}

// admittedOfPeak counts how many of n requests, evenly spaced at peak
// requests/s from one client, the limiter of s admits.
func admittedOfPeak(t *testing.T, s algorithms.Spec, peak, n int) int {
	t.Helper()
	l, err := algorithms.New(s)
	if err != nil {
		t.Fatal(err)
	}
	admitted := 0
	for k := range n {
		if l.Allow("c", time.Duration(k)*time.Second/time.Duration(peak), 1).Allowed {
			admitted++
		}
	}
	return admitted
}

// TestExportErrors: every problem is reported, in document order, with
// its field, the value and what is allowed; text a config comment can
// carry passes.
func TestExportErrors(t *testing.T) {
	refused := []string{"a\nb", "a\rb", "a\u0085b", "a\u2028b", "a\u2029b", "a\tb", "a\vb", "a\fb", "a\x7fb", "a\u009bb", "a\xffb"}
	for _, text := range refused {
		p := Policy{Metadata: Metadata{Name: text, Description: "ok " + text}}
		es := p.ExportErrors()
		if len(es) != 2 || es[0].Field != "metadata.name" || es[1].Field != "metadata.description" {
			t.Errorf("%q: got %v, want errors on metadata.name and metadata.description", text, es)
			continue
		}
		if !strings.Contains(es[0].Message, strconv.Quote(text)) || !strings.Contains(es[0].Message, "want ") || es[0].Hint == "" {
			t.Errorf("%q: %v does not name the value, what is allowed and a fix", text, es[0])
		}
	}
	for _, text := range []string{"public-api", "Limits – sized from May's traffic 🚦", "\uFFFD is fine when it is UTF-8", ""} {
		if es := (Policy{Metadata: Metadata{Name: text, Description: text}}).ExportErrors(); es != nil {
			t.Errorf("%q: got %v, want none", text, es)
		}
	}

	p := Policy{
		Metadata:  Metadata{Name: "ok"},
		Tiers:     []Tier{{Name: "paid"}, {Name: "pa;id"}, {Name: ""}},
		Endpoints: []Endpoint{{Match: Match{Path: "/v1/{id}"}}, {Match: Match{Path: "/v1/x{id}"}}, {Match: Match{Path: "v1"}}},
	}
	var fields []string
	for _, e := range p.ExportErrors() {
		fields = append(fields, e.Field)
	}
	want := []string{"tiers[1].name", "tiers[2].name", "endpoints[1].match.path", "endpoints[2].match.path"}
	if !slices.Equal(fields, want) {
		t.Errorf("got %q, want %q", fields, want)
	}
}

// TestLintSizedIsLint: given the sizing, LintSized finds what Lint finds.
func TestLintSizedIsLint(t *testing.T) {
	files, _ := filepath.Glob("testdata/examples/*.yaml")
	for _, file := range files {
		p, err := DecodeFile(file, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := calc.Size(p.Design())
		if err != nil {
			continue // not sized: Lint does not size it either
		}
		if a, b := fmt.Sprint(Lint(p)), fmt.Sprint(LintSized(p, res)); a != b {
			t.Errorf("%s: Lint\n%s\nLintSized\n%s", file, a, b)
		}
	}
}
