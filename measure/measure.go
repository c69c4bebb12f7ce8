// Package measure turns an access log into the calculator's inputs: the
// per-client request rates, their percentiles across clients, each
// client's peak bursts, and the busiest endpoints. It owns the definitions
// below, and the SQL that computes the same numbers in a warehouse
// (PostgreSQL, ClickHouse).
//
// # Rate
//
// Time is cut into fixed windows of W seconds aligned to the Unix epoch:
// window k is [k·W, (k+1)·W) in Unix seconds (UTC), so a 1-minute window
// starts on a UTC minute. A client's rate for W is the number of its
// requests in its busiest window: max over k of count(k). That is the
// "busy-minute rate" the sizing rule asks for (size the limit for the
// busy-minute rate of the p99 client, times a margin): a limit must let a
// legitimate client through at its busiest, not at its average, and a
// client's average over a log of days says little about the minute that
// gets it rejected. Fixed aligned windows are what SQL computes with
// floor(epoch / W) and what a fixed-window limiter counts; a sliding window
// can find up to about twice as many requests across a boundary.
//
// The unit is requests per W: a 1 s window gives requests per second, a
// 1 min window requests per minute (calc.PerSecond, calc.PerMinute).
//
// # Percentiles
//
// Percentiles are across clients, one rate per client (clients that sent
// nothing are not in the log and not counted). The p-th percentile is by
// nearest rank: sort the N rates ascending and take the one at 1-based rank
// ⌈p·N⌉ (at least 1), with p·N computed in float64 as PostgreSQL's
// percentile_disc does, so that its SQL gives the very same numbers. For
// N = 100 clients with rates 1…100, p50 = 50, p95 = 95, p99 = 99.
//
// # Keys
//
// A record whose key is empty or "-" (the header was not sent) belongs to
// no client: it counts in the totals, the endpoints and the service's
// peak, but not in any client's rate.
//
// # Memory
//
// A Meter keeps per distinct client its key, about 100 bytes and 88 per
// window (a ring of the last 4 windows' counts; package shadow's
// TestMemoryPerClient measures a meter and a replay together), at most
// Options.MaxClients clients, and per
// distinct endpoint pattern its count (at most Options.MaxEndpoints
// patterns and 4 MiB of their text; the rest are counted together):
// never the log. Records may arrive out of time order
// by up to 3 windows per client (nginx writes a request's line when it
// ends, so lines from concurrent requests interleave by a second or so); a
// record older than that is counted in the totals but left out of the
// peaks, and counted in WindowStats.Late. With no late record the numbers
// equal the SQL's.
package measure

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ratelab/ratelab/accesslog"
)

// Options say what to measure. The zero value measures 1 s and 1 min
// windows and keeps the top 10 clients and endpoints.
type Options struct {
	// Windows are the window lengths, whole seconds from 1 s to 1 day, at
	// most 8; nil means 1 s and 1 min. They are sorted and deduplicated.
	Windows []time.Duration
	// TopClients is how many clients Result.TopClients lists, by their
	// peak in the shortest window; 0 means 10.
	TopClients int
	// TopEndpoints is how many endpoints Result.Endpoints lists; 0 means
	// 10.
	TopEndpoints int
	// MaxEndpoints bounds the distinct endpoint patterns counted one by
	// one, and their text is at most maxEndpointBytes (4 MiB) in all;
	// requests to further patterns are counted in Result.OtherEndpoints.
	// 0 means 10000.
	MaxEndpoints int
	// MaxClients bounds the distinct clients a Meter holds, and so its
	// memory: at most MaxClients clients whose keys take MaxClients × 128
	// bytes in all (128 bytes a key on average). A log with more makes
	// Measure fail with an error wrapping ErrTooManyClients; Add stops
	// counting new clients (Meter.Over reports it). 0 means no bound.
	MaxClients int
	// Progress, if not nil, is called by Measure every 65536 lines with the
	// lines and bytes read so far.
	Progress func(lines, bytes int64)
	// Each, if not nil, is called by Measure with every good record after
	// it is measured, so one pass over a log can feed something else too
	// (the shadow replay). The record is valid only during the call.
	Each func(*accesslog.Record)
	// Replay, if not nil, is fed every good record in the same pass as
	// the measurement, sharded by client across the cores (see Sharded;
	// shadow.Replayer.Sharded is one). It cannot go with Each.
	Replay Sharded
	// Workers, without Each, is how many goroutines parse the log and how
	// many shards count its clients, and so bounds the chunks in flight
	// (inflightPerWorker of about 256 KiB each); 0 means GOMAXPROCS. A
	// server that measures several logs at once bounds each one's memory
	// with it.
	Workers int
}

// Sharded is a consumer of a log's records that keeps per-client state:
// Measure calls Shards once, then Weigh with every good record on the
// goroutines that parse the log, then, on one goroutine and in log order,
// Sequence with every good record's time and weight (SequenceEnd after
// the last), and, on
// shard i's goroutine, Consume(i, …) with the records of shard i's
// clients in log order (a client's records all go to one shard; every
// record to shard 0 when Shards returned 1), each once Sequence has set
// its value; Finished(n) once the log's first n records are consumed, in
// order. The records are valid only during a call.
type Sharded interface {
	// Shards is offered n shards and returns how many it uses: n or 1.
	Shards(n int) int
	// Weigh returns a record's weight for Sequence (a replay's, the bytes
	// of it that it holds while it waits) and the part of its path that
	// Consume is given in its place (a replay's, without the query). It
	// is called concurrently, and must only read.
	Weigh(rec *accesslog.Record) (weight int, path []byte)
	// Sequence takes the next record's time (Unix ns) and weight, and a
	// slot for its value, which it sets now or in a later call; it
	// returns how many records from the log's start have their value set.
	Sequence(at int64, weight int, slot *int64) (set int64)
	// SequenceEnd sets every value still unset, and returns the records.
	SequenceEnd() (set int64)
	// Consume takes the log's record idx (from 0), its Key empty when
	// the line has none and its Path the one Weigh returned, with its
	// value v and
	// its client's number in the shard: Measure numbers each shard's
	// clients 0, 1, 2, … in the order of their first records, so a
	// consumer can keep them in a slice instead of looking keys up again;
	// client is -1 for a record without a key, and for every record when
	// Shards returned 1.
	Consume(shard int, rec *accesslog.Record, idx, v int64, client int32)
	// Finished says the log's first n records are all consumed.
	Finished(n int64)
}

// DefaultWindows are the windows measured when Options.Windows is nil.
var DefaultWindows = []time.Duration{time.Second, time.Minute}

const (
	ring       = 4 // windows per client kept for out-of-order records; a power of 2
	maxWindows = 8
	maxWindow  = 24 * time.Hour
)

// slot counts one window of one client.
type slot struct {
	idx int64 // the window's number k
	n   int64
}

// winState is one client's (or the service's) count in one window length.
type winState struct {
	slots  [ring]slot
	newest int64 // the latest window number seen
	max    int64 // the busiest window's count; 0 before the first record
	maxIdx int64 // the busiest window's number (the earliest on ties)
}

// add counts a request in window idx; it reports false for a late request,
// more than ring−1 windows before the newest.
func (w *winState) add(idx int64) bool {
	switch {
	case w.max == 0 || idx > w.newest:
		w.newest = idx
	case idx <= w.newest-ring:
		return false
	}
	s := &w.slots[idx&(ring-1)]
	if s.idx != idx || s.n == 0 {
		s.idx, s.n = idx, 0
	}
	s.n++
	if s.n > w.max || s.n == w.max && idx < w.maxIdx {
		w.max, w.maxIdx = s.n, idx
	}
	return true
}

type clientState struct {
	requests int64
}

// Meter accumulates records. Use New, then Add each record, then Result.
// It is not safe for concurrent use.
type Meter struct {
	opts    Options
	secs    []int64 // window lengths in seconds
	nanos   []int64 // … in nanoseconds
	keys    clientIndex
	clients []clientState
	wins    []winState // len(secs) per client, in client order
	service []winState
	late    []int64

	endpoints     map[string]*int64
	endpointBytes int
	other         int64
	ekey          []byte

	keyBytes int  // the clients' keys' length in all
	over     bool // a client past Options.MaxClients was seen

	requests, noKey int64
	first, last     int64
	seen            bool
}

// New returns a Meter, or an error naming the bad option.
func New(opts Options) (*Meter, error) {
	secs, err := windowSeconds(opts.Windows)
	if err != nil {
		return nil, err
	}
	opts.Windows = make([]time.Duration, len(secs))
	for i, s := range secs {
		opts.Windows[i] = time.Duration(s) * time.Second
	}
	def := func(v *int, d, hi int, name string) error {
		if *v == 0 {
			*v = d
		}
		if *v < 1 || *v > hi {
			return fmt.Errorf("%s %d: want 1 to %d", name, *v, hi)
		}
		return nil
	}
	if err := def(&opts.TopClients, 10, 10000, "top clients"); err != nil {
		return nil, err
	}
	if err := def(&opts.TopEndpoints, 10, 10000, "top endpoints"); err != nil {
		return nil, err
	}
	if err := def(&opts.MaxEndpoints, 10000, 10_000_000, "max endpoints"); err != nil {
		return nil, err
	}
	if opts.MaxClients < 0 {
		return nil, fmt.Errorf("max clients %d: want 0 (no bound) or more", opts.MaxClients)
	}
	if opts.Workers < 0 {
		return nil, fmt.Errorf("workers %d: want 0 (GOMAXPROCS) or more", opts.Workers)
	}
	m := &Meter{
		opts:      opts,
		keys:      newClientIndex(maphash.MakeSeed()),
		secs:      secs,
		service:   make([]winState, len(secs)),
		late:      make([]int64, len(secs)),
		endpoints: map[string]*int64{},
	}
	for _, s := range secs {
		m.nanos = append(m.nanos, s*int64(time.Second))
	}
	return m, nil
}

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// keyBytesPerClient is the average key length Options.MaxClients allows,
// and maxEndpointBytes the most endpoint pattern text a Meter keeps.
const (
	keyBytesPerClient = 128
	maxEndpointBytes  = 4 << 20
)

// ErrTooManyClients is wrapped by Measure's error for a log with more
// clients than Options.MaxClients.
var ErrTooManyClients = errors.New("too many clients")

// Over reports whether a record of a client past Options.MaxClients was
// seen; such records (from the first one on) are not counted.
func (m *Meter) Over() bool { return m.over }

// Add counts one record. It keeps no reference to the record's bytes.
func (m *Meter) Add(rec *accesslog.Record) {
	t := rec.UnixNano
	m.requests++
	if !m.seen || t < m.first {
		m.first = t
	}
	if !m.seen || t > m.last {
		m.last = t
	}
	m.seen = true

	var ws []winState
	if k := rec.Key; !hasKey(k) {
		m.noKey++
	} else if ws, _ = m.client(k); ws == nil {
		return
	}
	for j, w := range m.nanos {
		idx := floorDiv(t, w)
		m.service[j].add(idx)
		if ws != nil && !ws[j].add(idx) {
			m.late[j]++
		}
	}
	m.ekey = endpointKey(m.ekey[:0], rec)
	m.countEndpoint(m.ekey, 1)
}

// hasKey reports whether k is a client's key: not empty, not "-".
func hasKey(k []byte) bool { return len(k) > 1 || len(k) == 1 && k[0] != '-' }

// client counts a request of the client k and returns its windows, and
// whether it is new; nil, setting m.over, for a new client past
// Options.MaxClients.
func (m *Meter) client(k []byte) ([]winState, bool) {
	ws, _, isNew := m.clientNum(k)
	return ws, isNew
}

// clientNum is client, also returning the client's number (its index in
// m.clients), -1 with nil windows.
func (m *Meter) clientNum(k []byte) ([]winState, int32, bool) {
	return m.clientNumHash(k, m.keys.hash(k))
}

// clientNumHash is clientNum of a key whose hash (clientIndex.hash) is h.
func (m *Meter) clientNumHash(k []byte, h uint64) ([]winState, int32, bool) {
	i, ok := m.keys.find(k, h)
	if !ok && m.opts.MaxClients > 0 && (len(m.clients) >= m.opts.MaxClients || m.keyBytes+len(k) > m.opts.MaxClients*keyBytesPerClient) {
		m.over = true
		return nil, -1, false
	}
	if !ok {
		m.keyBytes += len(k)
		i = m.keys.add(string(k), h)
		m.clients = append(m.clients, clientState{})
		m.wins = append(m.wins, make([]winState, len(m.secs))...)
	}
	m.clients[i].requests++
	n := len(m.secs)
	return m.wins[int(i)*n : int(i)*n+n], i, !ok
}

// endpointKey appends rec's endpoint, "METHOD pattern", to b.
func endpointKey(b []byte, rec *accesslog.Record) []byte {
	b = append(b, rec.Method...)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	b = append(b, ' ')
	return accesslog.Pattern(b, rec.Path)
}

// countEndpoint counts n requests of endpoint key ek: a pattern is counted
// one by one from its first request if there is room then, else never.
func (m *Meter) countEndpoint(ek []byte, n int64) {
	if p, ok := m.endpoints[string(ek)]; ok {
		*p += n
	} else if len(m.endpoints) < m.opts.MaxEndpoints && m.endpointBytes+len(ek) <= maxEndpointBytes {
		m.endpointBytes += len(ek)
		m.endpoints[string(ek)] = new(n)
	} else {
		m.other += n
	}
}

// Result is a measurement. Counts are requests; rates are requests per
// window (see the package doc for the definitions).
type Result struct {
	Lines    int64              `json:"lines"`    // lines read (Measure only)
	Bad      accesslog.BadLines `json:"bad"`      // bad lines (Measure only)
	Requests int64              `json:"requests"` // good records
	NoKey    int64              `json:"no_key"`   // records without a key, in no client
	Clients  int                `json:"clients"`  // distinct keys
	// From and To are the earliest and the latest request's time (zero
	// without requests); Span is To − From.
	From time.Time     `json:"from"`
	To   time.Time     `json:"to"`
	Span time.Duration `json:"span_ns"`

	Windows []WindowStats `json:"windows"` // one per window, shortest first
	// TopClients are the clients with the highest peak in the shortest
	// window (ties: more requests, then key order).
	TopClients []ClientPeak `json:"top_clients"`
	// Endpoints are the busiest endpoint patterns ("{id}" for ids, see
	// accesslog.Pattern), most requests first.
	Endpoints         []EndpointCount `json:"endpoints"`
	DistinctEndpoints int             `json:"distinct_endpoints"`
	OtherEndpoints    int64           `json:"other_endpoints"` // requests to patterns past Options.MaxEndpoints
}

// WindowStats are the per-client rates for one window length W, in
// requests per W.
type WindowStats struct {
	Window  time.Duration `json:"window_ns"`
	Seconds int64         `json:"seconds"`
	// P50, P95 and P99 are nearest-rank percentiles across clients of each
	// client's busiest-window count; Max is the largest, MaxKey its client.
	P50    int64  `json:"p50"`
	P95    int64  `json:"p95"`
	P99    int64  `json:"p99"`
	Max    int64  `json:"max"`
	MaxKey string `json:"max_key"`
	// ServicePeak is the most requests of all clients (keyless included)
	// in one window, starting at ServicePeakAt.
	ServicePeak   int64     `json:"service_peak"`
	ServicePeakAt time.Time `json:"service_peak_at"`
	// Late counts client requests left out of the peaks because the log
	// had already shown a request of the same client from a window more
	// than 3 windows later.
	Late int64 `json:"late"`
}

// ClientPeak is one client's total and its busiest window of each length.
type ClientPeak struct {
	Key      string `json:"key"`
	Requests int64  `json:"requests"`
	Peaks    []Peak `json:"peaks"` // in Result.Windows order
}

// Peak is a busiest window: its count and its start.
type Peak struct {
	Requests int64     `json:"requests"`
	At       time.Time `json:"at"`
}

// EndpointCount is an endpoint pattern's request count and its share of
// all requests (0 to 1).
type EndpointCount struct {
	Method   string  `json:"method"`
	Path     string  `json:"path"`
	Requests int64   `json:"requests"`
	Share    float64 `json:"share"`
}

// Percentile is the nearest-rank percentile p (0 < p ≤ 1) of ascending
// sorted values: the value at 1-based rank ⌈p·N⌉ (at least 1), p·N in
// float64, as PostgreSQL's percentile_disc. 0 for no values.
func Percentile(sorted []int64, p float64) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p * float64(n)))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// Result returns the measurement so far. The Meter may go on counting.
func (m *Meter) Result() *Result {
	r := &Result{Requests: m.requests, NoKey: m.noKey, Clients: len(m.clients)}
	if m.seen {
		r.From, r.To = time.Unix(0, m.first).UTC(), time.Unix(0, m.last).UTC()
		r.Span = r.To.Sub(r.From)
	}
	n := len(m.secs)
	keyOf := m.keys.keys
	rates := make([]int64, len(m.clients))
	var topPeak int64 // the TopClients-th highest peak in the shortest window
	for j := range m.secs {
		for i := range m.clients {
			rates[i] = m.wins[i*n+j].max
		}
		ws := WindowStats{
			Window:  m.opts.Windows[j],
			Seconds: m.secs[j],
			Late:    m.late[j],
		}
		// The client with the largest rate (the first key on ties).
		for i, v := range rates {
			if v > ws.Max || v == ws.Max && v > 0 && keyOf[i] < ws.MaxKey {
				ws.Max, ws.MaxKey = v, keyOf[i]
			}
		}
		slices.Sort(rates)
		if j == 0 && len(rates) > 0 {
			topPeak = rates[max(0, len(rates)-m.opts.TopClients)]
		}
		ws.P50 = Percentile(rates, 0.5)
		ws.P95 = Percentile(rates, 0.95)
		ws.P99 = Percentile(rates, 0.99)
		if s := m.service[j]; s.max > 0 {
			ws.ServicePeak = s.max
			ws.ServicePeakAt = time.Unix(s.maxIdx*m.secs[j], 0).UTC()
		}
		r.Windows = append(r.Windows, ws)
	}

	// Only the clients whose peak reaches the top clients' lowest can be
	// among them: those are sorted, not every client (a 20 000-client
	// log's full sort took about 4 % of measuring it on two cores).
	var order []int
	for i := range m.clients {
		if m.wins[i*n].max >= topPeak {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		if pa, pb := m.wins[a*n].max, m.wins[b*n].max; pa != pb {
			return cmpDesc(pa, pb)
		}
		if ra, rb := m.clients[a].requests, m.clients[b].requests; ra != rb {
			return cmpDesc(ra, rb)
		}
		return strings.Compare(keyOf[a], keyOf[b])
	})
	for _, i := range order[:min(len(order), m.opts.TopClients)] {
		cp := ClientPeak{Key: keyOf[i], Requests: m.clients[i].requests}
		for j := range m.secs {
			w := m.wins[i*n+j]
			cp.Peaks = append(cp.Peaks, Peak{Requests: w.max, At: time.Unix(w.maxIdx*m.secs[j], 0).UTC()})
		}
		r.TopClients = append(r.TopClients, cp)
	}

	r.DistinctEndpoints = len(m.endpoints)
	r.OtherEndpoints = m.other
	eps := make([]EndpointCount, 0, len(m.endpoints))
	for k, c := range m.endpoints {
		method, path, _ := strings.Cut(k, " ")
		eps = append(eps, EndpointCount{Method: method, Path: path, Requests: *c})
	}
	slices.SortFunc(eps, func(a, b EndpointCount) int {
		if a.Requests != b.Requests {
			return cmpDesc(a.Requests, b.Requests)
		}
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	eps = eps[:min(len(eps), m.opts.TopEndpoints)]
	for i := range eps {
		eps[i].Share = float64(eps[i].Requests) / float64(m.requests)
	}
	r.Endpoints = eps
	return r
}

func cmpDesc(a, b int64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// Measure reads a whole log from r and measures it. Bad lines are counted
// in Result.Bad and never stop it; it fails on a read error, on a bad
// configuration, on more clients than Options.MaxClients (an error
// wrapping ErrTooManyClients), when no line of the log can be parsed (an error wrapping
// accesslog.ErrNoRecords that names the expected formats), or when ctx is
// done (checked every 65536 lines).
//
// Without Options.Each, Measure parses and measures on every core, or on
// Options.Workers goroutines (see measureParallel), with the very same
// result as on one goroutine. It does so on one core too, where whole
// chunks parsed and then counted ran about a fifth faster than parsing and
// counting line by line (BenchmarkMeasureVsAwk at -cpu 1: 360–390 ms
// against 445–525).
// Options.Each, called in log order, takes one goroutine.
func Measure(ctx context.Context, r io.Reader, cfg accesslog.Config, opts Options) (*Result, error) {
	if opts.Each != nil && opts.Replay != nil {
		return nil, errors.New("measure: Options.Each and Options.Replay cannot go together")
	}
	if opts.Each == nil {
		workers := opts.Workers
		if workers == 0 {
			workers = runtime.GOMAXPROCS(0)
		}
		return measureParallel(ctx, r, cfg, opts, workers, chunkSize)
	}
	return measureSequential(ctx, r, cfg, opts)
}

// measureSequential is Measure on one goroutine.
func measureSequential(ctx context.Context, r io.Reader, cfg accesslog.Config, opts Options) (*Result, error) {
	m, err := New(opts)
	if err != nil {
		return nil, err
	}
	rd, err := accesslog.NewReader(r, cfg)
	if err != nil {
		return nil, err
	}
	next := int64(1 << 16)
	for rd.Scan() {
		m.Add(rd.Record())
		if m.over {
			return nil, tooManyClients(rd.Lines(), opts.MaxClients)
		}
		if opts.Each != nil {
			opts.Each(rd.Record())
		}
		if rd.Lines() >= next {
			next = rd.Lines() + 1<<16
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if opts.Progress != nil {
				opts.Progress(rd.Lines(), rd.Bytes())
			}
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	res := m.Result()
	res.Lines = rd.Lines()
	res.Bad = rd.Bad()
	return res, nil
}

// tooManyClients is Measure's error for a new client past maxClients on
// line line.
func tooManyClients(line int64, maxClients int) error {
	return fmt.Errorf("line %d: %w: more than %d distinct clients (or keys longer than %d bytes on average)",
		line, ErrTooManyClients, maxClients, keyBytesPerClient)
}
