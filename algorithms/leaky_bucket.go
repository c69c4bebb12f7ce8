package algorithms

import "time"

// LeakyBucket is the leaky bucket as a queue (a shaper), per key: requests
// join a FIFO that is drained at exactly Rate requests per second, so
// released requests are exactly T = 1/Rate apart. A request waits for its
// slot (Decision.Delay()) instead of being rejected, unless Queue requests
// already wait, and then it is rejected. One request can be released at
// once and Queue more can wait, so the capacity is Queue+1 and the worst
// added delay is Queue/Rate.
//
// A request of cost n takes n consecutive slots: it is released at the
// first of them, and it is admitted only if its last unit would wait at
// most Queue·T. Each key keeps one number: the time at which its drain is
// next free, as float64 nanoseconds.
//
// The meter form of the leaky bucket (reject instead of delay) admits the
// same requests as TokenBucket and GCRA; use those for it.
//
// The zero value is not usable; build one with New. Not safe for concurrent use.
type LeakyBucket struct {
	rate     float64
	queue    int64
	interval float64 // T in nanoseconds
	perNs    float64 // 1/T: requests per nanosecond
	maxWait  float64 // queue·T in nanoseconds
	queues   table[leakyState]
}

// leakyState is when the key's drain is next free, in nanoseconds. Zero is
// an empty queue at any time ≥ 0.
type leakyState struct {
	next float64
}

var _ Limiter = (*LeakyBucket)(nil)

func newLeakyBucket(rate float64, queue int64) *LeakyBucket {
	t := 1e9 / rate
	return &LeakyBucket{rate: rate, queue: queue, interval: t, perNs: rate / 1e9, maxWait: float64(queue) * t,
		queues: newTable[leakyState](ceilDuration(float64(queue+1) * t))}
}

// Spec implements Limiter.
func (l *LeakyBucket) Spec() Spec {
	return Spec{Algorithm: NameLeakyBucket, Rate: l.rate, Queue: l.queue}
}

// Keys implements Limiter.
func (l *LeakyBucket) Keys() int { return l.queues.len() }

// Allow implements Limiter.
func (l *LeakyBucket) Allow(key string, now time.Duration, cost int64) Decision {
	i, fresh := l.queues.slot(key)
	d := l.allow(&l.queues.states[i], now, cost)
	if fresh {
		l.queues.file(i, leakyDue(&l.queues.states[i]))
	}
	return d
}

func (l *LeakyBucket) allow(s *leakyState, now time.Duration, cost int64) Decision {
	t := float64(now)
	backlog := s.next - t // how long the drain is busy from now
	if backlog < 0 {
		backlog = 0
	}
	if cost <= 0 {
		return Decision{Allowed: true, Remaining: l.remaining(backlog), Reset: ceilDuration(backlog)}
	}
	if cost > l.queue+1 {
		return Decision{Remaining: l.remaining(backlog), Wait: Never, Reset: ceilDuration(backlog)}
	}
	// The request's last unit starts at backlog + (cost−1)·T; it may wait at most queue·T.
	if wait := backlog + float64(cost-1)*l.interval - l.maxWait; wait >= 1 {
		return Decision{Remaining: l.remaining(backlog), Wait: ceilDuration(wait), Reset: ceilDuration(backlog)}
	}
	after := backlog + float64(cost)*l.interval
	s.next = t + after
	return Decision{Allowed: true, Wait: roundDelay(backlog), Remaining: l.remaining(after), Reset: ceilDuration(after)}
}

// roundDelay rounds a delay to whole nanoseconds, to the nearest, so that
// releases of a request every T stay exactly T apart when T is whole.
func roundDelay(ns float64) time.Duration {
	if ns < 0.5 {
		return 0
	}
	return time.Duration(ns + 0.5)
}

// remaining is how many cost-1 requests could still join when the drain is
// busy for backlog ns: the largest k whose last one would wait
// backlog + (k−1)·T − queue·T < 1 ns, Allow's own rule. A tolerance of half
// a nanosecond (the old "room + 0.5") missed one when T is not whole and the
// drain frees in under 1 ns.
func (l *LeakyBucket) remaining(backlog float64) int64 {
	k := floorUnits((l.maxWait-backlog+1)*l.perNs) + 1
	if k > 0 && backlog+float64(k-1)*l.interval-l.maxWait >= 1 {
		k--
	} else if k <= l.queue && backlog+float64(k)*l.interval-l.maxWait < 1 {
		k++
	}
	return k
}

// Reclaim implements Limiter: a key is rested when its queue is empty.
func (l *LeakyBucket) Reclaim(now time.Duration) int {
	return l.queues.reclaim(now, func(s *leakyState) bool { return l.rested(s, now) }, leakyDue)
}

// rested reports whether s is rested at now: its queue is empty.
func (l *LeakyBucket) rested(s *leakyState, now time.Duration) bool { return s.next <= float64(now) }

// leakyDue is the earliest time s can be rested: when its drain is free, a
// little early for float rounding.
func leakyDue(s *leakyState) time.Duration { return dueBefore(s.next) }
