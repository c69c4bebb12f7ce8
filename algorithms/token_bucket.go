package algorithms

import "time"

// TokenBucket is a token bucket per key: a bucket holds up to Burst tokens,
// starts full, and refills continuously at Rate tokens per second. A request
// of cost n is admitted when the bucket holds at least n tokens, which it then
// takes; a rejected request takes nothing.
//
// Tokens are float64, as in golang.org/x/time/rate, and a request passes when
// the wait for its missing tokens is under one nanosecond, which is exactly
// x/time/rate's AllowN rule. Its decisions match GCRA with the same rate and
// burst.
//
// The zero value is not usable; build one with New. Not safe for concurrent use.
type TokenBucket struct {
	rate    float64 // tokens per second
	perNs   float64 // tokens per nanosecond
	nsPer   float64 // nanoseconds per token
	burst   int64
	fburst  float64
	buckets table[tokenBucketState]
}

// tokenBucketState is one key's bucket. The zero value is a full bucket.
type tokenBucketState struct {
	deficit float64       // tokens missing from a full bucket at last
	last    time.Duration // time of the last admitted request
}

var _ Limiter = (*TokenBucket)(nil)

func newTokenBucket(rate float64, burst int64) *TokenBucket {
	l := &TokenBucket{rate: rate, perNs: rate / 1e9, nsPer: 1e9 / rate, burst: burst, fburst: float64(burst)}
	l.buckets = newTable[tokenBucketState](ceilDuration(l.fburst * l.nsPer))
	return l
}

// Spec implements Limiter.
func (l *TokenBucket) Spec() Spec {
	return Spec{Algorithm: NameTokenBucket, Rate: l.rate, Burst: l.burst}
}

// Keys implements Limiter.
func (l *TokenBucket) Keys() int { return l.buckets.len() }

// deficitAt is the state's deficit refilled up to now.
func (l *TokenBucket) deficitAt(s *tokenBucketState, now time.Duration) float64 {
	if now <= s.last {
		return s.deficit
	}
	d := s.deficit - float64(now-s.last)*l.perNs
	if d < 0 {
		return 0
	}
	return d
}

// Allow implements Limiter.
func (l *TokenBucket) Allow(key string, now time.Duration, cost int64) Decision {
	i, fresh := l.buckets.slot(key)
	d := l.allow(&l.buckets.states[i], now, cost)
	if fresh {
		l.buckets.file(i, l.due(&l.buckets.states[i]))
	}
	return d
}

func (l *TokenBucket) allow(s *tokenBucketState, now time.Duration, cost int64) Decision {
	lag := time.Duration(0)
	if now < s.last {
		lag, now = s.last-now, s.last
	}
	d := l.deficitAt(s, now)
	if cost <= 0 {
		return Decision{Allowed: true, Remaining: l.remaining(d), Reset: lag + ceilDuration(d*l.nsPer)}
	}
	if cost > l.burst {
		return Decision{Remaining: l.remaining(d), Wait: Never, Reset: lag + ceilDuration(d*l.nsPer)}
	}
	after := d + float64(cost)
	if wait := (after - l.fburst) * l.nsPer; wait >= 1 {
		return Decision{Remaining: l.remaining(d), Wait: lag + ceilDuration(wait), Reset: lag + ceilDuration(d*l.nsPer)}
	}
	s.deficit, s.last = after, now
	return Decision{Allowed: true, Remaining: l.remaining(after), Reset: lag + ceilDuration(after*l.nsPer)}
}

// remaining is how many cost-1 requests Allow would still admit with deficit
// d: the largest k whose wait (d + k − burst)·nsPer is under 1 ns, by the
// same expression as Allow, so the two never disagree. (A plain tolerance
// in tokens is more than 1 ns of refill below 1 r/s.)
func (l *TokenBucket) remaining(d float64) int64 {
	k := floorWhole(l.fburst - d + l.perNs)
	if k > 0 && (d+k-l.fburst)*l.nsPer >= 1 {
		k--
	} else if k < l.fburst && (d+(k+1)-l.fburst)*l.nsPer < 1 {
		k++
	}
	return int64(k)
}

// Reclaim implements Limiter: a key is rested when its bucket is full.
func (l *TokenBucket) Reclaim(now time.Duration) int {
	return l.buckets.reclaim(now, func(s *tokenBucketState) bool { return l.rested(s, now) }, l.due)
}

// rested reports whether s is rested at now: a full bucket.
func (l *TokenBucket) rested(s *tokenBucketState, now time.Duration) bool {
	return l.deficitAt(s, now) == 0
}

// due is the earliest time s can be full: its deficit refilled, a little
// early for float rounding.
func (l *TokenBucket) due(s *tokenBucketState) time.Duration {
	if s.deficit <= 0 {
		return rested
	}
	return addSat(s.last, dueBefore(s.deficit*l.nsPer))
}
