package shadow

import "time"

// sequencer times a replay's requests in log order, in Unix nanoseconds
// (see the package comment): a request with a fraction of a second is
// replayed at its own time; the requests sharing a whole-second timestamp
// are held until the second is complete, then spread over it; past
// maxHeld requests (or maxHeldBytes of text) in one second, the held ones
// are spread and the rest of that second replayed at its last spread
// instant; a request logged before the latest one is replayed at the
// latest time. Replay times count from the first request's instant.
//
// Every request given to add is timed exactly once, in the order given,
// by a call of timed: during that add, or during a later add or flush
// once its second is complete. The caller keeps what it needs of the
// requests in that order (a replay on one goroutine, the requests; a
// sharded replay's timer, where each time goes).
type sequencer struct {
	maxHeld int
	timed   func(t time.Duration)

	held   int   // requests of the current whole second not yet timed
	text   int   // their text bytes
	second int64 // that second, while held > 0 or full
	full   bool  // the second passed its bound and was spread
	fullAt int64 // … the instant its later requests are replayed at

	n         int64         // requests timed
	origin    int64         // the first request's instant, replay time 0
	last      time.Duration // the latest replay time so far
	end       int64         // the latest request's own time
	reordered int64         // requests replayed later than logged
	unspread  int64         // requests of a full second, not spread
}

// add takes the next request of the log, at (Unix ns), whose key, tier,
// method and path are text bytes long.
func (s *sequencer) add(at int64, text int) {
	if s.full && at != s.second {
		s.full = false
	}
	if s.held > 0 && at != s.second {
		s.flush()
	}
	if s.full {
		s.unspread++
		s.clock(at, s.offset(s.fullAt))
		return
	}
	if at%int64(time.Second) != 0 {
		s.clock(at, s.offset(at))
		return
	}
	if s.held == 0 {
		s.second = at
	}
	s.held++
	s.text += text
	if s.held >= s.maxHeld || s.text >= maxHeldBytes {
		// Spread what is held; the rest of the second comes at its last
		// spread instant.
		n := int64(s.held)
		s.fullAt = s.second + (n-1)*int64(time.Second)/n
		s.flush()
		s.full = true
	}
}

// flush times the held second's requests, spread over it: the i-th of n
// at +i/n s, in integers (time.Time's arithmetic cost more than the rest
// of a request's timing).
func (s *sequencer) flush() {
	if s.held == 0 {
		return
	}
	start, n := s.offset(s.second), int64(s.held)
	s.held, s.text = 0, 0
	for i := range n {
		s.clock(s.second, start+time.Duration(i*int64(time.Second)/n))
	}
}

// offset is the replay time of instant, the first instant asked being
// the replay's origin.
func (s *sequencer) offset(instant int64) time.Duration {
	if s.n == 0 {
		s.origin = instant
	}
	return time.Duration(instant - s.origin)
}

// clock times the request logged at at, replayed at t unless that is
// before an earlier request's time.
func (s *sequencer) clock(at int64, t time.Duration) {
	s.n++
	if t < s.last {
		s.reordered++
		t = s.last
	}
	s.last = t
	if at > s.end || s.n == 1 {
		s.end = at
	}
	s.timed(t)
}

// originTime is the replay's origin as a time, in UTC.
func (s *sequencer) originTime() time.Time { return time.Unix(0, s.origin).UTC() }

// report fills the report's times and counts of the requests timed.
func (s *sequencer) report(rep *Report) {
	if s.n > 0 {
		rep.Start, rep.End = s.originTime(), time.Unix(0, s.end).UTC()
	}
	rep.Requests, rep.Reordered, rep.Unspread = s.n, s.reordered, s.unspread
}

// fifo is a queue in one slice, compacted as it drains: what waits for
// its time in log order.
type fifo[T any] struct {
	items []T
	head  int // the oldest item
}

func (f *fifo[T]) push(v T) {
	if f.head > 0 && 2*f.head >= len(f.items) {
		n := copy(f.items, f.items[f.head:])
		clear(f.items[n:])
		f.items, f.head = f.items[:n], 0
	}
	f.items = append(f.items, v)
}

// pop removes and returns the oldest item; the queue must not be empty.
func (f *fifo[T]) pop() T {
	v := f.items[f.head]
	var zero T
	f.items[f.head] = zero
	f.head++
	return v
}
