package shadow

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/policy"
)

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// feed yields the requests in order.
func feed(rs []Request) func() (Request, bool, error) {
	i := 0
	return func() (Request, bool, error) {
		if i == len(rs) {
			return Request{}, false, nil
		}
		i++
		return rs[i-1], true, nil
	}
}

func tb(rate float64, burst int64) algorithms.Spec {
	return algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: rate, Burst: burst}
}

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func replay(t *testing.T, p policy.Policy, rs []Request, o Options) Report {
	t.Helper()
	rep, err := Replay(p, feed(rs), o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestSpreadWholeSecond: five requests logged in the same whole second are
// replayed at 0, 0.2, 0.4, 0.6 and 0.8 s. A token bucket of rate 1/s and
// burst 2 admits 0 (1 token left) and 0.2 (1 + 0.2 − 1 = 0.2 left), then
// has 0.4, 0.6 and 0.8 tokens: three rejections. Had the five been one
// instant, the same three would be rejected; the difference shows with
// sub-second stamps below.
func TestSpreadWholeSecond(t *testing.T) {
	p := policy.Policy{Defaults: policy.Defaults{Limit: tb(1, 2)}}
	var rs []Request
	for range 5 {
		rs = append(rs, Request{At: t0, Key: "a", Method: "GET", Path: "/"})
	}
	var out bytes.Buffer
	rep := replay(t, p, rs, Options{Rejections: &out})
	if rep.Requests != 5 || rep.Rejected != 3 {
		t.Fatalf("requests %d rejected %d, want 5 and 3", rep.Requests, rep.Rejected)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Header and three rejections at 0.4, 0.6 and 0.8 s; the first has
	// 0.4 tokens and needs 1: Retry-After 0.6 s.
	if len(rows) != 4 {
		t.Fatalf("%d CSV rows, want a header and 3", len(rows))
	}
	wantTimes := []string{"2026-11-30T10:00:00.4Z", "2026-11-30T10:00:00.6Z", "2026-11-30T10:00:00.8Z"}
	for i, w := range wantTimes {
		if rows[i+1][0] != w || rows[i+1][1] != "a" || rows[i+1][5] != "defaults.limit" {
			t.Errorf("row %d = %v, want time %s, key a, limit defaults.limit", i+1, rows[i+1], w)
		}
	}
	if rows[1][7] != "0.6" {
		t.Errorf("first Retry-After %s s, want 0.6", rows[1][7])
	}
}

// TestSubSecondStampsKept: stamps with a fraction are replayed as given.
// Burst 2 at rate 1/s: requests at 0.5, 0.5005 and 0.501 s are one burst
// of three (the third finds 0.001 tokens): one rejection. Spread over the
// second, as whole-second stamps would be, they would not be.
func TestSubSecondStampsKept(t *testing.T) {
	p := policy.Policy{Defaults: policy.Defaults{Limit: tb(1, 2)}}
	rs := []Request{{At: at(0.5), Key: "a"}, {At: at(0.5005), Key: "a"}, {At: at(0.501), Key: "a"}}
	if rep := replay(t, p, rs, Options{}); rep.Rejected != 1 {
		t.Errorf("rejected %d, want 1", rep.Rejected)
	}
}

// TestTiersEndpointsGlobal follows requests through every kind of limit.
func TestTiersEndpointsGlobal(t *testing.T) {
	p := policy.Policy{
		Defaults: policy.Defaults{Limit: tb(1, 10)},
		Tiers: []policy.Tier{
			{Name: "paid", Limit: tb(100, 100)},
			{Name: "free"}, // inherits the default limit
		},
		Endpoints: []policy.Endpoint{
			{Match: policy.Match{Method: "GET", Path: "/v1/reports/{id}"}, Cost: 8},
			{Match: policy.Match{Method: "POST", Path: "/v1/orders"},
				Limit: algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 2, Window: time.Minute}},
		},
		Global: policy.Global{Limit: tb(0.001, 25)},
	}
	ms := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Millisecond) }
	rs := []Request{
		// Default client "d": a report costs 8 of its 10 tokens; the
		// second report finds 2 and is rejected by defaults.limit.
		{At: ms(1), Key: "d", Method: "GET", Path: "/v1/reports/42"},
		{At: ms(2), Key: "d", Method: "get", Path: "/v1/reports/{id}"},
		// Paid client "p": three orders; the fixed window admits 2 per
		// minute, so the third is rejected by endpoints[1].limit.
		{At: ms(3), Key: "p", Tier: "paid", Method: "POST", Path: "/v1/orders"},
		{At: ms(4), Key: "p", Tier: "paid", Method: "POST", Path: "/v1/orders"},
		{At: ms(5), Key: "p", Tier: "paid", Method: "POST", Path: "/v1/orders"},
		// Free client "f" (the default limit under the tier's name): the
		// global bucket of 25 has given 8 + 1 + 1 = 10, so a report (8)
		// passes, leaving 7 …
		{At: ms(6), Key: "f", Tier: "free", Method: "GET", Path: "/v1/reports/7"},
		// … so paid's report (8) is rejected by global.limit (it needs
		// 1 − 0.000006 more tokens at 0.001/s: Retry-After 999.994 s),
		// while a request of cost 1 still passes.
		{At: ms(7), Key: "p", Tier: "paid", Method: "GET", Path: "/v1/reports/8"},
		{At: ms(8), Key: "p", Tier: "paid", Method: "GET", Path: "/v1/other"},
		// An unknown tier gets the default limit.
		{At: ms(9), Key: "u", Tier: "gold", Method: "GET", Path: "/"},
	}
	var out bytes.Buffer
	rep := replay(t, p, rs, Options{Rejections: &out})
	want := map[string][2]int64{ // field → checked, rejected
		"defaults.limit":     {3, 1}, // d, d, u
		"tiers[0].limit":     {5, 0},
		"tiers[1].limit":     {1, 0},
		"endpoints[1].limit": {3, 1},
		// Every request meets the global limit; only admitted ones
		// are charged (d's second report and p's third order are not).
		"global.limit": {9, 1},
	}
	for _, l := range rep.Limits {
		w := want[l.Field]
		if l.Checked != w[0] || l.Rejected != w[1] {
			t.Errorf("%s: checked %d rejected %d, want %d and %d", l.Field, l.Checked, l.Rejected, w[0], w[1])
		}
	}
	if rep.Rejected != 3 || rep.Clients != 4 || rep.ClientsRejected != 2 {
		t.Errorf("rejected %d clients %d rejected clients %d, want 3, 4, 2", rep.Rejected, rep.Clients, rep.ClientsRejected)
	}
	// p was rejected twice, d once; f and u never.
	var got []string
	for _, o := range rep.Top {
		got = append(got, fmt.Sprintf("%s:%d/%d", o.Key, o.Rejected, o.Requests))
	}
	if strings.Join(got, " ") != "p:2/5 d:1/2" {
		t.Errorf("top = %v, want p:2/5 d:1/2", got)
	}
	if !strings.Contains(out.String(), ",GET,/v1/reports/8,global.limit,global,999.994\n") {
		t.Errorf("CSV does not blame the global limit:\n%s", out.String())
	}
}

// TestReordered: a request logged before the one above it is replayed at
// the later time and counted.
func TestReordered(t *testing.T) {
	p := policy.Policy{Defaults: policy.Defaults{Limit: tb(1, 1)}}
	rs := []Request{{At: at(10.5), Key: "a"}, {At: at(10.25), Key: "b"}, {At: at(11.5), Key: "a"}}
	rep := replay(t, p, rs, Options{})
	if rep.Reordered != 1 || rep.Rejected != 0 {
		t.Errorf("reordered %d rejected %d, want 1 and 0", rep.Reordered, rep.Rejected)
	}
	if !rep.Start.Equal(at(10.5)) || !rep.End.Equal(at(11.5)) {
		t.Errorf("span %v – %v, want 10.5 s – 11.5 s", rep.Start, rep.End)
	}
}

// TestBinsWiden: 300 s of one request per second with at most 120 bins:
// the width doubles from 1 s to 2 s (150 bins) and 4 s (75 bins), each
// holding 4 requests but the last (300 = 74·4 + 4: bins 0…74, the last
// holds seconds 296–299).
func TestBinsWiden(t *testing.T) {
	p := policy.Policy{Defaults: policy.Defaults{Limit: tb(10, 10)}}
	var rs []Request
	for i := range 300 {
		rs = append(rs, Request{At: at(float64(i) + 0.5), Key: "a"})
	}
	rep := replay(t, p, rs, Options{})
	if rep.Bin != 4*time.Second || len(rep.Series) != 75 {
		t.Fatalf("bin %v × %d, want 4s × 75", rep.Bin, len(rep.Series))
	}
	for i, b := range rep.Series {
		if b.Requests != 4 || !b.Start.Equal(at(0.5).Add(time.Duration(i)*4*time.Second)) {
			t.Errorf("bin %d = %+v, want 4 requests from %v", i, b, at(0.5).Add(time.Duration(i)*4*time.Second))
		}
	}
}

// TestTopLimit: Options.Top bounds the list.
func TestTopLimit(t *testing.T) {
	p := policy.Policy{Defaults: policy.Defaults{Limit: tb(0.001, 1)}}
	var rs []Request
	for i := range 20 {
		for j := range 2 + i%3 {
			rs = append(rs, Request{At: at(float64(i) + float64(j)*0.01 + 0.001), Key: fmt.Sprintf("k%02d", i)})
		}
	}
	rep := replay(t, p, rs, Options{Top: 3})
	if len(rep.Top) != 3 {
		t.Fatalf("%d offenders, want 3", len(rep.Top))
	}
	// Clients with i%3 == 2 send 4 and are rejected 3 times: k02, k05, k08 first.
	for i, k := range []string{"k02", "k05", "k08"} {
		if rep.Top[i].Key != k || rep.Top[i].Rejected != 3 {
			t.Errorf("top[%d] = %+v, want %s with 3 rejections", i, rep.Top[i], k)
		}
	}
}

func TestNextError(t *testing.T) {
	p := policy.Policy{Defaults: policy.Defaults{Limit: tb(1, 1)}}
	_, err := Replay(p, func() (Request, bool, error) { return Request{}, false, fmt.Errorf("disk on fire") }, Options{})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("err = %v, want the reader's error", err)
	}
}

// TestKeylessOnlyGlobal: a request without a key is not a client: only
// the global limit sees it.
func TestKeylessOnlyGlobal(t *testing.T) {
	p := policy.Policy{Defaults: policy.Defaults{Limit: tb(0.001, 1)}, Global: policy.Global{Limit: tb(0.001, 3)}}
	var rs []Request
	for i := range 4 {
		rs = append(rs, Request{At: at(0.1 + 0.01*float64(i)), Method: "GET", Path: "/"})
	}
	rep := replay(t, p, rs, Options{})
	// The default limit (burst 1) never sees them; the global burst of 3
	// admits three and rejects the fourth.
	if rep.Limits[0].Checked != 0 || rep.Limits[1].Checked != 4 || rep.Rejected != 1 {
		t.Errorf("default checked %d, global checked %d, rejected %d; want 0, 4, 1", rep.Limits[0].Checked, rep.Limits[1].Checked, rep.Rejected)
	}
}

// TestTiersOption: keys mapped to a tier get its limit.
func TestTiersOption(t *testing.T) {
	p := policy.Policy{Defaults: policy.Defaults{Limit: tb(0.001, 1)}, Tiers: []policy.Tier{{Name: "paid", Limit: tb(0.001, 5)}}}
	var rs []Request
	for i := range 5 {
		rs = append(rs, Request{At: at(0.1 + 0.01*float64(i)), Key: "k"})
	}
	if rep := replay(t, p, rs, Options{}); rep.Rejected != 4 {
		t.Errorf("default tier: rejected %d, want 4", rep.Rejected)
	}
	if rep := replay(t, p, rs, Options{Tiers: map[string]string{"k": "paid"}}); rep.Rejected != 0 {
		t.Errorf("paid via Options.Tiers: rejected %d, want 0", rep.Rejected)
	}
}

func TestFromRecord(t *testing.T) {
	rec := &accesslog.Record{UnixNano: 1_700_000_000_500_000_000, Key: []byte("-"), Method: []byte("GET"), Path: []byte("/v1/a?x=1"), Tier: []byte("paid")}
	q := FromRecord(rec)
	if q.Key != "" || q.Path != "/v1/a" || q.Method != "GET" || q.Tier != "paid" || !q.At.Equal(time.Unix(1_700_000_000, 500_000_000)) {
		t.Errorf("FromRecord = %+v", q)
	}
}

// TestCell: cells that a spreadsheet would read as a formula get a
// leading quote; others are left alone.
func TestCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""}, {"key", "key"}, {"/v1/x", "/v1/x"}, {"1.2.3.4", "1.2.3.4"},
		{"=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"}, {"+1", "'+1"}, {"-1", "'-1"}, {"@A1", "'@A1"},
		{"\tx", "'\tx"}, {"\rx", "'\rx"}, {"a=b", "a=b"},
	}
	for _, tt := range tests {
		if got := Cell(tt.in); got != tt.want {
			t.Errorf("Cell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMaxHeld: with MaxHeld 4, a whole second of 10 requests holds only
// 4: they are spread at 0, 0.25, 0.5 and 0.75 s, and the 6 others are
// replayed at 0.75 s, a burst, counted in Unspread. The next second is
// spread as usual. A token bucket of burst 1 and rate 0.001/s admits only
// the first request: the CSV lists the 11 others at their replay times.
func TestMaxHeld(t *testing.T) {
	p := policy.Policy{Defaults: policy.Defaults{Limit: tb(0.001, 1)}}
	var rs []Request
	for range 10 {
		rs = append(rs, Request{At: t0, Key: "a", Method: "GET", Path: "/"})
	}
	for range 2 {
		rs = append(rs, Request{At: at(1), Key: "a", Method: "GET", Path: "/"})
	}
	var out bytes.Buffer
	r, err := New(p, Options{Rejections: &out, MaxHeld: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range rs {
		r.Add(q)
		if n := cap(r.r.pending.items); n > 8 {
			t.Fatalf("%d requests' room held; want at most MaxHeld's", n)
		}
	}
	rep, err := r.Report()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 12 || rep.Unspread != 6 || rep.Rejected != 11 {
		t.Errorf("requests %d, unspread %d, rejected %d; want 12, 6, 11", rep.Requests, rep.Unspread, rep.Rejected)
	}
	rows, _ := csv.NewReader(&out).ReadAll()
	var times []string
	for _, row := range rows[1:] {
		times = append(times, strings.TrimPrefix(row[0], "2026-11-30T10:00:0"))
	}
	want := "0.25Z 0.5Z 0.75Z 0.75Z 0.75Z 0.75Z 0.75Z 0.75Z 0.75Z 1Z 1.5Z"
	if got := strings.Join(times, " "); got != want {
		t.Errorf("rejected at %s, want %s", got, want)
	}
}
