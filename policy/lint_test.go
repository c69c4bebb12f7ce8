package policy

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

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

// TestLintExamples: the example policies have no error findings.
func TestLintExamples(t *testing.T) {
	for _, name := range []string{"public-api", "minimal", "tiered"} {
		p := decodeFile(t, "testdata/examples/"+name+".yaml")
		for _, f := range Lint(p) {
			if f.Severity == calc.SeverityError {
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
