package shadow

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/measure"
	"github.com/ratelab/ratelab/policy"
)

// logGen streams a combined log of n lines from keys clients, one line
// per 10 ms, without holding it: the reader the test measures never sees
// more than one line at a time.
type logGen struct {
	n, keys, i int
	buf        []byte
}

func (g *logGen) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && g.i < g.n {
		ms := g.i * 10
		g.buf = fmt.Appendf(g.buf, "10.0.%d.%d - - [30/Nov/2026:%02d:%02d:%02d +0000] \"GET /v1/items/%d HTTP/1.1\" 200 1 \"-\" \"t\"\n",
			(g.i%g.keys)/250, (g.i%g.keys)%250, ms/3_600_000%24, ms/60_000%60, ms/1000%60, g.i)
		g.i++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	k := copy(p, g.buf)
	g.buf = g.buf[:copy(g.buf, g.buf[k:])]
	return k, nil
}

// retained measures and replays n lines from 2000 clients and returns the
// live heap after a collection while the meter and the replay still hold
// their state.
func retained(t *testing.T, n int) uint64 { return retainedKeys(t, n, 2000, false) }

// retainedKeys is retained for n lines from keys clients, the replay fed
// by Options.Each or, sharded, by Options.Replay.
func retainedKeys(t *testing.T, n, keys int, sharded bool) uint64 {
	p := policy.Policy{Defaults: policy.Defaults{Limit: algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 5}},
		Global: policy.Global{Limit: algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 50, Burst: 100}}}
	r, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mo := measure.Options{Each: r.AddRecord}
	if sharded {
		mo = measure.Options{Replay: r.Sharded()}
	}
	res, err := measure.Measure(context.Background(), &logGen{n: n, keys: keys}, accesslog.Config{}, mo)
	if err != nil || res.Requests != int64(n) {
		t.Fatalf("measured %v requests (err %v), want %d", res, err, n)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if _, err := r.Report(); err != nil {
		t.Fatal(err)
	}
	return ms.HeapAlloc
}

// TestMemoryBoundedByKeys: measuring and replaying ten times as many
// lines from the same 2000 clients retains about the same memory: what is
// kept grows with the clients (and the endpoint patterns), not with the
// log. The bound allows 2 MiB for the series bins and map growth.
func TestMemoryBoundedByKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a million generated lines")
	}
	small, large := retained(t, 100_000), retained(t, 1_000_000)
	if large > small+2<<20 {
		t.Errorf("live heap %d bytes after 1 M lines against %d after 100 k: memory grows with the log", large, small)
	}
	t.Logf("live heap: %d bytes after 100 k lines, %d after 1 M", small, large)
}

// TestShardedMemoryBoundedByKeys is TestMemoryBoundedByKeys for the
// replay sharded across the cores: the pipeline's chunks in flight are
// bounded, and each client's state lives in one shard.
func TestShardedMemoryBoundedByKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a million generated lines")
	}
	small, large := retainedKeys(t, 100_000, 2000, true), retainedKeys(t, 1_000_000, 2000, true)
	if large > small+2<<20 {
		t.Errorf("live heap %d bytes after 1 M lines against %d after 100 k: memory grows with the log", large, small)
	}
	t.Logf("live heap: %d bytes after 100 k lines, %d after 1 M", small, large)
}

// liveAtEnd measures and replays one line from each of keys clients and
// returns the live heap after a collection at the last line, while the
// meter and the replay both hold every client.
func liveAtEnd(t *testing.T, keys int) uint64 {
	p := policy.Policy{Defaults: policy.Defaults{Limit: algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1, Burst: 5}}}
	r, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var live uint64
	seen := 0
	_, err = measure.Measure(context.Background(), &logGen{n: keys, keys: keys}, accesslog.Config{}, measure.Options{
		Each: func(rec *accesslog.Record) {
			r.AddRecord(rec)
			if seen++; seen == keys {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				live = ms.HeapAlloc
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Report(); err != nil {
		t.Fatal(err)
	}
	return live
}

// TestMemoryPerClient: what one more distinct client costs a measurement
// and its replay together (the figure the server's -max-clients bound and
// the README's memory bound rest on): under 1 KiB with IP keys.
func TestMemoryPerClient(t *testing.T) {
	few, many := liveAtEnd(t, 5000), liveAtEnd(t, 50_000)
	per := (float64(many) - float64(few)) / 45_000
	if per > 1024 {
		t.Errorf("%.0f bytes per client; want under 1 KiB", per)
	}
	t.Logf("%.0f bytes per distinct client (measure and replay)", per)
}
