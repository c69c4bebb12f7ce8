package measure

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/calc"
)

// t0 starts a UTC minute.
var t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

// writeLine writes one combined-format line, its time in UTC−7.
func writeLine(w io.Writer, ip string, at time.Time, method, path string) {
	z := time.FixedZone("", -7*3600)
	fmt.Fprintf(w, "%s - - [%s] \"%s %s HTTP/1.1\" 200 512 \"-\" \"test/1.0\"\n",
		ip, at.In(z).Format("02/Jan/2006:15:04:05 -0700"), method, path)
}

// knownLog is a combined log whose rates are known by construction. Client
// i of 100 (address 10.0.0.i) sends
//   - in minute 0: i requests, all in second i mod 60 (GET /v1/orders/<n>);
//   - in minute 1: i requests in second 10 (POST /v1/orders) and i more in
//     second 40 (GET /v1/users/<uuid>);
//
// so its busiest second has i requests and its busiest minute 2i. Three
// keyless requests (address "-", GET /health) come at minute 2, and two
// bad lines.
func knownLog() string {
	var b strings.Builder
	for s := range 60 {
		for i := 1; i <= 100; i++ {
			if i%60 == s {
				for n := range i {
					writeLine(&b, fmt.Sprintf("10.0.0.%d", i), t0.Add(time.Duration(s)*time.Second), "GET", fmt.Sprintf("/v1/orders/%d", 1000*i+n))
				}
			}
		}
	}
	b.WriteString("this line is bad\n")
	for _, s := range []int{10, 40} {
		for i := 1; i <= 100; i++ {
			for n := range i {
				at := t0.Add(time.Minute + time.Duration(s)*time.Second)
				if s == 10 {
					writeLine(&b, fmt.Sprintf("10.0.0.%d", i), at, "POST", "/v1/orders?n="+fmt.Sprint(n))
				} else {
					writeLine(&b, fmt.Sprintf("10.0.0.%d", i), at, "GET", fmt.Sprintf("/v1/users/6ba7b810-9dad-11d1-80b4-%012d", n))
				}
			}
		}
	}
	for range 3 {
		writeLine(&b, "-", t0.Add(2*time.Minute), "GET", "/health")
	}
	b.WriteString("10.0.0.1 - - [01/Foo/2024:00:00:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"\n")
	return b.String()
}

func TestMeasureKnown(t *testing.T) {
	res, err := Measure(context.Background(), strings.NewReader(knownLog()), accesslog.Config{}, Options{TopClients: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Requests: 3 × (1 + … + 100) = 15150 from clients, and 3 keyless.
	if res.Requests != 15153 || res.NoKey != 3 || res.Clients != 100 {
		t.Errorf("requests %d, no key %d, clients %d; want 15153, 3, 100", res.Requests, res.NoKey, res.Clients)
	}
	if res.Lines != 15155 || res.Bad.Count != 2 || res.Bad.ByReason[accesslog.ReasonNoTime] != 1 || res.Bad.ByReason[accesslog.ReasonBadTime] != 1 {
		t.Errorf("lines %d, bad %+v; want 15155 lines, one line without time and one bad time", res.Lines, res.Bad)
	}
	// The first request is client 60's, in second 60 mod 60 = 0.
	if !res.From.Equal(t0) || !res.To.Equal(t0.Add(2*time.Minute)) || res.Span != 2*time.Minute {
		t.Errorf("from %v to %v, span %v; want %v to %v, 2m", res.From, res.To, res.Span, t0, t0.Add(2*time.Minute))
	}
	// 1 s rates are 1…100: nearest rank ⌈0.5·100⌉ = 50 → 50, ⌈0.95·100⌉ =
	// 95 → 95, ⌈0.99·100⌉ = 99 → 99. 1 min rates are 2, 4, …, 200: the
	// same ranks give 100, 190, 198. The service's busiest second is second
	// 10 of minute 1, when every client sends i: 5050 (minute 0's seconds
	// hold at most 40 + 100 = 140); its busiest minute is minute 1, 10100.
	want := []WindowStats{
		{Window: time.Second, Seconds: 1, P50: 50, P95: 95, P99: 99, Max: 100, MaxKey: "10.0.0.100",
			ServicePeak: 5050, ServicePeakAt: t0.Add(70 * time.Second)},
		{Window: time.Minute, Seconds: 60, P50: 100, P95: 190, P99: 198, Max: 200, MaxKey: "10.0.0.100",
			ServicePeak: 10100, ServicePeakAt: t0.Add(time.Minute)},
	}
	if !reflect.DeepEqual(want, res.Windows) {
		t.Errorf("windows:\ngot  %+v\nwant %+v", res.Windows, want)
	}
	// Client 100's busiest second: 100 requests in second 100 mod 60 = 40
	// of minute 0 and again in seconds 10 and 40 of minute 1; the earliest
	// counts. Client 99: second 39; client 98: second 38.
	wantTop := []ClientPeak{
		{Key: "10.0.0.100", Requests: 300, Peaks: []Peak{{100, t0.Add(40 * time.Second)}, {200, t0.Add(time.Minute)}}},
		{Key: "10.0.0.99", Requests: 297, Peaks: []Peak{{99, t0.Add(39 * time.Second)}, {198, t0.Add(time.Minute)}}},
		{Key: "10.0.0.98", Requests: 294, Peaks: []Peak{{98, t0.Add(38 * time.Second)}, {196, t0.Add(time.Minute)}}},
	}
	if !reflect.DeepEqual(wantTop, res.TopClients) {
		t.Errorf("top clients:\ngot  %+v\nwant %+v", res.TopClients, wantTop)
	}
	// Each of the three client endpoints has 5050 requests; ties go by path.
	share := 5050.0 / 15153
	wantEP := []EndpointCount{
		{"POST", "/v1/orders", 5050, share},
		{"GET", "/v1/orders/{id}", 5050, share},
		{"GET", "/v1/users/{id}", 5050, share},
		{"GET", "/health", 3, 3.0 / 15153},
	}
	if !reflect.DeepEqual(wantEP, res.Endpoints) {
		t.Errorf("endpoints:\ngot  %+v\nwant %+v", res.Endpoints, wantEP)
	}
	if res.DistinctEndpoints != 4 || res.OtherEndpoints != 0 {
		t.Errorf("distinct %d, other %d; want 4, 0", res.DistinctEndpoints, res.OtherEndpoints)
	}

	// One click fills the calculator: per minute, with the 1 s p99 as the
	// peak for 1 s.
	in, err := res.Input(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wantIn := calc.Input{Clients: 100, P50: 100, P95: 190, P99: 198, PercentileUnit: calc.PerMinute, Peak: 99, PeakSeconds: 1}
	if !reflect.DeepEqual(wantIn, in) {
		t.Errorf("Input(1m):\ngot  %+v\nwant %+v", in, wantIn)
	}
	q := Query(in).Encode()
	if wantQ := "clients=100&p50=100&p95=190&p99=198&peak=99&peak_seconds=1&percentile_unit=minute"; q != wantQ {
		t.Errorf("Query = %s, want %s", q, wantQ)
	}
	in.Capacity = 50000
	if _, err := calc.Size(in); err != nil {
		t.Errorf("calc.Size of the measured input: %v", err)
	}
	in, err = res.Input(time.Second)
	if err != nil || in.PercentileUnit != calc.PerSecond || in.P99 != 99 || in.Peak != 0 {
		t.Errorf("Input(1s) = %+v, %v; want per second, p99 99, no peak", in, err)
	}
	if _, err := res.Input(10 * time.Second); err == nil {
		t.Error("Input(10s): no error")
	}
	eps := res.CalcEndpoints(2)
	if want := []calc.Endpoint{{Method: "POST", Path: "/v1/orders"}, {Method: "GET", Path: "/v1/orders/{id}"}}; !reflect.DeepEqual(want, eps) {
		t.Errorf("CalcEndpoints(2) = %+v, want %+v", eps, want)
	}
	v := Query(calc.Input{Endpoints: eps})
	if v.Get("endpoints.1.path") != "/v1/orders/{id}" || v.Get("endpoints.0.method") != "POST" || v.Has("endpoints.0.cost") {
		t.Errorf("Query of endpoints = %v", v)
	}
}

// TestOutOfOrder is a time ladder of one client's records in 1 s and
// 1 min windows: records up to 3 windows behind the newest still count
// where they belong; older ones are late.
func TestOutOfOrder(t *testing.T) {
	m, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		at                    float64 // seconds after t0
		wantPeak1s, wantLate1 int64
		wantPeak1m            int64
	}{
		{10, 1, 0, 1},
		{10.5, 2, 0, 2},
		{8, 2, 0, 3},   // 2 windows behind: second 8 has 1
		{8.9, 2, 0, 4}, // second 8 has 2: a tie, the earlier window is kept
		{7.2, 2, 0, 5}, // 3 behind: still counted
		{8.1, 3, 0, 6}, // second 8 now has 3
		{6.9, 3, 1, 7}, // 4 behind: late for 1 s, not for 1 min
		{14, 3, 1, 8},
		{11, 3, 1, 9}, // 3 behind 14
		{10, 3, 2, 10},
		{59.9, 3, 2, 11},
		{60, 3, 2, 11}, // minute 1 has 1
	}
	for i, s := range steps {
		m.Add(&accesslog.Record{UnixNano: t0.Add(time.Duration(s.at * float64(time.Second))).UnixNano(), Key: []byte("a"), Method: []byte("GET"), Path: []byte("/")})
		r := m.Result()
		w1, w60 := r.Windows[0], r.Windows[1]
		if w1.Max != s.wantPeak1s || w1.Late != s.wantLate1 || w60.Max != s.wantPeak1m || w60.Late != 0 {
			t.Errorf("step %d (at %vs): got peak 1s %d late %d, peak 1m %d late %d; want %d %d, %d 0",
				i, s.at, w1.Max, w1.Late, w60.Max, w60.Late, s.wantPeak1s, s.wantLate1, s.wantPeak1m)
		}
	}
	if got := m.Result().TopClients[0].Peaks[0].At; !got.Equal(t0.Add(8 * time.Second)) {
		t.Errorf("1 s peak at %v, want second 8", got)
	}
}

// TestAgainstBruteForce compares the Meter with a direct count over every
// (client, window) pair, on records shuffled by up to 3 s.
func TestAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	windows := []time.Duration{time.Second, 7 * time.Second, time.Minute}
	m, err := New(Options{Windows: windows})
	if err != nil {
		t.Fatal(err)
	}
	type cw struct {
		key string
		w   int
		idx int64
	}
	counts := map[cw]int64{}
	clock := t0.Add(-time.Hour).UnixNano()
	for range 20000 {
		clock += rng.Int64N(int64(50 * time.Millisecond))
		at := clock - rng.Int64N(int64(3*time.Second)) // up to 3 s earlier than the newest
		key := fmt.Sprintf("k%d", int(rng.ExpFloat64()*10)%60)
		m.Add(&accesslog.Record{UnixNano: at, Key: []byte(key), Method: []byte("GET"), Path: []byte("/")})
		for j, w := range windows {
			counts[cw{key, j, at / int64(w)}]++ // at > 0, so / is floor
		}
	}
	res := m.Result()
	for j := range windows {
		best := map[string]int64{}
		for k, n := range counts {
			if k.w == j {
				best[k.key] = max(best[k.key], n)
			}
		}
		var rates []int64
		for _, n := range best {
			rates = append(rates, n)
		}
		slices.Sort(rates)
		// Nearest rank with integer arithmetic: ⌈p·N/100⌉.
		rank := func(p int) int64 { return rates[(p*len(rates)+99)/100-1] }
		ws := res.Windows[j]
		if ws.P50 != rank(50) || ws.P95 != rank(95) || ws.P99 != rank(99) || ws.Max != rates[len(rates)-1] || ws.Late != 0 {
			t.Errorf("window %v: got p50 %d p95 %d p99 %d max %d late %d; want %d %d %d %d 0 (%d clients)",
				windows[j], ws.P50, ws.P95, ws.P99, ws.Max, ws.Late, rank(50), rank(95), rank(99), rates[len(rates)-1], len(rates))
		}
	}
}

func TestPercentile(t *testing.T) {
	seq := func(n int) []int64 {
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(i + 1)
		}
		return s
	}
	tests := []struct {
		name   string
		values []int64
		p      float64
		want   int64
	}{
		{"none", nil, 0.5, 0},
		{"one", []int64{7}, 0.99, 7},
		{"3, p50: rank ⌈1.5⌉ = 2", seq(3), 0.5, 2},
		{"3, p99: rank ⌈2.97⌉ = 3", seq(3), 0.99, 3},
		{"20, p95: rank ⌈19⌉ = 19", seq(20), 0.95, 19},
		{"20, p99: rank ⌈19.8⌉ = 20", seq(20), 0.99, 20},
		{"1000, p99: rank 990", seq(1000), 0.99, 990},
		{"p near 0: rank 1", seq(10), 0.001, 1},
		// 0.07·100 is 7.000000000000001 in float64, so rank 8, as in
		// PostgreSQL (checked against the server in TestPostgreSQL).
		{"100, p07: float rank 8", seq(100), 0.07, 8},
	}
	for _, tt := range tests {
		if got := Percentile(tt.values, tt.p); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestEndpointsBounded(t *testing.T) {
	m, err := New(Options{MaxEndpoints: 2, TopEndpoints: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"/a", "/b", "/a", "/c", "/d/1", "/b/x", "/a"} {
		m.Add(&accesslog.Record{UnixNano: int64(i), Key: []byte("k"), Method: []byte("get"), Path: []byte(p)})
	}
	r := m.Result()
	want := []EndpointCount{{"GET", "/a", 3, 3.0 / 7}, {"GET", "/b", 1, 1.0 / 7}}
	if !reflect.DeepEqual(want, r.Endpoints) || r.OtherEndpoints != 3 || r.DistinctEndpoints != 2 {
		t.Errorf("endpoints %+v, other %d, distinct %d; want %+v, 3, 2", r.Endpoints, r.OtherEndpoints, r.DistinctEndpoints, want)
	}
}

func TestOptionErrors(t *testing.T) {
	tests := []struct {
		opts Options
		want string
	}{
		{Options{Windows: []time.Duration{1500 * time.Millisecond}}, "whole seconds"},
		{Options{Windows: []time.Duration{48 * time.Hour}}, "whole seconds"},
		{Options{Windows: []time.Duration{}}, "0 given"},
		{Options{Windows: []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9}}, "9 given"},
		{Options{TopClients: -1}, "top clients -1"},
		{Options{MaxEndpoints: -2}, "max endpoints -2"},
		{Options{Workers: -1}, "workers -1"},
	}
	for _, tt := range tests {
		if _, err := New(tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tt.opts, err, tt.want)
		}
	}
}

func TestMeasureErrors(t *testing.T) {
	_, err := Measure(context.Background(), strings.NewReader("nothing\nhere\n"), accesslog.Config{}, Options{})
	if !errors.Is(err, accesslog.ErrNoRecords) {
		t.Errorf("err = %v, want ErrNoRecords", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var progress []int64
	log := strings.Repeat(`1.2.3.4 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`+"\n", 70000)
	_, err = Measure(ctx, strings.NewReader(log), accesslog.Config{}, Options{Progress: func(l, _ int64) { progress = append(progress, l) }})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err = %v", err)
	}
	res, err := Measure(context.Background(), strings.NewReader(log), accesslog.Config{}, Options{Progress: func(l, _ int64) { progress = append(progress, l) }})
	if err != nil || res.Requests != 70000 || !slices.Equal(progress, []int64{65536}) {
		t.Errorf("got %v, %v, progress %v; want 70000 requests and one progress call at 65536", res, err, progress)
	}
}

// TestMaxClients: a log with more distinct clients than MaxClients (or
// keys longer than 128 bytes on average) fails with ErrTooManyClients; at
// the bound it is measured.
func TestMaxClients(t *testing.T) {
	logOf := func(keys ...string) string {
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s - - [30/Nov/2026:10:00:00 +0000] \"GET /x HTTP/1.1\" 200 1 \"-\" \"t\"\n", k)
		}
		return b.String()
	}
	five := logOf("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.1", "10.0.0.4", "10.0.0.5")
	tests := []struct {
		name    string
		log     string
		max     int
		wantErr bool
	}{
		{"unbounded", five, 0, false},
		{"at the bound", five, 5, false},
		{"over", five, 4, true},
		{"long keys", logOf(strings.Repeat("a", 200), strings.Repeat("b", 200)), 2, true},
		{"long keys within the average", logOf(strings.Repeat("a", 200), "b"), 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Measure(context.Background(), strings.NewReader(tt.log), accesslog.Config{}, Options{MaxClients: tt.max})
			if got := errors.Is(err, ErrTooManyClients); got != tt.wantErr {
				t.Fatalf("err %v, want ErrTooManyClients: %v", err, tt.wantErr)
			}
			if err == nil && res.Clients > tt.max && tt.max > 0 {
				t.Errorf("%d clients over the bound %d", res.Clients, tt.max)
			}
		})
	}
}

// TestTopClientsAsFullSort checks Result.TopClients against every client
// sorted by the documented order (busiest second, then requests, then
// key), worked out from the requests themselves, on logs whose clients
// tie often, for several numbers of top clients.
func TestTopClientsAsFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, top := range []int{1, 3, 10, 50, 400} {
		m, err := New(Options{TopClients: top})
		if err != nil {
			t.Fatal(err)
		}
		type stat struct {
			key      string
			requests int64
			perSec   map[int64]int64
		}
		stats := map[string]*stat{}
		recs := make([]accesslog.Record, 3000)
		for i := range recs {
			recs[i] = accesslog.Record{UnixNano: (1_700_000_000 + rng.Int64N(20)) * 1e9, Key: fmt.Appendf(nil, "c%03d", rng.IntN(300))}
		}
		// In time order: a request more than 3 windows late is left out
		// of the peaks.
		slices.SortFunc(recs, func(a, b accesslog.Record) int { return cmp.Compare(a.UnixNano, b.UnixNano) })
		for i := range recs {
			m.Add(&recs[i])
			key, sec := string(recs[i].Key), recs[i].UnixNano/1e9
			s := stats[key]
			if s == nil {
				s = &stat{key: key, perSec: map[int64]int64{}}
				stats[key] = s
			}
			s.requests++
			s.perSec[sec]++
		}
		type row struct {
			key            string
			peak, requests int64
		}
		var all []row
		for _, s := range stats {
			r := row{key: s.key, requests: s.requests}
			for _, n := range s.perSec {
				r.peak = max(r.peak, n)
			}
			all = append(all, r)
		}
		sort.Slice(all, func(i, j int) bool {
			a, b := all[i], all[j]
			if a.peak != b.peak {
				return a.peak > b.peak
			}
			if a.requests != b.requests {
				return a.requests > b.requests
			}
			return a.key < b.key
		})
		res := m.Result()
		if want := min(top, len(all)); len(res.TopClients) != want {
			t.Fatalf("top %d: %d clients, want %d", top, len(res.TopClients), want)
		}
		for i, c := range res.TopClients {
			if w := all[i]; c.Key != w.key || c.Requests != w.requests || c.Peaks[0].Requests != w.peak {
				t.Fatalf("top %d: client %d is %s (%d requests, peak %d), want %s (%d, %d)",
					top, i, c.Key, c.Requests, c.Peaks[0].Requests, w.key, w.requests, w.peak)
			}
		}
	}
}
