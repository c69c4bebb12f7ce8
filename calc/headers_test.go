package calc_test

import (
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// headerMap maps header names to values.
func headerMap(hs []calc.Header) map[string]string {
	m := map[string]string{}
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}

func TestHeadersAt(t *testing.T) {
	tests := []struct {
		name            string
		spec            algorithms.Spec
		m               calc.Moment
		allowed, reject map[string]string
	}{{
		// DESIGN.md §5: 100 per 60 s; 58 sent at 42 s leave 42, and the
		// window ends in 60 − 42 = 18 s. After the other 42 the next is
		// rejected until the window ends: Retry-After 18.
		name: "fixed window, the design's example",
		spec: algorithms.Spec{Algorithm: "fixed_window", Limit: 100, Window: time.Minute},
		m:    calc.Moment{At: 42, Used: 58},
		allowed: map[string]string{
			"RateLimit-Policy": `"default";q=100;w=60`, "RateLimit": `"default";r=42;t=18`,
			"RateLimit-Limit": "100", "RateLimit-Remaining": "42", "RateLimit-Reset": "18",
			"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "42", "X-RateLimit-Reset": "18",
		},
		reject: map[string]string{"RateLimit": `"default";r=0;t=18`, "Retry-After": "18", "RateLimit-Reset": "18"},
	}, {
		// 10/s, burst 100: 58 at once leave exactly 42 tokens; the 43rd
		// token is 0.1 s away (t = ⌈0.1⌉ = 1) and the bucket is full again
		// in 58/10 = 5.8 s (Reset 6). q = 100, w = ⌈100/10⌉ = 10. Once
		// empty: the next token in 0.1 s (Retry-After 1), full in 10 s.
		name: "token bucket",
		spec: algorithms.Spec{Algorithm: "token_bucket", Rate: 10, Burst: 100},
		m:    calc.Moment{Used: 58},
		allowed: map[string]string{
			"RateLimit-Policy": `"default";q=100;w=10`, "RateLimit": `"default";r=42;t=1`, "RateLimit-Reset": "6",
		},
		reject: map[string]string{"RateLimit": `"default";r=0;t=1`, "Retry-After": "1", "RateLimit-Reset": "10"},
	}, {
		// 100 per 60 s, 58 at 42 s. After the edge at 60 s the estimate is
		// ⌈58 × (60 − e)/60⌉, which drops to 57 at e = 60/58 = 1.034 s:
		// more quota in 18 + 1.034 = 19.03 s (t = 20). Reset when both
		// windows end: 120 − 42 = 78. With all 100 used at 42 s, a request
		// passes at e ≥ 60 − ⌊99 × 60/100⌋ = 0.6 s: 18.6 s, Retry-After 19.
		name: "sliding window",
		spec: algorithms.Spec{Algorithm: "sliding_window", Limit: 100, Window: time.Minute},
		m:    calc.Moment{At: 42, Used: 58},
		allowed: map[string]string{
			"RateLimit-Policy": `"default";q=100;w=60`, "RateLimit": `"default";r=42;t=20`, "RateLimit-Reset": "78",
		},
		reject: map[string]string{"RateLimit": `"default";r=0;t=19`, "Retry-After": "19"},
	}, {
		// 1000/s: the wait for a token is 1 ms, published as 1 s, never 0.
		name:    "Retry-After never 0",
		spec:    algorithms.Spec{Algorithm: "gcra", Rate: 1000, Burst: 5},
		m:       calc.Moment{Used: 5},
		allowed: map[string]string{"RateLimit": `"default";r=0;t=1`},
		reject:  map[string]string{"Retry-After": "1", "RateLimit": `"default";r=0;t=1`},
	}, {
		// Nothing used: everything remains and no more quota is coming.
		name:    "rested",
		spec:    algorithms.Spec{Algorithm: "sliding_log", Limit: 10, Window: 90 * time.Second},
		m:       calc.Moment{At: 5, Used: 0},
		allowed: map[string]string{"RateLimit-Policy": `"default";q=10;w=90`, "RateLimit": `"default";r=10;t=0`, "RateLimit-Reset": "0"},
		// 10 at 5 s leave the log at 95 s: Retry-After 90.
		reject: map[string]string{"Retry-After": "90"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := calc.HeadersAt(tt.spec, tt.m)
			if err != nil {
				t.Fatal(err)
			}
			if ex.Allowed.Status != 200 || ex.Rejected.Status != 429 {
				t.Errorf("statuses %d, %d", ex.Allowed.Status, ex.Rejected.Status)
			}
			got := headerMap(ex.Allowed.Headers)
			for k, v := range tt.allowed {
				if got[k] != v {
					t.Errorf("allowed %s: %q, want %q", k, got[k], v)
				}
			}
			if _, ok := got["Retry-After"]; ok {
				t.Error("Retry-After on a 200")
			}
			got = headerMap(ex.Rejected.Headers)
			for k, v := range tt.reject {
				if got[k] != v {
					t.Errorf("rejected %s: %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// Every algorithm's example is well formed: structured fields with whole
// numbers, w > 0, a Retry-After of at least 1 that is not earlier than t.
func TestHeadersWellFormed(t *testing.T) {
	policy := regexp.MustCompile(`^"default";q=[0-9]+;w=[1-9][0-9]*$`)
	limit := regexp.MustCompile(`^"default";r=[0-9]+;t=[0-9]+$`)
	digits := regexp.MustCompile(`^[0-9]+$`)
	for _, in := range []calc.Input{
		{Capacity: 12500, Clients: 100, P99: 50, Peak: 300, PeakSeconds: 2},
		{Capacity: 10, Clients: 10, P99: 0.05, Margin: 1, Window: 0.25},
	} {
		res := mustSize(t, in)
		if len(res.Headers) != 6 {
			t.Fatalf("%d header examples, want 6", len(res.Headers))
		}
		for _, ex := range res.Headers {
			for _, r := range []calc.Response{ex.Allowed, ex.Rejected} {
				h := headerMap(r.Headers)
				if !policy.MatchString(h["RateLimit-Policy"]) || !limit.MatchString(h["RateLimit"]) {
					t.Errorf("%s: %q / %q", ex.Algorithm, h["RateLimit-Policy"], h["RateLimit"])
				}
				for _, k := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
					if !digits.MatchString(h[k]) {
						t.Errorf("%s: %s = %q", ex.Algorithm, k, h[k])
					}
				}
			}
			ra := headerMap(ex.Rejected.Headers)["Retry-After"]
			if ra == "" || ra == "0" || !digits.MatchString(ra) {
				t.Errorf("%s: Retry-After %q", ex.Algorithm, ra)
			}
			if ex.Rejected.RetryAfter <= 0 || ex.Rejected.Remaining != 0 {
				t.Errorf("%s: rejected %+v", ex.Algorithm, ex.Rejected)
			}
			p, _ := res.Params(ex.Algorithm)
			want := p.LargestBurst.Value // q is the capacity…
			if ex.Algorithm == algorithms.NameFixedWindow {
				want /= 2 // …and the fixed window's largest burst is 2 × q
			}
			if float64(ex.Quota) != want {
				t.Errorf("%s: q = %d, largest burst %v", ex.Algorithm, ex.Quota, p.LargestBurst.Value)
			}
		}
	}
}

func TestHeadersAtErrors(t *testing.T) {
	spec := algorithms.Spec{Algorithm: "token_bucket", Rate: 1, Burst: 10}
	for _, tt := range []struct {
		m     calc.Moment
		field string
	}{
		{calc.Moment{Used: 11}, "used"},
		{calc.Moment{Used: -1}, "used"},
		{calc.Moment{At: -1, Used: 1}, "at"},
		{calc.Moment{At: 1e12, Used: 1}, "at"},
	} {
		if _, err := calc.HeadersAt(spec, tt.m); !slices.Equal(fields(err), []string{tt.field}) {
			t.Errorf("%+v: %v, want an error on %s", tt.m, err, tt.field)
		}
	}
	if _, err := calc.HeadersAt(algorithms.Spec{Algorithm: "gcra"}, calc.Moment{}); err == nil {
		t.Error("an invalid spec gave headers")
	}
}
