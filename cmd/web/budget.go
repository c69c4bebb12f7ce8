package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// Defaults of the heavy-request budget. A designer page, an embed or an
// export costs 0.5–0.9 CPU-seconds uncached, and a simulation of a million
// arrivals about as much and 100–200 MB; eight at once keep a 2-core
// server's pages answering in a few seconds and its heap in a few hundred
// MB. A heavy request that runs past defaultHeavyTimeout is cancelled and
// answered 503, well inside the 30 s write timeout, so the client still
// gets the answer.
const (
	defaultMaxHeavy     = 8
	defaultHeavyTimeout = 20 * time.Second
)

// Work units. A simulation holds one more heavy slot per arrivalsPerSlot
// arrivals (a million take 5 of the 8), and costs one more request of the
// API's per-client quota per arrivalsPerRequest arrivals (a million cost
// 41, at most the burst): the budget follows the work, so a big run is
// not one token.
const (
	arrivalsPerSlot    = 250_000
	arrivalsPerRequest = 25_000
)

// busyRetryAfter is the Retry-After of a 503 from a full gate, in seconds:
// heavy requests take about a second.
const busyRetryAfter = 1

// heavyGate caps the heavy requests in flight: each holds one slot or
// more, and a request that finds too few free is refused at once (a
// queue would only hold its memory longer). The zero value admits
// nothing; use newHeavyGate. Safe for concurrent use.
type heavyGate struct {
	size int64

	mu   sync.Mutex
	used int64
}

// newHeavyGate returns a gate of n slots; n <= 0 means defaultMaxHeavy.
func newHeavyGate(n int) *heavyGate {
	if n <= 0 {
		n = defaultMaxHeavy
	}
	return &heavyGate{size: int64(n)}
}

// tryAcquire takes n slots if they are free and reports whether it did.
func (g *heavyGate) tryAcquire(n int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.used+n > g.size {
		return false
	}
	g.used += n
	return true
}

// release gives back n slots.
func (g *heavyGate) release(n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.used -= n
}

// inUse is how many slots are taken.
func (g *heavyGate) inUse() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.used
}

// work is one heavy request's budget: the gate's slots it holds and the
// rate-limit quota it has been charged (the one request the limiter
// charged on the way in, then more as its size becomes known). A nil
// *work charges nothing.
type work struct {
	c     echo.Context
	gate  *heavyGate
	slots int64
	quota *quota // nil when the request's route has no rate limit
	// cancel ends the request's deadline, and orig is the request as it
	// came, restored on leaving so the log sees the client's context.
	cancel context.CancelFunc
	orig   *http.Request
}

// workKey is where the heavy middleware leaves a request's *work.
const workKey = "ratelab.work"

// workOf returns the request's budget, or nil outside a heavy route.
func workOf(c echo.Context) *work {
	w, _ := c.Get(workKey).(*work)
	return w
}

// arrivals charges the request for n arrivals: 1 + n/arrivalsPerSlot
// heavy slots (at most the gate's size) and 1 + n/arrivalsPerRequest
// requests of quota (at most the burst), minus what it holds already. It
// returns the 503 or 429 to answer when either is not available, and may
// be called again as n grows.
func (w *work) arrivals(n int) error {
	if w == nil {
		return nil
	}
	if q := w.quota; q != nil {
		if err := q.charge(w.c, min(1+int64(n)/arrivalsPerRequest, q.lim.spec.Burst), n); err != nil {
			return err
		}
	}
	want := min(1+int64(n)/arrivalsPerSlot, w.gate.size)
	if extra := want - w.slots; extra > 0 {
		if !w.gate.tryAcquire(extra) {
			return busy(w.c, w.gate)
		}
		w.slots = want
	}
	return nil
}

// busy is the 503 of a full gate, with Retry-After.
func busy(c echo.Context, g *heavyGate) error {
	c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(busyRetryAfter))
	return echo.NewHTTPError(http.StatusServiceUnavailable, fmt.Sprintf(
		"the server is busy: it runs at most %d heavy requests (simulations, designer pages, embeds, exports) at once; retry after %d s",
		g.size, busyRetryAfter))
}

// heavy is the middleware of the heavy routes: it takes one slot of gate
// (or answers 503 with Retry-After), bounds the request's work by a
// deadline timeout from now (0 means defaultHeavyTimeout), and leaves the
// request's *work for the handler to charge by size.
func heavy(gate *heavyGate, timeout time.Duration) echo.MiddlewareFunc {
	if timeout <= 0 {
		timeout = defaultHeavyTimeout
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			w, err := enterHeavy(c, gate, timeout)
			if err != nil {
				return err
			}
			defer w.leave()
			return next(c)
		}
	}
}

// enterHeavy takes one slot for c and sets its deadline; the caller must
// call leave. Handlers that answer some requests from a cache call it
// only on a miss, so a hit never waits for a slot.
func enterHeavy(c echo.Context, gate *heavyGate, timeout time.Duration) (*work, error) {
	if timeout <= 0 {
		timeout = defaultHeavyTimeout
	}
	if !gate.tryAcquire(1) {
		return nil, busy(c, gate)
	}
	req := c.Request()
	ctx, cancel := context.WithTimeout(req.Context(), timeout)
	c.SetRequest(req.WithContext(ctx))
	q, _ := c.Get(quotaKey).(*quota)
	w := &work{c: c, gate: gate, slots: 1, quota: q, cancel: cancel, orig: req}
	c.Set(workKey, w)
	return w, nil
}

// leave gives the request's slots back and ends its deadline.
func (w *work) leave() {
	w.gate.release(w.slots)
	w.slots = 0
	w.cancel()
	w.c.SetRequest(w.orig)
}
