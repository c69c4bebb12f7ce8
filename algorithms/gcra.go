package algorithms

import "time"

// GCRA is the generic cell rate algorithm per key, the "virtual scheduling"
// form: each key keeps a theoretical arrival time (TAT). With emission
// interval T = 1/Rate and tolerance τ = (Burst−1)·T, a request of cost n at
// time now computes TAT' = max(TAT, now) + n·T and is admitted when
// TAT' − now ≤ τ + T, in which case TAT becomes TAT'. A rejected request
// leaves TAT alone.
//
// One timestamp per key is all it stores. It admits exactly what a token
// bucket with the same rate and burst admits (burst = 1 + τ/T); as there, a
// request passes when it would otherwise wait under one nanosecond, the rule
// of x/time/rate's AllowN. Times are float64 nanoseconds, exact for runs up
// to 104 days.
//
// The zero value is not usable; build one with New. Not safe for concurrent use.
type GCRA struct {
	rate     float64
	burst    int64
	fburst   float64
	interval float64 // T in nanoseconds
	perNs    float64 // 1/T: requests per nanosecond
	limit    float64 // τ + T = burst·T in nanoseconds
	cells    table[gcraState]
}

// gcraState is one key's TAT in nanoseconds. Zero is rested at any time ≥ 0.
type gcraState struct {
	tat float64
}

var _ Limiter = (*GCRA)(nil)

func newGCRA(rate float64, burst int64) *GCRA {
	t := 1e9 / rate
	return &GCRA{rate: rate, burst: burst, fburst: float64(burst), interval: t, perNs: rate / 1e9, limit: float64(burst) * t,
		cells: newTable[gcraState](ceilDuration(float64(burst) * t))}
}

// Spec implements Limiter.
func (l *GCRA) Spec() Spec { return Spec{Algorithm: NameGCRA, Rate: l.rate, Burst: l.burst} }

// Keys implements Limiter.
func (l *GCRA) Keys() int { return l.cells.len() }

// Allow implements Limiter.
func (l *GCRA) Allow(key string, now time.Duration, cost int64) Decision {
	i, fresh := l.cells.slot(key)
	d := l.allow(&l.cells.states[i], now, cost)
	if fresh {
		l.cells.file(i, gcraDue(&l.cells.states[i]))
	}
	return d
}

func (l *GCRA) allow(s *gcraState, now time.Duration, cost int64) Decision {
	t := float64(now)
	tat := s.tat
	if tat < t {
		tat = t
	}
	if cost <= 0 {
		return Decision{Allowed: true, Remaining: l.remaining(tat - t), Reset: ceilDuration(tat - t)}
	}
	if cost > l.burst {
		return Decision{Remaining: l.remaining(tat - t), Wait: Never, Reset: ceilDuration(tat - t)}
	}
	next := tat + float64(cost)*l.interval
	if wait := next - t - l.limit; wait >= 1 {
		return Decision{Remaining: l.remaining(tat - t), Wait: ceilDuration(wait), Reset: ceilDuration(tat - t)}
	}
	s.tat = next
	return Decision{Allowed: true, Remaining: l.remaining(next - t), Reset: ceilDuration(next - t)}
}

// remaining is how many cost-1 requests fit when TAT is ahead of now by ahead
// ns: the largest k with ahead + k·T − (τ + T) < 1 ns, Allow's own rule.
// A tolerance in units (the old "+ 1e-9") is over 1 ns when T > 1 s and
// counted a request that Allow rejects.
func (l *GCRA) remaining(ahead float64) int64 {
	k := floorWhole((l.limit - ahead + 1) * l.perNs)
	if k > 0 && ahead+k*l.interval-l.limit >= 1 {
		k--
	} else if k < l.fburst && ahead+(k+1)*l.interval-l.limit < 1 {
		k++
	}
	return int64(k)
}

// Reclaim implements Limiter: a key is rested when its TAT is not after now.
func (l *GCRA) Reclaim(now time.Duration) int {
	return l.cells.reclaim(now, func(s *gcraState) bool { return l.rested(s, now) }, gcraDue)
}

// rested reports whether s is rested at now: its TAT is not after now.
func (l *GCRA) rested(s *gcraState, now time.Duration) bool { return s.tat <= float64(now) }

// gcraDue is the earliest time s can be rested: its TAT, a little early
// for float rounding.
func gcraDue(s *gcraState) time.Duration { return dueBefore(s.tat) }
