// Package chartset builds the designer's charts for one design and one
// traffic pattern: the six algorithms side by side (admitted, rejected,
// quota, cumulative against the ideal line), the token bucket on the
// design's replicas, and a retry storm without jitter and with each jitter
// mode. The designer page, the /embed/ routes and the docs command all
// call Build, so a chart in documentation is the chart the designer shows.
//
// Build compares the calculator's six proposals on the traffic; Policy
// charts the policy's own limits, every class of clients through the
// whole policy (package engine), which is what documentation shows.
package chartset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/views"
)

// MaxArrivals bounds the requests a chart set simulates, so a design URL
// cannot make the server work for long: each of the six lanes (and the
// replica lanes) decides every arrival once, and a pattern whose clients
// retry counts each possible retry too.
const MaxArrivals = 200_000

// Retry-storm chart: without a retry_storm pattern, the storm has twice the
// burst of clients (so that some are rejected), within these bounds.
const (
	minStormClients = 100
	// maxStormBins bounds the storm's bins when they are half the first
	// retry wait.
	maxStormBins    = 240
	maxStormClients = 10_000
)

// Info describes the traffic the charts show and, for a policy's charts,
// what the policy did with it.
type Info struct {
	// Arrivals is how many requests the pattern generates (retries not
	// counted); Focus is the key the quota chart follows.
	Arrivals int
	Focus    string
	// Outcomes is, for Policy, what each class of clients' run (the whole
	// pattern sent as that class) came to, in Classes' order: every
	// class, charted or not.
	Outcomes []Outcome
	// Load is, for Policy, the backend's load when every client sends the
	// pattern at once; nil when there is no load chart.
	Load *Load
}

// Outcome is what a policy did with one class of clients' requests.
type Outcome struct {
	Class                       Class
	Offered, Admitted, Rejected int64
	// FirstRejection is when the first request was rejected, or -1.
	FirstRejection time.Duration
	// Delayed counts the admitted requests that waited in a leaky
	// bucket's queue; MaxDelay is the longest wait.
	Delayed  int64
	MaxDelay time.Duration
}

// Load is the backend's load through a whole policy against the service's
// capacity and the part of it the limits are sized for (Usable), all in
// requests per second. Peak is the busiest second's: the most requests
// admitted within a second, over the second up to the end of each of the
// charts' bins (within one bin where bins are a second or longer).
type Load struct {
	Peak, Capacity, Usable float64
	// Over is how long the load was above Usable: the bins whose second
	// was above it, times the bin's width.
	Over time.Duration
}

// PatternError is a pattern the charts cannot show, with the pattern
// parameter at fault ("pattern", "pattern.clients", or "" for the pattern
// as a whole) and a message that names the value and the way out.
type PatternError struct {
	Param   string
	Message string
	// Arrivals is how many requests the pattern generated, 0 if unknown.
	Arrivals int
	// Err is the pattern's own error, if any (an *algorithms.ParamError).
	Err error
}

func (e *PatternError) Error() string { return e.Message }
func (e *PatternError) Unwrap() error { return e.Err }

// Build simulates res's algorithms on pattern p and builds every chart, in
// the designer's order (views.AlgorithmChartSlugs). A pattern that generates no
// requests or more than MaxArrivals, or that its Generate refuses, is a
// *PatternError.
func Build(res calc.Result, p algorithms.Pattern) ([]views.Chart, Info, error) {
	traffic, err := generate(p)
	if err != nil {
		return nil, Info{}, err
	}
	if traffic.Retry != nil {
		// The pattern's clients retry as the design's do (its jitter
		// mode too), with the pattern's jitter fraction.
		r := stormRetry(res, p.Seed)
		r.Jitter = traffic.Retry.Jitter
		traffic.Retry = &r
	}
	arrivals := traffic.Arrivals
	if r := traffic.Retry; r != nil && len(arrivals)*(1+r.Attempts) > MaxArrivals {
		return nil, Info{Arrivals: len(arrivals)}, &PatternError{Param: "pattern.clients", Arrivals: len(arrivals),
			Message: fmt.Sprintf("pattern.clients: %d clients retrying up to %d times offer up to %d requests; the designer simulates at most %d, so want at most %d clients",
				len(arrivals), r.Attempts, len(arrivals)*(1+r.Attempts), MaxArrivals, MaxArrivals/(1+r.Attempts))}
	}
	if len(arrivals) == 0 {
		return nil, Info{}, errNoRequests
	}
	info := Info{Arrivals: len(arrivals), Focus: arrivals[0].Key}

	// The six algorithms on the same arrivals, followed a little past the
	// last arrival so refills show.
	last := arrivals[len(arrivals)-1].At
	until := followUntil(last)
	lanes := make([]algorithms.Lane, len(res.Algorithms))
	for i, a := range res.Algorithms {
		lanes[i] = algorithms.Lane{Spec: a.Spec()}
	}
	sim, err := algorithms.Simulate(algorithms.Simulation{Lanes: lanes, Traffic: traffic, Until: until})
	if err != nil {
		return nil, info, fmt.Errorf("simulation: %w", err)
	}
	tb := res.Spec(algorithms.NameTokenBucket)
	charts := views.PatternCharts(sim, info.Focus, views.IdealLine{Rate: tb.Rate, Burst: float64(tb.Burst), Keys: distinctKeys(arrivals)})

	// The token bucket enforced in one shared store, and locally.
	replicas, err := replicaChart(res, tb, algorithms.Traffic{Arrivals: arrivals, Retry: traffic.Retry}, until)
	if err != nil {
		return nil, info, err
	}
	charts = append(charts, replicas)

	// A retry storm against the token bucket, without jitter and with
	// each jitter mode.
	storm, err := retryStormChart(res, tb, p)
	if err != nil {
		return nil, info, err
	}
	return append(charts, storm), info, nil
}

// distinctKeys counts the clients in arrivals.
func distinctKeys(arrivals []algorithms.Arrival) int {
	seen := map[string]struct{}{}
	for _, a := range arrivals {
		seen[a.Key] = struct{}{}
	}
	return len(seen)
}

// Replica lane names, as the chart's series name them.
func replicaNames(res calc.Result) []string {
	R := res.Input.Replicas
	names := []string{"shared", fmt.Sprintf("local ×%d, full limit each", R)}
	if res.PerReplica != nil {
		names = append(names, fmt.Sprintf("local ×%d, per-replica split", R))
	}
	return names
}

// replicaLanes are the token bucket shared, on the design's replicas with
// round-robin balancing each enforcing the full limit, and, with local
// enforcement, each enforcing the per-replica split.
func replicaLanes(res calc.Result, tb algorithms.Spec) []algorithms.Lane {
	R := res.Input.Replicas
	local := algorithms.Replicas{Count: R, Balance: algorithms.RoundRobin}
	lanes := []algorithms.Lane{{Spec: tb}, {Spec: tb, Replicas: local}}
	if res.PerReplica != nil {
		lanes = append(lanes, algorithms.Lane{Spec: res.PerReplica.Spec(algorithms.NameTokenBucket), Replicas: local})
	}
	return lanes
}

func replicaChart(res calc.Result, tb algorithms.Spec, traffic algorithms.Traffic, until time.Duration) (views.Chart, error) {
	sim, err := algorithms.Simulate(algorithms.Simulation{Lanes: replicaLanes(res, tb), Traffic: traffic, Until: until})
	if err != nil {
		return views.Chart{}, fmt.Errorf("replica simulation: %w", err)
	}
	R := res.Input.Replicas
	caption := fmt.Sprintf("Requests admitted so far by %s on the same arrivals, enforced in one shared store (such as Redis) and locally on %d replicas behind a round-robin balancer, each replica with the full limit: together they admit up to %d times as much.",
		views.SpecLabel(tb), R, R)
	if R == 1 {
		caption = fmt.Sprintf("Requests admitted so far by %s on the same arrivals. With one replica, local and shared enforcement are the same; set replicas above 1 to see local limits multiply.", views.SpecLabel(tb))
	}
	if res.PerReplica != nil {
		caption += fmt.Sprintf(" The per-replica split enforces rate/%d and ⌈burst/%d⌉ on each replica instead.", R, R)
	}
	return views.ReplicaChart(sim, replicaNames(res), caption), nil
}

// stormPattern is the retry storm of the charts: the design's retry_storm
// pattern when it is the chosen one, otherwise one with twice the burst of
// clients (fewer when the design's attempts would offer more than
// MaxArrivals) and the chosen seed.
func stormPattern(tb algorithms.Spec, chosen algorithms.Pattern, retry algorithms.RetryPolicy) algorithms.Pattern {
	if chosen.Name == algorithms.PatternRetryStorm {
		return chosen
	}
	p := algorithms.DefaultPattern(algorithms.PatternRetryStorm)
	p.Seed = chosen.Seed
	p.Clients = int(min(max(2*tb.Burst, minStormClients), maxStormClients, int64(MaxArrivals/(1+retry.Attempts))))
	return p
}

// stormRetry is how the storm's clients retry: as the design says
// (res.Input.Retry, with calc's defaults: attempts, base, factor, cap,
// jitter and jitter mode), but ignoring Retry-After, as naive clients do.
func stormRetry(res calc.Result, seed uint64) algorithms.RetryPolicy {
	r := res.Input.Retry.Policy(seed)
	r.HonorRetryAfter = false
	return r
}

// stormJitter is the proportional jitter fraction of the design's lane:
// the chosen retry_storm pattern's jitter when it has one, else the
// design's; when the design's is 0 (no jitter) its clients are the lane
// without jitter, and the calculator's default is the comparison
// (compared is true). It is read only in the proportional mode.
func stormJitter(chosen algorithms.Pattern, retry algorithms.RetryPolicy) (jitter float64, compared bool) {
	switch {
	case chosen.Name == algorithms.PatternRetryStorm && chosen.Jitter > 0:
		return chosen.Jitter, false
	case retry.Jitter > 0:
		return retry.Jitter, false
	}
	return calc.DefaultRetryJitter, true
}

// stormLane is one way the storm's clients retry, and its run: name labels
// the lane, say names it in the caption's sentences, and retry is the
// design's retry policy with the lane's jitter mode and fraction.
type stormLane struct {
	name, say string
	retry     algorithms.RetryPolicy
	run       algorithms.Result
}

// stormLanes are the chart's lanes, in order: the clients in lockstep (no
// jitter); the design's own jitter (its mode; in the proportional mode
// its fraction, or, when that is 0 and the design's clients are the lane
// without jitter, the calculator's default for comparison, compared
// true); then full, equal and decorrelated jitter, leaving out the one
// that is the design's own mode.
func stormLanes(chosen algorithms.Pattern, retry algorithms.RetryPolicy) (lanes []stormLane, compared bool) {
	with := func(mode algorithms.JitterMode, jitter float64) algorithms.RetryPolicy {
		r := retry
		r.JitterMode, r.Jitter = mode, jitter
		return r
	}
	mode := retry.JitterMode
	if mode == "" {
		mode = algorithms.JitterProportional
	}
	still := stormLane{name: views.StormNoJitter, say: "no jitter (lockstep)", retry: with(algorithms.JitterProportional, 0)}
	var own stormLane
	if mode == algorithms.JitterProportional {
		var jitter float64
		jitter, compared = stormJitter(chosen, retry)
		pct := views.Num(100*jitter) + " %"
		own = stormLane{name: "design's: proportional " + pct, say: "the design's " + pct + " proportional jitter", retry: with(mode, jitter)}
		if compared {
			still.name, still.say = views.StormNoJitter+": the design's", "the design's clients, in lockstep"
			own.name, own.say = "calculator default: proportional "+pct, "the calculator's default of "+pct+" proportional jitter"
		}
	} else {
		own = stormLane{name: "design's: " + string(mode) + " jitter", say: "the design's " + string(mode) + " jitter", retry: with(mode, retry.Jitter)}
	}
	lanes = []stormLane{still, own}
	for _, f := range []struct {
		mode algorithms.JitterMode
		name string
	}{{algorithms.JitterFull, views.StormFull}, {algorithms.JitterEqual, views.StormEqual}, {algorithms.JitterDecorrelated, views.StormDecorrelated}} {
		if f.mode != mode {
			lanes = append(lanes, stormLane{name: f.name, say: f.name, retry: with(f.mode, retry.Jitter)})
		}
	}
	return lanes, compared
}

// retryStormChart charts the storm's runs, one lane each.
func retryStormChart(res calc.Result, tb algorithms.Spec, chosen algorithms.Pattern) (views.Chart, error) {
	lanes, caption, err := stormRuns(res, tb, chosen)
	if err != nil {
		return views.Chart{}, err
	}
	names := make([]string, len(lanes))
	jittered := algorithms.Result{Bin: lanes[0].run.Bin}
	for i, l := range lanes {
		names[i] = l.name
		if i > 0 {
			jittered.Lanes = append(jittered.Lanes, l.run.Lanes[0])
		}
	}
	return views.RetryStormChart(lanes[0].run, jittered, caption, names...), nil
}

// stormRuns runs the storm against the token bucket once per lane of
// stormLanes, every run on the same arrivals (generated once) and the
// same bins, retrying as the design's retry policy says with the lane's
// jitter, and captions them: the policy, and which lane gets the most
// clients through early and which is rejected least.
func stormRuns(res calc.Result, tb algorithms.Spec, chosen algorithms.Pattern) (lanes []stormLane, caption string, err error) {
	retry := stormRetry(res, chosen.Seed)
	p := stormPattern(tb, chosen, retry)
	retry.Seed = p.Seed
	lanes, compared := stormLanes(chosen, retry)
	t, err := p.Generate(MaxArrivals)
	if err != nil {
		return nil, "", fmt.Errorf("retry storm: %w", err)
	}
	run := func(l *stormLane, bin time.Duration) error {
		r := l.retry
		sim, err := algorithms.Simulate(algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: tb}},
			Traffic: algorithms.Traffic{Arrivals: t.Arrivals, Retry: &r}, Bin: bin})
		if err != nil {
			return fmt.Errorf("retry storm: %w", err)
		}
		l.run = sim
		return nil
	}
	// The run that reaches furthest picks the bin width for all of them.
	longest := 0
	for i, l := range lanes {
		if l.retry.Reach() > lanes[longest].retry.Reach() {
			longest = i
		}
	}
	// Bins of half the first wait keep lockstep retries apart (they come
	// in waves base, base·factor, … after the burst), unless that makes
	// the run too many bins to draw; then the run picks its own.
	bin := time.Duration(0)
	if half := retry.Base / 2; half >= 10*time.Millisecond && len(t.Arrivals) > 0 {
		span := t.Arrivals[len(t.Arrivals)-1].At + lanes[longest].retry.Reach()
		if span/half <= maxStormBins {
			bin = half
		}
	}
	if err := run(&lanes[longest], bin); err != nil {
		return nil, "", err
	}
	for i := range lanes {
		if i != longest {
			if err := run(&lanes[i], lanes[longest].run.Bin); err != nil {
				return nil, "", err
			}
		}
	}

	own := "no jitter"
	switch d := lanes[1].retry; {
	case compared:
	case d.JitterMode == algorithms.JitterProportional:
		own = views.Num(100*d.Jitter) + " % proportional jitter"
	default:
		own = string(d.JitterMode) + " jitter"
	}
	caption = fmt.Sprintf("%d clients send at once against %s on one key (%q); the rejected retry as the design's retry policy says: after %s, then ×%s each time, waiting at most %s, up to %d attempts, with %s, ignoring Retry-After as naive clients do. Each lane draws the waits d its own way: without jitter the clients retry in lockstep and are rejected together again; %s.",
		p.Clients, views.SpecLabel(tb), algorithms.RetryStormKey, views.Duration(retry.Base), views.Num(retry.Factor), views.Duration(retry.Cap),
		retry.Attempts, own, stormModes(lanes))
	caption += " " + stormVerdict(lanes, tb, t.Arrivals)
	if compared {
		caption += fmt.Sprintf(" The design's clients add no jitter (retry.jitter 0): theirs is the lane without jitter, and the proportional lane uses the calculator's default of %s %% for comparison.", views.Num(100*calc.DefaultRetryJitter))
	}
	return lanes, caption, nil
}

// stormModes says how each jitter mode of the lanes draws a wait d, in
// lane order: "proportional jitter waits in [d, d·(1 + jitter)), full
// jitter in [0, d)".
func stormModes(lanes []stormLane) string {
	ranges := map[algorithms.JitterMode]string{
		algorithms.JitterProportional: "[d, d·(1 + jitter))",
		algorithms.JitterFull:         "[0, d)",
		algorithms.JitterEqual:        "[d/2, d)",
		algorithms.JitterDecorrelated: "[base, 3 × the previous wait), capped",
	}
	var parts []string
	for _, l := range lanes[1:] {
		m := l.retry.JitterMode
		r, ok := ranges[m]
		if !ok {
			continue
		}
		delete(ranges, m) // each mode once
		if len(parts) == 0 {
			parts = append(parts, fmt.Sprintf("%s jitter waits in %s", m, r))
		} else {
			parts = append(parts, fmt.Sprintf("%s jitter in %s", m, r))
		}
	}
	if len(parts) > 1 {
		parts[len(parts)-1] = "and " + parts[len(parts)-1]
	}
	return strings.Join(parts, ", ")
}

// stormVerdict says which lanes get the most of the storm's clients
// through in the first seconds, the time an ideal limiter of tb's rate and
// burst needs to admit them all (its burst at the first arrival, then one
// request per cost/rate seconds), rounded up to whole bins; and which are
// rejected least over the whole run. Every lane's run has the same bins.
func stormVerdict(lanes []stormLane, tb algorithms.Spec, arrivals []algorithms.Arrival) string {
	if len(arrivals) == 0 {
		return ""
	}
	clients := len(arrivals)
	cost := max(arrivals[0].Cost, 1)
	atOnce := min(int64(clients), tb.Burst/cost)
	if atOnce >= int64(clients) {
		return fmt.Sprintf("The burst admits all %d clients at once, so nobody retries and every lane is the same.", clients)
	}
	bin := lanes[0].run.Bin
	ideal := arrivals[0].At + time.Duration(math.Ceil(float64(int64(clients)-atOnce)*float64(cost)/tb.Rate*1e9))
	bins := int((ideal + bin - 1) / bin)
	through := make([]int64, len(lanes))
	rejected := make([]int64, len(lanes))
	for i, l := range lanes {
		lr := l.run.Lanes[0]
		for _, b := range lr.Series[:min(bins, len(lr.Series))] {
			through[i] += b.Admitted
		}
		rejected[i] = lr.Summary.Rejected
	}
	// best names the lanes whose value in v is the best, with the verb
	// for one lane (singular) or for several (plural).
	best := func(v []int64, better func(a, b int64) bool, singular, plural string) (names string, value int64) {
		value = v[0]
		for _, x := range v[1:] {
			if better(x, value) {
				value = x
			}
		}
		var says []string
		for i, x := range v {
			if x == value {
				says = append(says, lanes[i].say)
			}
		}
		switch {
		case len(says) == len(lanes):
			return "every lane " + singular, value
		case len(says) == 1:
			return says[0] + " " + singular, value
		}
		return strings.Join(says, " and ") + " " + plural, value
	}
	most, n := best(through, func(a, b int64) bool { return a > b }, "gets", "get")
	least, r := best(rejected, func(a, b int64) bool { return a < b }, "is", "are")
	return fmt.Sprintf("In the first %s, time enough for the limit to admit every client, %s the most through (%d of %d); over the whole storm, %s rejected least (%d rejections).",
		views.Duration(time.Duration(bins)*bin), most, n, clients, least, r)
}

// Caption is the one-line caption of a design's charts in documentation:
// the per-client limit they compare against and the traffic pattern.
func Caption(res calc.Result, pattern algorithms.PatternName, info Info) string {
	return fmt.Sprintf("per-client limit %s · pattern %s, %d requests", views.SpecLabel(res.Spec(algorithms.NameTokenBucket)), pattern, info.Arrivals)
}

// Policy simulates the policy's own limits on pattern pat, through package
// engine: one run for each class of clients (the clients of the default
// limit, and each tier's), every run sending all of the pattern's arrivals,
// with their keys, as that class. The requests name no endpoint, so each
// costs 1; the pattern's retries are not replayed. Past MaxChartClasses
// classes the charts show the first and those with the most rejections
// (chartClasses), and say so. A pattern the charts cannot show is a
// *PatternError, as in Build.
func Policy(p policy.Policy, pat algorithms.Pattern) ([]views.Chart, Info, error) {
	traffic, err := generate(pat)
	if err != nil {
		return nil, Info{}, err
	}
	arrivals := traffic.Arrivals
	if len(arrivals) == 0 {
		return nil, Info{}, errNoRequests
	}
	classes := Classes(p)
	if n := len(classes) * len(arrivals); n > MaxPolicyDecisions {
		return nil, Info{Arrivals: len(arrivals)}, &PatternError{Param: "pattern", Arrivals: len(arrivals),
			Message: fmt.Sprintf("pattern: %d requests for each of the policy's %d classes of clients and endpoints are %d decisions; the designer makes at most %d, so want at most %d requests",
				len(arrivals), len(classes), n, MaxPolicyDecisions, MaxPolicyDecisions/len(classes))}
	}
	info := Info{Arrivals: len(arrivals), Focus: arrivals[0].Key}
	last := arrivals[len(arrivals)-1].At
	until := followUntil(last)
	// The timeline shows each charted class's first requests, decided by
	// the class's own run when it is short enough to keep every decision,
	// else by a run of just those requests (decisions depend only on the
	// requests before them, so they are the same).
	charted := min(len(classes), MaxChartClasses)
	shown := min(len(arrivals), MaxTimelinePoints/charted)
	keep := shown == len(arrivals)
	at := make([]time.Duration, shown)
	for j := range at {
		at[j] = arrivals[j].At
	}
	// One engine for every run: each starts from its fresh state.
	e, err := engine.New(p)
	if err != nil {
		return nil, info, fmt.Errorf("policy simulation: %w", err)
	}
	reqs := make([]engine.Request, len(arrivals))
	// requests are the first n arrivals as class c's.
	requests := func(c Class, n int) []engine.Request {
		for j, a := range arrivals[:n] {
			reqs[j] = engine.Request{At: a.At, Key: a.Key, Tier: c.Tier, Method: c.Method, Path: c.Path}
		}
		return reqs[:n]
	}
	runs := make([]engine.Result, len(classes))
	info.Outcomes = make([]Outcome, len(classes))
	for i, c := range classes {
		if runs[i], err = e.Simulate(context.Background(), engine.Simulation{Requests: requests(c, len(arrivals)), Until: until, Focus: info.Focus, Decisions: keep}); err != nil {
			return nil, info, fmt.Errorf("policy simulation: %w", err)
		}
		sum := runs[i].Summary
		info.Outcomes[i] = Outcome{Class: c, Offered: sum.Offered, Admitted: sum.Admitted, Rejected: sum.Rejected,
			FirstRejection: sum.FirstRejection, Delayed: sum.Delayed, MaxDelay: sum.MaxDelay}
	}
	chosen := chartClasses(runs)
	lanes := make([]views.PolicyLane, len(chosen))
	timeline := make([]views.TimelineClass, len(chosen))
	for k, i := range chosen {
		run := runs[i]
		decisions := run.Decisions
		if !keep {
			first, err := e.Simulate(context.Background(), engine.Simulation{Requests: requests(classes[i], shown), Decisions: true})
			if err != nil {
				return nil, info, fmt.Errorf("policy simulation: %w", err)
			}
			decisions = first.Decisions
		}
		run.Decisions = nil
		lanes[k] = views.PolicyLane{Name: classes[i].Name, Run: run}
		names := make([]string, len(run.Limits))
		for j, l := range run.Limits {
			names[j] = l.Name + " limit"
		}
		timeline[k] = views.TimelineClass{Name: classes[i].Name, At: at, Decisions: decisions, Limits: names}
	}
	caption := fmt.Sprintf("pattern %s, %d requests", pat.Name, len(arrivals))
	if g := p.Global.Limit; g.Algorithm != "" {
		caption += ", global limit " + views.SpecLabel(g)
	}
	if len(chosen) < len(classes) {
		caption += fmt.Sprintf("; %d of the policy's %d classes of clients: the first and the %d others with the most rejections", len(chosen), len(classes), len(chosen)-1)
	}
	charts := []views.Chart{views.PolicyTimeline(timeline, shown, len(arrivals))}
	load, err := loadChart(p, arrivals, until, lanes[0].Run.Bin)
	if err != nil {
		return nil, info, err
	}
	if load != nil {
		charts = append(charts, load.chart)
		info.Load = &load.Load
	}
	return append(charts, views.PolicyCharts(lanes, caption)...), info, nil
}

// MaxChartClasses is how many classes of clients the policy's charts
// show: a policy of 16 tiers and 100 endpoint limits has 117, whose lines
// and legend no chart can show apart.
const MaxChartClasses = 8

// chartClasses picks the classes the charts show, by index into runs
// (each class's run), in order: all of them up to MaxChartClasses, else
// the first (the default's clients, or the first tier's) and the others
// that the policy rejected most (the earlier of equals).
func chartClasses(runs []engine.Result) []int {
	all := make([]int, len(runs))
	for i := range all {
		all[i] = i
	}
	if len(runs) <= MaxChartClasses {
		return all
	}
	rest := all[1:]
	slices.SortStableFunc(rest, func(a, b int) int { return cmp.Compare(runs[b].Summary.Rejected, runs[a].Summary.Rejected) })
	chosen := append([]int{0}, rest[:MaxChartClasses-1]...)
	slices.Sort(chosen)
	return chosen
}

// MaxTimelinePoints bounds the requests the timeline draws, over all
// classes.
const MaxTimelinePoints = 3000

// MaxLoadDecisions bounds the decisions of the load chart's run: above it
// the run simulates a sample of the clients against a global limit scaled
// to the sample.
const MaxLoadDecisions = 8_000

// clientsOf is how many clients of a class (its tier, "" for the default
// limit) send at once.
type clientsOf struct {
	tier string
	n    int
}

// population is the design's clients by class: each tier's, or, without
// tiers, the sizing's client count for the default limit; nil when the
// policy counts no clients.
func population(p policy.Policy) []clientsOf {
	var out []clientsOf
	for _, t := range p.Tiers {
		if t.Clients > 0 {
			out = append(out, clientsOf{t.Name, t.Clients})
		}
	}
	if len(out) == 0 && len(p.Tiers) == 0 && p.Sizing.Clients > 0 {
		out = append(out, clientsOf{"", p.Sizing.Clients})
	}
	return out
}

// loadChart runs every client of the design sending the pattern at once
// (each client's own copy of its arrivals, under keys of its own), through
// the whole policy, and charts the load the backend sees against the
// service's capacity. More clients than MaxLoadDecisions allows are
// sampled: each class keeps at least one client and about the same share
// of its clients, every simulated client stands for total/sampled of
// them, and the global limit is scaled by sampled/total (rates and sizes
// alike, at least 1), so that the sample meets the global limit as all
// the clients would. It returns the chart with its peak and the time above
// the usable capacity. A policy that counts no clients has no load chart.
func loadChart(p policy.Policy, arrivals []algorithms.Arrival, until, bin time.Duration) (*loadRun, error) {
	pop := population(p)
	if len(pop) == 0 {
		return nil, nil
	}
	total := 0
	for _, c := range pop {
		total += c.n
	}
	share := min(1, float64(MaxLoadDecisions)/(float64(total)*float64(len(arrivals))))
	sampled := 0
	for i, c := range pop {
		pop[i].n = max(1, int(math.Round(float64(c.n)*share)))
		sampled += pop[i].n
	}
	for sampled*len(arrivals) > MaxLoadDecisions && len(arrivals) > 0 {
		// Rounding up small classes overshot: take from the largest.
		k := 0
		for i := range pop {
			if pop[i].n > pop[k].n {
				k = i
			}
		}
		if pop[k].n == 1 {
			break
		}
		pop[k].n--
		sampled--
	}
	if sampled*len(arrivals) > MaxLoadDecisions {
		return nil, nil // more classes than the budget has room for one client each
	}
	q := p
	scale := float64(total) / float64(sampled)
	if sampled < total {
		q.Global.Limit = scaleSpec(p.Global.Limit, float64(sampled)/float64(total))
	}
	// Each client's keys are made once: the pattern's few keys, prefixed.
	var patternKeys []string
	index := map[string]int{}
	keyOf := make([]int, len(arrivals))
	for j, a := range arrivals {
		k, ok := index[a.Key]
		if !ok {
			k = len(patternKeys)
			index[a.Key] = k
			patternKeys = append(patternKeys, a.Key)
		}
		keyOf[j] = k
	}
	type client struct {
		tier string
		keys []string
	}
	clients := make([]client, 0, sampled)
	for _, c := range pop {
		for k := range c.n {
			prefix := "load-" + c.tier + "-" + strconv.Itoa(k) + "-"
			keys := make([]string, len(patternKeys))
			for i, pk := range patternKeys {
				keys[i] = prefix + pk
			}
			clients = append(clients, client{c.tier, keys})
		}
	}
	// Arrival by arrival, every client at once: the requests come in
	// time order (the pattern's arrivals are), so the engine need not
	// sort them.
	reqs := make([]engine.Request, 0, sampled*len(arrivals))
	for j, a := range arrivals {
		for _, c := range clients {
			reqs = append(reqs, engine.Request{At: a.At, Key: c.keys[keyOf[j]], Tier: c.tier})
		}
	}
	run, err := engine.Simulate(q, engine.Simulation{Requests: reqs, Until: until, Bin: bin})
	if err != nil {
		return nil, fmt.Errorf("load simulation: %w", err)
	}
	headroom := calc.DefaultHeadroom
	if h := p.Service.Headroom; h != nil {
		headroom = *h
	}
	capacity := p.Service.Capacity
	usable := capacity * (1 - headroom)
	caption := fmt.Sprintf("Requests per second the backend receives when all %d clients send this traffic at once, each with its own keys, through the whole policy, against the capacity of %s/s and the usable %s/s (headroom %s %%).",
		total, views.Num(capacity), views.Num(usable), views.Num(100*headroom))
	if sampled < total {
		caption += fmt.Sprintf(" Simulated with %d clients, each standing for %s, and the global limit scaled to them.", sampled, views.Num(scale))
	}
	out := &loadRun{chart: views.PolicyLoad(run, scale, capacity, usable, caption), Load: Load{Capacity: capacity, Usable: usable}}
	// Capacity is a rate per second, so the load weighed against it is
	// the second's up to each bin (k bins summed; a bin's own where bins
	// are a second or longer): a burst the global limit admits at once is
	// not a second of it.
	k := max(1, int(time.Second/run.Bin))
	per := scale / (float64(k) * run.Bin.Seconds()) // requests admitted in k bins, per second, for every client
	var sum int64
	for i, b := range run.Series {
		if sum += b.Admitted; i >= k {
			sum -= run.Series[i-k].Admitted
		}
		l := float64(sum) * per
		out.Peak = max(out.Peak, l)
		if l > usable {
			out.Over += run.Bin
		}
	}
	return out, nil
}

// loadRun is the load chart and the numbers it shows.
type loadRun struct {
	chart views.Chart
	Load
}

// scaleSpec is s with its rate and sizes multiplied by f (sizes rounded,
// at least 1); a zero spec stays zero.
func scaleSpec(s algorithms.Spec, f float64) algorithms.Spec {
	if s.Algorithm == "" {
		return s
	}
	size := func(v int64) int64 {
		if v == 0 {
			return 0
		}
		return max(1, int64(math.Round(float64(v)*f)))
	}
	s.Rate *= f
	s.Burst, s.Queue, s.Limit = size(s.Burst), size(s.Queue), size(s.Limit)
	return s
}

// MaxPolicyDecisions bounds the decisions of one set of policy charts:
// the pattern's requests times the classes that send them.
const MaxPolicyDecisions = 8 * MaxArrivals

// Class is one class of requests the policy charts follow: the tier the
// requests name ("" for the default limit), the method and path they ask
// for ("" for none of the endpoints), and its name in the legend, with its
// limit ("tier paid: gcra(rate=20/s, burst=200)"). Who names the class
// without its limit ("default", "tier paid", "endpoint GET /v1/items/{id}"),
// the same in any policy that has it, so two policies' classes pair up.
type Class struct {
	Tier, Method, Path, Name, Who string
}

// Classes are the policy's classes of requests, in policy order: the
// default limit's clients when it has one (or when there are no tiers),
// every tier, then every endpoint with its own limit, asked for by the
// default limit's clients (or the first tier's) on a path its template
// matches ({name} as "1").
func Classes(p policy.Policy) []Class {
	var out []Class
	if p.Defaults.Limit.Algorithm != "" || len(p.Tiers) == 0 {
		name := "default: no per-client limit"
		if p.Defaults.Limit.Algorithm != "" {
			name = "default: " + views.SpecLabel(p.Defaults.Limit)
		}
		out = append(out, Class{Name: name, Who: "default"})
	}
	for _, t := range p.Tiers {
		name := "tier " + t.Name + ": "
		switch {
		case t.Limit.Algorithm != "":
			name += views.SpecLabel(t.Limit)
		case p.Defaults.Limit.Algorithm != "":
			name += views.SpecLabel(p.Defaults.Limit) + " (the default)"
		default:
			name += "no per-client limit"
		}
		out = append(out, Class{Tier: t.Name, Name: name, Who: "tier " + t.Name})
	}
	asker := ""
	if p.Defaults.Limit.Algorithm == "" && len(p.Tiers) > 0 {
		asker = p.Tiers[0].Name
	}
	for _, e := range p.Endpoints {
		if e.Limit.Algorithm == "" {
			continue
		}
		out = append(out, Class{Tier: asker, Method: e.Match.Method, Path: concretePath(e.Match.Path),
			Name: "endpoint " + e.Match.Method + " " + e.Match.Path + ": " + views.SpecLabel(e.Limit), Who: "endpoint " + strings.TrimSpace(strings.ToUpper(e.Match.Method)+" "+e.Match.Path)})
	}
	return out
}

// concretePath is a path its template matches: each {name} segment "1".
func concretePath(template string) string {
	segs := strings.Split(template, "/")
	for i, s := range segs {
		if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
			segs[i] = "1"
		}
	}
	return strings.Join(segs, "/")
}

// PolicyCaption is the one-line caption of a policy's charts in
// documentation: the policy's name, its per-client limits (the first
// three classes, then how many more) and global limit, and the traffic
// pattern.
func PolicyCaption(p policy.Policy, pattern algorithms.PatternName, info Info) string {
	var parts []string
	classes := Classes(p)
	for i, c := range classes {
		if i == maxCaptionClasses {
			parts = append(parts, fmt.Sprintf("%d more tiers", len(classes)-i))
			break
		}
		parts = append(parts, c.Name)
	}
	if g := p.Global.Limit; g.Algorithm != "" {
		parts = append(parts, "global: "+views.SpecLabel(g))
	}
	return fmt.Sprintf("policy %s · %s · pattern %s, %d requests", p.Metadata.Name, strings.Join(parts, "; "), pattern, info.Arrivals)
}

// maxCaptionClasses is how many classes of clients a caption names.
const maxCaptionClasses = 3

// generate is pat's traffic within MaxArrivals, or the *PatternError that
// says why the charts cannot show it.
func generate(pat algorithms.Pattern) (algorithms.Traffic, error) {
	traffic, err := pat.Generate(MaxArrivals)
	if tm := (*algorithms.TooManyArrivalsError)(nil); errors.As(err, &tm) {
		return algorithms.Traffic{}, &PatternError{Param: "pattern", Err: err,
			Message: fmt.Sprintf("pattern: %s generates more than %d requests, the most the designer simulates; shorten pattern.duration or lower pattern.rate, pattern.count or pattern.clients", pat.Name, MaxArrivals)}
	}
	if err != nil {
		return algorithms.Traffic{}, &PatternError{Err: err, Message: err.Error()}
	}
	return traffic, nil
}

// errNoRequests is a pattern that generates nothing to chart.
var errNoRequests = &PatternError{Message: "The pattern generates no requests: raise pattern.rate or pattern.duration."}

// followUntil is how far the charts follow a run whose last arrival is at
// last: a little past it, so refills show.
func followUntil(last time.Duration) time.Duration {
	return min(last+max(2*time.Second, last/4), algorithms.MaxWindow)
}
