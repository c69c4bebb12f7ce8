package design

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/policy"
)

// gen draws random policies for the round-trip tests.
type gen struct{ r *rand.Rand }

func (g gen) maybe() bool { return g.r.IntN(2) == 0 }

// dec is a number in [lo, hi) with at most places decimals.
func (g gen) dec(lo, hi float64, places int) float64 {
	scale := 1.0
	for range places {
		scale *= 10
	}
	x := float64(int64((lo+g.r.Float64()*(hi-lo))*scale)) / scale
	return max(x, lo)
}

func (g gen) pick(options ...string) string { return options[g.r.IntN(len(options))] }

// duration is a duration of up to an hour with at most millisecond
// precision, sometimes with a nanosecond part.
func (g gen) duration() time.Duration {
	d := time.Duration(1+g.r.IntN(3600_000)) * time.Millisecond
	if g.r.IntN(8) == 0 {
		d += time.Duration(g.r.IntN(1000)) * time.Nanosecond
	}
	return d
}

// spec is a valid limit of algorithm name (a random one when "").
func (g gen) spec(name algorithms.Name) algorithms.Spec {
	if name == "" {
		name = algorithms.Names[g.r.IntN(len(algorithms.Names))]
	}
	s := algorithms.Spec{Algorithm: name}
	switch name {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		s.Rate, s.Burst = g.dec(0.01, 2000, 3), int64(1+g.r.IntN(5000))
	case algorithms.NameLeakyBucket:
		s.Rate, s.Queue = g.dec(0.01, 2000, 3), int64(g.r.IntN(5000))
	default:
		s.Limit, s.Window = int64(1+g.r.IntN(100000)), g.duration()
	}
	return s
}

// policy is a random policy; it may be invalid (the caller checks).
func (g gen) policy() policy.Policy {
	p := policy.Policy{APIVersion: policy.APIVersion, Kind: policy.Kind,
		Metadata: policy.Metadata{Name: g.pick("design", "public-api", "Orders API", "a: \"b\"", "12", "yes", "ü/ñ")}}
	if g.maybe() {
		p.Metadata.Description = g.pick("Limits of the public API.", "two\nlines", "100% & more = fun?", "#hash")
	}
	p.Service.Capacity = g.dec(10, 1e5, 2)
	if g.maybe() {
		p.Service.Headroom = new(g.dec(0, 0.9, 2))
	}
	if g.maybe() {
		p.Service.Replicas = 1 + g.r.IntN(10)
	}
	p.Service.Enforcement = calc.Enforcement(g.pick("", "shared", "local"))
	p.Service.OnStoreFailure = policy.StoreFailure(g.pick("", "fail_open", "fail_closed"))
	p.Defaults.Key = policy.Key(g.pick("", "ip", "api_key", "account", "global"))
	p.Defaults.Mode = policy.Mode(g.pick("", "enforce", "shadow"))
	p.Defaults.Response.Status = []int{0, 429, 503, 403}[g.r.IntN(4)]
	switch g.r.IntN(4) {
	case 0:
	case 1:
		p.Defaults.Response.Headers = []policy.HeaderStyle{}
	default:
		for _, h := range []policy.HeaderStyle{policy.HeadersIETF, policy.HeadersLegacy, policy.HeadersX} {
			if g.maybe() {
				p.Defaults.Response.Headers = append(p.Defaults.Response.Headers, h)
			}
		}
		g.r.Shuffle(len(p.Defaults.Response.Headers), func(i, j int) {
			hs := p.Defaults.Response.Headers
			hs[i], hs[j] = hs[j], hs[i]
		})
	}
	switch g.r.IntN(3) {
	case 1:
		p.Defaults.Response.RetryAfter = new(true)
	case 2:
		p.Defaults.Response.RetryAfter = new(false)
	}

	sized := g.r.IntN(3) != 0
	if sized {
		s := &p.Sizing
		s.Clients = 1 + g.r.IntN(2000)
		if g.maybe() {
			s.P50 = g.dec(0, 3, 2)
			s.P95 = s.P50 + g.dec(0, 3, 2)
			s.P99 = s.P95 + g.dec(0.01, 3, 2)
		}
		s.PercentileUnit = calc.PercentileUnit(g.pick("", "second", "minute"))
		if g.maybe() {
			s.Margin = g.dec(0.5, 5, 1)
		}
		if g.maybe() {
			s.Peak, s.PeakSeconds = g.dec(1, 200, 2), g.dec(0.5, 10, 2)
		}
		if g.maybe() {
			s.Window = g.duration()
		}
		if g.maybe() {
			s.MaxDelay = new(time.Duration(g.r.IntN(5000)) * time.Millisecond)
		}
		if g.maybe() {
			s.Retry = policy.Retry{Base: time.Duration(1+g.r.IntN(3000)) * time.Millisecond, Factor: g.dec(1, 4, 1),
				Cap: time.Duration(5+g.r.IntN(55)) * time.Second, Attempts: 1 + g.r.IntN(10)}
			if g.maybe() {
				s.Retry.Jitter = new(g.dec(0, 1, 2))
			}
			s.Retry.JitterMode = g.pick("", "proportional", "full", "equal", "decorrelated")
		}
	}
	names := []string{"anonymous", "free", "paid", "Partner Gold", "12", "yes"}
	g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	total := 0
	for i := range g.r.IntN(4) {
		t := policy.Tier{Name: names[i]}
		if g.maybe() {
			t.Key = policy.Key(g.pick("ip", "api_key", "account", "global"))
		}
		if sized {
			t.Clients = 1 + g.r.IntN(500)
			total += t.Clients
		}
		if g.maybe() {
			t.Multiplier = g.dec(0.1, 20, 2)
		}
		if g.r.IntN(3) != 0 {
			t.Limit = g.spec("")
		}
		p.Tiers = append(p.Tiers, t)
	}
	if total > 0 {
		p.Sizing.Clients = []int{0, total}[g.r.IntN(2)]
	}
	paths := []string{"/v1/reports", "/v1/orders/{id}", "/v1/exports", "/a b", "/ü"}
	g.r.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	for i := range g.r.IntN(4) {
		e := policy.Endpoint{Match: policy.Match{Method: g.pick("GET", "POST", "delete"), Path: paths[i]}}
		if g.maybe() {
			e.Cost = int64(1 + g.r.IntN(20))
		}
		if g.maybe() {
			e.Limit = g.spec("")
		}
		p.Endpoints = append(p.Endpoints, e)
	}
	if g.r.IntN(4) != 0 {
		p.Defaults.Limit = g.spec("")
	}
	if g.maybe() {
		p.Global.Limit = g.spec("")
	}
	if sized && g.maybe() {
		g.propose(&p)
	}
	return p
}

// propose replaces some limits of a sized policy with the calculator's
// proposal, so that the round trip also leaves parameters unpinned.
func (g gen) propose(p *policy.Policy) {
	res, err := calc.Size(p.Design())
	if err != nil {
		return
	}
	if g.maybe() && p.Defaults.Limit.Algorithm != "" {
		p.Defaults.Limit = res.Spec(p.Defaults.Limit.Algorithm)
	}
	largest := float64(p.Defaults.Limit.Capacity())
	for i := range p.Tiers {
		if a := p.Tiers[i].Limit.Algorithm; a != "" && g.maybe() {
			p.Tiers[i].Limit = res.Tiers[i].Spec(a)
		}
		if s := p.Tiers[i].Limit; s.Algorithm != "" {
			largest = max(largest, float64(s.Capacity()))
		} else if p.Defaults.Limit.Algorithm == "" {
			largest = max(largest, 0)
		}
	}
	if a := p.Global.Limit.Algorithm; a != "" && g.maybe() {
		p.Global.Limit = globalSizes(res, largest).Spec(a)
		if a := p.Global.Limit; a.Algorithm == algorithms.NameTokenBucket && g.maybe() {
			p.Global.Limit.Burst++ // one parameter off the proposal
		}
	}
}

// pattern is a valid chart pattern, changed from its defaults in
// parameters it reads.
func (g gen) pattern() algorithms.Pattern {
	info := algorithms.Patterns[g.r.IntN(len(algorithms.Patterns))]
	p := algorithms.DefaultPattern(info.Name)
	if g.maybe() {
		return p
	}
	for _, param := range info.Params {
		if !g.maybe() {
			continue
		}
		switch param {
		case "rate":
			p.Rate = g.dec(0.5, 20, 2)
		case "cost":
			p.Cost = int64(1 + g.r.IntN(5))
		case "seed":
			p.Seed = g.r.Uint64()
		case "count":
			p.Count = 1 + g.r.IntN(200)
		case "jitter":
			p.Jitter = g.dec(0, 1, 2)
		case "key_by":
			p.KeyBy = g.pick("ip", "api_key")
		}
	}
	return p
}

func encode(t *testing.T, p policy.Policy) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := policy.Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// valid reports whether p is a policy the policy file accepts.
func valid(t *testing.T, p policy.Policy) bool {
	_, err := policy.Decode(bytes.NewReader(encode(t, p)))
	return err == nil
}

// roundTrip checks policy → design → query → design → policy.
func roundTrip(t *testing.T, p policy.Policy, pat algorithms.Pattern) {
	t.Helper()
	want := encode(t, p)
	d := FromPolicy(p, pat)
	q := d.Query()
	again := ParseQuery(q)
	got, err := again.Policy()
	if err != nil {
		t.Fatalf("the design of a valid policy has problems: %v\nquery %s\n%s", err, q, want)
	}
	if y := encode(t, got); !bytes.Equal(y, want) {
		t.Fatalf("round trip changed the policy\nquery %s\n got:\n%s\nwant:\n%s", q, y, want)
	}
	if again.Query() != q {
		t.Fatalf("canonical query not stable:\n%s\n%s", q, again.Query())
	}
	if pat.Name != "" {
		gp, ok := again.Pattern()
		if !ok || gp != pat {
			t.Fatalf("pattern: got %+v (%v), want %+v\nquery %s", gp, ok, pat, q)
		}
	}
}

// TestPolicyRoundTrip: any valid policy survives import → design URL →
// export unchanged, byte for byte.
func TestPolicyRoundTrip(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(7, 11))}
	n, tried := 0, 0
	var seen struct{ unpinned, pinned, sized, unsized, shadow, inherit, none, global, endpoint int }
	algs := map[string]bool{}
	for n < 400 && tried < 5000 {
		tried++
		p := g.policy()
		if !valid(t, p) {
			continue
		}
		n++
		roundTrip(t, p, g.pattern())

		// What the generator covered.
		if p.Sized() {
			seen.sized++
		} else {
			seen.unsized++
		}
		if p.Defaults.Mode == policy.ModeShadow {
			seen.shadow++
		}
		if p.Defaults.Limit.Algorithm == "" {
			seen.none++
		}
		if p.Global.Limit.Algorithm != "" {
			seen.global++
		}
		for _, tr := range p.Tiers {
			if tr.Limit.Algorithm == "" {
				seen.inherit++
			}
			algs["tier "+string(tr.Limit.Algorithm)] = true
		}
		for _, e := range p.Endpoints {
			if e.Limit.Algorithm != "" {
				seen.endpoint++
			}
			algs["endpoint "+string(e.Limit.Algorithm)] = true
		}
		algs["default "+string(p.Defaults.Limit.Algorithm)] = true
		algs["global "+string(p.Global.Limit.Algorithm)] = true
		for _, l := range FromPolicy(p, algorithms.Pattern{}).Resolve().Limits {
			for _, pr := range l.Params {
				if pr.Pinned {
					seen.pinned++
				} else {
					seen.unpinned++
				}
			}
		}
	}
	t.Logf("%d of %d valid; %+v", n, tried, seen)
	if n < 300 {
		t.Fatalf("only %d of %d random policies are valid; want at least 300", n, tried)
	}
	if seen.unpinned < 50 || seen.pinned < 50 || seen.sized < 50 || seen.unsized < 50 || seen.shadow < 50 ||
		seen.inherit < 30 || seen.none < 30 || seen.global < 50 || seen.endpoint < 50 {
		t.Errorf("the generator covers too little: %+v", seen)
	}
	for _, scope := range []string{"default", "tier", "endpoint", "global"} {
		for _, a := range algorithms.Names {
			if !algs[scope+" "+string(a)] {
				t.Errorf("no %s limit of %s", scope, a)
			}
		}
	}
}

// TestDesignedPolicyRoundTrip: a policy the designer resolved from a URL
// (its limits partly proposals) survives the same round trip, and its
// import leaves the proposed parameters unpinned.
func TestDesignedPolicyRoundTrip(t *testing.T) {
	queries := []string{
		"",
		"capacity=2000&clients=200&p99=5",
		"capacity=2000&clients=200&p99=5&limit.algorithm=gcra&limit.burst=40&global.limit.algorithm=sliding_window",
		"capacity=5000&tiers.0.name=free&tiers.0.clients=100&tiers.1.name=paid&tiers.1.clients=10&tiers.1.multiplier=5&tiers.1.limit.algorithm=leaky_bucket&tiers.0.limit.algorithm=default",
		"capacity=100&clients=3&peak=300&peak_seconds=2&limit.algorithm=fixed_window&limit.window=30&global.limit.algorithm=none",
		"capacity=100&clients=3&endpoints.0.method=GET&endpoints.0.path=/x&endpoints.0.cost=8&endpoints.0.limit.algorithm=gcra&endpoints.0.limit.rate=1&endpoints.0.limit.burst=9",
	}
	for _, q := range queries {
		p, err := ParseQuery(q).Policy()
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		roundTrip(t, p, algorithms.Pattern{})
		imported := FromPolicy(p, algorithms.Pattern{}).Query()
		for _, pinned := range []string{"limit.rate", "limit.queue", "tiers.0.limit.rate", "global.limit.rate", "global.limit.burst"} {
			if strings.Contains(imported, pinned+"=") && !strings.Contains(q, pinned+"=") {
				t.Errorf("%s: import pins %s, a proposal: %s", q, pinned, imported)
			}
		}
	}
}

// TestExamplesRoundTrip: the policy file's examples survive the round trip.
func TestExamplesRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../policy/testdata/examples/*.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("want the policy examples, got %v (%v)", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := policy.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, p, algorithms.DefaultPattern(algorithms.PatternIdleThenBurst))
		})
	}
}

// TestEncodeIsCanonical: the comparison of encodings above is a fair test
// only if Encode is a function of the policy alone — decoding an encoding
// and encoding it again gives the same bytes.
func TestEncodeIsCanonical(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(3, 5))}
	for range 100 {
		p := g.policy()
		y := encode(t, p)
		q, err := policy.Decode(bytes.NewReader(y))
		if err != nil {
			continue
		}
		if y2 := encode(t, q); !bytes.Equal(y, y2) {
			t.Fatalf("Encode is not canonical:\n%s\n---\n%s", y, y2)
		}
	}
	if !slices.Equal(usedParams(algorithms.NameGCRA), []string{"rate", "burst"}) {
		t.Fatal("usedParams")
	}
}
