package algorithms

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"time"
)

// Lane is one limiter in a simulation: an algorithm with its parameters, and
// where it is enforced.
type Lane struct {
	Spec     Spec
	Replicas Replicas
}

// Simulation runs several limiters over the same traffic. Each lane gets its
// own fresh limiter and sees every arrival in time order (ties in input
// order); with a retry policy each lane's rejected clients retry on their
// own schedule, so lanes can see different retries.
type Simulation struct {
	Lanes   []Lane
	Traffic Traffic
	// Bin is the width of one time-series bin; 0 picks a round width that
	// gives about 100 bins over the run.
	Bin time.Duration
	// Window is the span of Summary.MaxInWindow; 0 means 60 s.
	Window time.Duration
	// Until extends the time series to at least this time.
	Until time.Duration
	// Focus is the key whose remaining quota and queue the series track;
	// "" means the key of the first arrival.
	Focus string
	// Decisions keeps one Decision per arrival in LaneResult.Decisions.
	Decisions bool
}

// Limits on a simulation's size.
const (
	MaxLanes = 32
	MaxBins  = 100_000
	MaxKey   = 256 // bytes in a key
)

// Result is a simulation's outcome, one LaneResult per lane in order.
type Result struct {
	Bin   time.Duration
	Lanes []LaneResult
}

// LaneResult is what one lane did.
type LaneResult struct {
	Lane Lane
	// Decisions holds, when asked for, the decision on each arrival's first
	// attempt, in input order.
	Decisions []Decision
	Series    []Bin
	Summary   Summary
}

// Bin is one slice of a lane's time series: requests (retries included)
// that arrived in [Start, Start+width), and the focus key's state at its end.
type Bin struct {
	Start     time.Duration
	Offered   int64
	Admitted  int64
	Rejected  int64
	Remaining int64 // the focus key's Decision.Remaining at the end of the bin
	Queued    int64 // leaky_bucket: the focus key's requests waiting at the end of the bin
}

// Summary is a lane's totals. Counts are requests; retries count as offered
// requests too.
type Summary struct {
	Offered, Admitted, Rejected int64
	OfferedCost, AdmittedCost   int64
	AdmittedShare               float64 // Admitted / Offered
	// MaxIn1s and MaxInWindow are the most requests admitted in any span of
	// 1 s and of Simulation.Window. A shaper's requests count when they are
	// released (arrival + delay), as the backend sees them.
	MaxIn1s, MaxInWindow int64
	// Added delay of admitted requests (shapers only), within 1 %; the max
	// is exact.
	DelayP50, DelayP99, DelayMax time.Duration
	// FirstRejection is when the first request was rejected, or -1.
	FirstRejection time.Duration
	Retries        int64 // retries offered
	GaveUp         int64 // requests still rejected after their last retry
}

// Validate reports the first problem with the simulation's setup or traffic.
func (s *Simulation) Validate() error {
	if err := s.validateSetup(); err != nil {
		return err
	}
	_, err := arrivalOrder(s.Traffic.Arrivals)
	return err
}

func (s *Simulation) validateSetup() error {
	if len(s.Lanes) == 0 || len(s.Lanes) > MaxLanes {
		return fmt.Errorf("lanes: %d limiters; want 1 to %d", len(s.Lanes), MaxLanes)
	}
	for i, l := range s.Lanes {
		if err := l.Spec.Validate(); err != nil {
			return fmt.Errorf("lanes[%d]: %w", i, err)
		}
		if err := l.Replicas.Validate(); err != nil {
			return fmt.Errorf("lanes[%d]: %w", i, err)
		}
	}
	if s.Traffic.Retry != nil {
		if err := s.Traffic.Retry.Validate(); err != nil {
			return fmt.Errorf("retry: %w", err)
		}
	}
	if s.Bin < 0 || (s.Bin > 0 && s.Bin < time.Millisecond) {
		return &ParamError{"bin", s.Bin.String(), "0 (automatic) or a duration of at least 1ms"}
	}
	if s.Window < 0 || (s.Window > 0 && s.Window < time.Millisecond) || s.Window > MaxWindow {
		return &ParamError{"window", s.Window.String(), "0 (60s) or a duration in [1ms, 8784h0m0s]"}
	}
	if s.Until < 0 || s.Until > MaxWindow {
		return &ParamError{"until", s.Until.String(), "a duration in [0, 8784h0m0s]"}
	}
	return nil
}

// validArrival reports whether a's time, cost and key are in range.
func validArrival(a *Arrival) bool {
	return uint64(a.At) <= uint64(MaxWindow) && uint64(a.Cost-1) < MaxCount && len(a.Key) <= MaxKey
}

// arrivalError reports what is wrong with arrival i.
func arrivalError(i int, a *Arrival) error {
	switch {
	case a.At < 0 || a.At > MaxWindow:
		return &ParamError{fmt.Sprintf("arrivals[%d].at", i), a.At.String(), "a time in [0, 8784h0m0s]"}
	case a.Cost < 1 || a.Cost > MaxCount:
		return &ParamError{fmt.Sprintf("arrivals[%d].cost", i), fmt.Sprint(a.Cost), "a whole number in [1, 1000000000]"}
	default:
		return &ParamError{fmt.Sprintf("arrivals[%d].key", i), fmt.Sprintf("%d bytes", len(a.Key)), "at most 256 bytes"}
	}
}

// Simulate runs the simulation. Its result depends only on its input: the
// same simulation always gives the same numbers.
func Simulate(s Simulation) (Result, error) {
	if err := s.validateSetup(); err != nil {
		return Result{}, err
	}
	// Arrivals are usually sorted already. The first lane checks each one as
	// it goes, so sorted input is read once per lane; unsorted input is
	// sorted (by index) and the run starts again.
	res, err := s.run(nil, true)
	if err != errUnsorted {
		return res, err
	}
	ord, err := arrivalOrder(s.Traffic.Arrivals)
	if err != nil {
		return Result{}, err
	}
	return s.run(ord, false)
}

// errUnsorted stops a checking run that meets an arrival earlier than the one before it.
var errUnsorted = errors.New("arrivals are not sorted by time")

// run runs every lane over the arrivals in the order ord; with check the
// first lane validates each arrival and that ord (nil: input order) is
// sorted.
func (s *Simulation) run(ord order, check bool) (Result, error) {
	arrivals := s.Traffic.Arrivals
	end := s.Until
	focus := s.Focus
	if n := len(arrivals); n > 0 {
		first, last := ord.at(0), ord.at(n-1)
		for _, i := range []int{first, last} {
			if !validArrival(&arrivals[i]) {
				return Result{}, arrivalError(i, &arrivals[i])
			}
		}
		end = max(end, arrivals[last].At)
		if focus == "" {
			focus = arrivals[first].Key
		}
	}
	if r := s.Traffic.Retry; r != nil {
		// Room for the retries of the last arrivals: the longest wait each
		// attempt can draw, without Retry-After.
		end += r.Reach()
	}
	bin := s.Bin
	if bin == 0 {
		bin = roundBin(end / 100)
	}
	if end/bin >= MaxBins {
		return Result{}, &ParamError{"bin", bin.String(), fmt.Sprintf("at least %s, so the run of %s has at most %d bins", (end/MaxBins + 1).Round(time.Millisecond), end, MaxBins)}
	}
	window := s.Window
	if window == 0 {
		window = time.Minute
	}
	res := Result{Bin: bin, Lanes: make([]LaneResult, len(s.Lanes))}
	for i, lane := range s.Lanes {
		lim, err := NewReplicated(lane.Spec, lane.Replicas)
		if err != nil {
			return Result{}, fmt.Errorf("lanes[%d]: %w", i, err)
		}
		r := runner{
			lim: lim, shaper: lane.Spec.Algorithm == NameLeakyBucket, queue: lane.Spec.Queue,
			bin: bin, focus: focus, track: s.Focus != "" || len(arrivals) > 0, retry: s.Traffic.Retry,
			spans: spanCounter{short: time.Second, long: window},
		}
		if r.shaper {
			r.delays = newDelayHistogram()
			r.maxDelay = time.Duration(float64(lane.Spec.Queue+1) * 1e9 / lane.Spec.Rate)
		}
		last := time.Duration(0)
		if len(arrivals) > 0 {
			last = arrivals[ord.at(len(arrivals)-1)].At
		}
		res.Lanes[i], err = r.run(lane, arrivals, ord, s.Decisions, s.Until, check && i == 0, last)
		if err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// A lane reclaims rested keys every reclaimEvery+1 arrivals once more than
// reclaimAbove keys hold state. Below that a lane's keys take a few
// megabytes at most, and reclaiming keys that come back soon only costs
// their re-creation; above it, memory stays bounded by the active keys.
const (
	reclaimEvery = 1<<16 - 1
	reclaimAbove = 1 << 16
)

// order lists arrival indices in time order; nil means the input is
// already sorted.
type order []int32

func (o order) at(i int) int {
	if o == nil {
		return i
	}
	return int(o[i])
}

// arrivalOrder checks every arrival and returns their time order, in one
// pass over the arrivals when they are already sorted.
func arrivalOrder(as []Arrival) (order, error) {
	sorted := true
	prev := time.Duration(0)
	for i := range as {
		a := &as[i]
		if !validArrival(a) {
			return nil, arrivalError(i, a)
		}
		if a.At < prev {
			sorted = false
		}
		prev = a.At
	}
	if sorted {
		return nil, nil
	}
	o := make(order, len(as))
	for i := range o {
		o[i] = int32(i)
	}
	slices.SortStableFunc(o, func(a, b int32) int { return cmp.Compare(as[a].At, as[b].At) })
	return o, nil
}

// roundBin rounds d up to 1, 2 or 5 times a power of ten, at least 1 ms.
func roundBin(d time.Duration) time.Duration {
	if d <= time.Millisecond {
		return time.Millisecond
	}
	for p := time.Duration(1); ; p *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if m*p >= d {
				return m * p
			}
		}
	}
}

// pending is a retry waiting in a lane's queue.
type pending struct {
	at      time.Duration
	seq     int64 // tie-break: scheduling order
	key     string
	cost    int64
	attempt int
	draw    time.Duration // the jitter mode's draw for this retry's wait (RetryPolicy.wait)
}

// retryQueue is a binary min-heap of retries by time, then scheduling
// order (seq, unique), so the order they come out in is the same whatever
// the heap's layout. It is typed rather than a container/heap, which would
// box every retry in an interface: an allocation per retry.
type retryQueue []pending

func (q retryQueue) less(i, j int) bool {
	return q[i].at < q[j].at || (q[i].at == q[j].at && q[i].seq < q[j].seq)
}

// push adds p.
func (q *retryQueue) push(p pending) {
	*q = append(*q, p)
	h := *q
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

// pop removes and returns the earliest retry; q must not be empty.
func (q *retryQueue) pop() pending {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = pending{} // drop the key string for the collector
	h = h[:n]
	for i := 0; ; {
		j := 2*i + 1
		if j >= n {
			break
		}
		if r := j + 1; r < n && h.less(r, j) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
	*q = h
	return top
}

// runner is one lane's run.
type runner struct {
	lim    Limiter
	shaper bool
	queue  int64
	bin    time.Duration
	focus  string
	track  bool // whether there is a focus key ("" is a key like any other)
	retry  *RetryPolicy

	series   []Bin
	cur      *Bin          // the last bin of series
	binEnd   time.Duration // end of cur
	sum      Summary
	spans    spanCounter
	pending  releases      // shapers: release times not yet counted
	maxDelay time.Duration // shapers: the longest delay, queue/rate
	delays   delayHistogram
	retries  retryQueue // with a retry policy: retries not yet decided
	rng      *rand.Rand // with a retry policy: jitter
	seq      int64      // retries scheduled so far, to break ties
}

// advance closes bins until the one holding t is the last.
func (r *runner) advance(t time.Duration) {
	for r.cur == nil || t >= r.binEnd {
		if r.cur != nil {
			r.closeBin()
		}
		r.series = append(r.series, Bin{Start: r.binEnd})
		r.cur = &r.series[len(r.series)-1]
		r.binEnd += r.bin
	}
}

// closeBin records the focus key's state at the end of the last bin.
func (r *runner) closeBin() {
	if !r.track {
		return
	}
	d := r.lim.Allow(r.focus, r.binEnd, 0)
	r.cur.Remaining = d.Remaining
	if r.shaper {
		r.cur.Queued = max(0, r.queue-d.Remaining)
	}
}

// release counts a shaper's releases up to t in the span counters, in
// time order. In calendar mode it counts the slots that end by t; the
// releases of the slot holding t wait for the slot's end, which keeps
// the order, since every later release is at t or after.
func (r *runner) release(t time.Duration) {
	q := &r.pending
	if q.cal.n == 0 {
		// Releases in order (one key): straight from the FIFO.
		mask := len(q.fifo) - 1
		for q.head != q.tail {
			rt := q.fifo[q.head&mask]
			if rt > t {
				return
			}
			if r.spans.full() {
				r.spans.grow()
			}
			r.spans.put(rt)
			q.head++
		}
		return
	}
	c := &q.cal
	end := int64(t / c.w) // slots before it have ended by t
	if t == Never {
		end = c.next + int64(len(c.slots))
	}
	mask := int64(len(c.slots) - 1)
	for ; c.next < end && c.n > 0; c.next++ {
		slot := c.slots[c.next&mask]
		if len(slot) == 0 {
			continue
		}
		slices.Sort(slot)
		for _, rt := range slot {
			if r.spans.full() {
				r.spans.grow()
			}
			r.spans.put(rt)
		}
		c.n -= len(slot)
		c.slots[c.next&mask] = slot[:0]
	}
	if c.n == 0 {
		c.next = max(c.next, end)
	}
}

// shape counts a shaper's request admitted at at and released wait later.
// Releases up to at are final (every later request is released no
// earlier than it arrives): they are counted first. A request released at
// once with nothing pending is counted directly, without the queue: the
// common case of traffic under the rate.
func (r *runner) shape(at, wait time.Duration) {
	q := &r.pending
	if q.cal.n != 0 {
		r.release(at)
		q.cal.push(at + wait)
		r.delays.add(wait)
		return
	}
	// Releases in order (one key, or keys that never overlap): the FIFO
	// alone, inline.
	mask := len(q.fifo) - 1
	for q.head != q.tail {
		rt := q.fifo[q.head&mask]
		if rt > at {
			break
		}
		if r.spans.full() {
			r.spans.grow()
		}
		r.spans.put(rt)
		q.head++
	}
	if q.head == q.tail && wait == 0 {
		r.spans.add(at)
		r.delays.zeros++
		return
	}
	t := at + wait
	switch {
	case q.head != q.tail && q.tail-q.head < len(q.fifo) && t >= q.fifo[(q.tail-1)&mask]:
		q.fifo[q.tail&mask] = t
		q.tail++
	case q.head == q.tail || t >= q.fifo[(q.tail-1)&mask]:
		q.pushFIFO(t)
	default:
		// Out of order (keys whose releases interleave): to the
		// calendar, with everything the FIFO holds.
		q.toCalendar(at, r.maxDelay)
		q.cal.push(t)
	}
	r.delays.add(wait)
}

func (r *runner) decide(at time.Duration, key string, cost int64) Decision {
	if r.cur == nil || at >= r.binEnd {
		r.advance(at)
	}
	d := r.lim.Allow(key, at, cost)
	b := r.cur
	b.Offered++
	r.sum.OfferedCost += cost
	if d.Allowed {
		b.Admitted++
		r.sum.AdmittedCost += cost
		if r.shaper {
			r.shape(at, d.Wait)
		} else {
			if r.spans.full() {
				r.spans.grow()
			}
			r.spans.put(at)
		}
	} else {
		b.Rejected++
		if r.sum.FirstRejection < 0 {
			r.sum.FirstRejection = at
		}
	}
	return d
}

// schedule queues retry number attempt of a request rejected at at with d,
// or counts the client as given up. prev is the jitter draw of the
// request's previous retry, 0 before its first.
func (r *runner) schedule(at time.Duration, key string, cost int64, attempt int, d Decision, prev time.Duration) {
	if attempt > r.retry.Attempts || (r.retry.HonorRetryAfter && d.RetryAfter() == Never) {
		r.sum.GaveUp++
		return
	}
	wait, draw := r.retry.wait(attempt, d.RetryAfter(), prev, r.rng)
	r.seq++
	r.retries.push(pending{at: at + wait, seq: r.seq, key: key, cost: cost, attempt: attempt, draw: draw})
}

// retryUntil decides every queued retry due before t, in time order.
func (r *runner) retryUntil(t time.Duration) {
	for len(r.retries) > 0 && r.retries[0].at < t {
		p := r.retries.pop()
		r.sum.Retries++
		if d := r.decide(p.at, p.key, p.cost); !d.Allowed {
			r.schedule(p.at, p.key, p.cost, p.attempt+1, d, p.draw)
		}
	}
}

// run decides every arrival in the order ord. With check it validates each
// arrival and that the order is sorted, stopping with errUnsorted at the
// first arrival earlier than the one before it or later than last (the
// time the bins were planned for), before any bin is made for it.
func (r *runner) run(lane Lane, arrivals []Arrival, ord order, keep bool, until time.Duration, check bool, last time.Duration) (LaneResult, error) {
	out := LaneResult{Lane: lane}
	if keep {
		out.Decisions = make([]Decision, len(arrivals))
	}
	r.sum.FirstRejection = -1
	if r.retry != nil {
		r.rng = rand.New(rand.NewPCG(r.retry.Seed, 0x7e7)) // the same stream in every lane
	}
	prev := time.Duration(0)
	for i := 0; i < len(arrivals); i++ {
		idx := ord.at(i)
		a := &arrivals[idx]
		if check {
			if !validArrival(a) {
				return out, arrivalError(idx, a)
			}
			if a.At < prev || a.At > last {
				return out, errUnsorted
			}
			prev = a.At
		}
		if r.retry != nil {
			r.retryUntil(a.At) // retries due before this arrival go first
		}
		d := r.decide(a.At, a.Key, a.Cost)
		if i&reclaimEvery == reclaimEvery && r.lim.Keys() > reclaimAbove {
			// Drop rested keys so a run over many clients holds only
			// the active ones; decisions do not change.
			r.lim.Reclaim(a.At)
		}
		if keep {
			out.Decisions[idx] = d
		}
		if !d.Allowed && r.retry != nil {
			r.schedule(a.At, a.Key, a.Cost, 1, d, 0)
		}
	}
	if r.retry != nil {
		r.retryUntil(Never)
	}
	if until > 0 {
		r.advance(until)
	}
	if len(r.series) > 0 {
		r.closeBin()
	}
	for i := range r.series {
		r.sum.Offered += r.series[i].Offered
		r.sum.Admitted += r.series[i].Admitted
		r.sum.Rejected += r.series[i].Rejected
	}
	if r.shaper {
		r.release(Never)
		r.sum.DelayP50 = r.delays.quantile(0.50)
		r.sum.DelayP99 = r.delays.quantile(0.99)
		r.sum.DelayMax = r.delays.max
	}
	r.sum.MaxIn1s, r.sum.MaxInWindow = int64(r.spans.bestShort), int64(r.spans.bestLong)
	if r.sum.Offered > 0 {
		r.sum.AdmittedShare = float64(r.sum.Admitted) / float64(r.sum.Offered)
	}
	out.Series, out.Summary = r.series, r.sum
	return out, nil
}

// spanCounter finds the most events in any span (t−short, t] and in any
// span (t−long, t] of a non-decreasing stream of times. The count in a
// span can grow by at most one per event, and (t − S, t] holds more than
// best events exactly when the event best places before t lies inside it,
// so each event costs one comparison per span. The ring keeps the last
// events, at least max(best)+1 of them, in a power-of-two slice indexed by
// the event number.
type spanCounter struct {
	short, long         time.Duration
	ring                []time.Duration
	n                   int // events seen
	bestShort, bestLong int
}

func (c *spanCounter) add(t time.Duration) {
	if c.full() {
		c.grow()
	}
	c.put(t)
}

// full reports whether the ring must grow before the next put: it holds
// at most max(best)+1 events.
func (c *spanCounter) full() bool { return len(c.ring) <= max(c.bestShort, c.bestLong)+1 }

// put is add without the room check, small enough to inline into the
// simulator's loops, which check full first.
func (c *spanCounter) put(t time.Duration) {
	ring, n := c.ring, c.n
	mask := len(ring) - 1
	ring[n&mask] = t
	c.n = n + 1
	// best ≤ n (a span holds at most the events seen), so the index is
	// never negative: with n = 0 it is the event just written.
	if ring[(n-c.bestShort)&mask] > t-c.short {
		c.bestShort++
	}
	if ring[(n-c.bestLong)&mask] > t-c.long {
		c.bestLong++
	}
}

// grow doubles the ring, keeping every event it holds at its index.
func (c *spanCounter) grow() {
	old := c.ring
	c.ring = make([]time.Duration, max(16, 2*len(old)))
	for i := max(0, c.n-len(old)); i < c.n; i++ {
		c.ring[i&(len(c.ring)-1)] = old[i&(len(old)-1)]
	}
}

// releases holds a shaper's release times (arrival + delay) that are still
// in the future, so they reach the span counters in time order: every later
// arrival is released no earlier than it arrives, so all releases up to the
// current arrival are final. Releases that come in order (always, for one
// key) go to a FIFO ring. Once one comes out of order (several keys whose
// queues overlap), every pending release moves to a calendar until it is
// empty again.
type releases struct {
	fifo       []time.Duration // ring, size a power of two
	head, tail int             // indices grow without wrapping
	cal        calendar
}

func (q *releases) empty() bool { return q.head == q.tail && q.cal.n == 0 }

// pushFIFO appends t, growing the ring when full.
func (q *releases) pushFIFO(t time.Duration) {
	if q.tail-q.head == len(q.fifo) {
		old := q.fifo
		q.fifo = make([]time.Duration, max(16, 2*len(old)))
		for i := q.head; i < q.tail; i++ {
			q.fifo[i&(len(q.fifo)-1)] = old[i&(len(old)-1)]
		}
	}
	q.fifo[q.tail&(len(q.fifo)-1)] = t
	q.tail++
}

// toCalendar starts calendar mode at time now (the latest drain bound)
// for releases at most maxDelay after their arrival, moving the FIFO's
// releases into it.
func (q *releases) toCalendar(now, maxDelay time.Duration) {
	q.cal.start(now, maxDelay)
	for ; q.head != q.tail; q.head++ {
		q.cal.push(q.fifo[q.head&(len(q.fifo)-1)])
	}
}

// calendar is a calendar queue of release times: slots of width w, one per
// interval [k·w, (k+1)·w), in a ring that spans more than the longest
// delay, so a slot never holds two laps. Pushing appends to a slot; a
// slot is sorted (a few dozen releases) and counted once it has ended.
// Every release is at least the current arrival and at most the longest
// delay after it, so the ring covers them all; a release beyond it (a
// delay longer than planned) doubles w first.
type calendar struct {
	w     time.Duration
	slots [][]time.Duration // power-of-two count
	next  int64             // absolute index of the first slot not yet counted
	n     int
}

// calendarSlots is the calendar's slot count: with the longest delay
// spread over it, slots hold a few releases each even with thousands of
// busy keys.
const calendarSlots = 1 << 14

// start empties the calendar for releases from now to now + maxDelay.
func (c *calendar) start(now, maxDelay time.Duration) {
	if c.slots == nil {
		c.slots = make([][]time.Duration, calendarSlots)
	}
	c.w = max(1, (maxDelay+calendarSlots-3)/(calendarSlots-2))
	c.next = int64(now / c.w)
	c.n = 0
}

func (c *calendar) push(t time.Duration) {
	k := int64(t / c.w)
	for k-c.next >= int64(len(c.slots)) {
		c.widen()
		k = int64(t / c.w)
	}
	s := &c.slots[k&int64(len(c.slots)-1)]
	*s = append(*s, t)
	c.n++
}

// widen doubles the slot width, moving every release to its new slot.
func (c *calendar) widen() {
	old := c.slots
	from := c.next
	c.slots = make([][]time.Duration, len(old))
	c.w *= 2
	c.next = from * int64(c.w/2) / int64(c.w)
	mask := int64(len(old) - 1)
	for k := from; k < from+int64(len(old)); k++ {
		for _, t := range old[k&mask] {
			i := int64(t/c.w) & mask
			c.slots[i] = append(c.slots[i], t)
		}
	}
}

// delayHistogram counts durations in log-linear buckets: exact below 128 ns,
// then 64 buckets per power of two, so a bucket's width is under 1/64 of its
// value and its midpoint is within 0.8 %.
type delayHistogram struct {
	counts []int64
	zeros  int64 // zero delays not yet in counts[0] (the shaper's fast path)
	max    time.Duration
}

const subBuckets = 64

func bucketOf(v uint64) int {
	if v < 2*subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - 7 // v >> e is in [64, 128)
	return (e+1)*subBuckets + int(v>>e) - subBuckets
}

// bucketRange returns the smallest and largest value of bucket i.
func bucketRange(i int) (lo, hi uint64) {
	if i < 2*subBuckets {
		return uint64(i), uint64(i)
	}
	e := i/subBuckets - 1
	m := uint64(i%subBuckets + subBuckets)
	return m << e, (m+1)<<e - 1
}

// delayBuckets is the bucket count that holds every time.Duration.
var delayBuckets = bucketOf(math.MaxInt64) + 1

// newDelayHistogram returns a histogram with every bucket allocated (about
// 29 KB), so that add never grows it.
func newDelayHistogram() delayHistogram {
	return delayHistogram{counts: make([]int64, delayBuckets)}
}

// add counts d, which must not be negative. h must come from
// newDelayHistogram.
func (h *delayHistogram) add(d time.Duration) {
	h.counts[bucketOf(uint64(d))]++
	h.max = max(h.max, d)
}

// quantile returns the midpoint of the bucket holding the q-quantile
// (nearest rank), capped at the maximum.
func (h *delayHistogram) quantile(q float64) time.Duration {
	if h.zeros > 0 {
		h.counts[0] += h.zeros
		h.zeros = 0
	}
	var n int64
	for _, c := range h.counts {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	rank = max(rank, 1)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketRange(i)
			return min(time.Duration(lo+(hi-lo)/2), h.max)
		}
	}
	return h.max
}
