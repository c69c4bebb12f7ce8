package algorithms

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// Arrival is one request offered to a limiter: when it arrives (virtual time
// since the start of the run), from which key (client), and its cost in
// tokens.
type Arrival struct {
	At   time.Duration
	Key  string
	Cost int64
}

// Traffic is what a pattern generates: arrivals sorted by time, and, for
// patterns whose clients retry when rejected, the retry policy that
// Simulate applies to every rejection.
type Traffic struct {
	Arrivals []Arrival
	Retry    *RetryPolicy
}

// RetryPolicy is how a rejected client retries: after the first rejection it
// waits Base, then Base·Factor, … up to Cap, at most Attempts times; the wait
// before retry number a (1-based), d = min(Cap, Base·Factor^(a−1)), is the
// exponential wait. JitterMode says how each wait is drawn from d (see
// JitterMode). With HonorRetryAfter a client never waits less than the
// limiter's RetryAfter, whatever the mode, and gives up when the limiter
// says the request can never pass. All randomness comes from Seed, so the
// same policy always gives the same waits.
type RetryPolicy struct {
	Attempts int           // retries after the first rejection, at most
	Base     time.Duration // the first exponential wait
	Factor   float64       // each exponential wait × Factor, ≥ 1
	Cap      time.Duration // the longest exponential wait
	// Jitter is, in the proportional mode, the fraction of each wait added
	// at random (0 keeps clients that were rejected together in lockstep).
	// The other modes ignore it, though it must still be in [0, 1].
	Jitter          float64
	JitterMode      JitterMode // how jitter spreads each wait; "" means JitterProportional
	HonorRetryAfter bool
	Seed            uint64
}

// JitterMode is how a retry's wait, a time.Duration like Base and Cap, is
// drawn from its exponential wait d = min(Cap, Base·Factor^(attempt−1)).
// Every draw is uniform, from RetryPolicy.Seed.
type JitterMode string

// The jitter modes. The zero value "" is JitterProportional.
const (
	// JitterProportional waits d plus a random share of Jitter·d: uniform
	// in [d, d·(1+Jitter)), never less than d. With HonorRetryAfter the
	// Retry-After floor is applied to d before the jitter is added.
	JitterProportional JitterMode = "proportional"
	// JitterFull waits uniform in [0, d).
	JitterFull JitterMode = "full"
	// JitterEqual waits d/2 plus uniform in [0, d/2): uniform in [d/2, d).
	JitterEqual JitterMode = "equal"
	// JitterDecorrelated draws each wait from the request's previous one:
	// min(Cap, uniform in [Base, 3·prev)), where prev is the previous wait
	// this mode drew for the same request (Base before its first retry),
	// before any Retry-After floor. The first wait is in [Base, 3·Base);
	// every wait is in [Base, Cap]. Factor is not used.
	JitterDecorrelated JitterMode = "decorrelated"
)

// valid reports whether m is one of the jitter modes or "".
func (m JitterMode) valid() bool {
	switch m {
	case "", JitterProportional, JitterFull, JitterEqual, JitterDecorrelated:
		return true
	}
	return false
}

// Validate reports the first field of p outside its range.
func (p RetryPolicy) Validate() error {
	switch {
	case p.Attempts < 0 || p.Attempts > 20:
		return &ParamError{"attempts", strconv.Itoa(p.Attempts), "a whole number in [0, 20]"}
	case p.Base < time.Millisecond || p.Base > time.Hour:
		return &ParamError{"base", p.Base.String(), "a duration in [1ms, 1h]"}
	case math.IsNaN(p.Factor) || p.Factor < 1 || p.Factor > 10:
		return &ParamError{"factor", formatFloat(p.Factor), "a number in [1, 10]"}
	case p.Cap < p.Base || p.Cap > 24*time.Hour:
		return &ParamError{"cap", p.Cap.String(), "a duration in [base, 24h]"}
	case math.IsNaN(p.Jitter) || p.Jitter < 0 || p.Jitter > 1:
		return &ParamError{"jitter", formatFloat(p.Jitter), "a fraction in [0, 1]"}
	case !p.JitterMode.valid():
		return &ParamError{"jitter_mode", strconv.Quote(string(p.JitterMode)),
			`one of "proportional", "full", "equal", "decorrelated" ("" means "proportional")`}
	}
	return nil
}

// Backoff is the wait before retry number attempt (1-based) of a request
// the limiter rejected with retryAfter, without jitter: the exponential
// wait, raised to retryAfter with HonorRetryAfter.
func (p RetryPolicy) Backoff(attempt int, retryAfter time.Duration) time.Duration {
	d := float64(p.Base) * math.Pow(p.Factor, float64(attempt-1))
	if d > float64(p.Cap) {
		d = float64(p.Cap)
	}
	w := time.Duration(d)
	if p.HonorRetryAfter && retryAfter > w && retryAfter != Never {
		w = retryAfter
	}
	return w
}

// wait draws the wait before retry number attempt (1-based) of a request
// the limiter rejected with retryAfter, from rng, in the policy's jitter
// mode. prev is the draw this returned for the request's previous retry (0
// before its first); draw is this retry's, to pass on to the next. Only the
// decorrelated mode reads prev; its draw is the wait before the
// Retry-After floor.
func (p RetryPolicy) wait(attempt int, retryAfter, prev time.Duration, rng *rand.Rand) (wait, draw time.Duration) {
	switch p.JitterMode {
	case JitterFull:
		d := p.exponential(attempt)
		wait = time.Duration(rng.Int64N(int64(d)))
	case JitterEqual:
		d := p.exponential(attempt)
		half := d / 2
		wait = half + time.Duration(rng.Int64N(int64(d-half)))
	case JitterDecorrelated:
		if prev == 0 {
			prev = p.Base
		}
		wait = min(p.Cap, p.Base+time.Duration(rng.Int64N(int64(3*prev-p.Base))))
	default:
		// Proportional: the floor first, then the jitter on top.
		wait = p.Backoff(attempt, retryAfter)
		if p.Jitter > 0 {
			wait += time.Duration(rng.Float64() * p.Jitter * float64(wait))
		}
		return wait, wait
	}
	draw = wait
	if p.HonorRetryAfter && retryAfter > wait && retryAfter != Never {
		wait = retryAfter
	}
	return wait, draw
}

// exponential is the exponential wait before retry number attempt
// (1-based): min(Cap, Base·Factor^(attempt−1)), at least Base (1 ms). A
// Retry-After of 0 never raises it.
func (p RetryPolicy) exponential(attempt int) time.Duration { return p.Backoff(attempt, 0) }

// maxWait is the longest wait before retry number attempt (1-based) that
// the jitter mode can draw, without Retry-After: d·(1+Jitter) proportional,
// d for full and equal (which stay below it), and min(Cap, 3^attempt·Base)
// decorrelated (each draw is below three times the one before, the first
// below 3·Base).
func (p RetryPolicy) maxWait(attempt int) time.Duration {
	switch p.JitterMode {
	case JitterFull, JitterEqual:
		return p.exponential(attempt)
	case JitterDecorrelated:
		return time.Duration(min(float64(p.Cap), float64(p.Base)*math.Pow(3, float64(attempt))))
	}
	return time.Duration(float64(p.Backoff(attempt, 0)) * (1 + p.Jitter))
}

// Reach is how long after a request's first rejection its last retry can
// come: the sum, over its attempts, of the longest wait each can draw
// (maxWait), without Retry-After. Simulate follows a run with retries this
// much past its last arrival, so of two policies on the same arrivals, the
// one with the longer reach picks the wider automatic bin.
func (p RetryPolicy) Reach() time.Duration {
	var total time.Duration
	for a := 1; a <= p.Attempts; a++ {
		total += p.maxWait(a)
	}
	return total
}

// PatternName names a traffic pattern as the API, the policy file and the
// UI spell it.
type PatternName string

// The nine traffic patterns.
const (
	PatternSteady         PatternName = "steady"
	PatternPoisson        PatternName = "poisson"
	PatternIdleThenBurst  PatternName = "idle_then_burst"
	PatternPeriodicBursts PatternName = "periodic_bursts"
	PatternWindowBoundary PatternName = "window_boundary"
	PatternRamp           PatternName = "ramp"
	PatternOfflineBatch   PatternName = "offline_batch"
	PatternRetryStorm     PatternName = "retry_storm"
	PatternSharedIP       PatternName = "shared_ip"
)

// Pattern is a named, seeded traffic shape: a small value that the UI, the
// API and tests can name, parameterise and reproduce. Which fields a pattern
// reads is listed in Patterns; the others are ignored. The same Pattern
// always generates the same arrivals.
type Pattern struct {
	Name     PatternName
	Duration time.Duration // how long traffic lasts
	Rate     float64       // requests per second, per client
	To       float64       // ramp: the rate reached at the end
	Count    int           // requests in a burst, a flush, or on each side of a window edge
	Idle     time.Duration // silence before the burst, or time offline before a flush
	Period   time.Duration // time between bursts
	Window   time.Duration // the window whose edge window_boundary straddles
	Clients  int           // independent clients (steady, poisson), clients rejected together (retry_storm), users behind one address (shared_ip)
	Jitter   float64       // retry_storm: fraction of each backoff added at random, 0 = in lockstep
	KeyBy    string        // shared_ip: "ip" (one key for the office) or "api_key" (one per user)
	Cost     int64         // cost of each request; 0 means 1
	Seed     uint64        // seed of every random choice
}

// KeyBys are the values of Pattern.KeyBy: one key for the shared address,
// or one per user.
var KeyBys = []string{"ip", "api_key"}

// PatternInfo describes a pattern for the UI and the API documentation.
type PatternInfo struct {
	Name   PatternName
	Shape  string   // what the traffic looks like
	Shows  string   // what it teaches
	Params []string // the Pattern fields it reads, as the API spells them
}

// Patterns describes the nine patterns, in the order the UI lists them.
var Patterns = []PatternInfo{
	{PatternSteady, "constant rate", "the long-run limit", []string{"rate", "duration", "clients", "cost"}},
	{PatternPoisson, "random arrivals at a mean rate", "natural jitter", []string{"rate", "duration", "clients", "cost", "seed"}},
	{PatternIdleThenBurst, "silence, then count requests at once", "burst capacity: an idle client sends many at once", []string{"idle", "count", "cost"}},
	{PatternPeriodicBursts, "a burst of count every period", "page loads, batch jobs", []string{"count", "period", "duration", "cost"}},
	{PatternWindowBoundary, "count requests just before a window edge, count just after", "the fixed window's 2× flaw", []string{"count", "window", "cost"}},
	{PatternRamp, "rate rising linearly from rate to to", "where each algorithm starts to reject", []string{"rate", "to", "duration", "cost"}},
	{PatternOfflineBatch, "offline for idle, then a flush of count queued events, then live at rate", "why burst matters for real clients", []string{"idle", "count", "rate", "duration", "cost"}},
	{PatternRetryStorm, "clients rejected together, retrying with exponential backoff", "synchronized retries, and how jitter spreads them", []string{"clients", "jitter", "cost", "seed"}},
	{PatternSharedIP, "well-behaved users behind one NAT address", "why keying by IP punishes an office", []string{"clients", "rate", "duration", "key_by", "cost", "seed"}},
}

// PatternByName returns the description of the pattern called name.
func PatternByName(name PatternName) (PatternInfo, bool) {
	for _, p := range Patterns {
		if p.Name == name {
			return p, true
		}
	}
	return PatternInfo{}, false
}

// DefaultPattern returns the pattern called name with parameters that make a
// readable chart against a limit of about 10 requests per second.
func DefaultPattern(name PatternName) Pattern {
	p := Pattern{Name: name, Duration: 30 * time.Second, Rate: 10, Clients: 1, Cost: 1, Seed: 1}
	switch name {
	case PatternPoisson:
		p.Rate = 8
	case PatternIdleThenBurst:
		p.Idle, p.Count = 5*time.Second, 100
	case PatternPeriodicBursts:
		p.Count, p.Period = 40, 10*time.Second
	case PatternWindowBoundary:
		p.Count, p.Window = 100, 10*time.Second
	case PatternRamp:
		p.Rate, p.To = 1, 40
	case PatternOfflineBatch:
		p.Idle, p.Count, p.Rate = 10*time.Second, 200, 2
	case PatternRetryStorm:
		p.Clients, p.Jitter = 100, 0
	case PatternSharedIP:
		p.Clients, p.Rate, p.KeyBy = 40, 0.5, "ip"
	}
	return p
}

// The window that window_boundary straddles is within these bounds.
const (
	MinPatternWindow = 10 * time.Millisecond
	MaxPatternWindow = 24 * time.Hour
)

// SharedIPAddress is the one address every shared_ip user sends from.
const SharedIPAddress = "203.0.113.7"

// RetryStormKey is the key of the shared limit that retry_storm clients hit.
const RetryStormKey = "global"

// Validate reports the first field the pattern reads that is outside its range.
func (p Pattern) Validate() error {
	info, ok := PatternByName(p.Name)
	if !ok {
		return &ParamError{"pattern", strconv.Quote(string(p.Name)),
			"one of steady, poisson, idle_then_burst, periodic_bursts, window_boundary, ramp, offline_batch, retry_storm, shared_ip"}
	}
	for _, f := range info.Params {
		if err := p.validateParam(f); err != nil {
			return err
		}
	}
	if p.Name == PatternPeriodicBursts && p.Period > p.Duration {
		return &ParamError{"period", p.Period.String(), "a duration no longer than duration (" + p.Duration.String() + ")"}
	}
	return nil
}

func (p Pattern) validateParam(field string) error {
	durationIn := func(v time.Duration, lo, hi time.Duration) error {
		if v < lo || v > hi {
			return &ParamError{field, v.String(), fmt.Sprintf("a duration in [%s, %s]", lo, hi)}
		}
		return nil
	}
	rateIn := func(v float64) error {
		if math.IsNaN(v) || v < 0.001 || v > 1e6 {
			return &ParamError{field, formatFloat(v), "requests per second in [0.001, 1e+06]"}
		}
		return nil
	}
	intIn := func(v, lo, hi int) error {
		if v < lo || v > hi {
			return &ParamError{field, strconv.Itoa(v), fmt.Sprintf("a whole number in [%d, %d]", lo, hi)}
		}
		return nil
	}
	switch field {
	case "rate":
		return rateIn(p.Rate)
	case "to":
		return rateIn(p.To)
	case "duration":
		return durationIn(p.Duration, time.Second, 24*time.Hour)
	case "idle":
		return durationIn(p.Idle, 0, 24*time.Hour)
	case "period":
		return durationIn(p.Period, time.Millisecond, 24*time.Hour)
	case "window":
		return durationIn(p.Window, MinPatternWindow, MaxPatternWindow)
	case "count":
		return intIn(p.Count, 1, 1_000_000)
	case "clients":
		return intIn(p.Clients, 1, 100_000)
	case "cost":
		if p.Cost < 0 || p.Cost > MaxCount {
			return &ParamError{field, strconv.FormatInt(p.Cost, 10), "a whole number in [1, 1000000000] (0 means 1)"}
		}
	case "jitter":
		if math.IsNaN(p.Jitter) || p.Jitter < 0 || p.Jitter > 1 {
			return &ParamError{field, formatFloat(p.Jitter), "a fraction in [0, 1]"}
		}
	case "key_by":
		if !slices.Contains(KeyBys, p.KeyBy) {
			return &ParamError{field, strconv.Quote(p.KeyBy), `"ip" or "api_key"`}
		}
	}
	return nil
}

// TooManyArrivalsError is a pattern that would generate more arrivals than
// the cap its caller set.
type TooManyArrivalsError struct {
	Max int
}

func (e *TooManyArrivalsError) Error() string {
	return fmt.Sprintf("pattern generates more than %d arrivals; shorten the duration or lower the rate, count or clients", e.Max)
}

// generator appends arrivals up to a cap.
type generator struct {
	out  []Arrival
	max  int
	cost int64
	err  error
}

func (g *generator) add(at time.Duration, key string) bool {
	if g.err != nil {
		return false
	}
	if len(g.out) >= g.max {
		g.err = &TooManyArrivalsError{g.max}
		return false
	}
	g.out = append(g.out, Arrival{At: at, Key: key, Cost: g.cost})
	return true
}

// poisson adds arrivals from key with exponential gaps at rate per second
// until duration.
func (g *generator) poisson(rng *rand.Rand, key string, rate float64, duration time.Duration) {
	t := 0.0
	for {
		t += rng.ExpFloat64() / rate
		if at := time.Duration(math.Round(t * 1e9)); at >= duration || !g.add(at, key) {
			return
		}
	}
}

// clientKey is the key of client i (0-based): "client-1", "client-2", …
func clientKey(i int) string { return "client-" + strconv.Itoa(i+1) }

// Generate returns the pattern's traffic, sorted by time (ties keep the
// order in which clients were generated), or an error when the pattern is
// invalid or would generate more than max arrivals.
func (p Pattern) Generate(max int) (Traffic, error) {
	if err := p.Validate(); err != nil {
		return Traffic{}, err
	}
	cost := p.Cost
	if cost == 0 {
		cost = 1
	}
	g := &generator{max: max, cost: cost}
	rng := rand.New(rand.NewPCG(p.Seed, 0x5a17ab))
	var retry *RetryPolicy
	sec := func(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
	// The one client's key, one string for all its arrivals: a limiter
	// finds a run of one key by the string it was last given.
	first := clientKey(0)
	switch p.Name {
	case PatternSteady:
		// Client c sends at (k + (c+½)/clients)/rate: evenly spaced and
		// phase-shifted so clients interleave and no arrival sits on a
		// whole multiple of the interval.
		n := int(math.Ceil(p.Rate * p.Duration.Seconds()))
		for c := 0; c < p.Clients && g.err == nil; c++ {
			key := clientKey(c)
			phase := (float64(c) + 0.5) / float64(p.Clients)
			for k := 0; k < n; k++ {
				at := sec((float64(k) + phase) / p.Rate)
				if at >= p.Duration || !g.add(at, key) {
					break
				}
			}
		}
	case PatternPoisson:
		for c := 0; c < p.Clients && g.err == nil; c++ {
			g.poisson(rng, clientKey(c), p.Rate, p.Duration)
		}
	case PatternIdleThenBurst:
		for i := 0; i < p.Count && g.add(p.Idle, first); i++ {
		}
	case PatternPeriodicBursts:
		for at := time.Duration(0); at < p.Duration && g.err == nil; at += p.Period {
			for i := 0; i < p.Count && g.add(at, first); i++ {
			}
		}
	case PatternWindowBoundary:
		// count requests spread evenly over the last twentieth of the first
		// window, count over the first twentieth of the next: all within
		// window/10, none on the edge itself.
		spread := float64(p.Window) / 20
		step := spread / float64(p.Count)
		edge := float64(p.Window)
		for i := 0; i < p.Count && g.add(time.Duration(edge-spread+(float64(i)+0.5)*step), first); i++ {
		}
		for i := 0; i < p.Count && g.add(time.Duration(edge+(float64(i)+0.5)*step), first); i++ {
		}
	case PatternRamp:
		// The k-th request (k = 0, 1, …) arrives when the expected count
		// N(t) = rate·t + (to − rate)·t²/(2·duration) reaches k + ½.
		d := p.Duration.Seconds()
		a := (p.To - p.Rate) / (2 * d)
		for k := 0; ; k++ {
			target := float64(k) + 0.5
			var t float64
			if math.Abs(a) < 1e-12 {
				t = target / p.Rate
			} else {
				disc := p.Rate*p.Rate + 4*a*target
				if disc < 0 {
					break
				}
				t = (-p.Rate + math.Sqrt(disc)) / (2 * a)
			}
			at := sec(t)
			if t < 0 || at >= p.Duration || !g.add(at, first) {
				break
			}
		}
	case PatternOfflineBatch:
		// Offline for idle; on reconnecting, the client flushes count queued
		// events back to back, 1 ms apart, then sends live at rate until
		// idle + duration.
		at := p.Idle
		for i := 0; i < p.Count && g.add(at, first); i++ {
			at += time.Millisecond
		}
		for k := 0; g.err == nil; k++ {
			t := at + sec((float64(k)+0.5)/p.Rate)
			if t >= p.Idle+p.Duration || !g.add(t, first) {
				break
			}
		}
	case PatternRetryStorm:
		// All clients send at once against one shared limit, 100 ms in;
		// the rejected retry with exponential backoff from 1 s, doubling,
		// capped at 30 s, 5 attempts, not reading Retry-After (as naive
		// clients do), with the pattern's jitter.
		for c := 0; c < p.Clients && g.add(100*time.Millisecond, RetryStormKey); c++ {
		}
		retry = &RetryPolicy{Attempts: 5, Base: time.Second, Factor: 2, Cap: 30 * time.Second, Jitter: p.Jitter, Seed: p.Seed}
	case PatternSharedIP:
		for c := 0; c < p.Clients && g.err == nil; c++ {
			key := "api-key-" + strconv.Itoa(c+1)
			if p.KeyBy == "ip" {
				key = SharedIPAddress
			}
			g.poisson(rng, key, p.Rate, p.Duration)
		}
	}
	if g.err != nil {
		return Traffic{}, g.err
	}
	slices.SortStableFunc(g.out, func(a, b Arrival) int { return cmp.Compare(a.At, b.At) })
	return Traffic{Arrivals: g.out, Retry: retry}, nil
}

// Size is how many arrivals p generates, worked out from its parameters
// without generating them, so a caller can refuse a pattern before paying
// for it: an upper bound for the deterministic patterns (within one
// arrival per client), the mean for poisson and shared_ip, whose counts
// vary with the seed. Retries that Simulate adds for retry_storm are not
// arrivals and are not counted. Size is 0 for an invalid pattern.
func (p Pattern) Size() float64 {
	if p.Validate() != nil {
		return 0
	}
	d := p.Duration.Seconds()
	switch p.Name {
	case PatternSteady:
		return math.Ceil(p.Rate*d) * float64(p.Clients)
	case PatternPoisson, PatternSharedIP:
		return p.Rate * d * float64(p.Clients)
	case PatternIdleThenBurst:
		return float64(p.Count)
	case PatternPeriodicBursts:
		return math.Ceil(float64(p.Duration)/float64(p.Period)) * float64(p.Count)
	case PatternWindowBoundary:
		return 2 * float64(p.Count)
	case PatternRamp:
		return math.Ceil((p.Rate + p.To) / 2 * d)
	case PatternOfflineBatch:
		return float64(p.Count) + math.Ceil(p.Rate*d)
	case PatternRetryStorm:
		return float64(p.Clients)
	}
	return 0
}
