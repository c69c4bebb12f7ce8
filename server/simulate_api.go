package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/design"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/policy"
)

// maxProblems is how many problems with arrivals or a policy a 422 lists:
// enough to fix; a million bad arrivals need not all be listed.
const maxProblems = 20

// defaultMaxArrivals caps one simulate request unless -max-arrivals says
// otherwise.
const defaultMaxArrivals = 1_000_000

// simulateBodyLimit bounds a simulate request body: a million arrivals of
// about 45 bytes each, with room to spare.
const simulateBodyLimit = 64 << 20

// SimulateRequest is the body of POST /api/v1/simulate: one limiter or
// one policy, and either arrivals (processed in time order; decisions come
// back in input order) or a pattern; with a policy and a pattern, mix
// assigns tiers and requests. Times and durations are seconds.
//
// decodeSimulate reads it member by member (the tags name the members),
// and the arrivals one by one as they stream in.
type SimulateRequest struct {
	// The limiter to run; send it or policy, not both.
	Limiter *calc.Limit `json:"limiter"`
	// The policy document as JSON: the fields of the YAML policy file
	// (apiVersion, kind, metadata, service, defaults, tiers, endpoints,
	// global, …) with durations as Go duration strings ("60s"); its schema
	// is served at /schema/policy.json. Problems are reported under
	// policy.<path>, as policy.tiers[1].limit.burst.
	Policy json.RawMessage `json:"policy"`
	// Explicit arrivals, at most -max-arrivals (default 1000000); read as
	// they stream in, so a body past the cap, or with 20 arrivals without a
	// valid time, is refused before the rest is read.
	arrivals []arrivalIn
	// hasArrivals tells an empty list of arrivals from none.
	hasArrivals bool
	// body is what the fast reader read, which the strings of arrivals
	// alias; nil when encoding/json read the request.
	body *fastBody
	// built is the simulation's arrivals, built from arrivals; requests
	// are a policy run's.
	built    []algorithms.Arrival
	requests []engine.Request
	// The pattern that generates the arrivals; omitted members take the
	// pattern's defaults.
	Pattern json.RawMessage `json:"pattern"`
	// With a policy and a pattern: who is in which tier and what each
	// arrival requests.
	Mix *Mix `json:"mix"`
	// Local enforcement on several replicas; limiter only.
	Replicas *Replicas `json:"replicas"`
	// Seconds: the span of summary.max_in_window; default the limiter's
	// window, else 60; limiter only.
	Window *float64 `json:"window"`
	// Seconds per series bin; default about 1/100 of the run.
	Bin *float64 `json:"bin"`
	// Overrides the pattern's seed.
	Seed *uint64 `json:"seed"`
	// False leaves the per-arrival lists (decisions, and the generated
	// arrivals) out of the answer: the summary and the series only, for
	// runs too large to list.
	Decisions *bool `json:"decisions"`
}

// Pools of the slices a simulate request reads its arrivals into
// (arrivalIn) and builds its simulation (algorithms.Arrival) or policy
// run (engine.Request) from.
var (
	arrivalBuffers slicePool[arrivalIn]
	simArrivals    slicePool[algorithms.Arrival]
	policyRequests slicePool[engine.Request]
)

// release gives the request's buffers back for the next request, once its
// answer is written: nothing may use its arrivals, or the simulation built
// from them, after.
func (req *SimulateRequest) release() {
	arrivalBuffers.put(req.arrivals)
	simArrivals.put(req.built)
	policyRequests.put(req.requests)
	req.arrivals, req.built, req.requests = nil, nil, nil
	if req.body != nil {
		req.body.release()
		req.body = nil
	}
}

// withDecisions reports whether the answer lists every decision.
func (req *SimulateRequest) withDecisions() bool { return req.Decisions == nil || *req.Decisions }

// ArrivalInput is one arrival: cost is the limiter form's; tier, method
// and path the policy form's (the policy sets the cost).
type ArrivalInput struct {
	// Seconds since the start of the run.
	At *float64 `json:"at" jsonschema:"required"`
	// The client; omitted means one shared key with a limiter, and a
	// request no client limit can key (only the global limit applies) with
	// a policy.
	Key string `json:"key"`
	// Tokens; omitted means 1. Limiter only: a policy's endpoints set the
	// cost.
	Cost *int64 `json:"cost"`
	// Policy only: the tier the request names, matched ignoring ASCII case;
	// it must be one of the policy's tiers; omitted means the default
	// limit.
	Tier string `json:"tier"`
	// Policy only: the request method, matched ignoring case.
	Method string `json:"method"`
	// Policy only: the request path, starting with '/', without the query.
	Path string `json:"path"`
}

// Pattern is a named, seeded traffic pattern, durations in seconds; each
// reads only its own parameters.
//
// It is algorithms.Pattern in the API's vocabulary.
type Pattern struct {
	Name algorithms.PatternName `json:"name" jsonschema:"required"`
	// Seconds of traffic.
	Duration float64 `json:"duration"`
	// Requests/s per client.
	Rate float64 `json:"rate"`
	// Ramp: the rate at the end.
	To float64 `json:"to"`
	// Requests in a burst or flush, or on each side of a window edge.
	Count int `json:"count"`
	// Seconds of silence before the burst or flush.
	Idle float64 `json:"idle"`
	// Seconds between bursts.
	Period float64 `json:"period"`
	// Seconds: the window whose edge window_boundary straddles.
	Window float64 `json:"window"`
	// Independent clients (steady, poisson), clients rejected together
	// (retry_storm), users behind one address (shared_ip).
	Clients int `json:"clients"`
	// Retry_storm: the fraction of each backoff added at random.
	Jitter float64 `json:"jitter"`
	// Shared_ip: "ip" (one key for the office) or "api_key" (one per user).
	KeyBy string `json:"key_by"`
	// Tokens each request costs; 0 means 1.
	Cost int64 `json:"cost"`
	// The seed of every random choice.
	Seed uint64 `json:"seed"`
}

// Replicas is local enforcement on count replicas behind a balancer;
// omitted means one shared state.
type Replicas struct {
	// How many replicas; 0 or 1 is one shared state.
	Count int `json:"count"`
	// How the balancer spreads requests.
	Balance algorithms.Balance `json:"balance"`
	// Seconds each replica's clock is ahead.
	Skew []float64 `json:"skew"`
	// The seed of the random balancer.
	Seed uint64 `json:"seed"`
}

// Decision is the limiter's decision on one arrival.
type Decision struct {
	Allowed bool `json:"allowed"`
	// Seconds an admitted request waits (leaky_bucket).
	Delay     float64 `json:"delay"`
	Remaining int64   `json:"remaining"`
	// Seconds until the same request would pass; -1 when it never can.
	RetryAfter float64 `json:"retry_after"`
	// Seconds until the client is rested.
	Reset float64 `json:"reset"`

	// The durations the seconds came from, for appendJSON.
	delay, retryAfter, reset time.Duration
}

// Summary sums up a limiter's run.
type Summary struct {
	// Requests sent, retries included.
	Offered int64 `json:"offered"`
	// Requests admitted.
	Admitted int64 `json:"admitted"`
	// Requests rejected.
	Rejected int64 `json:"rejected"`
	// Tokens the requests cost.
	OfferedCost int64 `json:"offered_cost"`
	// Tokens the admitted requests cost.
	AdmittedCost int64 `json:"admitted_cost"`
	// Admitted over offered.
	AdmittedShare float64 `json:"admitted_share"`
	// The most requests admitted in any span of 1 s (a leaky bucket's
	// counted when released, as the backend sees them).
	MaxIn1s int64 `json:"max_in_1s"`
	// The most requests admitted in any span of window seconds.
	MaxInWindow int64 `json:"max_in_window"`
	// Seconds: the span of max_in_window.
	Window float64 `json:"window"`
	// The median delay a leaky bucket added to admitted requests, in
	// seconds, within 1 %.
	DelayP50 float64 `json:"delay_p50"`
	// The 99th percentile of that delay, in seconds, within 1 %.
	DelayP99 float64 `json:"delay_p99"`
	// The longest such delay, in seconds.
	DelayMax float64 `json:"delay_max"`
	// Seconds; null when nothing was rejected.
	FirstRejection *float64 `json:"first_rejection"`
	// Retries sent (retry_storm).
	Retries int64 `json:"retries"`
	// Requests still rejected after their last retry (retry_storm).
	GaveUp int64 `json:"gave_up"`
}

// Bin is one bin of a limiter run's series.
type Bin struct {
	// Seconds: when the bin starts.
	Start    float64 `json:"start"`
	Offered  int64   `json:"offered"`
	Admitted int64   `json:"admitted"`
	Rejected int64   `json:"rejected"`
	// The first arrival's key's remaining at the end of the bin.
	Remaining int64 `json:"remaining"`
	// That key's requests waiting in a leaky bucket's queue at the end of
	// the bin.
	Queued int64 `json:"queued"`
}

// ArrivalOutput is a generated arrival.
type ArrivalOutput struct {
	// Seconds since the start of the run.
	At   float64 `json:"at"`
	Key  string  `json:"key"`
	Cost int64   `json:"cost"`
}

// SimulateLimiterResponse is the answer to a limiter.
//
// writeSimulation streams it member by member, in this order.
type SimulateLimiterResponse struct {
	// The limiter as run.
	Limiter calc.Limit `json:"limiter"`
	// The generated arrivals, when a pattern was sent.
	Arrivals []ArrivalOutput `json:"arrivals,omitempty"`
	// One per arrival, in the order sent; absent when the request said
	// "decisions": false.
	Decisions []Decision `json:"decisions,omitempty"`
	Summary   Summary    `json:"summary"`
	// Seconds per series bin.
	Bin    float64 `json:"bin"`
	Series []Bin   `json:"series"`
}

// toSeconds converts a duration to float64 seconds for JSON.
func toSeconds(d time.Duration) float64 { return d.Seconds() }

// retrySeconds is a rejection's Retry-After in seconds for JSON, -1 when
// the request can never pass.
func retrySeconds(d time.Duration) float64 {
	if d == algorithms.Never {
		return -1
	}
	return toSeconds(d)
}

// fromSeconds converts seconds from JSON to a duration, rounding to the
// nanosecond. Callers check the range first.
func fromSeconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// secondsIn checks that v is finite and in [lo, hi] seconds.
func secondsIn(field string, v, lo, hi float64) *FieldProblem {
	if v >= lo && v <= hi {
		return nil
	}
	return &FieldProblem{Field: field, Message: fmt.Sprintf("%s: %s is out of range; want seconds in [%s, %s]",
		field, strconv.FormatFloat(v, 'g', -1, 64), strconv.FormatFloat(lo, 'g', -1, 64), strconv.FormatFloat(hi, 'g', -1, 64))}
}

// paramProblem turns an algorithms.ParamError into a problem named with prefix.
func paramProblem(prefix string, err error) FieldProblem {
	var pe *algorithms.ParamError
	if errors.As(err, &pe) {
		return FieldProblem{Field: prefix + pe.Field, Message: prefix + pe.Error()}
	}
	return FieldProblem{Field: prefix, Message: err.Error()}
}

// handleSimulate answers POST /api/v1/simulate: the limiter's, or the
// whole policy's, decision on every arrival, in input order, with the run's
// summary and time series. Everything is checked before the answer
// starts, so a problem is still a 422; the answer then streams (see
// jsonStream). The work is charged to the request's budget (workOf) by
// its arrivals, as they are read or before a pattern generates them.
func handleSimulate(maxArrivals int) echo.HandlerFunc {
	if maxArrivals <= 0 {
		maxArrivals = defaultMaxArrivals
	}
	return func(c echo.Context) error {
		req, err := decodeSimulate(c, maxArrivals)
		if err != nil {
			return err
		}
		defer req.release()
		charge := workOf(c).arrivals
		switch {
		case req.Policy != nil && req.Limiter != nil:
			return invalid("policy", "policy: send either a limiter or a policy, not both")
		case req.Policy != nil:
			run, err := req.policyRun(c.Request().Context(), maxArrivals, charge)
			if err != nil {
				return err
			}
			out, err := run.decide(c.Request().Context(), req.withDecisions())
			if err != nil {
				return err
			}
			return out.write(c, req.withDecisions())
		}
		sim, spec, generated, err := req.simulation(maxArrivals, charge)
		if err != nil {
			return err
		}
		res, err := algorithms.Simulate(sim)
		if err != nil {
			return &invalidRequest{[]FieldProblem{paramProblem("", err)}}
		}
		return writeSimulation(c, spec, generated, sim, res)
	}
}

// checkPattern refuses a valid pattern whose size (Pattern.Size, worked
// out without generating) passes the cap, and charges the request for it
// otherwise; Generate then stops at the cap itself for a random pattern
// that draws more than its mean.
func checkPattern(p algorithms.Pattern, maxArrivals int, charge func(int) error) (*FieldProblem, error) {
	n := p.Size()
	if n > float64(maxArrivals) {
		return &FieldProblem{Field: "pattern", Message: fmt.Sprintf("pattern: generates about %.0f arrivals, more than the cap of %d; shorten the duration or lower the rate, count or clients", n, maxArrivals)}, nil
	}
	return nil, charge(int(n))
}

// simulation validates the request and builds the simulation; generated
// reports whether the arrivals came from a pattern.
func (req *SimulateRequest) simulation(maxArrivals int, charge func(int) error) (algorithms.Simulation, algorithms.Spec, bool, error) {
	var sim algorithms.Simulation
	var probs []FieldProblem
	var spec algorithms.Spec
	if req.Limiter == nil {
		probs = append(probs, FieldProblem{Field: "limiter", Message: "limiter: missing; want an object such as {\"algorithm\": \"token_bucket\", \"rate\": 10, \"burst\": 20}, or a policy instead"})
	} else if s, err := req.Limiter.Spec(); err != nil {
		var es calc.Errors
		if errors.As(err, &es) {
			for _, e := range es {
				probs = append(probs, FieldProblem{Field: "limiter." + e.Field, Message: "limiter." + e.Error()})
			}
		} else {
			probs = append(probs, FieldProblem{Field: "limiter", Message: err.Error()})
		}
	} else {
		spec = s
	}
	lane := algorithms.Lane{Spec: spec}
	if r := req.Replicas; r != nil {
		lane.Replicas = algorithms.Replicas{Count: r.Count, Balance: r.Balance, Seed: r.Seed}
		for i, s := range r.Skew {
			if p := secondsIn(fmt.Sprintf("replicas.skew[%d]", i), s, -3600, 3600); p != nil {
				probs = append(probs, *p)
				continue
			}
			lane.Replicas.Skew = append(lane.Replicas.Skew, fromSeconds(s))
		}
		if err := lane.Replicas.Validate(); err != nil {
			probs = append(probs, paramProblem("replicas.", err))
		}
	}
	sim.Lanes = []algorithms.Lane{lane}
	if req.Window != nil {
		if p := secondsIn("window", *req.Window, 0.001, algorithms.MaxWindow.Seconds()); p != nil {
			probs = append(probs, *p)
		} else {
			sim.Window = fromSeconds(*req.Window)
		}
	} else if spec.Window > 0 {
		sim.Window = spec.Window
	}
	if req.Bin != nil {
		if p := secondsIn("bin", *req.Bin, 0.001, algorithms.MaxWindow.Seconds()); p != nil {
			probs = append(probs, *p)
		} else {
			sim.Bin = fromSeconds(*req.Bin)
		}
	}
	if req.Mix != nil {
		probs = append(probs, FieldProblem{Field: "mix", Message: "mix: only with a policy; one limiter has no tiers or endpoints"})
	}
	generated := false
	switch {
	case req.Pattern != nil && req.hasArrivals:
		probs = append(probs, FieldProblem{Field: "pattern", Message: "pattern: send either arrivals or a pattern, not both"})
	case req.Pattern != nil:
		generated = true
		p, prob := decodePattern(req.Pattern, algorithms.DefaultPattern)
		if prob != nil {
			probs = append(probs, *prob)
			break
		}
		if req.Seed != nil {
			p.Seed = *req.Seed
		}
		if err := p.Validate(); err != nil {
			probs = append(probs, paramProblem("pattern.", err))
			break
		}
		if len(probs) > 0 {
			break // no work for a request that fails anyway
		}
		if prob, err := checkPattern(p, maxArrivals, charge); err != nil {
			return sim, spec, false, err
		} else if prob != nil {
			probs = append(probs, *prob)
			break
		}
		tr, err := p.Generate(maxArrivals)
		var tm *algorithms.TooManyArrivalsError
		switch {
		case errors.As(err, &tm):
			probs = append(probs, FieldProblem{Field: "pattern", Message: fmt.Sprintf("pattern: generates more than the cap of %d arrivals; shorten the duration or lower the rate, count or clients", maxArrivals)})
		case err != nil:
			probs = append(probs, paramProblem("pattern.", err))
		case tr.Retry != nil:
			// Each rejection may come back Attempts times: charge for
			// the decisions, not only the arrivals.
			if err := charge(len(tr.Arrivals) * (1 + tr.Retry.Attempts)); err != nil {
				return sim, spec, false, err
			}
			sim.Traffic = tr
		default:
			sim.Traffic = tr
		}
	default:
		as := simArrivals.make(len(req.arrivals))
		req.built = as
		for i, a := range req.arrivals {
			as[i] = algorithms.Arrival{At: fromSeconds(a.at), Key: a.key, Cost: 1}
			if a.hasCost && a.cost >= 1 && a.cost <= algorithms.MaxCount {
				as[i].Cost = a.cost
			}
			if len(probs) < maxProblems && a.hasAt && a.at >= 0 && a.at <= maxSeconds && (!a.hasCost || as[i].Cost == a.cost) && len(a.key) <= algorithms.MaxKey &&
				a.route == nil {
				continue // nothing to say: the common case, without naming the field
			}
			f := fmt.Sprintf("arrivals[%d]", i)
			if p := atProblem(f, a); p != nil {
				probs = append(probs, *p)
			}
			as[i].Key, as[i].Cost = a.key, 1
			if a.hasCost {
				if a.cost < 1 || a.cost > algorithms.MaxCount {
					probs = append(probs, FieldProblem{Field: f + ".cost", Message: fmt.Sprintf("%s.cost: %d is out of range; want a whole number in [1, 1000000000]", f, a.cost)})
				}
				as[i].Cost = a.cost
			}
			if len(a.key) > algorithms.MaxKey {
				probs = append(probs, FieldProblem{Field: f + ".key", Message: fmt.Sprintf("%s.key: %d bytes is too long; want at most %d", f, len(a.key), algorithms.MaxKey)})
			}
			for _, pf := range []struct{ name, v string }{{"tier", a.tier()}, {"method", a.method()}, {"path", a.path()}} {
				if pf.v != "" {
					probs = append(probs, FieldProblem{Field: f + "." + pf.name, Message: fmt.Sprintf("%s.%s: only with a policy; one limiter has no tiers or endpoints", f, pf.name)})
				}
			}
			if len(probs) >= maxProblems {
				break
			}
		}
		sim.Traffic = algorithms.Traffic{Arrivals: as}
	}
	if len(probs) > 0 {
		return sim, spec, false, &invalidRequest{probs}
	}
	sim.Decisions = req.withDecisions()
	return sim, spec, generated && sim.Decisions, nil
}

// decodePattern reads a pattern object over the named pattern's defaults
// (defaults(name)), so a request names only what it changes.
func decodePattern(raw json.RawMessage, defaults func(algorithms.PatternName) algorithms.Pattern) (algorithms.Pattern, *FieldProblem) {
	var named struct {
		Name algorithms.PatternName `json:"name"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return algorithms.Pattern{}, &FieldProblem{Field: "pattern", Message: "pattern: want an object with a name, such as {\"name\": \"steady\"}"}
	}
	if _, ok := algorithms.PatternByName(named.Name); !ok {
		return algorithms.Pattern{}, &FieldProblem{Field: "pattern.name", Message: paramProblem("pattern.", algorithms.Pattern{Name: named.Name}.Validate()).Message}
	}
	d := defaults(named.Name)
	p := Pattern{Name: d.Name, Duration: d.Duration.Seconds(), Rate: d.Rate, To: d.To, Count: d.Count, Idle: d.Idle.Seconds(),
		Period: d.Period.Seconds(), Window: d.Window.Seconds(), Clients: d.Clients, Jitter: d.Jitter, KeyBy: d.KeyBy, Cost: d.Cost, Seed: d.Seed}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		if inv, ok := jsonProblem(err, 0).(*invalidRequest); ok && len(inv.problems) > 0 {
			pr := inv.problems[0]
			if pr.Field != "" {
				pr.Field, pr.Message = "pattern."+pr.Field, "pattern."+pr.Message
			} else {
				pr.Field, pr.Message = "pattern", "pattern: "+pr.Message
			}
			return algorithms.Pattern{}, &pr
		}
		return algorithms.Pattern{}, &FieldProblem{Field: "pattern", Message: "pattern: " + err.Error()}
	}
	return p.pattern(), nil
}

func (p *Pattern) pattern() algorithms.Pattern {
	return algorithms.Pattern{
		Name: p.Name, Duration: fromSeconds(clampSeconds(p.Duration)), Rate: p.Rate, To: p.To, Count: p.Count,
		Idle: fromSeconds(clampSeconds(p.Idle)), Period: fromSeconds(clampSeconds(p.Period)), Window: fromSeconds(clampSeconds(p.Window)),
		Clients: p.Clients, Jitter: p.Jitter, KeyBy: p.KeyBy, Cost: p.Cost, Seed: p.Seed,
	}
}

// clampSeconds keeps a duration in seconds inside what time.Duration holds,
// so an absurd value reaches the pattern's own range check (which names
// the field) instead of overflowing.
func clampSeconds(s float64) float64 {
	const most = 1e9 // about 31 years, far beyond every pattern's range
	switch {
	case math.IsNaN(s):
		return -1
	case s > most:
		return most
	case s < -most:
		return -most
	}
	return s
}

// writeSimulation streams the limiter form's answer (OpenAPI's
// SimulateLimiterResponse): "limiter", the generated "arrivals" and the
// "decisions" when the run kept them, "summary", "bin" and "series".
func writeSimulation(c echo.Context, spec algorithms.Spec, generated bool, sim algorithms.Simulation, res algorithms.Result) error {
	lane := res.Lanes[0]
	s := lane.Summary
	window := sim.Window
	if window == 0 {
		window = time.Minute
	}
	summary := Summary{
		Offered: s.Offered, Admitted: s.Admitted, Rejected: s.Rejected, OfferedCost: s.OfferedCost, AdmittedCost: s.AdmittedCost,
		AdmittedShare: s.AdmittedShare, MaxIn1s: s.MaxIn1s, MaxInWindow: s.MaxInWindow, Window: toSeconds(window),
		DelayP50: toSeconds(s.DelayP50), DelayP99: toSeconds(s.DelayP99), DelayMax: toSeconds(s.DelayMax),
		Retries: s.Retries, GaveUp: s.GaveUp,
	}
	if s.FirstRejection >= 0 {
		summary.FirstRejection = new(toSeconds(s.FirstRejection))
	}
	series := make([]Bin, len(lane.Series))
	for i, b := range lane.Series {
		series[i] = Bin{Start: toSeconds(b.Start), Offered: b.Offered, Admitted: b.Admitted, Rejected: b.Rejected, Remaining: b.Remaining, Queued: b.Queued}
	}

	elements := 0
	if generated {
		elements += len(sim.Traffic.Arrivals)
	}
	if sim.Decisions {
		elements += len(lane.Decisions)
	}
	w := newJSONStream(c, elements)
	w.member("limiter", calc.LimitOf(spec))
	if generated {
		as := sim.Traffic.Arrivals
		var out ArrivalOutput
		array(w, "arrivals", len(as), func(i int) *ArrivalOutput {
			out = ArrivalOutput{At: toSeconds(as[i].At), Key: as[i].Key, Cost: as[i].Cost}
			return &out
		})
	}
	if sim.Decisions {
		ds := lane.Decisions
		var out Decision
		array(w, "decisions", len(ds), func(i int) *Decision {
			d := ds[i]
			out = newDecisionJSON(d.Allowed, d.Delay(), d.Remaining, d.RetryAfter(), d.Reset)
			return &out
		})
	}
	w.member("summary", summary)
	w.member("bin", toSeconds(res.Bin))
	w.member("series", series)
	return w.close()
}

// Mix says, with a policy and a pattern, who is in which tier and what
// each arrival requests. Tiers: the pattern's keys, in order of first
// arrival, are spread over the tiers by share: of K keys, key j (from 0) is
// in the first tier whose running total of shares exceeds (j+0.5)/K (0.2 of
// 10 keys is exactly the first 2); keys past the last total get the default
// limit. Requests: each arrival, in time order, draws u in [0, 1) from a PCG
// seeded with the pattern's seed and takes the first request whose running
// total of shares exceeds u; past the last it is a request no endpoint
// matches. The same body always gives the same arrivals.
type Mix struct {
	// The tiers' shares of the keys, adding up to at most 1.
	Tiers []TierShare `json:"tiers"`
	// The requests' shares of the arrivals, adding up to at most 1.
	Requests []RequestShare `json:"requests"`
}

// TierShare is one tier's share of a pattern's keys.
type TierShare struct {
	// A tier of the policy, ignoring ASCII case, each at most once.
	Name  string   `json:"name" jsonschema:"required"`
	Share *float64 `json:"share" jsonschema:"required"`
}

// RequestShare is one request's share of a pattern's arrivals.
type RequestShare struct {
	Method string `json:"method"`
	// A request path starting with '/', without the query.
	Path  string   `json:"path" jsonschema:"required"`
	Share *float64 `json:"share" jsonschema:"required"`
}

// MaxMix bounds each list of a mix: every arrival scans one.
const MaxMix = 100

// maxPath bounds an arrival's path, in bytes.
const maxPath = 2048

// mixStream is the second word of the PCG that draws each arrival's
// request, so the draws do not repeat the pattern's own.
const mixStream = 0x6d6978

// PolicyDecision is the policy's decision on one arrival.
type PolicyDecision struct {
	// Whether every applicable limit admitted it (in shadow mode, what the
	// limits would do).
	Allowed bool `json:"allowed"`
	// The name of the first limit that rejected it, in the order of
	// summary.limits ("tier_paid", "endpoint_0", "global"); empty when
	// admitted.
	Limit string `json:"limit"`
	// That limit's policy path ("tiers[1].limit"); empty when admitted.
	Field string `json:"field"`
	// The matched endpoint's cost, else 1.
	Cost int64 `json:"cost"`
	// The fewest requests of cost 1 any applicable limit would still admit
	// (9007199254740991, 2^53 − 1, the largest integer JavaScript reads
	// exactly, when no limit applies).
	Remaining int64 `json:"remaining"`
	// Seconds until every rejecting limit admits the same request; -1 when
	// it never can; 0 when admitted.
	RetryAfter float64 `json:"retry_after"`
	// Seconds until every applicable limit is rested.
	Reset float64 `json:"reset"`
	// Seconds an admitted request waits in a leaky bucket.
	Delay float64 `json:"delay"`
}

// maxJSONInt, 2^53 − 1, is the largest count an answer gives: the largest
// integer a JSON reader that holds numbers as float64 (JavaScript's, or
// encoding/json into any) reads exactly. A request that meets no limit
// has an unbounded remaining, which the engine counts as MaxInt64; as
// JSON, 9223372036854775807 would read back as 9223372036854775808.
const maxJSONInt = 1<<53 - 1

// PolicyArrivalOutput is a generated arrival as the mix assigned it.
type PolicyArrivalOutput struct {
	// Seconds since the start of the run.
	At  float64 `json:"at"`
	Key string  `json:"key"`
	// The tier the mix assigned; empty for the default limit.
	Tier   string `json:"tier"`
	Method string `json:"method"`
	// Empty when the mix assigned no request.
	Path string `json:"path"`
}

// LimitSummary is one limit's share of a policy run.
type LimitSummary struct {
	Name string `json:"name"`
	// Its policy path.
	Field string `json:"field"`
	// The limit, as "token_bucket(rate=10/s, burst=20)".
	Spec string `json:"spec"`
	// Arrivals it applied to.
	Checked int64 `json:"checked"`
	// Arrivals it was the first to reject.
	Rejected int64 `json:"rejected"`
}

// TierSummary counts one tier's arrivals.
type TierSummary struct {
	// The tier's name; empty for clients of no tier.
	Name string `json:"name"`
	// "tiers[i]", or "defaults" for clients of no tier.
	Field    string `json:"field"`
	Offered  int64  `json:"offered"`
	Admitted int64  `json:"admitted"`
	Rejected int64  `json:"rejected"`
}

// PolicySummary sums up a policy run.
type PolicySummary struct {
	// Requests sent.
	Offered int64 `json:"offered"`
	// Requests admitted.
	Admitted int64 `json:"admitted"`
	// Requests rejected.
	Rejected int64 `json:"rejected"`
	// Tokens the requests cost.
	OfferedCost int64 `json:"offered_cost"`
	// Tokens the admitted requests cost.
	AdmittedCost int64 `json:"admitted_cost"`
	// Seconds; null when nothing was rejected.
	FirstRejection *float64 `json:"first_rejection"`
	// Every limit of the policy: default, tiers, endpoints, global.
	Limits []LimitSummary `json:"limits"`
	// Clients of no tier first, then each tier in policy order.
	Tiers []TierSummary `json:"tiers"`
}

// PolicyBin is one bin of a policy run's series.
type PolicyBin struct {
	// Seconds: when the bin starts.
	Start    float64 `json:"start"`
	Offered  int64   `json:"offered"`
	Admitted int64   `json:"admitted"`
	Rejected int64   `json:"rejected"`
	// Rejections by the limit named first, in the order of summary.limits.
	RejectedBy []int64 `json:"rejected_by"`
	// The first arrival's key's remaining at the end of the bin; -1 before
	// its first request, 9007199254740991 when no limit applies to it.
	Remaining int64 `json:"remaining"`
}

// SimulatePolicyResponse is the answer to a policy.
//
// policyAnswer.write streams it member by member, in this order.
type SimulatePolicyResponse struct {
	// Present when the policy is in shadow mode: every request passes, and
	// the decisions say what the limits would have done.
	Shadow bool `json:"shadow,omitempty"`
	// The generated arrivals, when a pattern was sent.
	Arrivals []PolicyArrivalOutput `json:"arrivals,omitempty"`
	// One per arrival, in the order sent; absent when the request said
	// "decisions": false.
	Decisions []PolicyDecision `json:"decisions,omitempty"`
	Summary   PolicySummary    `json:"summary"`
	// Seconds per series bin.
	Bin    float64     `json:"bin"`
	Series []PolicyBin `json:"series"`
}

// policyRun is a validated policy-form request: the policy's engine and
// the requests in the order sent.
type policyRun struct {
	policy    policy.Policy
	engine    *engine.Engine // to look up tiers while checking
	requests  []engine.Request
	bin       time.Duration
	generated bool
}

// policyProblems turns policy.Decode's errors into problems under
// "policy.": the field path says where; line and column (within the policy
// member) only when there is no field.
func policyProblems(err error) []FieldProblem {
	var es policy.Errors
	if !errors.As(err, &es) {
		return []FieldProblem{{Field: "policy", Message: "policy: " + err.Error()}}
	}
	var out []FieldProblem
	for _, e := range es {
		if len(out) == maxProblems {
			break
		}
		p := FieldProblem{Field: "policy"}
		msg := e.Message
		if e.Hint != "" {
			msg += "; " + e.Hint
		}
		switch {
		case e.Field != "":
			p.Field += "." + e.Field
			p.Message = p.Field + ": " + msg
		case e.Line > 0:
			p.Message = fmt.Sprintf("policy: at %d:%d of the policy: %s", e.Line, e.Column, msg)
		default:
			p.Message = "policy: " + msg
		}
		out = append(out, p)
	}
	return out
}

// policyRun validates the policy form of the request and builds its run.
func (req *SimulateRequest) policyRun(ctx context.Context, maxArrivals int, charge func(int) error) (*policyRun, error) {
	var probs []FieldProblem
	run := &policyRun{}
	p, err := decodePolicy(ctx, req.Policy)
	if ended(err) {
		return nil, err
	}
	if err != nil {
		probs = append(probs, policyProblems(err)...)
	} else if run.engine, err = engine.New(p); err != nil {
		probs = append(probs, FieldProblem{Field: "policy", Message: "policy." + err.Error()})
	} else {
		run.policy = p
	}
	// tier finds a tier of the policy by the engine's rule; ok is true
	// when the policy could not be read (its problems are listed).
	tier := func(name string) (int, bool) {
		if run.engine == nil {
			return -1, true
		}
		i := run.engine.Match(engine.Request{Tier: name}).Tier
		return i, i >= 0
	}
	notTier := func(field, name string) FieldProblem {
		var names []string
		for i, t := range run.policy.Tiers {
			if i == 10 {
				names = append(names, "…")
				break
			}
			names = append(names, clipQuote(t.Name))
		}
		want := "the policy has no tiers"
		if len(names) > 0 {
			want = "want one of " + strings.Join(names, ", ")
		}
		return FieldProblem{Field: field, Message: fmt.Sprintf("%s: %s is not a tier of the policy; %s, or leave it out for the default limit", field, clipQuote(name), want)}
	}
	if req.Replicas != nil {
		probs = append(probs, FieldProblem{Field: "replicas", Message: "replicas: only with a limiter; a policy's limits are simulated as one shared store"})
	}
	if req.Window != nil {
		probs = append(probs, FieldProblem{Field: "window", Message: "window: only with a limiter; a policy's summary has no max_in_window"})
	}
	if req.Bin != nil {
		if p := secondsIn("bin", *req.Bin, 0.001, algorithms.MaxWindow.Seconds()); p != nil {
			probs = append(probs, *p)
		} else {
			run.bin = fromSeconds(*req.Bin)
		}
	}
	if req.Mix != nil && req.Pattern == nil {
		probs = append(probs, FieldProblem{Field: "mix", Message: "mix: only with a pattern; arrivals name their own tier, method and path"})
	}
	switch {
	case req.Pattern != nil && req.hasArrivals:
		probs = append(probs, FieldProblem{Field: "pattern", Message: "pattern: send either arrivals or a pattern, not both"})
	case req.Pattern != nil:
		run.generated = req.withDecisions()
		// A policy's traffic follows its design, as the designer's does
		// (window_boundary at the policy's window).
		pat, prob := decodePattern(req.Pattern, func(n algorithms.PatternName) algorithms.Pattern {
			return design.PatternDefaults(run.policy, n)
		})
		if prob != nil {
			probs = append(probs, *prob)
			break
		}
		if req.Seed != nil {
			pat.Seed = *req.Seed
		}
		if pat.Cost > 1 {
			probs = append(probs, FieldProblem{Field: "pattern.cost", Message: fmt.Sprintf("pattern.cost: %d is not for a policy, which sets each request's cost (its endpoint's cost, else 1); leave it out", pat.Cost)})
		}
		var mix []FieldProblem
		var tiers []int
		if req.Mix != nil {
			tiers, mix = req.Mix.check(tier, notTier)
			probs = append(probs, mix...)
		}
		if len(probs) > 0 {
			break
		}
		if prob, err := checkPattern(pat, maxArrivals, charge); err != nil {
			return nil, err
		} else if prob != nil {
			probs = append(probs, *prob)
			break
		}
		tr, err := pat.Generate(maxArrivals)
		var tm *algorithms.TooManyArrivalsError
		switch {
		case errors.As(err, &tm):
			probs = append(probs, FieldProblem{Field: "pattern", Message: fmt.Sprintf("pattern: generates more than the cap of %d arrivals; shorten the duration or lower the rate, count or clients", maxArrivals)})
		case err != nil:
			probs = append(probs, paramProblem("pattern.", err))
		case tr.Retry != nil:
			probs = append(probs, FieldProblem{Field: "pattern.name", Message: fmt.Sprintf("pattern.name: %s retries rejected requests, which a policy run does not simulate; send it with a limiter", pat.Name)})
		default:
			run.requests = req.Mix.assign(tr.Arrivals, tiers, run.policy, pat.Seed)
		}
	default:
		run.requests = policyRequests.make(len(req.arrivals))
		req.requests = run.requests
		for i, a := range req.arrivals {
			q := &run.requests[i]
			tierName, method, path := a.tier(), a.method(), a.path()
			if len(probs) < maxProblems && a.hasAt && a.at >= 0 && a.at <= maxSeconds && !a.hasCost && len(a.key) <= algorithms.MaxKey &&
				len(tierName) <= algorithms.MaxKey && len(method) <= algorithms.MaxKey && len(path) <= maxPath &&
				(path == "" || path[0] == '/' && !strings.ContainsAny(path, "?#")) {
				if _, ok := tier(tierName); tierName == "" || ok {
					// Nothing to say: the common case, without naming the field.
					*q = engine.Request{At: fromSeconds(a.at), Key: a.key, Tier: tierName, Method: method, Path: path}
					continue
				}
			}
			f := fmt.Sprintf("arrivals[%d]", i)
			if p := atProblem(f, a); p != nil {
				probs = append(probs, *p)
			} else {
				q.At = fromSeconds(a.at)
			}
			if a.hasCost {
				probs = append(probs, FieldProblem{Field: f + ".cost", Message: f + ".cost: not with a policy, which sets each request's cost (its endpoint's cost, else 1); leave it out"})
			}
			for _, s := range []struct {
				name, v string
				most    int
			}{{"key", a.key, algorithms.MaxKey}, {"tier", tierName, algorithms.MaxKey}, {"method", method, algorithms.MaxKey}, {"path", path, maxPath}} {
				if len(s.v) > s.most {
					probs = append(probs, FieldProblem{Field: f + "." + s.name, Message: fmt.Sprintf("%s.%s: %d bytes is too long; want at most %d", f, s.name, len(s.v), s.most)})
				}
			}
			if path != "" && (path[0] != '/' || strings.ContainsAny(path, "?#")) && len(path) <= maxPath {
				probs = append(probs, FieldProblem{Field: f + ".path", Message: fmt.Sprintf("%s.path: %s is not a request path; want one starting with '/', without the query", f, clipQuote(path))})
			}
			if tierName != "" && len(tierName) <= algorithms.MaxKey {
				if _, ok := tier(tierName); !ok {
					probs = append(probs, notTier(f+".tier", tierName))
				}
			}
			if len(probs) >= maxProblems {
				break
			}
			*q = engine.Request{At: q.At, Key: a.key, Tier: tierName, Method: method, Path: path}
		}
	}
	if len(probs) > 0 {
		return nil, &invalidRequest{probs}
	}
	return run, nil
}

// clipQuote quotes s for a message, shortened when long.
func clipQuote(s string) string {
	if len(s) > 60 {
		s = strings.ToValidUTF8(s[:60], "") + "…"
	}
	return strconv.Quote(s)
}

// check validates the mix against the policy and returns the tier index
// of each mix.tiers entry.
func (m *Mix) check(tier func(string) (int, bool), notTier func(field, name string) FieldProblem) ([]int, []FieldProblem) {
	var probs []FieldProblem
	share := func(field string, v *float64, total *float64) {
		switch {
		case v == nil:
			probs = append(probs, FieldProblem{Field: field, Message: field + ": missing; want a fraction in [0, 1]"})
		case !(*v >= 0 && *v <= 1):
			probs = append(probs, FieldProblem{Field: field, Message: fmt.Sprintf("%s: %s is out of range; want a fraction in [0, 1]", field, strconv.FormatFloat(*v, 'g', -1, 64))})
		default:
			*total += *v
		}
	}
	sum := func(field string, total float64, rest string) {
		if total > 1+1e-9 {
			probs = append(probs, FieldProblem{Field: field, Message: fmt.Sprintf("%s: the shares add up to %s; want at most 1 (%s)", field, strconv.FormatFloat(total, 'g', -1, 64), rest)})
		}
	}
	if len(m.Tiers) > MaxMix {
		probs = append(probs, FieldProblem{Field: "mix.tiers", Message: fmt.Sprintf("mix.tiers: %d entries; want at most %d", len(m.Tiers), MaxMix)})
	}
	if len(m.Requests) > MaxMix {
		probs = append(probs, FieldProblem{Field: "mix.requests", Message: fmt.Sprintf("mix.requests: %d entries; want at most %d", len(m.Requests), MaxMix)})
	}
	if len(probs) > 0 {
		return nil, probs
	}
	idx := make([]int, len(m.Tiers))
	seen := map[int]int{}
	total := 0.0
	for i, t := range m.Tiers {
		f := fmt.Sprintf("mix.tiers[%d]", i)
		share(f+".share", t.Share, &total)
		j, ok := tier(t.Name)
		switch {
		case !ok:
			probs = append(probs, notTier(f+".name", t.Name))
		case j < 0: // the policy could not be read
		default:
			if k, dup := seen[j]; dup {
				probs = append(probs, FieldProblem{Field: f + ".name", Message: fmt.Sprintf("%s.name: %s is the tier of mix.tiers[%d] again; list each tier once", f, clipQuote(t.Name), k)})
			}
			seen[j] = i
		}
		idx[i] = j
	}
	sum("mix.tiers", total, "the rest of the clients get the default limit")
	total = 0
	for i, r := range m.Requests {
		f := fmt.Sprintf("mix.requests[%d]", i)
		share(f+".share", r.Share, &total)
		if len(r.Method) > algorithms.MaxKey {
			probs = append(probs, FieldProblem{Field: f + ".method", Message: fmt.Sprintf("%s.method: %d bytes is too long; want at most %d", f, len(r.Method), algorithms.MaxKey)})
		}
		if len(r.Path) > maxPath || r.Path == "" || r.Path[0] != '/' || strings.ContainsAny(r.Path, "?#") {
			probs = append(probs, FieldProblem{Field: f + ".path", Message: fmt.Sprintf("%s.path: %s is not a request path; want one starting with '/', without the query, at most %d bytes", f, clipQuote(r.Path), maxPath)})
		}
	}
	sum("mix.requests", total, "the rest match no endpoint")
	return idx, probs
}

// assign turns generated arrivals into requests by the mix (see Mix);
// a nil mix leaves every arrival in no tier, matching no endpoint. tiers
// holds the policy index of each m.Tiers entry.
func (m *Mix) assign(as []algorithms.Arrival, tiers []int, p policy.Policy, seed uint64) []engine.Request {
	out := make([]engine.Request, len(as))
	for i, a := range as {
		out[i] = engine.Request{At: a.At, Key: a.Key}
	}
	if m == nil {
		return out
	}
	if len(m.Tiers) > 0 {
		var order []string
		first := map[string]bool{}
		for _, a := range as {
			if !first[a.Key] {
				first[a.Key] = true
				order = append(order, a.Key)
			}
		}
		tierOf := make(map[string]string, len(order))
		for j, key := range order {
			at := (float64(j) + 0.5) / float64(len(order))
			run := 0.0
			for k, t := range m.Tiers {
				if run += *t.Share; at < run {
					tierOf[key] = p.Tiers[tiers[k]].Name
					break
				}
			}
		}
		for i := range out {
			out[i].Tier = tierOf[out[i].Key]
		}
	}
	if len(m.Requests) > 0 {
		rng := rand.New(rand.NewPCG(seed, mixStream))
		for i := range out {
			u, run := rng.Float64(), 0.0
			for _, r := range m.Requests {
				if run += *r.Share; u < run {
					out[i].Method, out[i].Path = r.Method, r.Path
					break
				}
			}
		}
	}
	return out
}

// policyAnswer is a policy run ready to write: everything but the
// per-arrival lists, which write streams from the run and its result.
type policyAnswer struct {
	head SimulatePolicyResponse // without Arrivals and Decisions
	run  *policyRun
	res  engine.Result
}

// decide runs the requests through the policy (engine.Simulate decides
// them in time order, stably, as the limiter form does) and answers in the
// order sent; without decisions the run keeps none (a million of them
// are about 100 MB), only the summary and the series.
func (run *policyRun) decide(ctx context.Context, decisions bool) (*policyAnswer, error) {
	qs := run.requests
	res, err := engine.SimulateContext(ctx, run.policy, engine.Simulation{Requests: qs, Bin: run.bin, Decisions: decisions})
	if ended(err) {
		return nil, err
	}
	if err != nil {
		// Its errors name its own fields: bin, or requests (the arrivals).
		if msg, ok := strings.CutPrefix(err.Error(), "bin: "); ok {
			return nil, invalid("bin", "bin: %s; send a wider bin", msg)
		}
		return nil, invalid("arrivals", "arrivals: %s", strings.TrimPrefix(err.Error(), "requests: "))
	}
	s := res.Summary
	out := SimulatePolicyResponse{Shadow: run.policy.Defaults.EffectiveMode() == policy.ModeShadow, Bin: toSeconds(res.Bin)}
	sum := &out.Summary
	*sum = PolicySummary{Offered: s.Offered, Admitted: s.Admitted, Rejected: s.Rejected, OfferedCost: s.OfferedCost, AdmittedCost: s.AdmittedCost,
		Limits: make([]LimitSummary, len(res.Limits)), Tiers: make([]TierSummary, 1+len(run.policy.Tiers))}
	if s.FirstRejection >= 0 {
		sum.FirstRejection = new(toSeconds(s.FirstRejection))
	}
	for i, l := range res.Limits {
		sum.Limits[i] = LimitSummary{Name: l.Name, Field: l.Field, Spec: l.Spec.String(), Checked: s.Checked[i], Rejected: s.RejectedBy[i]}
	}
	for i, t := range s.Tiers {
		sum.Tiers[i] = TierSummary{Field: "defaults", Offered: t.Offered, Admitted: t.Admitted, Rejected: t.Rejected}
		if i > 0 {
			sum.Tiers[i].Name, sum.Tiers[i].Field = run.policy.Tiers[i-1].Name, fmt.Sprintf("tiers[%d]", i-1)
		}
	}
	out.Series = make([]PolicyBin, len(res.Series))
	for i, b := range res.Series {
		out.Series[i] = PolicyBin{Start: toSeconds(b.Start), Offered: b.Offered, Admitted: b.Admitted, Rejected: b.Rejected, RejectedBy: b.RejectedBy, Remaining: min(b.Remaining, maxJSONInt)}
	}
	return &policyAnswer{head: out, run: run, res: res}, nil
}

// write streams the answer as SimulatePolicyResponse spells it; without
// decisions, only the summary and the series.
func (a *policyAnswer) write(c echo.Context, decisions bool) error {
	qs, res := a.run.requests, a.res
	elements := 0
	if decisions && a.run.generated {
		elements += len(qs)
	}
	if decisions {
		elements += len(res.Decisions)
	}
	w := newJSONStream(c, elements)
	if a.head.Shadow {
		w.member("shadow", true)
	}
	if decisions && a.run.generated {
		var out PolicyArrivalOutput
		array(w, "arrivals", len(qs), func(i int) *PolicyArrivalOutput {
			q := qs[i]
			out = PolicyArrivalOutput{At: toSeconds(q.At), Key: q.Key, Tier: q.Tier, Method: q.Method, Path: q.Path}
			return &out
		})
	}
	if decisions {
		var dj PolicyDecision
		array(w, "decisions", len(res.Decisions), func(i int) *PolicyDecision {
			d := res.Decisions[i]
			dj = PolicyDecision{Allowed: d.Allowed, Cost: d.Cost, Remaining: min(d.Remaining, maxJSONInt),
				RetryAfter: retrySeconds(d.RetryAfter), Reset: toSeconds(d.Reset), Delay: toSeconds(d.Delay)}
			if d.Rejected >= 0 {
				dj.Limit, dj.Field = res.Limits[d.Rejected].Name, res.Limits[d.Rejected].Field
			}
			return &dj
		})
	}
	w.member("summary", a.head.Summary)
	w.member("bin", a.head.Bin)
	w.member("series", a.head.Series)
	return w.close()
}
