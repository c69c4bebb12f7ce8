package shadow

import (
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/policy"
)

// Sharded is a replay split by client across cores, for measure.Options'
// Replay: one goroutine times the requests in log order (Sequence: the
// whole-second spreading, the reordering and the report's totals, which
// depend on every request), and each shard decides the requests of its
// own clients in log order (Consume), with its own engine. A policy's
// per-client limits (default, tier, endpoint) are keyed by the client, so
// a client's decisions depend only on its own requests: the report, and
// the CSV of rejections (written in log order by Finished), are those of
// a replay on one goroutine. A policy with a global limit couples every
// client, so it is replayed on one shard (Shards returns 1).
//
// Memory: per client as a replay on one goroutine (each client is in one
// shard), plus each shard's chart bins and, until Finished, the rejection
// rows of the requests in flight.
type Sharded struct {
	p      policy.Policy
	timer  *replayer
	shards []*replayer
}

// Sharded returns x as a sharded replay; x is then fed by the Sharded
// only (not Add), and Report reports it.
func (x *Replayer) Sharded() *Sharded {
	x.s = &Sharded{p: x.r.policy, timer: x.r}
	x.r.seq.timed = x.r.timedSlot
	return x.s
}

// Shards makes the replay's shards: n, or 1 for a policy with a global
// limit; it returns how many. It is called once, before any request.
func (s *Sharded) Shards(n int) int {
	for _, l := range s.timer.engine.Limits() {
		if l.Scope == policy.ScopeGlobal {
			n = 1
		}
	}
	s.shards = make([]*replayer, max(n, 1))
	for i := range s.shards {
		e, _ := engine.New(s.p) // built once already by New
		s.shards[i] = &replayer{o: s.timer.o, engine: e, clients: map[string]*client{}, timer: s.timer,
			csv: s.timer.csv, mu: &sync.Mutex{}, rep: Report{Limits: slices.Clone(s.timer.rep.Limits)}}
	}
	return len(s.shards)
}

// Weigh is the bytes of rec's key (none for "-"), tier (from
// Options.Tiers when the log has none), method and path (without the
// query), as FromRecord and Add make them: what the replay holds of it
// while its second waits to be timed, which the sequencer bounds (4 MiB a
// second, beside Options.MaxHeld requests); and that path, which Consume
// is given. It only reads, so the goroutines that parse the log call it
// at once.
func (s *Sharded) Weigh(rec *accesslog.Record) (int, []byte) {
	key, path := keyAndPath(rec)
	tier := len(rec.Tier)
	if tier == 0 && s.timer.o.Tiers != nil {
		tier = len(s.timer.o.Tiers[string(key)])
	}
	return len(key) + tier + len(rec.Method) + len(path), path
}

// Sequence times the next request of the log, logged at at (Unix ns) and
// weighing text bytes (Weigh), in log order: its replay time (ns) is
// written to *slot, now or by a later call (a whole second's requests are
// timed once the second is complete). It returns how many requests from
// the log's start are timed.
func (s *Sharded) Sequence(at int64, text int, slot *int64) int64 {
	t := s.timer
	t.slots.push(slot)
	t.seq.add(at, text)
	return t.seq.n
}

// SequenceEnd times the requests still held, at the end of the log, and
// returns how many are timed (all).
func (s *Sharded) SequenceEnd() int64 {
	s.timer.seq.flush()
	return s.timer.seq.n
}

// Consume decides, on shard's goroutine, the log's request idx (from 0),
// timed t ns by Sequence. Each shard's requests come in log order.
//
// rec's Key is empty for none and its Path has no query (Weigh's); the
// request's strings point into rec's bytes (no copy per request): judge
// keeps only copies (a new client's key and tier, a rejection's row), and
// the engine keeps only the key, a client's own copy.
func (s *Sharded) Consume(shard int, rec *accesslog.Record, idx, t int64, client int32) {
	r := s.shards[shard]
	q := &r.req
	*q = engine.Request{At: time.Duration(t), Key: view(rec.Key), Tier: view(rec.Tier), Method: view(rec.Method), Path: view(rec.Path)}
	if q.Tier == "" && s.timer.o.Tiers != nil {
		q.Tier = s.timer.o.Tiers[q.Key]
	}
	r.judge(q, idx, client)
}

// view is b as a string without a copy, valid while b is unchanged.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Finished writes the rejection rows of the log's first n requests, all of
// them decided, in log order.
func (s *Sharded) Finished(n int64) {
	if s.timer.csv == nil {
		return
	}
	var rows []row
	for _, sh := range s.shards {
		sh.mu.Lock()
		i := 0
		for i < len(sh.rows) && sh.rows[i].idx < n {
			i++
		}
		rows = append(rows, sh.rows[:i]...)
		sh.rows = slices.Delete(sh.rows, 0, i)
		sh.mu.Unlock()
	}
	slices.SortFunc(rows, func(a, b row) int { return int(a.idx - b.idx) })
	for _, r := range rows {
		// A write error surfaces at Flush, in Report.
		_ = s.timer.csv.Write(r.cols)
	}
}

// report joins the timer's totals and the shards' decisions into the
// report a replay on one goroutine makes.
func (s *Sharded) report() (Report, error) {
	t := s.timer
	if t.csv != nil {
		t.csv.Flush()
		if err := t.csv.Error(); err != nil {
			return Report{}, err
		}
	}
	m := &replayer{o: t.o, rep: t.rep, seq: t.seq, origin: t.seq.originTime(), clients: map[string]*client{}}
	m.rep.Limits = slices.Clone(t.rep.Limits)
	if t.seq.n > 0 {
		// The bins a replay on one goroutine ends with: as wide as the
		// latest time needs, every shard's (narrower, by powers of 2)
		// nested in them.
		m.binWidth = time.Second
		for int(t.seq.last/m.binWidth) >= t.o.Bins {
			m.binWidth *= 2
		}
		m.bins = make([]Bin, int(t.seq.last/m.binWidth)+1)
		for i := range m.bins {
			m.bins[i].Start = m.origin.Add(time.Duration(i) * m.binWidth)
		}
	}
	for _, sh := range s.shards {
		sh.requestCounts()
		for k, c := range sh.clients {
			m.clients[k] = c
		}
		m.rep.Rejected += sh.rep.Rejected
		for i, l := range sh.rep.Limits {
			m.rep.Limits[i].Checked += l.Checked
			m.rep.Limits[i].Rejected += l.Rejected
		}
		for i, b := range sh.bins {
			j := time.Duration(i) * sh.binWidth / m.binWidth
			m.bins[j].Requests += b.Requests
			m.bins[j].Rejected += b.Rejected
		}
	}
	return m.finish(), nil
}
