package exporttest

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/policy"
)

// Step is one request of a live check against a gateway on loopback and
// what it must get back: the status and, when Header is set, that
// header's value ("" for absent).
type Step struct {
	Method, Path string // "" means GET and /
	// Key and Tier are sent as X-API-Key and X-Tier (the exports' default
	// conventions); "" leaves the header out.
	Key, Tier     string
	Want          int
	Header, Value string
}

// target is the step's method and path, GET and / when not given.
func (st Step) target() (method, path string) {
	method, path = st.Method, st.Path
	if method == "" {
		method = http.MethodGet
	}
	if path == "" {
		path = "/"
	}
	return method, path
}

// Send sends the steps to base ("http://127.0.0.1:port") one after the
// other and reports every status or header that is not the step's. Each
// request has 3 s.
func Send(t *testing.T, base string, steps []Step) {
	t.Helper()
	client := &http.Client{Timeout: 3 * time.Second}
	for i, st := range steps {
		method, path := st.target()
		req, err := http.NewRequest(method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Key != "" {
			req.Header.Set("X-API-Key", st.Key)
		}
		if st.Tier != "" {
			req.Header.Set("X-Tier", st.Tier)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != st.Want {
			t.Errorf("step %d (%s %s, key %q, tier %q): status %d, want %d", i, method, path, st.Key, st.Tier, resp.StatusCode, st.Want)
		}
		if st.Header != "" && resp.Header.Get(st.Header) != st.Value {
			t.Errorf("step %d (%s %s, key %q, tier %q): %s %q, want %q", i, method, path, st.Key, st.Tier, st.Header, resp.Header.Get(st.Header), st.Value)
		}
	}
}

// EndpointRouting is the live check of endpoint limits: an endpoint limit
// counts only its method, on a template path and on an exact one; the
// client's limit applies on the endpoints too; a request rejected by one
// limit is counted in none. capacity(n) is the gateway's limit that admits
// n requests and refills only seconds later: the default limit takes 4,
// each endpoint 1.
func EndpointRouting(capacity func(n int64) algorithms.Spec) (policy.Policy, []Step) {
	p := policy.Policy{
		Metadata: policy.Metadata{Name: "endpoints"},
		Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: capacity(4)},
		Endpoints: []policy.Endpoint{
			{Match: policy.Match{Method: "POST", Path: "/orders/{id}"}, Limit: capacity(1)},
			{Match: policy.Match{Method: "GET", Path: "/reports"}, Limit: capacity(1)},
		},
	}
	k := "key-1"
	return p, []Step{
		{Method: "POST", Path: "/orders/1", Key: k, Want: 200}, // the template's limit 1/1, default 1/4
		{Method: "POST", Path: "/orders/2", Key: k, Want: 429}, // per client, not per order: full; counted nowhere
		{Method: "GET", Path: "/orders/1", Key: k, Want: 200},  // not the endpoint's method; default 2/4
		{Method: "GET", Path: "/reports", Key: k, Want: 200},   // the exact path's limit 1/1, default 3/4
		{Method: "GET", Path: "/reports", Key: k, Want: 429},   // its limit is full; counted nowhere
		{Method: "GET", Path: "/", Key: k, Want: 200},          // default 4/4
		{Method: "GET", Path: "/orders/3", Key: k, Want: 429},  // the default limit applies on the endpoints too
	}
}

// GlobalRouting is the live check of the global limit: it counts all
// clients together, 2 shared by three API keys whose own limits (10 each)
// are far from full.
func GlobalRouting(capacity func(n int64) algorithms.Spec) (policy.Policy, []Step) {
	p := policy.Policy{
		Metadata: policy.Metadata{Name: "global"},
		Defaults: policy.Defaults{Key: policy.KeyAPIKey, Limit: capacity(10)},
		Global:   policy.Global{Limit: capacity(2)},
	}
	return p, []Step{{Key: "a", Want: 200}, {Key: "b", Want: 200}, {Key: "c", Want: 429}}
}

// Expect checks the steps' statuses against package engine, the rule every
// target must follow: a step whose Want is not what the engine decides for
// p (the steps a millisecond apart, 200 admitted, the policy's status
// rejected) fails the test, so a live check proves agreement with the
// engine and not with a hand-written guess.
func Expect(t *testing.T, p policy.Policy, steps []Step) {
	t.Helper()
	e, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		method, path := st.target()
		d := e.Decide(engine.Request{At: time.Duration(i) * time.Millisecond, Key: st.Key, Tier: st.Tier, Method: method, Path: path})
		want := http.StatusOK
		if !d.Allowed && !d.Shadow {
			want = p.Defaults.Response.Code()
		}
		if st.Want != want {
			t.Errorf("step %d (%s %s, key %q, tier %q): the check wants %d, the engine decides %d", i, method, path, st.Key, st.Tier, st.Want, want)
		}
	}
}
