package redis_test

// Differential test of the Lua scripts on a real redis-server against
// package algorithms, decision for decision.
//
// Each algorithm replays scriptSequences random sequences of up to
// scriptArrivals arrivals, each sequence on its own key, all sequences'
// i-th arrivals in one pipeline. The scripts get now = scriptBase + t µs,
// algorithms gets t·1000 ns; scriptBase is a whole number of days, so the
// windows (which divide a day) are aligned the same way in both.
//
// Arrivals are whole µs, and the rates are those whose interval T is a
// whole number of µs (exact integer arithmetic in both) or a third of one
// (1e9/3 ns multiples: every wait is then a multiple of 1000/3 ns, so it is
// never within float noise of the 1 ns admission edge, and exact boundary
// ties — wait 0 — admit in both). So no arrival needs to dodge a boundary:
// many rejected requests are retried exactly at their RetryAfter (rounded
// up to µs) or 1 µs before it, window arrivals often land exactly on a window's start, and
// some arrivals step back in time (the scripts' clock-lag handling). Each
// real run is preceded by a dry run of the same request, which must answer
// the same and write nothing (else the real run would differ).
//
// What may differ, and is checked as such:
//   - retry-after, reset and delay are µs in the scripts, ns in algorithms:
//     the script returns the ns value rounded up to whole µs, exactly for
//     the windows and for whole-µs intervals; for third-µs intervals the
//     ns value is a float whose ceil may land 1 ns either side of a whole
//     number (absolute float times in algorithms, relative in the scripts),
//     so the µs may differ by 1 (TestScriptRoundingThirds pins it);
//   - nothing else: allowed and remaining agree exactly.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export/redis"
	"github.com/ratelab/ratelab/export/redis/redistest"
)

const (
	// scriptBase is the scripts' time 0 in µs: 19 676 days after the Unix
	// epoch (2023-11-15), so windows that divide a day align as in
	// algorithms, where time starts at 0.
	scriptBase      int64 = 19_676 * 86_400 * 1_000_000
	scriptSequences       = 300
	scriptArrivals        = 40
)

// wholeRates have T a whole number of µs; thirdRates a third of one.
var (
	wholeRates = []float64{0.25, 0.5, 1, 2, 2.5, 4, 5, 8, 10, 20, 25, 50, 100, 250, 1000}
	thirdRates = []float64{1.5, 3, 6, 7.5, 30, 300}
	windows    = []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
		time.Second, 1500 * time.Millisecond, 2 * time.Second, 10 * time.Second, time.Minute}
)

// arrival is one request of a sequence and what algorithms decided.
type arrival struct {
	at   int64 // µs since scriptBase
	cost int64
	want algorithms.Decision
}

type sequence struct {
	spec     algorithms.Spec
	key      []string
	arrivals []arrival
	thirds   bool // T is a third of a µs: durations may differ by 1 µs
}

// small is a capacity: mostly under 9, sometimes up to 50.
func small(rng *rand.Rand) int64 {
	if rng.IntN(4) == 0 {
		return 1 + rng.Int64N(50)
	}
	return 1 + rng.Int64N(8)
}

// randomSpec draws a spec of algorithm name.
func randomSpec(rng *rand.Rand, name algorithms.Name) (algorithms.Spec, bool) {
	s := algorithms.Spec{Algorithm: name}
	thirds := false
	switch name {
	case algorithms.NameTokenBucket, algorithms.NameGCRA, algorithms.NameLeakyBucket:
		if rng.IntN(4) == 0 {
			s.Rate, thirds = thirdRates[rng.IntN(len(thirdRates))], true
		} else {
			s.Rate = wholeRates[rng.IntN(len(wholeRates))]
		}
		if name == algorithms.NameLeakyBucket {
			s.Queue = small(rng) - 1
		} else {
			s.Burst = small(rng)
		}
	default:
		s.Limit, s.Window = small(rng), windows[rng.IntN(len(windows))]
	}
	return s, thirds
}

// randomSequence draws arrivals and runs them through algorithms: gaps of
// 0, under T, around T, up to twice the refill time or window, long idles,
// retries exactly at RetryAfter, (windows) exactly at a window's start,
// and a few steps back in time.
func randomSequence(rng *rand.Rand, name algorithms.Name, idx int) sequence {
	spec, thirds := randomSpec(rng, name)
	lim, err := algorithms.New(spec)
	if err != nil {
		panic(err)
	}
	var unit, scale int64 // µs: one request's time, the time to rest
	if spec.Window > 0 {
		scale = spec.Window.Microseconds()
		unit = max(1, scale/spec.Limit)
	} else {
		unit = int64(1e6 / spec.Rate)
		scale = unit * spec.Capacity()
	}
	seq := sequence{spec: spec, thirds: thirds, key: redis.Keys(name, string(name), strconv.Itoa(idx))}
	at := int64(rng.Int64N(2 * scale))
	var last algorithms.Decision
	n := 10 + rng.IntN(scriptArrivals-9)
	for i := 0; i < n; i++ {
		if i > 0 {
			switch x := rng.IntN(100); {
			case x < 30 && !last.Allowed && last.RetryAfter() != algorithms.Never:
				// At the RetryAfter rounded up to µs (admitted), or 1 µs
				// before it (still rejected: the wait left is 1/3 to 1 µs).
				at += int64((last.RetryAfter() + time.Microsecond - 1) / time.Microsecond)
				if rng.IntN(2) == 0 {
					at--
				}
			case x < 33:
				// a clock stepping back (another replica's clock)
				at = max(0, at-rng.Int64N(unit+1))
			case x < 45:
			case x < 65:
				at += rng.Int64N(unit)
			case x < 80:
				at += unit/2 + rng.Int64N(unit)
			case x < 92:
				at += rng.Int64N(2 * scale)
			case x < 96 && spec.Window > 0:
				at = (at/scale + 1) * scale
			default:
				at += 2*scale + rng.Int64N(scale)
			}
		}
		cost := int64(1)
		switch x := rng.IntN(100); {
		case x < 2:
			cost = 0
		case x < 5:
			cost = spec.Capacity() + 1 + rng.Int64N(3)
		case x < 75:
		case x < 88:
			cost = 2
		default:
			cost = 3
		}
		last = lim.Allow("k", time.Duration(at)*time.Microsecond, cost)
		seq.arrivals = append(seq.arrivals, arrival{at: at, cost: cost, want: last})
	}
	return seq
}

// result is a script's answer.
type result struct {
	allowed                       bool
	remaining, retry, reset, wait int64 // µs; retry -1 is never
}

func parse(v []int64) result {
	return result{allowed: v[0] == 1, remaining: v[1], retry: v[2], reset: v[3], wait: v[4]}
}

// micros is d in µs rounded up; Never is -1.
func micros(d time.Duration) int64 {
	if d == algorithms.Never {
		return -1
	}
	return int64((d + time.Microsecond - 1) / time.Microsecond)
}

// expect is what the script must answer for algorithms' decision d.
func expect(d algorithms.Decision) result {
	return result{allowed: d.Allowed, remaining: d.Remaining, retry: micros(d.RetryAfter()), reset: micros(d.Reset), wait: micros(d.Delay())}
}

// mismatch describes how got differs from want, "" when it does not; tol
// is the µs tolerance of the durations.
func mismatch(got, want result, tol int64) string {
	near := func(a, b int64) bool {
		if a == -1 || b == -1 {
			return a == b
		}
		return a-b <= tol && b-a <= tol
	}
	if got.allowed != want.allowed || got.remaining != want.remaining || !near(got.retry, want.retry) ||
		!near(got.reset, want.reset) || !near(got.wait, want.wait) {
		return fmt.Sprintf("got %+v, want %+v", got, want)
	}
	return ""
}

// args are a script's ARGV for spec at µs t.
func args(s algorithms.Spec, cost, t int64, dry bool) []any {
	a := redis.Args(s)
	flag := "0"
	if dry {
		flag = "1"
	}
	return []any{a[0], a[1], cost, scriptBase + t, flag}
}

func TestScriptsMatchAlgorithms(t *testing.T) {
	rdb := redistest.Client(t, redistest.Start(t))
	for ai, name := range algorithms.Names {
		t.Run(string(name), func(t *testing.T) {
			script := goredis.NewScript(redis.Script(name))
			if err := script.Load(context.Background(), rdb).Err(); err != nil {
				t.Fatalf("loading the script: %v", err)
			}
			rng := rand.New(rand.NewPCG(20261130, uint64(ai)))
			seqs := make([]sequence, scriptSequences)
			for i := range seqs {
				seqs[i] = randomSequence(rng, name, i)
			}
			replay(t, rdb, script, seqs)
		})
	}
}

// replay runs seqs' arrivals through script in rdb, all sequences' i-th
// arrivals in one pipeline, each real run preceded by its dry run, and
// fails on any answer that differs from algorithms' beyond the sequence's
// tolerance.
func replay(t *testing.T, rdb goredis.UniversalClient, script *goredis.Script, seqs []sequence) {
	t.Helper()
	ctx := context.Background()
	decisions, admitted, failures := 0, 0, 0
	for step := 0; step < scriptArrivals; step++ {
		pipe := rdb.Pipeline()
		cmds := make([]*goredis.Cmd, len(seqs))
		dries := make([]*goredis.Cmd, len(seqs))
		ttls := make([][]*goredis.DurationCmd, len(seqs))
		for i, s := range seqs {
			if step < len(s.arrivals) {
				// A dry run first: it must answer as the real run and
				// write nothing, or the real run would differ.
				a := s.arrivals[step]
				dries[i] = script.EvalSha(ctx, pipe, s.key, args(s.spec, a.cost, a.at, true)...)
				cmds[i] = script.EvalSha(ctx, pipe, s.key, args(s.spec, a.cost, a.at, false)...)
				// The scripts' TTLs are in Redis's own clock, the times in
				// the sequence's: read the TTL the run set, then remove it,
				// so that a slow (loaded) replay loses no state to real
				// time passing while the sequence's time stands still.
				for _, k := range s.key {
					ttls[i] = append(ttls[i], pipe.PTTL(ctx, k))
					pipe.Persist(ctx, k)
				}
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for i, c := range cmds {
			if c == nil {
				continue
			}
			v, err := c.Int64Slice()
			if err != nil {
				t.Fatalf("sequence %d step %d: %v", i, step, err)
			}
			dry, err := dries[i].Int64Slice()
			if err != nil {
				t.Fatalf("sequence %d step %d dry run: %v", i, step, err)
			}
			if parse(dry) != parse(v) {
				t.Fatalf("sequence %d step %d: dry run %+v, real run %+v", i, step, parse(dry), parse(v))
			}
			s, a := seqs[i], seqs[i].arrivals[step]
			tol := int64(0)
			if s.thirds {
				tol = 1
			}
			decisions++
			if a.want.Allowed {
				admitted++
			}
			if got := parse(v); got.allowed && a.cost > 0 {
				// An admission keeps every key it wrote at least until
				// the state is rested (the script adds a second); a cost
				// of 0 writes nothing.
				for j, c := range ttls[i] {
					if ttl, err := c.Result(); err == nil && ttl != -2 && ttl < time.Duration(got.reset)*time.Microsecond {
						t.Errorf("%s, sequence %d step %d: key %s kept %v, less than the %d µs until rested", s.spec, i, step, s.key[j], ttl, got.reset)
					}
				}
			}
			if msg := mismatch(parse(v), expect(a.want), tol); msg != "" {
				failures++
				if failures <= 10 {
					t.Errorf("%s, sequence %d step %d (t=%dµs, cost %d): %s", s.spec, i, step, a.at, a.cost, msg)
				}
			}
		}
	}
	if failures > 0 {
		t.Fatalf("%d of %d decisions differ", failures, decisions)
	}
	// The sequences must exercise both answers.
	if admitted == 0 || admitted == decisions {
		t.Errorf("%d of %d admitted: the sequences do not test both answers", admitted, decisions)
	}
	t.Logf("%d decisions, %d admitted, all equal", decisions, admitted)
}

// TestScriptRoundingThirds pins the one class of difference: with an
// interval T that is not a whole number of ns (300/s: T = 3 333 333.3̅ ns),
// a backlog of exactly 3T minus whole µs is a whole number of µs in exact
// arithmetic. algorithms keeps absolute float times (next = a + 2T, then
// backlog = next − b) and its ceil to ns may land 1 ns above the whole
// number, which rounds up to one more µs; the script keeps the backlog
// relative to its last time and lands on it or a hair below. Decisions and
// remaining agree; reset (and likewise retry-after and delay) differ by at
// most 1 µs.
func TestScriptRoundingThirds(t *testing.T) {
	rdb := redistest.Client(t, redistest.Start(t))
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 300, Queue: 4}
	script := goredis.NewScript(redis.Script(spec.Algorithm))
	differ := 0
	for a := int64(1000); a < 1200; a++ {
		lim, _ := algorithms.New(spec)
		key := redis.Keys(spec.Algorithm, "thirds", strconv.FormatInt(a, 10))
		// Two requests at a µs, one at a+1 µs: after the third the drain
		// is busy for 3T − 1 µs = 9 999 µs exactly, the third's reset.
		for i, at := range []int64{a, a, a + 1} {
			want := expect(lim.Allow("k", time.Duration(at)*time.Microsecond, 1))
			v, err := script.Run(ctx, rdb, key, args(spec, 1, at, false)...).Int64Slice()
			if err != nil {
				t.Fatal(err)
			}
			got := parse(v)
			if msg := mismatch(got, want, 1); msg != "" {
				t.Fatalf("a=%d request %d: %s", a, i, msg)
			}
			if got != want {
				differ++
				if i != 2 || got.reset != 9999 || want.reset != 10000 {
					t.Errorf("a=%d request %d: got %+v, want %+v: not the pinned class (reset 9999 µs vs 10000 µs)", a, i, got, want)
				}
			}
		}
	}
	if differ == 0 {
		t.Error("no difference found: the rounding class no longer occurs; tighten the tolerance to 0")
	}
	t.Logf("%d of 200 ladders differ by 1 µs in reset", differ)
}

// TestScriptsAtomic: 50 clients, each on its own connection, send 10
// requests each to one key at the same instant. A script is atomic, so
// exactly what algorithms admits at one instant passes — the capacity
// (burst, queue + 1, limit) — however the calls interleave.
func TestScriptsAtomic(t *testing.T) {
	addr := redistest.Start(t)
	const clients, each = 50, 10
	specs := []algorithms.Spec{
		{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 37},
		{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 37},
		{Algorithm: algorithms.NameLeakyBucket, Rate: 10, Queue: 36},
		{Algorithm: algorithms.NameFixedWindow, Limit: 37, Window: time.Minute},
		{Algorithm: algorithms.NameSlidingLog, Limit: 37, Window: time.Minute},
		{Algorithm: algorithms.NameSlidingWindow, Limit: 37, Window: time.Minute},
	}
	conns := make([]*goredis.Client, clients)
	for i := range conns {
		conns[i] = goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: 1, MinIdleConns: 1})
		t.Cleanup(func() { conns[i].Close() })
	}
	const at = 90_000_000 // µs: 1.5 min, the start of a minute window
	for _, spec := range specs {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			lim, _ := algorithms.New(spec)
			want := 0
			for i := 0; i < clients*each; i++ {
				if lim.Allow("k", at*time.Microsecond, 1).Allowed {
					want++
				}
			}
			script := goredis.NewScript(redis.Script(spec.Algorithm))
			key := redis.Keys(spec.Algorithm, "atomic_"+string(spec.Algorithm), "client")
			got := make(chan int, clients)
			errs := make(chan error, clients)
			start := make(chan struct{})
			for _, c := range conns {
				go func() {
					<-start
					n := 0
					for j := 0; j < each; j++ {
						v, err := script.Run(context.Background(), c, key, args(spec, 1, at, false)...).Int64Slice()
						if err != nil {
							errs <- err
							return
						}
						n += int(v[0])
					}
					got <- n
				}()
			}
			close(start)
			total := 0
			for range clients {
				select {
				case n := <-got:
					total += n
				case err := <-errs:
					t.Fatal(err)
				case <-time.After(30 * time.Second):
					t.Fatal("clients did not finish in 30 s")
				}
			}
			if want != int(spec.Capacity()) {
				t.Fatalf("algorithms admits %d at one instant, want the capacity %d", want, spec.Capacity())
			}
			if total != want {
				t.Errorf("%d clients × %d requests at one instant: %d admitted, want %d", clients, each, total, want)
			}
		})
	}
}

// TestScriptsTimeAndTTL: an empty time argument reads Redis TIME, and an
// admission sets a TTL of the time to rest plus one second on every key.
func TestScriptsTimeAndTTL(t *testing.T) {
	rdb := redistest.Client(t, redistest.Start(t))
	ctx := context.Background()
	tests := []struct {
		spec     algorithms.Spec
		cost     int64
		reset    time.Duration // after the admission, for a time-independent spec
		windowed bool          // reset is the time to the window's end (fixed) or W (log)
	}{
		// 20 tokens at 10/s: empty after cost 20, rested 2 s later.
		{algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: 10, Burst: 20}, 20, 2 * time.Second, false},
		{algorithms.Spec{Algorithm: algorithms.NameGCRA, Rate: 10, Burst: 20}, 20, 2 * time.Second, false},
		// 5 slots of 100 ms: the drain is busy 500 ms.
		{algorithms.Spec{Algorithm: algorithms.NameLeakyBucket, Rate: 10, Queue: 4}, 5, 500 * time.Millisecond, false},
		{algorithms.Spec{Algorithm: algorithms.NameSlidingLog, Limit: 5, Window: 3 * time.Second}, 1, 3 * time.Second, false},
		{algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 5, Window: 3 * time.Second}, 1, 3 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.spec.Algorithm), func(t *testing.T) {
			key := redis.Keys(tt.spec.Algorithm, "time_"+string(tt.spec.Algorithm), "client")
			a := redis.Args(tt.spec)
			v, err := goredis.NewScript(redis.Script(tt.spec.Algorithm)).Run(ctx, rdb, key, a[0], a[1], tt.cost, "", "0").Int64Slice()
			if err != nil {
				t.Fatal(err)
			}
			got := parse(v)
			reset := time.Duration(got.reset) * time.Microsecond
			if !got.allowed || (!tt.windowed && reset != tt.reset) || (tt.windowed && (reset <= 0 || reset > tt.reset)) {
				t.Fatalf("got %+v, want admitted with reset %v", got, tt.reset)
			}
			for _, k := range key {
				ttl, err := rdb.PTTL(ctx, k).Result()
				if err != nil {
					t.Fatal(err)
				}
				// TTL = ⌈reset⌉ ms + 1 s, already counting down.
				if hi := reset + time.Second + time.Millisecond; ttl > hi || ttl < hi-500*time.Millisecond {
					t.Errorf("%s: TTL %v, want about %v (reset + 1 s)", k, ttl, hi)
				}
			}
		})
	}
	// The fixed window's end from TIME: within a second of Redis' own clock.
	spec := algorithms.Spec{Algorithm: algorithms.NameFixedWindow, Limit: 1, Window: time.Hour}
	a := redis.Args(spec)
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	v, err := goredis.NewScript(redis.Script(spec.Algorithm)).Run(ctx, rdb, redis.Keys(spec.Algorithm, "time", "hour"), a[0], a[1], 1, "", "0").Int64Slice()
	if err != nil {
		t.Fatal(err)
	}
	us := now.UnixMicro()
	want := (us/3_600_000_000+1)*3_600_000_000 - us
	if d := want - v[3]; d < 0 || d > 1_000_000 {
		t.Errorf("reset %d µs from Redis TIME, want %d µs (the hour's end seen from TIME)", v[3], want)
	}
}
