package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// defaultMaxArrivals caps one simulate request unless -max-arrivals says
// otherwise.
const defaultMaxArrivals = 1_000_000

// simulateBodyLimit bounds a simulate request body: a million arrivals of
// about 45 bytes each, with room to spare.
const simulateBodyLimit = 64 << 20

// simulateRequest is the body of POST /api/v1/simulate: one limiter and
// either explicit arrivals or a pattern that generates them. Times and
// durations are seconds.
type simulateRequest struct {
	Limiter  *calc.Limit     `json:"limiter"`
	Arrivals []arrivalJSON   `json:"arrivals"`
	Pattern  json.RawMessage `json:"pattern"` // a patternJSON; omitted fields take the pattern's defaults
	Replicas *replicasJSON   `json:"replicas"`
	Window   *float64        `json:"window"` // span of summary.max_in_window; default the limiter's window, else 60
	Bin      *float64        `json:"bin"`    // width of a series bin; default about 1/100 of the run
	Seed     *uint64         `json:"seed"`   // overrides the pattern's seed
}

type arrivalJSON struct {
	At   *float64 `json:"at"`
	Key  string   `json:"key"`
	Cost *int64   `json:"cost"`
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

type simulateResponse struct {
	Limiter   calc.Limit     `json:"limiter"`
	Arrivals  []arrivalOut   `json:"arrivals,omitempty"` // the generated arrivals, when a pattern was given
	Decisions []decisionJSON `json:"decisions"`
	Summary   summaryJSON    `json:"summary"`
	Bin       float64        `json:"bin"`
	Series    []binJSON      `json:"series"`
}

type arrivalOut struct {
	At   float64 `json:"at"`
	Key  string  `json:"key"`
	Cost int64   `json:"cost"`
}

// toSeconds converts a duration to float64 seconds for JSON.
func toSeconds(d time.Duration) float64 { return d.Seconds() }

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

// handleSimulate answers POST /api/v1/simulate: the limiter's decision on
// every arrival, in input order, with the run's summary and time series.
func handleSimulate(maxArrivals int) echo.HandlerFunc {
	if maxArrivals <= 0 {
		maxArrivals = defaultMaxArrivals
	}
	return func(c echo.Context) error {
		var req simulateRequest
		if err := decodeJSON(c, simulateBodyLimit, &req); err != nil {
			return err
		}
		sim, spec, generated, err := req.simulation(maxArrivals)
		if err != nil {
			return err
		}
		res, err := algorithms.Simulate(sim)
		if err != nil {
			return &invalidRequest{[]fieldProblem{paramProblem("", err)}}
		}
		return writeJSON(c, http.StatusOK, newSimulateResponse(spec, generated, sim, res))
	}
}

// simulation validates the request and builds the simulation; generated
// reports whether the arrivals came from a pattern.
func (req *simulateRequest) simulation(maxArrivals int) (algorithms.Simulation, algorithms.Spec, bool, error) {
	var sim algorithms.Simulation
	var probs []fieldProblem
	var spec algorithms.Spec
	if req.Limiter == nil {
		probs = append(probs, fieldProblem{Field: "limiter", Message: "limiter: missing; want an object such as {\"algorithm\": \"token_bucket\", \"rate\": 10, \"burst\": 20}"})
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
	generated := false
	switch {
	case req.Pattern != nil && req.Arrivals != nil:
		probs = append(probs, fieldProblem{Field: "pattern", Message: "pattern: send either arrivals or a pattern, not both"})
	case req.Pattern != nil:
		generated = true
		p, prob := decodePattern(req.Pattern)
		if prob != nil {
			probs = append(probs, *prob)
			break
		}
		if req.Seed != nil {
			p.Seed = *req.Seed
		}
		tr, err := p.Generate(maxArrivals)
		var tm *algorithms.TooManyArrivalsError
		switch {
		case errors.As(err, &tm):
			probs = append(probs, fieldProblem{Field: "pattern", Message: fmt.Sprintf("pattern: generates more than the cap of %d arrivals; shorten the duration or lower the rate, count or clients", maxArrivals)})
		case err != nil:
			probs = append(probs, paramProblem("pattern.", err))
		default:
			sim.Traffic = tr
		}
	case len(req.Arrivals) > maxArrivals:
		probs = append(probs, fieldProblem{Field: "arrivals", Message: fmt.Sprintf("arrivals: %d arrivals is more than the cap of %d", len(req.Arrivals), maxArrivals)})
	default:
		as := make([]algorithms.Arrival, len(req.Arrivals))
		for i, a := range req.Arrivals {
			f := fmt.Sprintf("arrivals[%d]", i)
			if a.At == nil {
				probs = append(probs, fieldProblem{Field: f + ".at", Message: f + ".at: missing; want seconds since the start of the run"})
			} else if p := secondsIn(f+".at", *a.At, 0, algorithms.MaxWindow.Seconds()); p != nil {
				probs = append(probs, *p)
			} else {
				as[i].At = fromSeconds(*a.At)
			}
			as[i].Key, as[i].Cost = a.Key, 1
			if a.Cost != nil {
				if *a.Cost < 1 || *a.Cost > algorithms.MaxCount {
					probs = append(probs, fieldProblem{Field: f + ".cost", Message: fmt.Sprintf("%s.cost: %d is out of range; want a whole number in [1, 1000000000]", f, *a.Cost)})
				}
				as[i].Cost = *a.Cost
			}
			if len(a.Key) > algorithms.MaxKey {
				probs = append(probs, fieldProblem{Field: f + ".key", Message: fmt.Sprintf("%s.key: %d bytes is too long; want at most %d", f, len(a.Key), algorithms.MaxKey)})
			}
			if len(probs) >= 20 {
				break // enough to fix; a million bad arrivals need not all be listed
			}
		}
		sim.Traffic = algorithms.Traffic{Arrivals: as}
	}
	if len(probs) > 0 {
		return sim, spec, false, &invalidRequest{probs}
	}
	sim.Decisions = true
	return sim, spec, generated, nil
}

// decodePattern reads a pattern object over the named pattern's defaults,
// so a request names only what it changes.
func decodePattern(raw json.RawMessage) (algorithms.Pattern, *fieldProblem) {
	var named struct {
		Name algorithms.PatternName `json:"name"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return algorithms.Pattern{}, &fieldProblem{Field: "pattern", Message: "pattern: want an object with a name, such as {\"name\": \"steady\"}"}
	}
	if _, ok := algorithms.PatternByName(named.Name); !ok {
		return algorithms.Pattern{}, &fieldProblem{Field: "pattern.name", Message: paramProblem("pattern.", algorithms.Pattern{Name: named.Name}.Validate()).Message}
	}
	d := algorithms.DefaultPattern(named.Name)
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

func newSimulateResponse(spec algorithms.Spec, generated bool, sim algorithms.Simulation, res algorithms.Result) simulateResponse {
	lane := res.Lanes[0]
	out := simulateResponse{Limiter: calc.LimitOf(spec), Bin: toSeconds(res.Bin), Decisions: make([]decisionJSON, len(lane.Decisions))}
	if generated {
		out.Arrivals = make([]arrivalOut, len(sim.Traffic.Arrivals))
		for i, a := range sim.Traffic.Arrivals {
			out.Arrivals[i] = arrivalOut{At: toSeconds(a.At), Key: a.Key, Cost: a.Cost}
		}
	}
	for i, d := range lane.Decisions {
		retry := toSeconds(d.RetryAfter())
		if d.RetryAfter() == algorithms.Never {
			retry = -1
		}
		out.Decisions[i] = decisionJSON{Allowed: d.Allowed, Delay: toSeconds(d.Delay()), Remaining: d.Remaining, RetryAfter: retry, Reset: toSeconds(d.Reset)}
	}
	s := lane.Summary
	window := sim.Window
	if window == 0 {
		window = time.Minute
	}
	out.Summary = summaryJSON{
		Offered: s.Offered, Admitted: s.Admitted, Rejected: s.Rejected, OfferedCost: s.OfferedCost, AdmittedCost: s.AdmittedCost,
		AdmittedShare: s.AdmittedShare, MaxIn1s: s.MaxIn1s, MaxInWindow: s.MaxInWindow, Window: toSeconds(window),
		DelayP50: toSeconds(s.DelayP50), DelayP99: toSeconds(s.DelayP99), DelayMax: toSeconds(s.DelayMax),
		Retries: s.Retries, GaveUp: s.GaveUp,
	}
	if s.FirstRejection >= 0 {
		out.Summary.FirstRejection = new(toSeconds(s.FirstRejection))
	}
	out.Series = make([]binJSON, len(lane.Series))
	for i, b := range lane.Series {
		out.Series[i] = binJSON{Start: toSeconds(b.Start), Offered: b.Offered, Admitted: b.Admitted, Rejected: b.Rejected, Remaining: b.Remaining, Queued: b.Queued}
	}
	return out
}
