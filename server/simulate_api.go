package server

import (
	"bytes"
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

// simulateRequest is the body of POST /api/v1/simulate: one limiter, or a
// whole policy, and either explicit arrivals or a pattern that generates
// them. Times and durations are seconds. decodeSimulate reads it member
// by member (the tags name the members), and the arrivals one by one.
type simulateRequest struct {
	Limiter *calc.Limit     `json:"limiter"`
	Policy  json.RawMessage `json:"policy"` // the policy document as JSON, read by policy.Decode
	// arrivals are the "arrivals" member as read; hasArrivals tells an
	// empty list from none.
	arrivals    []arrivalIn
	hasArrivals bool
	Pattern     json.RawMessage `json:"pattern"` // a patternJSON; omitted fields take the pattern's defaults
	Mix         *mixJSON        `json:"mix"`     // with a policy and a pattern: who is in which tier, what they request
	Replicas    *replicasJSON   `json:"replicas"`
	Window      *float64        `json:"window"` // span of summary.max_in_window; default the limiter's window, else 60
	Bin         *float64        `json:"bin"`    // width of a series bin; default about 1/100 of the run
	Seed        *uint64         `json:"seed"`   // overrides the pattern's seed
	// Decisions false leaves the per-arrival lists (decisions, generated
	// arrivals) out of the answer: the summary and series only.
	Decisions *bool `json:"decisions"`
}

// withDecisions reports whether the answer lists every decision.
func (req *simulateRequest) withDecisions() bool { return req.Decisions == nil || *req.Decisions }

// arrivalJSON is one arrival. Cost is the limiter form's; Tier, Method and
// Path the policy form's (the policy sets the cost).
type arrivalJSON struct {
	At     *float64 `json:"at"`
	Key    string   `json:"key"`
	Cost   *int64   `json:"cost"`
	Tier   string   `json:"tier"`
	Method string   `json:"method"`
	Path   string   `json:"path"`
}

// patternJSON is algorithms.Pattern in the API's vocabulary; durations in
// seconds.
type patternJSON struct {
	Name     algorithms.PatternName `json:"name"`
	Duration float64                `json:"duration"`
	Rate     float64                `json:"rate"`
	To       float64                `json:"to"`
	Count    int                    `json:"count"`
	Idle     float64                `json:"idle"`
	Period   float64                `json:"period"`
	Window   float64                `json:"window"`
	Clients  int                    `json:"clients"`
	Jitter   float64                `json:"jitter"`
	KeyBy    string                 `json:"key_by"`
	Cost     int64                  `json:"cost"`
	Seed     uint64                 `json:"seed"`
}

type replicasJSON struct {
	Count   int                `json:"count"`
	Balance algorithms.Balance `json:"balance"`
	Skew    []float64          `json:"skew"` // seconds per replica
	Seed    uint64             `json:"seed"`
}

type decisionJSON struct {
	Allowed    bool    `json:"allowed"`
	Delay      float64 `json:"delay"`
	Remaining  int64   `json:"remaining"`
	RetryAfter float64 `json:"retry_after"` // seconds; -1 when the request can never pass
	Reset      float64 `json:"reset"`

	// The durations the seconds came from, for appendJSON.
	delay, retryAfter, reset time.Duration
}

type summaryJSON struct {
	Offered        int64    `json:"offered"`
	Admitted       int64    `json:"admitted"`
	Rejected       int64    `json:"rejected"`
	OfferedCost    int64    `json:"offered_cost"`
	AdmittedCost   int64    `json:"admitted_cost"`
	AdmittedShare  float64  `json:"admitted_share"`
	MaxIn1s        int64    `json:"max_in_1s"`
	MaxInWindow    int64    `json:"max_in_window"`
	Window         float64  `json:"window"`
	DelayP50       float64  `json:"delay_p50"`
	DelayP99       float64  `json:"delay_p99"`
	DelayMax       float64  `json:"delay_max"`
	FirstRejection *float64 `json:"first_rejection"` // null when nothing was rejected
	Retries        int64    `json:"retries"`
	GaveUp         int64    `json:"gave_up"`
}

type binJSON struct {
	Start     float64 `json:"start"`
	Offered   int64   `json:"offered"`
	Admitted  int64   `json:"admitted"`
	Rejected  int64   `json:"rejected"`
	Remaining int64   `json:"remaining"`
	Queued    int64   `json:"queued"`
}

type arrivalOut struct {
	At   float64 `json:"at"`
	Key  string  `json:"key"`
	Cost int64   `json:"cost"`
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
func secondsIn(field string, v, lo, hi float64) *fieldProblem {
	if v >= lo && v <= hi {
		return nil
	}
	return &fieldProblem{Field: field, Message: fmt.Sprintf("%s: %s is out of range; want seconds in [%s, %s]",
		field, strconv.FormatFloat(v, 'g', -1, 64), strconv.FormatFloat(lo, 'g', -1, 64), strconv.FormatFloat(hi, 'g', -1, 64))}
}

// paramProblem turns an algorithms.ParamError into a problem named with prefix.
func paramProblem(prefix string, err error) fieldProblem {
	var pe *algorithms.ParamError
	if errors.As(err, &pe) {
		return fieldProblem{Field: prefix + pe.Field, Message: prefix + pe.Error()}
	}
	return fieldProblem{Field: prefix, Message: err.Error()}
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
		charge := workOf(c).arrivals
		switch {
		case req.Policy != nil && req.Limiter != nil:
			return invalid("policy", "policy: send either a limiter or a policy, not both")
		case req.Policy != nil:
			run, err := req.policyRun(maxArrivals, charge)
			if err != nil {
				return err
			}
			out, err := run.decide()
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
			return &invalidRequest{[]fieldProblem{paramProblem("", err)}}
		}
		return writeSimulation(c, spec, generated, sim, res)
	}
}

// checkPattern refuses a valid pattern whose size (Pattern.Size, worked
// out without generating) passes the cap, and charges the request for it
// otherwise; Generate then stops at the cap itself for a random pattern
// that draws more than its mean.
func checkPattern(p algorithms.Pattern, maxArrivals int, charge func(int) error) (*fieldProblem, error) {
	n := p.Size()
	if n > float64(maxArrivals) {
		return &fieldProblem{Field: "pattern", Message: fmt.Sprintf("pattern: generates about %.0f arrivals, more than the cap of %d; shorten the duration or lower the rate, count or clients", n, maxArrivals)}, nil
	}
	return nil, charge(int(n))
}

// simulation validates the request and builds the simulation; generated
// reports whether the arrivals came from a pattern.
func (req *simulateRequest) simulation(maxArrivals int, charge func(int) error) (algorithms.Simulation, algorithms.Spec, bool, error) {
	var sim algorithms.Simulation
	var probs []fieldProblem
	var spec algorithms.Spec
	if req.Limiter == nil {
		probs = append(probs, fieldProblem{Field: "limiter", Message: "limiter: missing; want an object such as {\"algorithm\": \"token_bucket\", \"rate\": 10, \"burst\": 20}, or a policy instead"})
	} else if s, err := req.Limiter.Spec(); err != nil {
		var es calc.Errors
		if errors.As(err, &es) {
			for _, e := range es {
				probs = append(probs, fieldProblem{Field: "limiter." + e.Field, Message: "limiter." + e.Error()})
			}
		} else {
			probs = append(probs, fieldProblem{Field: "limiter", Message: err.Error()})
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
		probs = append(probs, fieldProblem{Field: "mix", Message: "mix: only with a policy; one limiter has no tiers or endpoints"})
	}
	generated := false
	switch {
	case req.Pattern != nil && req.hasArrivals:
		probs = append(probs, fieldProblem{Field: "pattern", Message: "pattern: send either arrivals or a pattern, not both"})
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
			probs = append(probs, fieldProblem{Field: "pattern", Message: fmt.Sprintf("pattern: generates more than the cap of %d arrivals; shorten the duration or lower the rate, count or clients", maxArrivals)})
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
		as := make([]algorithms.Arrival, len(req.arrivals))
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
					probs = append(probs, fieldProblem{Field: f + ".cost", Message: fmt.Sprintf("%s.cost: %d is out of range; want a whole number in [1, 1000000000]", f, a.cost)})
				}
				as[i].Cost = a.cost
			}
			if len(a.key) > algorithms.MaxKey {
				probs = append(probs, fieldProblem{Field: f + ".key", Message: fmt.Sprintf("%s.key: %d bytes is too long; want at most %d", f, len(a.key), algorithms.MaxKey)})
			}
			for _, pf := range []struct{ name, v string }{{"tier", a.tier()}, {"method", a.method()}, {"path", a.path()}} {
				if pf.v != "" {
					probs = append(probs, fieldProblem{Field: f + "." + pf.name, Message: fmt.Sprintf("%s.%s: only with a policy; one limiter has no tiers or endpoints", f, pf.name)})
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
func decodePattern(raw json.RawMessage, defaults func(algorithms.PatternName) algorithms.Pattern) (algorithms.Pattern, *fieldProblem) {
	var named struct {
		Name algorithms.PatternName `json:"name"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return algorithms.Pattern{}, &fieldProblem{Field: "pattern", Message: "pattern: want an object with a name, such as {\"name\": \"steady\"}"}
	}
	if _, ok := algorithms.PatternByName(named.Name); !ok {
		return algorithms.Pattern{}, &fieldProblem{Field: "pattern.name", Message: paramProblem("pattern.", algorithms.Pattern{Name: named.Name}.Validate()).Message}
	}
	d := defaults(named.Name)
	p := patternJSON{Name: d.Name, Duration: d.Duration.Seconds(), Rate: d.Rate, To: d.To, Count: d.Count, Idle: d.Idle.Seconds(),
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
		return algorithms.Pattern{}, &fieldProblem{Field: "pattern", Message: "pattern: " + err.Error()}
	}
	return p.pattern(), nil
}

func (p *patternJSON) pattern() algorithms.Pattern {
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
	summary := summaryJSON{
		Offered: s.Offered, Admitted: s.Admitted, Rejected: s.Rejected, OfferedCost: s.OfferedCost, AdmittedCost: s.AdmittedCost,
		AdmittedShare: s.AdmittedShare, MaxIn1s: s.MaxIn1s, MaxInWindow: s.MaxInWindow, Window: toSeconds(window),
		DelayP50: toSeconds(s.DelayP50), DelayP99: toSeconds(s.DelayP99), DelayMax: toSeconds(s.DelayMax),
		Retries: s.Retries, GaveUp: s.GaveUp,
	}
	if s.FirstRejection >= 0 {
		summary.FirstRejection = new(toSeconds(s.FirstRejection))
	}
	series := make([]binJSON, len(lane.Series))
	for i, b := range lane.Series {
		series[i] = binJSON{Start: toSeconds(b.Start), Offered: b.Offered, Admitted: b.Admitted, Rejected: b.Rejected, Remaining: b.Remaining, Queued: b.Queued}
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
		var out arrivalOut
		array(w, "arrivals", len(as), func(i int) *arrivalOut {
			out = arrivalOut{At: toSeconds(as[i].At), Key: as[i].Key, Cost: as[i].Cost}
			return &out
		})
	}
	if sim.Decisions {
		ds := lane.Decisions
		var out decisionJSON
		array(w, "decisions", len(ds), func(i int) *decisionJSON {
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

// mixJSON assigns a generated pattern's traffic to tiers and requests.
//
// Tiers: the pattern's keys, in order of first arrival, are spread over
// the tiers by share: of K keys, key j (from 0) is in the first tier whose
// running total of shares exceeds (j+½)/K, so 0.2 of 10 keys is exactly
// the first 2; keys past the last total get the default limit. Requests:
// each arrival, in time order, draws a number u in [0, 1) from a PCG
// seeded with the pattern's seed and takes the first request whose running
// total of shares exceeds u; past the last, it is a request no endpoint
// matches. Shares are fractions adding up to at most 1.
type mixJSON struct {
	Tiers    []tierShareJSON    `json:"tiers"`
	Requests []requestShareJSON `json:"requests"`
}

type tierShareJSON struct {
	Name  string   `json:"name"`
	Share *float64 `json:"share"`
}

type requestShareJSON struct {
	Method string   `json:"method"`
	Path   string   `json:"path"`
	Share  *float64 `json:"share"`
}

// maxMix bounds each list of a mix: every arrival scans one.
const maxMix = 100

// maxPath bounds an arrival's path, in bytes.
const maxPath = 2048

// mixStream is the second word of the PCG that draws each arrival's
// request, so the draws do not repeat the pattern's own.
const mixStream = 0x6d6978

// policyDecisionJSON is the policy's decision on one arrival: Limit and
// Field name the first limit that rejected it ("" when admitted).
type policyDecisionJSON struct {
	Allowed    bool    `json:"allowed"`
	Limit      string  `json:"limit"`
	Field      string  `json:"field"`
	Cost       int64   `json:"cost"`
	Remaining  int64   `json:"remaining"`
	RetryAfter float64 `json:"retry_after"` // seconds; -1 when the request can never pass
	Reset      float64 `json:"reset"`
	Delay      float64 `json:"delay"`
}

// policyArrivalOut is a generated arrival as the mix assigned it; Tier ""
// is the default limit.
type policyArrivalOut struct {
	At     float64 `json:"at"`
	Key    string  `json:"key"`
	Tier   string  `json:"tier"`
	Method string  `json:"method"`
	Path   string  `json:"path"`
}

// limitSummaryJSON is one limit's share of a run: Checked counts the
// arrivals it applied to, Rejected those it was the first to reject.
type limitSummaryJSON struct {
	Name     string `json:"name"`
	Field    string `json:"field"`
	Spec     string `json:"spec"`
	Checked  int64  `json:"checked"`
	Rejected int64  `json:"rejected"`
}

// tierSummaryJSON counts one tier's arrivals; Name "" and Field
// "defaults" are the clients of no tier.
type tierSummaryJSON struct {
	Name     string `json:"name"`
	Field    string `json:"field"`
	Offered  int64  `json:"offered"`
	Admitted int64  `json:"admitted"`
	Rejected int64  `json:"rejected"`
}

type policySummaryJSON struct {
	Offered        int64              `json:"offered"`
	Admitted       int64              `json:"admitted"`
	Rejected       int64              `json:"rejected"`
	OfferedCost    int64              `json:"offered_cost"`
	AdmittedCost   int64              `json:"admitted_cost"`
	FirstRejection *float64           `json:"first_rejection"` // null when nothing was rejected
	Limits         []limitSummaryJSON `json:"limits"`
	Tiers          []tierSummaryJSON  `json:"tiers"`
}

// policyBinJSON is one bin of a policy run's series: RejectedBy counts
// rejections by the limit named first, in the order of summary.limits;
// Remaining is the first arrival's key's, -1 before its first request.
type policyBinJSON struct {
	Start      float64 `json:"start"`
	Offered    int64   `json:"offered"`
	Admitted   int64   `json:"admitted"`
	Rejected   int64   `json:"rejected"`
	RejectedBy []int64 `json:"rejected_by"`
	Remaining  int64   `json:"remaining"`
}

type policySimulateResponse struct {
	Shadow    bool                 `json:"shadow,omitempty"`
	Arrivals  []policyArrivalOut   `json:"arrivals,omitempty"` // the generated arrivals, when a pattern was given
	Decisions []policyDecisionJSON `json:"decisions"`
	Summary   policySummaryJSON    `json:"summary"`
	Bin       float64              `json:"bin"`
	Series    []policyBinJSON      `json:"series"`
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
func policyProblems(err error) []fieldProblem {
	var es policy.Errors
	if !errors.As(err, &es) {
		return []fieldProblem{{Field: "policy", Message: "policy: " + err.Error()}}
	}
	var out []fieldProblem
	for _, e := range es {
		if len(out) == maxProblems {
			break
		}
		p := fieldProblem{Field: "policy"}
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
func (req *simulateRequest) policyRun(maxArrivals int, charge func(int) error) (*policyRun, error) {
	var probs []fieldProblem
	run := &policyRun{}
	p, err := policy.Decode(bytes.NewReader(req.Policy))
	if err != nil {
		probs = append(probs, policyProblems(err)...)
	} else if run.engine, err = engine.New(p); err != nil {
		probs = append(probs, fieldProblem{Field: "policy", Message: "policy." + err.Error()})
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
	notTier := func(field, name string) fieldProblem {
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
		return fieldProblem{Field: field, Message: fmt.Sprintf("%s: %s is not a tier of the policy; %s, or leave it out for the default limit", field, clipQuote(name), want)}
	}
	if req.Replicas != nil {
		probs = append(probs, fieldProblem{Field: "replicas", Message: "replicas: only with a limiter; a policy's limits are simulated as one shared store"})
	}
	if req.Window != nil {
		probs = append(probs, fieldProblem{Field: "window", Message: "window: only with a limiter; a policy's summary has no max_in_window"})
	}
	if req.Bin != nil {
		if p := secondsIn("bin", *req.Bin, 0.001, algorithms.MaxWindow.Seconds()); p != nil {
			probs = append(probs, *p)
		} else {
			run.bin = fromSeconds(*req.Bin)
		}
	}
	if req.Mix != nil && req.Pattern == nil {
		probs = append(probs, fieldProblem{Field: "mix", Message: "mix: only with a pattern; arrivals name their own tier, method and path"})
	}
	switch {
	case req.Pattern != nil && req.hasArrivals:
		probs = append(probs, fieldProblem{Field: "pattern", Message: "pattern: send either arrivals or a pattern, not both"})
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
			probs = append(probs, fieldProblem{Field: "pattern.cost", Message: fmt.Sprintf("pattern.cost: %d is not for a policy, which sets each request's cost (its endpoint's cost, else 1); leave it out", pat.Cost)})
		}
		var mix []fieldProblem
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
			probs = append(probs, fieldProblem{Field: "pattern", Message: fmt.Sprintf("pattern: generates more than the cap of %d arrivals; shorten the duration or lower the rate, count or clients", maxArrivals)})
		case err != nil:
			probs = append(probs, paramProblem("pattern.", err))
		case tr.Retry != nil:
			probs = append(probs, fieldProblem{Field: "pattern.name", Message: fmt.Sprintf("pattern.name: %s retries rejected requests, which a policy run does not simulate; send it with a limiter", pat.Name)})
		default:
			run.requests = req.Mix.assign(tr.Arrivals, tiers, run.policy, pat.Seed)
		}
	default:
		run.requests = make([]engine.Request, len(req.arrivals))
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
				probs = append(probs, fieldProblem{Field: f + ".cost", Message: f + ".cost: not with a policy, which sets each request's cost (its endpoint's cost, else 1); leave it out"})
			}
			for _, s := range []struct {
				name, v string
				most    int
			}{{"key", a.key, algorithms.MaxKey}, {"tier", tierName, algorithms.MaxKey}, {"method", method, algorithms.MaxKey}, {"path", path, maxPath}} {
				if len(s.v) > s.most {
					probs = append(probs, fieldProblem{Field: f + "." + s.name, Message: fmt.Sprintf("%s.%s: %d bytes is too long; want at most %d", f, s.name, len(s.v), s.most)})
				}
			}
			if path != "" && (path[0] != '/' || strings.ContainsAny(path, "?#")) && len(path) <= maxPath {
				probs = append(probs, fieldProblem{Field: f + ".path", Message: fmt.Sprintf("%s.path: %s is not a request path; want one starting with '/', without the query", f, clipQuote(path))})
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
func (m *mixJSON) check(tier func(string) (int, bool), notTier func(field, name string) fieldProblem) ([]int, []fieldProblem) {
	var probs []fieldProblem
	share := func(field string, v *float64, total *float64) {
		switch {
		case v == nil:
			probs = append(probs, fieldProblem{Field: field, Message: field + ": missing; want a fraction in [0, 1]"})
		case !(*v >= 0 && *v <= 1):
			probs = append(probs, fieldProblem{Field: field, Message: fmt.Sprintf("%s: %s is out of range; want a fraction in [0, 1]", field, strconv.FormatFloat(*v, 'g', -1, 64))})
		default:
			*total += *v
		}
	}
	sum := func(field string, total float64, rest string) {
		if total > 1+1e-9 {
			probs = append(probs, fieldProblem{Field: field, Message: fmt.Sprintf("%s: the shares add up to %s; want at most 1 (%s)", field, strconv.FormatFloat(total, 'g', -1, 64), rest)})
		}
	}
	if len(m.Tiers) > maxMix {
		probs = append(probs, fieldProblem{Field: "mix.tiers", Message: fmt.Sprintf("mix.tiers: %d entries; want at most %d", len(m.Tiers), maxMix)})
	}
	if len(m.Requests) > maxMix {
		probs = append(probs, fieldProblem{Field: "mix.requests", Message: fmt.Sprintf("mix.requests: %d entries; want at most %d", len(m.Requests), maxMix)})
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
				probs = append(probs, fieldProblem{Field: f + ".name", Message: fmt.Sprintf("%s.name: %s is the tier of mix.tiers[%d] again; list each tier once", f, clipQuote(t.Name), k)})
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
			probs = append(probs, fieldProblem{Field: f + ".method", Message: fmt.Sprintf("%s.method: %d bytes is too long; want at most %d", f, len(r.Method), algorithms.MaxKey)})
		}
		if len(r.Path) > maxPath || r.Path == "" || r.Path[0] != '/' || strings.ContainsAny(r.Path, "?#") {
			probs = append(probs, fieldProblem{Field: f + ".path", Message: fmt.Sprintf("%s.path: %s is not a request path; want one starting with '/', without the query, at most %d bytes", f, clipQuote(r.Path), maxPath)})
		}
	}
	sum("mix.requests", total, "the rest match no endpoint")
	return idx, probs
}

// assign turns generated arrivals into requests by the mix (see mixJSON);
// a nil mix leaves every arrival in no tier, matching no endpoint. tiers
// holds the policy index of each m.Tiers entry.
func (m *mixJSON) assign(as []algorithms.Arrival, tiers []int, p policy.Policy, seed uint64) []engine.Request {
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
	head policySimulateResponse // without Arrivals and Decisions
	run  *policyRun
	res  engine.Result
}

// decide runs the requests through the policy (engine.Simulate decides
// them in time order, stably, as the limiter form does) and answers in the
// order sent.
func (run *policyRun) decide() (*policyAnswer, error) {
	qs := run.requests
	res, err := engine.Simulate(run.policy, engine.Simulation{Requests: qs, Bin: run.bin, Decisions: true})
	if err != nil {
		// Its errors name its own fields: bin, or requests (the arrivals).
		if msg, ok := strings.CutPrefix(err.Error(), "bin: "); ok {
			return nil, invalid("bin", "bin: %s; send a wider bin", msg)
		}
		return nil, invalid("arrivals", "arrivals: %s", strings.TrimPrefix(err.Error(), "requests: "))
	}
	s := res.Summary
	out := policySimulateResponse{Shadow: run.policy.Defaults.EffectiveMode() == policy.ModeShadow, Bin: toSeconds(res.Bin)}
	sum := &out.Summary
	*sum = policySummaryJSON{Offered: s.Offered, Admitted: s.Admitted, Rejected: s.Rejected, OfferedCost: s.OfferedCost, AdmittedCost: s.AdmittedCost,
		Limits: make([]limitSummaryJSON, len(res.Limits)), Tiers: make([]tierSummaryJSON, 1+len(run.policy.Tiers))}
	if s.FirstRejection >= 0 {
		sum.FirstRejection = new(toSeconds(s.FirstRejection))
	}
	for i, l := range res.Limits {
		sum.Limits[i] = limitSummaryJSON{Name: l.Name, Field: l.Field, Spec: l.Spec.String(), Checked: s.Checked[i], Rejected: s.RejectedBy[i]}
	}
	sum.Tiers[0] = tierSummaryJSON{Field: "defaults"}
	for i, t := range run.policy.Tiers {
		sum.Tiers[1+i] = tierSummaryJSON{Name: t.Name, Field: fmt.Sprintf("tiers[%d]", i)}
	}
	for _, d := range res.Decisions {
		t := &sum.Tiers[d.Tier+1]
		t.Offered++
		if d.Allowed {
			t.Admitted++
		} else {
			t.Rejected++
		}
	}
	out.Series = make([]policyBinJSON, len(res.Series))
	for i, b := range res.Series {
		out.Series[i] = policyBinJSON{Start: toSeconds(b.Start), Offered: b.Offered, Admitted: b.Admitted, Rejected: b.Rejected, RejectedBy: b.RejectedBy, Remaining: b.Remaining}
	}
	return &policyAnswer{head: out, run: run, res: res}, nil
}

// write streams the answer as policySimulateResponse spells it; without
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
		var out policyArrivalOut
		array(w, "arrivals", len(qs), func(i int) *policyArrivalOut {
			q := qs[i]
			out = policyArrivalOut{At: toSeconds(q.At), Key: q.Key, Tier: q.Tier, Method: q.Method, Path: q.Path}
			return &out
		})
	}
	if decisions {
		var dj policyDecisionJSON
		array(w, "decisions", len(res.Decisions), func(i int) *policyDecisionJSON {
			d := res.Decisions[i]
			dj = policyDecisionJSON{Allowed: d.Allowed, Cost: d.Cost, Remaining: d.Remaining,
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
