package shadow

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/measure"
	"github.com/ratelab/ratelab/policy"
)

// shardLog is a combined log of n lines from keys clients with tiers (an
// extra quoted field) and keyless lines, many lines a second (whole-second
// stamps, so the replay spreads them), some out of order, and bad lines.
func shardLog(n, keys int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 9))
	var b strings.Builder
	sec := t0.Unix()
	tiers := []string{"paid", "FREE", "", "gold"}
	paths := []string{"GET /v1/reports/1", "POST /v1/orders/9/items", "POST /v1/orders", "GET /v1/items?page=2", "get /"}
	for i := range n {
		if r.IntN(40) == 0 {
			sec += int64(r.IntN(3))
		}
		s := sec
		if r.IntN(50) == 0 {
			s -= 2 // logged late
		}
		ip := fmt.Sprintf("10.0.%d.%d", r.IntN(keys)/200, r.IntN(keys)%200)
		if r.IntN(60) == 0 {
			ip = "-"
		}
		if i%500 == 7 {
			b.WriteString("not a log line\n")
		}
		fmt.Fprintf(&b, "%s - - [%s] \"%s HTTP/1.1\" 200 1 \"-\" \"agent\" \"%s\"\n", ip,
			time.Unix(s, 0).UTC().Format("02/Jan/2006:15:04:05 -0700"), paths[r.IntN(len(paths))], tiers[r.IntN(len(tiers))])
	}
	return b.String()
}

// TestShardedIsSequential measures and replays logs in one pass on one
// goroutine (Options.Each) and sharded by client (Options.Replay) at
// several GOMAXPROCS, and wants the same measurement, the same report and
// the same CSV of rejections, byte for byte.
func TestShardedIsSequential(t *testing.T) {
	perClient := policy.Policy{
		Defaults: policy.Defaults{Limit: tb(2, 6)},
		Tiers: []policy.Tier{
			{Name: "paid", Limit: algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 5, Burst: 10}},
			{Name: "free"},
		},
		Endpoints: []policy.Endpoint{
			{Match: policy.Match{Method: "GET", Path: "/v1/reports/{id}"}, Cost: 3},
			{Match: policy.Match{Method: "POST", Path: "/v1/orders/{id}/items"}, Cost: 2,
				Limit: algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 4, Window: 5 * time.Second}},
		},
	}
	global := perClient
	global.Global = policy.Global{Limit: tb(40, 80)}
	long := shardLog(40000, 600, 1)
	tests := []struct {
		name string
		p    policy.Policy
		log  string
		o    Options
		// unspread: the log must leave requests of a full second
		// unspread (it tests a bound on a held second).
		unspread bool
	}{
		{"per-client limits", perClient, long, Options{}, false},
		{"per-client, few held a second", perClient, long, Options{MaxHeld: 7, Top: 30, Bins: 17}, false},
		{"tiers by key", perClient, long, Options{Tiers: map[string]string{"10.0.0.1": "paid", "10.0.1.5": "free", "": "paid"}}, false},
		{"global limit", global, long, Options{MaxHeld: 50}, false},
		{"one second", perClient, strings.Repeat(`10.0.0.1 - - [30/Nov/2026:10:00:00 +0000] "GET /x HTTP/1.1" 200 1 "-" "a" "paid"`+"\n", 20000), Options{}, false},
		// 3 000 requests of 2 KiB paths in one second pass the 4 MiB a
		// held second may weigh long before MaxHeld requests.
		{"one second past its bytes", perClient, strings.Repeat(`10.0.0.1 - - [30/Nov/2026:10:00:00 +0000] "GET /x/`+strings.Repeat("a", 2048)+` HTTP/1.1" 200 1 "-" "a" "paid"`+"\n", 3000), Options{}, true},
	}
	cfg := accesslog.Config{TierExtra: 1}
	run := func(t *testing.T, log string, p policy.Policy, o Options, sharded bool) (*measure.Result, Report, string) {
		var rows bytes.Buffer
		o.Rejections = &rows
		x, err := New(p, o)
		if err != nil {
			t.Fatal(err)
		}
		mo := measure.Options{Each: x.AddRecord}
		if sharded {
			mo = measure.Options{Replay: x.Sharded()}
		}
		res, err := measure.Measure(context.Background(), strings.NewReader(log), cfg, mo)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := x.Report()
		if err != nil {
			t.Fatal(err)
		}
		return res, rep, rows.String()
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantRes, want, wantRows := run(t, tt.log, tt.p, tt.o, false)
			if want.Rejected == 0 || want.Rejected == want.Requests {
				t.Fatalf("%d of %d rejected: the log tests nothing", want.Rejected, want.Requests)
			}
			if tt.unspread && want.Unspread == 0 {
				t.Fatal("no request was left unspread: the held second's byte bound was not reached")
			}
			for _, procs := range []int{1, 2, 3, 4} {
				old := runtime.GOMAXPROCS(procs)
				res, got, rows := run(t, tt.log, tt.p, tt.o, true)
				runtime.GOMAXPROCS(old)
				if !reflect.DeepEqual(res, wantRes) {
					t.Errorf("GOMAXPROCS %d: measurement\ngot  %+v\nwant %+v", procs, res, wantRes)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("GOMAXPROCS %d: report\ngot  %+v\nwant %+v", procs, got, want)
				}
				if rows != wantRows {
					t.Errorf("GOMAXPROCS %d: %d bytes of rejections, want %d", procs, len(rows), len(wantRows))
				}
			}
		})
	}
}
