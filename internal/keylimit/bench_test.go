package keylimit

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/headers"
)

// sink keeps the calibration's result.
var sink atomic.Uint64

// benchKeys are the clients of the benchmarks: 4096 IPv4 addresses.
var benchKeys = func() []string {
	k := make([]string, 4096)
	for i := range k {
		k[i] = fmt.Sprintf("10.1.%d.%d", i/256, i%256)
	}
	return k
}()

// ownKeys are the benchmarks' clients when each goroutine has its own:
// 4096 other IPv4 addresses for each of up to 16 goroutines.
var ownKeys = func() [][]string {
	out := make([][]string, 16)
	for g := range out {
		out[g] = make([]string, 4096)
		for i := range out[g] {
			out[g][i] = fmt.Sprintf("10.%d.%d.%d", 2+g, i/256, i%256)
		}
	}
	return out
}()

// benchSpec admits every request of a benchmark (a burst of ten million)
// and refills slower than the benchmarks send (100/s per key), so every
// call also reads the time until more quota and no key is ever rested
// (reclaimed and created again).
var benchSpec = algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 100, Burst: 1e7}

// BenchmarkConcurrent is the throughput of one decision with its clock
// read, over 4096 keys, from GOMAXPROCS goroutines (run with -cpu 1,2):
//
//   - cells: this package (decision and headers.UntilMore under the
//     key's cell lock);
//   - one-mutex: one algorithms.Limiter behind one mutex, as the server
//     had before;
//   - xrate-syncmap: a golang.org/x/time/rate.Limiter per key in a
//     sync.Map (each with its own lock), AllowN only: it computes no time
//     until more quota, so it does less per call.
//
// Their goroutines all walk the same keys, so every decision finds the
// key's state last written by the other core: the worst case for state
// kept per key. cells-own-keys and xrate-own-keys give each goroutine
// keys of its own (4096 a goroutine, as many as walk's in all), as when a
// client's requests come on one connection.
//
// calibrate is a loop of pure arithmetic, no memory shared: on idle cores
// it runs twice as fast at -cpu 2, and how much faster it runs in the same
// run shows how many cores the machine really gave the benchmark.
func BenchmarkConcurrent(b *testing.B) {
	seq := atomic.Uint64{}
	// walk calls f with keys from a per-goroutine random start.
	walk := func(pb *testing.PB, f func(key string)) {
		i := int(rand.New(rand.NewPCG(seq.Add(1), 7)).IntN(len(benchKeys)))
		for pb.Next() {
			f(benchKeys[i])
			i = (i + 1) & (len(benchKeys) - 1)
		}
	}
	// walkOwn calls f with the keys of the goroutine's own block (the
	// goroutines of one RunParallel numbered by next): each core decides
	// its own clients, as when each client's requests come on one
	// connection, with the same 4096 keys a core as in walk.
	walkOwn := func(pb *testing.PB, next *atomic.Int32, f func(key string)) {
		keys := ownKeys[int(next.Add(1)-1)%len(ownKeys)]
		for i := 0; pb.Next(); i = (i + 1) & (len(keys) - 1) {
			f(keys[i])
		}
	}
	b.Run("calibrate", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			x := seq.Add(1)
			for pb.Next() {
				for range 64 {
					x = x*6364136223846793005 + 1442695040888963407
				}
			}
			sink.Add(x)
		})
	})
	b.Run("cells", func(b *testing.B) {
		l, err := New(benchSpec, Options{ReclaimInterval: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			walk(pb, func(key string) { l.Allow(key, time.Since(start)) })
		})
	})
	b.Run("cells-own-keys", func(b *testing.B) {
		l, err := New(benchSpec, Options{ReclaimInterval: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		var next atomic.Int32
		b.RunParallel(func(pb *testing.PB) {
			walkOwn(pb, &next, func(key string) { l.Allow(key, time.Since(start)) })
		})
	})
	b.Run("one-mutex", func(b *testing.B) {
		lim, err := algorithms.New(benchSpec)
		if err != nil {
			b.Fatal(err)
		}
		var mu sync.Mutex
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			walk(pb, func(key string) {
				t := time.Since(start)
				mu.Lock()
				if d := lim.Allow(key, t, 1); d.Allowed {
					headers.UntilMore(lim, key, t, d.Remaining)
				}
				mu.Unlock()
			})
		})
	})
	b.Run("xrate-syncmap", func(b *testing.B) {
		var m sync.Map
		b.RunParallel(func(pb *testing.PB) {
			walk(pb, func(key string) {
				v, ok := m.Load(key)
				if !ok {
					v, _ = m.LoadOrStore(key, rate.NewLimiter(rate.Limit(benchSpec.Rate), int(benchSpec.Burst)))
				}
				v.(*rate.Limiter).AllowN(time.Now(), 1)
			})
		})
	})

	b.Run("xrate-own-keys", func(b *testing.B) {
		var m sync.Map
		var next atomic.Int32
		b.RunParallel(func(pb *testing.PB) {
			walkOwn(pb, &next, func(key string) {
				v, ok := m.Load(key)
				if !ok {
					v, _ = m.LoadOrStore(key, rate.NewLimiter(rate.Limit(benchSpec.Rate), int(benchSpec.Burst)))
				}
				v.(*rate.Limiter).AllowN(time.Now(), 1)
			})
		})
	})
}
