package server

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
// arrivals (a million take 4 of the 8: a client's share), and costs one more request of the
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
//
// One client holds at most half the slots (perClient), so a client that
// sends many heavy requests at once cannot keep everyone else out: its
// requests past its share are refused with 429, the others' with 503 only
// when the whole gate is full.
type heavyGate struct {
	size, perClient int64

	mu       sync.Mutex
	used     int64
	byClient map[string]int64
}

// newHeavyGate returns a gate of n slots; n <= 0 means defaultMaxHeavy.
func newHeavyGate(n int) *heavyGate {
	if n <= 0 {
		n = defaultMaxHeavy
	}
	return &heavyGate{size: int64(n), perClient: max(int64(n)/2, 1), byClient: map[string]int64{}}
}

// gateFull and clientFull say why tryAcquire refused.
type refusal int

const (
	admitted refusal = iota
	gateFull
	clientFull
)

// tryAcquire takes n slots for client if they are free and within the
// client's share, and reports why not otherwise.
func (g *heavyGate) tryAcquire(client string, n int64) refusal {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byClient[client]+n > g.perClient {
		return clientFull
	}
	if g.used+n > g.size {
		return gateFull
	}
	g.used += n
	g.byClient[client] += n
	return admitted
}

// release gives back n slots of client.
func (g *heavyGate) release(client string, n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.used -= n
	if g.byClient[client] -= n; g.byClient[client] <= 0 {
		delete(g.byClient, client)
	}
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
	c      echo.Context
	gate   *heavyGate
	client string // the client's address, whose share the slots count in
	slots  int64
	quota  *quota // nil when the request's route has no rate limit
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
	return w.hold(1 + int64(n)/arrivalsPerSlot)
}

// hold makes the request hold n of the gate's slots (at most a client's
// share), taking what it lacks, for work worth n heavy requests. It
// returns the 503 or 429 to answer when they are not available.
func (w *work) hold(n int64) error {
	if w == nil {
		return nil
	}
	want := min(n, w.gate.perClient)
	if extra := want - w.slots; extra > 0 {
		if r := w.gate.tryAcquire(w.client, extra); r != admitted {
			return refuse(w.c, w.gate, r)
		}
		w.slots = want
	}
	return nil
}

// refuse is the answer of a refused slot: busy for a full gate, a 429 for
// a client over its share.
func refuse(c echo.Context, g *heavyGate, r refusal) error {
	if r == gateFull {
		return busy(c, g)
	}
	c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(busyRetryAfter))
	return echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf(
		"too many heavy requests at once from this client: each client runs at most %d of the server's %d (simulations, designer pages, embeds, exports); retry after %d s",
		g.perClient, g.size, busyRetryAfter))
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
	client := c.RealIP()
	if r := gate.tryAcquire(client, 1); r != admitted {
		return nil, refuse(c, gate, r)
	}
	req := c.Request()
	ctx, cancel := context.WithTimeout(req.Context(), timeout)
	c.SetRequest(req.WithContext(ctx))
	q, _ := c.Get(quotaKey).(*quota)
	w := &work{c: c, gate: gate, client: client, slots: 1, quota: q, cancel: cancel, orig: req}
	c.Set(workKey, w)
	return w, nil
}

// leave gives the request's slots back and ends its deadline.
func (w *work) leave() {
	w.gate.release(w.client, w.slots)
	w.slots = 0
	w.cancel()
	w.c.SetRequest(w.orig)
}
