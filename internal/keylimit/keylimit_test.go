package keylimit

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/headers"
)

// event is one request of a schedule: key sends cost at virtual time at.
type event struct {
	key  string
	at   time.Duration
	cost int64
}

// schedule is n requests of keys clients, at times that grow by up to
// step, with costs from 0 to burst+1 (a cost above the burst never passes).
func schedule(seed uint64, n, keys int, step time.Duration, burst int64) []event {
	r := rand.New(rand.NewPCG(seed, 1))
	var evs []event
	var at time.Duration
	for range n {
		at += time.Duration(r.Int64N(int64(step) + 1))
		cost := int64(1)
		if r.IntN(4) == 0 {
			cost = r.Int64N(burst + 2)
		}
		// Zipf-like: a few keys send most requests.
		k := int(float64(keys) * r.Float64() * r.Float64() * r.Float64())
		evs = append(evs, event{key: fmt.Sprintf("198.51.%d.%d", k/256, k%256), at: at, cost: cost})
	}
	return evs
}

// TestSameDecisionsAsOneLimiter sends the same schedule through a Limiter
// and a plain algorithms.Limiter and wants the same decision and
// the same time until more quota for every request, with many keys and
// reclamation by time and by size on the way.
func TestSameDecisionsAsOneLimiter(t *testing.T) {
	tests := []struct {
		spec   algorithms.Spec
		opts   Options
		step   time.Duration
		events int
		keys   int
	}{
		{algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 20, Burst: 40}, Options{ReclaimInterval: time.Second, ReclaimMinKeys: 64}, 2 * time.Millisecond, 50000, 2000},
		{algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 20, Burst: 40}, Options{ReclaimInterval: time.Second, ReclaimMinKeys: 64}, 2 * time.Millisecond, 50000, 2000},
		{algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 0.5, Burst: 3}, Options{}, 300 * time.Millisecond, 20000, 50},
		{algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 0.5, Burst: 3}, Options{}, 300 * time.Millisecond, 20000, 50},
		{algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1000, Burst: 1}, Options{}, 10 * time.Microsecond, 50000, 5000},
		{algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 1000, Burst: 1}, Options{ReclaimInterval: time.Millisecond}, 10 * time.Microsecond, 50000, 5000},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%d/%s/rate=%g,burst=%d", i, tt.spec.Algorithm, tt.spec.Rate, tt.spec.Burst), func(t *testing.T) {
			sh, err := New(tt.spec, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			one, err := algorithms.New(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			admitted := 0
			for j, ev := range schedule(uint64(i), tt.events, tt.keys, tt.step, tt.spec.Burst) {
				got, gotMore := sh.AllowN(ev.key, ev.at, ev.cost)
				want := one.Allow(ev.key, ev.at, ev.cost)
				var wantMore time.Duration
				if want.Allowed {
					wantMore = headers.UntilMore(one, ev.key, ev.at, want.Remaining)
					admitted++
				}
				if got != want || gotMore != wantMore {
					t.Fatalf("request %d %+v: got %+v, more %v; want %+v, more %v", j, ev, got, gotMore, want, wantMore)
				}
			}
			if admitted == 0 || admitted == tt.events {
				t.Fatalf("admitted %d of %d: the schedule tests nothing", admitted, tt.events)
			}
			if sh.Keys() > one.Keys() {
				t.Errorf("keys: keylimit %d, one limiter (never reclaimed) %d", sh.Keys(), one.Keys())
			}
		})
	}
}

// TestConcurrentUse runs goroutines on shared keys at one instant, with
// sweeps, Keys and Reclaim in between (run it with -race): each key
// admits exactly its burst.
func TestConcurrentUse(t *testing.T) {
	const burst, keys, goroutines, per = 5, 64, 8, 400
	l, err := New(algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 1e-3, Burst: burst}, Options{ReclaimInterval: time.Nanosecond, ReclaimMinKeys: 8})
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		admitted = map[string]int{}
	)
	for g := range goroutines {
		wg.Go(func() {
			mine := map[string]int{}
			for i := range per {
				key := fmt.Sprintf("k%d", (g*per+i)%keys)
				if d, more := l.Allow(key, time.Second); d.Allowed {
					mine[key]++
					if more <= 0 {
						t.Errorf("%s admitted with more %v, want > 0", key, more)
					}
				}
				if i%50 == 0 {
					l.Keys()
					l.Reclaim(time.Second)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for k, n := range mine {
				admitted[k] += n
			}
		})
	}
	wg.Wait()
	if len(admitted) != keys {
		t.Fatalf("%d keys admitted something, want %d", len(admitted), keys)
	}
	for k, n := range admitted {
		if n != burst {
			t.Errorf("%s: admitted %d, want the burst %d", k, n, burst)
		}
	}
	if got := l.Keys(); got != keys {
		t.Errorf("keys: got %d, want %d (none is rested)", got, keys)
	}
}

func TestReclaim(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 20, Burst: 40}
	tests := []struct {
		name     string
		opts     Options
		flood    int
		span     time.Duration // the flood's duration
		wantKeys int           // at most, after the flood
	}{
		// Keys rest after burst/rate = 2 s; 12288 keys in 59 s are about
		// 420 live at a time.
		{"size threshold", Options{ReclaimMinKeys: 4096}, 3 * 4096, 59 * time.Second, 4096},
		{"by time", Options{ReclaimInterval: 5 * time.Second, ReclaimMinKeys: 1 << 20}, 3 * 4096, 59 * time.Second, 7 * 208},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New(spec, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.flood {
				l.Allow(fmt.Sprintf("k%d", i), time.Duration(i)*tt.span/time.Duration(tt.flood))
			}
			if got := l.Keys(); got > tt.wantKeys {
				t.Errorf("keys after a flood of %d in %v: %d, want at most %d", tt.flood, tt.span, got, tt.wantKeys)
			}
			if got := l.Reclaim(time.Hour); got == 0 || l.Keys() != 0 {
				t.Errorf("Reclaim an hour later dropped %d and left %d keys, want all", got, l.Keys())
			}
		})
	}
}

func TestNewRejectsABadSpec(t *testing.T) {
	if _, err := New(algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 1}, Options{}); err == nil {
		t.Error("burst 0: no error")
	}
}
