package measure

import (
	"context"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ratelab/ratelab/accesslog"
)

// Parallel measurement. Measure without Options.Each runs a pipeline of
// workers (Options.Workers, or GOMAXPROCS):
//
//  1. one goroutine reads the log in chunks of whole lines (about
//     chunkSize bytes, accesslog.Chunks);
//  2. workers goroutines parse chunks at once; each record is copied
//     into its chunk's arena and assigned to a shard by a hash of its
//     client key (hash/maphash), and the chunk's endpoints are counted in
//     the order they first appear in it;
//  3. the calling goroutine takes the chunks in log order and does what
//     is global: line numbers, bad lines, totals, the service's windows,
//     the endpoints (a pattern is counted one by one from its first
//     request in the log if there is room then, so merging the chunks'
//     first-seen lists in order gives the same patterns), progress and
//     cancellation; it then hands the chunk to every shard;
//  4. workers shard goroutines each count their own clients' windows,
//     taking the chunks in log order, so every client's requests are
//     counted in log order by one Meter, as in a sequential run;
//  5. the calling goroutine checks Options.MaxClients in log order (the
//     shards report their new clients' lines), and at the end joins the
//     shards' clients into one Meter, whose Result is the sequential
//     one's: every number of a Result depends only on each client's own
//     requests in order, and the global counts are taken in log order.
//
// Memory: the clients' state as in a sequential run (each client is in
// one shard), plus at most inflightPerWorker × workers chunks alive
// (their bytes until parsed, then about 44 bytes of record per line and
// the key's bytes, 84 and the record's text with Options.Replay), plus
// each parser's index of up to maxChunkEndpoints endpoint patterns. With
// Options.Replay, the chunks whose records wait for the replay's timing
// (a whole second's requests are timed once the second is complete) are
// not counted in flight; the replay's bound on a held second
// (shadow.Options.MaxHeld) bounds them: once handed on they count again. With MaxClients set,
// a shard may hold the new clients of the chunks in flight beyond the
// bound before the check in log order stops the run.

// chunkSize is the bytes of log one parse task takes, and
// inflightPerWorker how many chunks per worker may be in the pipeline
// (2 MiB a core): 8 ran BenchmarkMeasureVsAwk about 4 % faster than 4 on
// two cores, the parsers waiting less for the goroutine that works in log
// order; 128 KiB chunks ran slower.
const (
	chunkSize         = 256 << 10
	inflightPerWorker = 8
	maxChunkEndpoints = 1 << 16
)

// span is a piece of a batch's arena.
type span struct{ off, n uint32 }

// prec is a parsed record: its time, its line within the chunk, its key
// (n 0: none) and the key's hash.
type prec struct {
	t      int64
	line   int64
	key    span
	hash   uint64 // the key's, by the pipeline's seed
	client int32  // the client's number in its shard, -1 for none
}

// rprec is the rest of a parsed record, for Options.Replay: its method,
// path and tier, the replay's value (Sharded.Sequence) and Sharded.Weigh's
// weight.
type rprec struct {
	method, path, tier span
	v                  int64
	weight             int32
}

// epCount is an endpoint pattern's requests in one chunk.
type epCount struct {
	key span
	n   int64
}

// newClient is a shard's first record of a client: its line in the chunk
// and its key's length.
type newClient struct {
	line   int64
	keyLen int
}

// batch is one chunk on its way through the pipeline.
type batch struct {
	seq     int
	base    int64 // the log's lines before the chunk's data
	buf     []byte
	ch      accesslog.Chunk
	lines   int64
	bad     accesslog.BadLines
	recs    []prec
	rrecs   []rprec // by record, with Options.Replay
	first   int64   // the log's records before the batch's first
	arena   []byte
	byShard [][]int32 // record indices of each shard, in log order
	eps     []epCount
	news    [][]newClient // per shard
	pending atomic.Int32  // shards yet to count the batch
	end     int64         // the log's records up to the batch's last
	early   bool          // it waited for the replay's timing, not counted alive
}

// record is the batch's record i as an accesslog.Record, its bytes in b's
// arena; only with Options.Replay.
func (b *batch) record(i int32) accesslog.Record {
	p, r := &b.recs[i], &b.rrecs[i]
	return accesslog.Record{Line: b.base + p.line, UnixNano: p.t, Key: b.get(p.key), Method: b.get(r.method), Path: b.get(r.path), Tier: b.get(r.tier)}
}

func (b *batch) put(p []byte) span {
	s := span{uint32(len(b.arena)), uint32(len(p))}
	b.arena = append(b.arena, p...)
	return s
}

func (b *batch) get(s span) []byte { return b.arena[s.off : s.off+s.n] }

// spares are the batches of finished chunks, for the next chunks: their
// buffers have grown to a chunk's records. They are never more than the
// most batches alive at once.
type spares struct {
	mu      sync.Mutex
	b       []*batch
	workers int
}

func (s *spares) get() *batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.b); n > 0 {
		b := s.b[n-1]
		s.b = s.b[:n-1]
		return b
	}
	return &batch{byShard: make([][]int32, s.workers), news: make([][]newClient, s.workers)}
}

func (s *spares) put(b *batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, b)
}

// epRef is where a parser last counted an endpoint pattern.
type epRef struct {
	seq int
	idx int
}

// measureParallel is Measure on workers parsers and workers shards, with
// chunks of about size bytes.
func measureParallel(ctx context.Context, r io.Reader, cfg accesslog.Config, opts Options, workers, size int) (*Result, error) {
	m, err := New(opts)
	if err != nil {
		return nil, err
	}
	chunks, err := accesslog.NewChunks(r, cfg, size)
	if err != nil {
		return nil, err
	}
	shardOpts := opts
	shardOpts.MaxClients = 0 // checked in log order below
	seed := maphash.MakeSeed()
	shards := make([]*Meter, workers)
	for i := range shards {
		shards[i], _ = New(shardOpts)
		shards[i].keys.seed = seed // the parsers hash the keys
	}
	rp := opts.Replay
	rpShards := 0
	if rp != nil {
		rpShards = rp.Shards(workers)
	}
	// At most inflight batches are alive: being read, parsed, sequenced,
	// or counted by the shards. A batch waiting for the replay's timing is
	// not counted while it waits (its read buffer went back once parsed),
	// so the replay's bound on a held second bounds those; once handed to
	// the shards it counts again, and the reader waits until the alive
	// are fewer than inflight.
	inflight := inflightPerWorker * workers
	quit := make(chan struct{})
	var (
		aliveMu sync.Mutex
		alive   int
		fewer   = make(chan struct{}, 1) // alive went down
	)
	addAlive := func(d int) {
		aliveMu.Lock()
		alive += d
		aliveMu.Unlock()
		if d < 0 {
			select {
			case fewer <- struct{}{}:
			default:
			}
		}
	}
	// admit waits until a batch may be read; false on quit.
	admit := func() bool {
		for {
			aliveMu.Lock()
			if alive < inflight {
				alive++
				aliveMu.Unlock()
				return true
			}
			aliveMu.Unlock()
			select {
			case <-fewer:
			case <-quit:
				return false
			}
		}
	}
	bufs := make(chan []byte, inflight) // read buffers, given back once parsed
	spare := &spares{workers: workers}
	work := make(chan *batch, inflight)
	parsed := make(chan *batch, inflight)
	toShard := make([]chan *batch, workers)
	for i := range toShard {
		toShard[i] = make(chan *batch, inflight)
	}
	var (
		doneMu sync.Mutex
		done   []*batch                 // counted by every shard
		doneCh = make(chan struct{}, 1) // signals done
	)
	type end struct {
		n   int
		err error
	}
	ended := make(chan end, 1)
	var wg sync.WaitGroup
	defer func() {
		close(quit)
		wg.Wait()
	}()

	// 1. Read. Measure returns only once this has stopped reading r (after
	// quit, once its read in progress returns), so the caller may reuse r.
	wg.Go(func() {
		defer close(work)
		for n := 0; ; n++ {
			if !admit() {
				return
			}
			b := spare.get()
			var buf []byte
			select {
			case buf = <-bufs:
			default:
			}
			ch, err := chunks.Next(buf)
			if err != nil {
				ended <- end{n, err}
				return
			}
			b.seq, b.ch, b.buf = n, ch, ch.Data
			work <- b
		}
	})

	// 2. Parse.
	track := opts.MaxClients > 0
	for range workers {
		wg.Go(func() {
			var rd *accesslog.Reader
			var ek []byte
			eps := map[string]*epRef{}
			for {
				var b *batch
				select {
				case b = <-work:
				case <-quit:
					return
				}
				if b == nil {
					return
				}
				rd = chunks.Reader(b.ch.Data, rd)
				b.recs, b.rrecs, b.arena, b.eps = b.recs[:0], b.rrecs[:0], b.arena[:0], b.eps[:0]
				for s := range b.byShard {
					b.byShard[s], b.news[s] = b.byShard[s][:0], b.news[s][:0]
				}
				if len(eps) > maxChunkEndpoints {
					clear(eps)
				}
				for rd.Scan() {
					rec := rd.Record()
					p := prec{t: rec.UnixNano, line: rec.Line}
					var h uint64
					if hasKey(rec.Key) {
						p.key = b.put(rec.Key)
						h = maphash.Bytes(seed, rec.Key)
						p.hash = h
					}
					if rp != nil {
						weight, path := rp.Weigh(rec)
						b.rrecs = append(b.rrecs, rprec{
							method: b.put(rec.Method), path: b.put(path), tier: b.put(rec.Tier),
							weight: int32(min(weight, math.MaxInt32)),
						})
					}
					s := h % uint64(workers)
					b.byShard[s] = append(b.byShard[s], int32(len(b.recs)))
					b.recs = append(b.recs, p)
					ek = endpointKey(ek[:0], rec)
					if e := eps[string(ek)]; e != nil && e.seq == b.seq {
						b.eps[e.idx].n++
					} else {
						if e == nil {
							e = &epRef{}
							eps[string(ek)] = e
						}
						e.seq, e.idx = b.seq, len(b.eps)
						b.eps = append(b.eps, epCount{key: b.put(ek), n: 1})
					}
				}
				b.lines, b.bad = rd.Lines(), rd.Bad()
				select {
				case bufs <- b.buf[:0]:
				default:
				}
				b.buf, b.ch.Data = nil, nil
				select {
				case parsed <- b:
				case <-quit:
					return
				}
			}
		})
	}

	// 4. Count each shard's clients.
	for s := range workers {
		wg.Go(func() {
			sm := shards[s]
			rec := new(accesslog.Record) // one for every call, not one each
			for {
				var b *batch
				select {
				case b = <-toShard[s]:
				case <-quit:
					return
				}
				for _, i := range b.byShard[s] {
					p := &b.recs[i]
					p.client = -1
					if p.key.n == 0 {
						continue
					}
					k := b.get(p.key)
					ws, num, isNew := sm.clientNumHash(k, p.hash)
					p.client = num
					if isNew && track {
						b.news[s] = append(b.news[s], newClient{p.line, len(k)})
					}
					for j, w := range sm.nanos {
						if !ws[j].add(floorDiv(p.t, w)) {
							sm.late[j]++
						}
					}
				}
				if rpShards == workers {
					for _, i := range b.byShard[s] {
						*rec = b.record(i)
						rp.Consume(s, rec, b.first+int64(i), b.rrecs[i].v, b.recs[i].client)
					}
				} else if rpShards == 1 && s == 0 {
					for i := range int32(len(b.recs)) {
						*rec = b.record(i)
						rp.Consume(0, rec, b.first+int64(i), b.rrecs[i].v, -1)
					}
				}
				if b.pending.Add(-1) == 0 {
					doneMu.Lock()
					done = append(done, b)
					doneMu.Unlock()
					select {
					case doneCh <- struct{}{}:
					default:
					}
				}
			}
		})
	}

	// 3 and 5, in log order.
	var (
		lines, bytes       int64
		bad                accesslog.BadLines
		kept               = map[accesslog.Reason]int{}
		keep               = chunks.Examples()
		progress           = int64(1 << 16)
		clients, keyBytes  int
		total              = -1
		readErr            error
		nextSeq, nextDone  int
		waiting, finishing = map[int]*batch{}, map[int]*batch{}
		ready              []*batch // sequenced, in log order, not yet dispatched
		settled            int64    // the log's records timed by the replay
	)
	mergeBad := func(src accesslog.BadLines, base int64) {
		if src.Count == 0 {
			return
		}
		bad.Count += src.Count
		if bad.ByReason == nil {
			bad.ByReason = map[accesslog.Reason]int64{}
		}
		for why, n := range src.ByReason {
			bad.ByReason[why] += n
		}
		for _, ex := range src.Examples {
			if kept[ex.Reason] < keep {
				kept[ex.Reason]++
				ex.Line += base
				bad.Examples = append(bad.Examples, ex)
			}
		}
	}
	// dispatch hands the sequenced batches whose records the replay has
	// timed to the shards, in log order.
	dispatch := func() {
		for len(ready) > 0 && ready[0].end <= settled {
			b := ready[0]
			ready = ready[1:]
			if b.early {
				addAlive(1)
			}
			b.pending.Store(int32(workers))
			for _, c := range toShard {
				c <- b
			}
		}
	}
	sequence := func(b *batch) error {
		mergeBad(b.ch.Bad, lines)
		lines += b.ch.Skipped
		b.base = lines
		bytes += b.ch.Bytes
		b.first = m.requests
		for i := range b.recs {
			p := &b.recs[i]
			t := p.t
			if rp != nil {
				r := &b.rrecs[i]
				settled = rp.Sequence(t, int(r.weight), &r.v)
			}
			m.requests++
			if !m.seen || t < m.first {
				m.first = t
			}
			if !m.seen || t > m.last {
				m.last = t
			}
			m.seen = true
			if p.key.n == 0 {
				m.noKey++
			}
			for j, w := range m.nanos {
				m.service[j].add(floorDiv(t, w))
			}
			if line := lines + p.line; line >= progress {
				progress = line + 1<<16
				if err := ctx.Err(); err != nil {
					return err
				}
				if opts.Progress != nil {
					opts.Progress(line, bytes)
				}
			}
		}
		mergeBad(b.bad, lines)
		lines += b.lines
		for _, e := range b.eps {
			m.countEndpoint(b.get(e.key), e.n)
		}
		b.end = m.requests
		ready = append(ready, b)
		if rp == nil {
			settled = m.requests
		}
		dispatch()
		if len(ready) > 0 && ready[len(ready)-1] == b {
			// It waits for the replay to time its records.
			b.early = true
			addAlive(-1)
		}
		return nil
	}
	finish := func(b *batch) error {
		if track {
			var news []newClient
			for _, n := range b.news {
				news = append(news, n...)
			}
			slices.SortFunc(news, func(x, y newClient) int { return int(x.line - y.line) })
			for _, n := range news {
				clients++
				keyBytes += n.keyLen
				if clients > opts.MaxClients || keyBytes > opts.MaxClients*keyBytesPerClient {
					return tooManyClients(b.base+n.line, opts.MaxClients)
				}
			}
		}
		if rp != nil {
			rp.Finished(b.end)
		}
		b.early = false
		spare.put(b)
		addAlive(-1)
		return nil
	}
	for total < 0 || nextDone < total {
		select {
		case b := <-parsed:
			waiting[b.seq] = b
			for b := waiting[nextSeq]; b != nil; b = waiting[nextSeq] {
				delete(waiting, nextSeq)
				nextSeq++
				if err := sequence(b); err != nil {
					return nil, err
				}
			}
		case <-doneCh:
			doneMu.Lock()
			for _, b := range done {
				finishing[b.seq] = b
			}
			done = done[:0]
			doneMu.Unlock()
			for b := finishing[nextDone]; b != nil; b = finishing[nextDone] {
				delete(finishing, nextDone)
				nextDone++
				if err := finish(b); err != nil {
					return nil, err
				}
			}
		case e := <-ended:
			total, readErr, ended = e.n, e.err, nil
		}
		if nextSeq == total && len(ready) > 0 {
			// The log is all sequenced: the replay times what it holds.
			settled = rp.SequenceEnd()
			dispatch()
		}
	}
	if readErr != io.EOF {
		if chunks.ReadFailed {
			return nil, fmt.Errorf("reading line %d: %w", lines+1, readErr)
		}
		return nil, readErr
	}
	if m.requests == 0 {
		return nil, chunks.NoRecords(lines, bad)
	}
	for _, sm := range shards {
		for _, k := range sm.keys.keys {
			m.keys.add(k, m.keys.hashString(k))
		}
		m.clients = append(m.clients, sm.clients...)
		m.wins = append(m.wins, sm.wins...)
		m.keyBytes += sm.keyBytes
		for j, n := range sm.late {
			m.late[j] += n
		}
	}
	res := m.Result()
	res.Lines = lines
	res.Bad = bad
	return res, nil
}
