package shadow

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/policy"
)

// TestReplayIsTheEngine replays a combined access log with tiers (in any
// case, and unknown ones), templated endpoints with costs and limits, and a
// global limit, and decides the same requests with package engine at the
// times the package comment promises (the i-th of n requests logged in the
// same second at +i/n s). The would-be rejections are the same, row for
// row: time, key, limit and Retry-After.
func TestReplayIsTheEngine(t *testing.T) {
	p := policy.Policy{
		APIVersion: policy.APIVersion, Kind: policy.Kind, Metadata: policy.Metadata{Name: "identity"},
		Service:  policy.Service{Capacity: 1000},
		Defaults: policy.Defaults{Limit: tb(2, 6)},
		Tiers: []policy.Tier{
			{Name: "Paid", Limit: algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 5, Burst: 10}},
			{Name: "free"},
			{Name: "batch", Limit: algorithms.Spec{Algorithm: algorithms.NameSlidingWindow, Limit: 20, Window: 10 * time.Second}},
		},
		Endpoints: []policy.Endpoint{
			{Match: policy.Match{Method: "GET", Path: "/v1/reports/{id}"}, Cost: 3},
			{Match: policy.Match{Method: "POST", Path: "/v1/orders/{id}/items"}, Cost: 2,
				Limit: algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 4, Window: 5 * time.Second}},
			{Match: policy.Match{Method: "GET", Path: "/v1/reports/latest"}, Cost: 1}, // shadowed by endpoints[0]
		},
		Global: policy.Global{Limit: tb(12, 30)},
	}

	// The log: 3000 requests over about ten minutes from 12 clients.
	r := rand.New(rand.NewPCG(3, 4))
	tiers := []string{"paid", "PAID", "free", "batch", "gold", ""}
	paths := []string{"GET /v1/reports/1", "GET /v1/reports/latest", "POST /v1/orders/9/items", "POST /v1/orders/", "GET /v1/items"}
	var log strings.Builder
	type line struct {
		sec    int64
		key    string
		method string
		path   string
		tier   string
	}
	var lines []line
	sec := t0.Unix()
	for range 3000 {
		if r.IntN(3) == 0 {
			sec += int64(r.IntN(2))
		}
		c := r.IntN(12)
		mp := strings.Fields(paths[r.IntN(len(paths))])
		l := line{sec: sec, key: fmt.Sprintf("10.0.0.%d", c), method: mp[0], path: mp[1], tier: tiers[c%len(tiers)]}
		lines = append(lines, l)
		tier := l.tier
		if tier == "" {
			tier = "-"
		}
		fmt.Fprintf(&log, "%s - - [%s] \"%s %s HTTP/1.1\" 200 5 \"-\" \"test\" \"%s\"\n",
			l.key, time.Unix(l.sec, 0).UTC().Format("02/Jan/2006:15:04:05 -0700"), l.method, l.path, tier)
	}

	// Through the replay, as ratelab measure feeds it.
	var rejections bytes.Buffer
	rp, err := New(p, Options{Rejections: &rejections})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := accesslog.NewReader(strings.NewReader(log.String()), accesslog.Config{TierExtra: 1})
	if err != nil {
		t.Fatal(err)
	}
	for rd.Scan() {
		rp.AddRecord(rd.Record())
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	rep, err := rp.Report()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&rejections).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range rows[1:] {
		got = append(got, strings.Join([]string{row[0], row[1], row[6], row[7]}, " "))
	}

	// Through the engine, spreading each second's requests over it.
	e, err := engine.New(p)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	names := map[string]int{}
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && lines[j].sec == lines[i].sec {
			j++
		}
		for k := i; k < j; k++ {
			l := lines[k]
			at := time.Duration(l.sec-t0.Unix())*time.Second + time.Duration(int64(k-i)*int64(time.Second)/int64(j-i))
			d := e.Decide(engine.Request{At: at, Key: l.key, Tier: l.tier, Method: l.method, Path: l.path})
			if d.Allowed {
				continue
			}
			name := e.Limits()[d.Rejected].Name
			names[name]++
			ra := "never"
			if d.RetryAfter != algorithms.Never {
				ra = strconv.FormatFloat(d.RetryAfter.Round(time.Millisecond).Seconds(), 'f', -1, 64)
			}
			want = append(want, strings.Join([]string{t0.Add(at).UTC().Format(time.RFC3339Nano), l.key, name, ra}, " "))
		}
		i = j
	}

	if int64(len(want)) != rep.Rejected || len(got) != len(want) {
		t.Fatalf("replay rejected %d (CSV rows %d), engine %d", rep.Rejected, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rejection %d: replay %q, engine %q", i, got[i], want[i])
		}
	}
	// The log must exercise every kind of limit, or the test proves little.
	for _, n := range []string{"default", "tier_paid", "tier_free", "tier_batch", "endpoint_1", "global"} {
		if names[n] == 0 {
			t.Errorf("no request was rejected by %s (rejections by limit: %v)", n, names)
		}
	}
}
