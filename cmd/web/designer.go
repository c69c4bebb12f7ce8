package main

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/views"
)

// Paths of the designer. The page is a GET form that submits to itself;
// htmx fetches the results fragment from resultsPath with the same query.
const (
	designerPath = "/"
	resultsPath  = "/designer/results"
)

// handleDesigner answers GET /: the form filled in from the design URL and
// every result, rendered on the server so the page works without
// JavaScript.
func handleDesigner(c echo.Context) error {
	return render(c, http.StatusOK, views.Designer(designerView(c.Request().URL.RawQuery)))
}

// handleDesignerResults answers GET /designer/results: the same results
// component as the page, plus each field's message out of band, for htmx
// to swap in. HX-Push-Url puts the design's canonical URL (the page, not
// this fragment) in the address bar.
func handleDesignerResults(c echo.Context) error {
	v := designerView(c.Request().URL.RawQuery)
	c.Response().Header().Set("HX-Push-Url", designerPath+"?"+v.Results.Query)
	return render(c, http.StatusOK, views.ResultsUpdate(v))
}

// designerView parses a design URL's raw query and builds the page's view
// model. It never fails: bad input becomes messages next to the fields.
func designerView(rawQuery string) views.DesignerView {
	d := parseDesignQuery(rawQuery)
	results := d.results()
	return views.DesignerView{
		Title: "ratelab: rate-limit designer", Form: d.form(), Results: results,
		Import: views.ImportView{Action: importPath},
	}
}

// maxChartArrivals bounds the requests the charts simulate, so a design URL
// cannot make the server work for long: each of the six lanes (and the
// replica lanes) decides every arrival once, and a pattern whose clients
// retry counts each possible retry too.
const maxChartArrivals = 200_000

// Retry-storm chart: without a retry_storm pattern, the storm has twice the
// burst of clients (so that some are rejected), within these bounds.
const (
	minStormClients = 100
	maxStormClients = 10_000
)

// results sizes the design and simulates it for the charts.
func (d *design) results() views.ResultsView {
	rv := views.ResultsView{Query: d.query()}
	res, err := calc.Size(d.input)
	if err != nil {
		d.calcProblems(err)
	}
	if probs := d.designProblems(); len(probs) > 0 {
		for _, p := range probs {
			rv.Problems = append(rv.Problems, views.Problem{Field: p.Field, Anchor: d.anchor(p.Field), Message: p.Message})
		}
		return rv
	}
	rv.Result = &res
	rv.ExportURL = exportPath + "?" + rv.Query
	if !d.patternOK {
		rv.Pattern = d.patternView(0, "")
		rv.ChartsError = d.patternError()
		return rv
	}
	charts, pv, err := d.charts(res)
	rv.Pattern = pv
	if err != nil {
		rv.ChartsError = err.Error()
		return rv
	}
	rv.Charts = charts
	return rv
}

// patternError joins the pattern's problems.
func (d *design) patternError() string {
	var msgs []string
	for _, p := range d.patternProblems() {
		msgs = append(msgs, p.Message)
	}
	if len(msgs) == 0 {
		return "The pattern is not valid."
	}
	return "No charts until the pattern is fixed: " + strings.Join(msgs, "; ")
}

// anchor is the link to param's input, or "" when the form has none.
func (d *design) anchor(param string) string {
	if param == "" {
		return ""
	}
	if param == "tiers" || param == "endpoints" {
		return "#sec-" + param
	}
	return "#" + fieldID(param)
}

// fieldID is the id of param's input: "f-tiers-0-name".
func fieldID(param string) string {
	return "f-" + strings.NewReplacer(".", "-", "[", "-", "]", "").Replace(param)
}

// charts simulates the design on the pattern and builds every chart. A
// pattern that generates too much traffic is a problem on its field.
func (d *design) charts(res calc.Result) ([]views.Chart, views.PatternView, error) {
	p := d.pattern
	traffic, err := p.Generate(maxChartArrivals)
	if tm := (*algorithms.TooManyArrivalsError)(nil); errors.As(err, &tm) {
		d.problem("pattern", fmt.Sprintf("pattern: %s generates more than %d requests, the most the designer simulates; shorten pattern.duration or lower pattern.rate, pattern.count or pattern.clients", p.Name, maxChartArrivals))
		return nil, d.patternView(0, ""), errors.New(d.patternError())
	}
	if err != nil {
		d.patternProblem(err)
		return nil, d.patternView(0, ""), errors.New(d.patternError())
	}
	arrivals := traffic.Arrivals
	if r := traffic.Retry; r != nil && len(arrivals)*(1+r.Attempts) > maxChartArrivals {
		d.problem("pattern.clients", fmt.Sprintf("pattern.clients: %d clients retrying up to %d times offer up to %d requests; the designer simulates at most %d, so want at most %d clients",
			len(arrivals), r.Attempts, len(arrivals)*(1+r.Attempts), maxChartArrivals, maxChartArrivals/(1+r.Attempts)))
		return nil, d.patternView(len(arrivals), ""), errors.New(d.patternError())
	}
	if len(arrivals) == 0 {
		return nil, d.patternView(0, ""), errors.New("The pattern generates no requests: raise pattern.rate or pattern.duration.")
	}
	focus := arrivals[0].Key
	pv := d.patternView(len(arrivals), focus)

	// (a)–(c): the six algorithms on the same arrivals, followed a little
	// past the last arrival so refills show.
	last := arrivals[len(arrivals)-1].At
	until := min(last+max(2*time.Second, last/4), algorithms.MaxWindow)
	lanes := make([]algorithms.Lane, len(res.Algorithms))
	for i, a := range res.Algorithms {
		lanes[i] = algorithms.Lane{Spec: a.Spec()}
	}
	sim, err := algorithms.Simulate(algorithms.Simulation{Lanes: lanes, Traffic: traffic, Until: until})
	if err != nil {
		return nil, pv, fmt.Errorf("simulation: %w", err)
	}
	tb := res.Spec(algorithms.NameTokenBucket)
	charts := views.PatternCharts(sim, focus, views.IdealLine{Rate: tb.Rate, Burst: float64(tb.Burst), Keys: distinctKeys(arrivals)})

	// (d) the token bucket enforced in one shared store, and locally.
	replicas, err := replicaChart(res, tb, algorithms.Traffic{Arrivals: arrivals, Retry: traffic.Retry}, until)
	if err != nil {
		return nil, pv, err
	}
	charts = append(charts, replicas)

	// (e) a retry storm against the token bucket, without and with jitter.
	storm, err := d.retryStormChart(res, tb)
	if err != nil {
		return nil, pv, err
	}
	return append(charts, storm), pv, nil
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
		tb, R, R)
	if R == 1 {
		caption = fmt.Sprintf("Requests admitted so far by %s on the same arrivals. With one replica, local and shared enforcement are the same; set replicas above 1 to see local limits multiply.", tb)
	}
	if res.PerReplica != nil {
		caption += fmt.Sprintf(" The per-replica split enforces rate/%d and ⌈burst/%d⌉ on each replica instead.", R, R)
	}
	return views.ReplicaChart(sim, replicaNames(res), caption), nil
}

// stormPattern is the retry storm of the charts: the design's retry_storm
// pattern when it is the chosen one, otherwise one with twice the burst of
// clients and the chosen seed. jitter is the "with jitter" fraction: the
// pattern's, else the design's retry.jitter, else 0.5.
func (d *design) stormPattern(res calc.Result, tb algorithms.Spec) (p algorithms.Pattern, jitter float64) {
	p = algorithms.DefaultPattern(algorithms.PatternRetryStorm)
	if d.pattern.Name == algorithms.PatternRetryStorm {
		p = d.pattern
		jitter = d.pattern.Jitter
	} else {
		p.Seed = d.pattern.Seed
		p.Clients = int(min(max(2*tb.Burst, minStormClients), maxStormClients))
	}
	if jitter == 0 && res.Input.Retry.Jitter != nil {
		jitter = *res.Input.Retry.Jitter
	}
	if jitter == 0 {
		jitter = calc.DefaultRetryJitter
	}
	return p, jitter
}

// retryStormChart runs the storm twice against the token bucket: clients in
// lockstep (no jitter) and with jitter, on the same bins.
func (d *design) retryStormChart(res calc.Result, tb algorithms.Spec) (views.Chart, error) {
	p, jitter := d.stormPattern(res, tb)
	run := func(j float64, bin time.Duration) (algorithms.Result, error) {
		p.Jitter = j
		t, err := p.Generate(maxChartArrivals)
		if err != nil {
			return algorithms.Result{}, err
		}
		return algorithms.Simulate(algorithms.Simulation{Lanes: []algorithms.Lane{{Spec: tb}}, Traffic: t, Bin: bin})
	}
	jittered, err := run(jitter, 0) // the longer run picks the bin width
	if err != nil {
		return views.Chart{}, fmt.Errorf("retry storm: %w", err)
	}
	still, err := run(0, jittered.Bin)
	if err != nil {
		return views.Chart{}, fmt.Errorf("retry storm: %w", err)
	}
	caption := fmt.Sprintf("%d clients send at once against %s on one key (%q); the rejected retry with exponential backoff from 1 s, doubling, up to 5 attempts, ignoring Retry-After as naive clients do. Without jitter they retry in lockstep and are rejected together again; with %s %% jitter the retries spread out and more get through.",
		p.Clients, tb, algorithms.RetryStormKey, views.Num(100*jitter))
	return views.RetryStormChart(still, jittered, caption), nil
}

// patternView describes the pattern in effect.
func (d *design) patternView(arrivals int, focus string) views.PatternView {
	name := algorithms.PatternName(d.raw("pattern"))
	if name == "" {
		name = defaultPatternName
	}
	pv := views.PatternView{Name: string(name), Arrivals: arrivals, Focus: focus}
	info, ok := algorithms.PatternByName(name)
	if !ok {
		return pv
	}
	pv.Shape, pv.Shows = info.Shape, info.Shows
	if d.patternOK {
		for _, param := range info.Params {
			pv.Params = append(pv.Params, views.ParamValue{Name: param, Value: patternValue(d.pattern, param)})
		}
	}
	return pv
}

// Form: labels and help of every parameter, in form order.

type fieldSpec struct {
	param, label, help string
	numeric            bool
	options            []views.Option
}

var formSections = []struct {
	id, legend, help string
	fields           []fieldSpec
}{
	{"service", "Service", "What the whole service handles, and where the limit is enforced.", []fieldSpec{
		{"capacity", "Capacity", "requests/s at which latency starts to degrade (measured)", true, nil},
		{"headroom", "Headroom", "fraction kept free; blank: 0.2", true, nil},
		{"replicas", "Replicas", "instances that enforce the limit; blank: 1", true, nil},
		{"enforcement", "Enforcement", "where the counts live", false, []views.Option{
			{Value: "shared", Label: "shared (one store, e.g. Redis)"}, {Value: "local", Label: "local (each replica)"}}},
	}},
	{"clients", "Clients and percentiles", "Per-client request rates, as measured (0 or blank: not measured).", []fieldSpec{
		{"clients", "Clients", "active at once (with tiers: blank or their total)", true, nil},
		{"p50", "p50", "per-client rate, median", true, nil},
		{"p95", "p95", "per-client rate", true, nil},
		{"p99", "p99", "per-client rate; rate = p99 × margin", true, nil},
		{"percentile_unit", "Percentile unit", "unit of p50, p95 and p99", false, []views.Option{
			{Value: "second", Label: "requests per second"}, {Value: "minute", Label: "requests per minute"}}},
		{"margin", "Margin", "multiplier of p99; blank: 2", true, nil},
	}},
	{"burst", "Burst", "A client must be able to send peak requests/s for peak_seconds (both or neither).", []fieldSpec{
		{"peak", "Peak", "requests/s", true, nil},
		{"peak_seconds", "Peak seconds", "how long the peak lasts, s", true, nil},
	}},
	{"windows", "Windows and delay", "", []fieldSpec{
		{"window", "Window", "of the window algorithms, s; blank: 60", true, nil},
		{"max_delay", "Max delay", "longest wait in the leaky bucket's queue, s; blank: a whole burst", true, nil},
	}},
	{"tiers", "Tiers", "Classes of clients with their own counts and a multiplier of the per-client rate. Leave a row blank to skip it; Update adds rows.", nil},
	{"endpoints", "Endpoints", "Routes whose requests cost more than one token. Leave a row blank to skip it.", nil},
	{"retry", "Client retries", "How clients back off after a 429; blanks take the defaults 1, 2, 30, 5 and 0.5.", []fieldSpec{
		{"retry.base", "Base", "first wait, s", true, nil},
		{"retry.factor", "Factor", "each wait × factor", true, nil},
		{"retry.cap", "Cap", "longest wait, s", true, nil},
		{"retry.attempts", "Attempts", "retries before giving up", true, nil},
		{"retry.jitter", "Jitter", "fraction added at random to each wait", true, nil},
	}},
	{"pattern", "Chart traffic", "The traffic the charts simulate. Blank parameters take the pattern's default; a pattern reads only its own.", nil},
}

// tierSpecs and endpointSpecs are the fields of one row.
var (
	tierSpecs = []fieldSpec{
		{"name", "Name", "", false, nil},
		{"clients", "Clients", "", true, nil},
		{"multiplier", "Multiplier", "blank: 1", true, nil},
	}
	endpointSpecs = []fieldSpec{
		{"method", "Method", "", false, nil},
		{"path", "Path", "", false, nil},
		{"cost", "Cost", "tokens; blank: 1", true, nil},
	}
)

// patternHelp says which patterns read a parameter and in what unit.
func patternHelp(param string) string {
	units := map[string]string{
		"rate": "requests/s per client", "to": "requests/s at the end", "duration": "s", "count": "requests",
		"idle": "s", "period": "s", "window": "s", "clients": "clients", "jitter": "fraction",
		"key_by": "", "cost": "tokens per request", "seed": "of the random choices",
	}
	var users []string
	for _, p := range algorithms.Patterns {
		if slices.Contains(p.Params, param) {
			users = append(users, string(p.Name))
		}
	}
	h := units[param]
	if h != "" {
		h += "; "
	}
	return h + "read by " + strings.Join(users, ", ")
}

// placeholders show the calculator's defaults in blank fields, by
// parameter (rows by their field).
var placeholders = map[string]string{
	"headroom": views.Num(calc.DefaultHeadroom), "replicas": "1", "margin": views.Num(calc.DefaultMargin),
	"window": views.Num(calc.DefaultWindow), "retry.base": views.Num(calc.DefaultRetryBase),
	"retry.factor": views.Num(calc.DefaultRetryFactor), "retry.cap": views.Num(calc.DefaultRetryCap),
	"retry.attempts": strconv.Itoa(calc.DefaultRetryAttempts), "retry.jitter": views.Num(calc.DefaultRetryJitter),
	"multiplier": "1", "cost": "1", "method": "GET", "path": "/v1/reports",
}

// blankRows is how many blank rows the form adds after the given ones, and
// minRows the fewest rows it shows.
const (
	blankRows = 1
	minRows   = 2
)

// form builds the form's view model: every field with its value as typed
// and its message.
func (d *design) form() views.FormView {
	f := views.FormView{Action: designerPath, ResultsURL: resultsPath}
	field := func(s fieldSpec, param string) views.Field {
		fl := views.Field{
			Name: param, ID: fieldID(param), Label: s.label, Value: d.values[param], Help: s.help,
			Error: d.message(param), Numeric: s.numeric, Options: s.options,
			Placeholder: placeholders[s.param],
		}
		if len(s.options) > 0 && fl.Value != "" && !slices.ContainsFunc(s.options, func(o views.Option) bool { return o.Value == fl.Value }) {
			fl.Options = append(slices.Clone(s.options), views.Option{Value: fl.Value, Label: fl.Value + " (not valid)"})
		}
		return fl
	}
	for _, sec := range formSections {
		s := views.Section{ID: sec.id, Legend: sec.legend, Help: sec.help}
		for _, fs := range sec.fields {
			s.Fields = append(s.Fields, field(fs, fs.param))
		}
		switch sec.id {
		case "tiers", "endpoints":
			s.Message = views.Field{Name: sec.id, ID: "f-" + sec.id, Error: d.message(sec.id)}
			specs, present := tierSpecs, d.tierRows
			if sec.id == "endpoints" {
				specs, present = endpointSpecs, d.endpointRows
			}
			for n, i := range rowIndices(present) {
				r := views.Row{Label: fmt.Sprintf("%s %d", strings.TrimSuffix(sec.legend, "s"), n+1), Added: !slices.Contains(present, i)}
				for _, fs := range specs {
					r.Fields = append(r.Fields, field(fs, rowName(sec.id, i, fs.param)))
				}
				s.Rows = append(s.Rows, r)
			}
		case "pattern":
			s.Fields = append(s.Fields, d.patternFields(field)...)
		}
		f.Sections = append(f.Sections, s)
	}
	return f
}

// rowIndices are the rows the form shows: those in the URL, then blank ones
// numbered after the last.
func rowIndices(present []int) []int {
	rows := slices.Clone(present)
	next := 0
	if len(rows) > 0 {
		next = rows[len(rows)-1] + 1
	}
	for added := 0; (added < blankRows || len(rows) < minRows) && next <= maxRowIndex; added++ {
		rows = append(rows, next)
		next++
	}
	return rows
}

// patternFields are the pattern select and every pattern parameter, with
// the chosen pattern's defaults as placeholders.
func (d *design) patternFields(field func(fieldSpec, string) views.Field) []views.Field {
	var opts []views.Option
	for _, p := range algorithms.Patterns {
		opts = append(opts, views.Option{Value: string(p.Name), Label: string(p.Name) + ": " + p.Shape})
	}
	sel := field(fieldSpec{"pattern", "Pattern", "", false, opts}, "pattern")
	if sel.Value == "" {
		sel.Value = string(defaultPatternName)
	}
	out := []views.Field{sel}
	defaults := algorithms.DefaultPattern(defaultPatternName)
	if name := algorithms.PatternName(strings.TrimSpace(sel.Value)); name != "" {
		if _, ok := algorithms.PatternByName(name); ok {
			defaults = algorithms.DefaultPattern(name)
		}
	}
	for _, param := range patternParams {
		spec := fieldSpec{param: param, label: patternLabel(param), help: patternHelp(param), numeric: param != "key_by"}
		if param == "key_by" {
			spec.options = []views.Option{
				{Value: "", Label: "default (ip)"},
				{Value: "ip", Label: "ip (one key for the office)"},
				{Value: "api_key", Label: "api_key (one per user)"},
			}
		}
		fl := field(spec, "pattern."+param)
		if param != "key_by" {
			fl.Placeholder = patternValue(defaults, param)
		}
		out = append(out, fl)
	}
	return out
}

func patternLabel(param string) string {
	s := strings.ReplaceAll(param, "_", " ")
	return strings.ToUpper(s[:1]) + s[1:]
}
