package calc

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ratelab/ratelab/algorithms"
)

// Input is what the designer knows about a service and its clients. Rates
// are requests per second unless the percentile unit is minute; durations
// are seconds. A zero or omitted field takes its default.
//
// The defaults are listed on the fields; the pointer fields are the ones
// where 0 is a meaningful value different from the default, so nil means
// "not given".
type Input struct {
	// The measured ceiling of the whole service in requests/s: the rate
	// at which latency starts to degrade.
	Capacity float64 `json:"capacity" jsonschema:"required"`
	// The fraction of the capacity kept free; omitted (nil) means 0.2.
	Headroom *float64 `json:"headroom,omitempty"`
	// How many clients are active at once. With tiers it may be 0 and is
	// then their total.
	Clients int `json:"clients,omitempty"`
	// Classes of clients with their own counts and a multiplier of the
	// per-client rate (anonymous 0.5, paid 10, …).
	Tiers []TierInput `json:"tiers,omitempty"`
	// The median per-client request rate, in the percentile unit; 0 means
	// not measured.
	P50 float64 `json:"p50,omitempty"`
	// The 95th percentile of the per-client request rate, in the
	// percentile unit; 0 means not measured.
	P95 float64 `json:"p95,omitempty"`
	// The 99th percentile of the per-client request rate, in the
	// percentile unit; 0 means not measured.
	P99 float64 `json:"p99,omitempty"`
	// The unit of the percentiles: "second" (default) or "minute".
	PercentileUnit PercentileUnit `json:"percentile_unit,omitempty"`
	// What multiplies p99 to give the sustained rate; 0 means 2.
	Margin float64 `json:"margin,omitempty"`
	// A client must be able to send this many requests/s for peak_seconds;
	// both or neither.
	Peak float64 `json:"peak,omitempty"`
	// How many seconds a client must be able to keep up the peak.
	PeakSeconds float64 `json:"peak_seconds,omitempty"`
	// The window of the window algorithms in seconds; 0 means 60.
	Window float64 `json:"window,omitempty"`
	// The longest a request may wait in the leaky bucket's queue, in
	// seconds; omitted (nil) sizes the queue to hold a whole burst.
	MaxDelay *float64 `json:"max_delay,omitempty"`
	// How many instances enforce the limit; 0 means 1.
	Replicas int `json:"replicas,omitempty"`
	// Where the counts live: "shared" (one store every replica asks;
	// default) or "local" (each replica keeps its own).
	Enforcement Enforcement `json:"enforcement,omitempty"`
	// Routes whose requests cost more than one token.
	Endpoints []Endpoint `json:"endpoints,omitempty"`
	// How clients retry a rejected request.
	Retry Retry `json:"retry"`
}

// TierInput is a class of clients: how many, and the multiplier of the
// per-client rate they get (0 means 1).
type TierInput struct {
	// The tier's name, unique among the tiers.
	Name string `json:"name" jsonschema:"required"`
	// How many of its clients are active at once.
	Clients int `json:"clients" jsonschema:"required"`
	// The multiple of the per-client rate the tier gets; 0 means 1.
	Multiplier float64 `json:"multiplier,omitempty"`
}

// Endpoint is a route and the cost in tokens of one request to it (0 means 1).
type Endpoint struct {
	// The HTTP method, as GET.
	Method string `json:"method" jsonschema:"required"`
	// The path, literal or with {name} segments.
	Path string `json:"path" jsonschema:"required"`
	// Tokens one request costs; 0 means 1.
	Cost int64 `json:"cost,omitempty"`
}

// PercentileUnit is the unit of the percentiles.
type PercentileUnit string

// Percentile units.
const (
	PerSecond PercentileUnit = "second"
	PerMinute PercentileUnit = "minute"
)

// PercentileUnits are the values of Input.PercentileUnit (blank means the first).
var PercentileUnits = []PercentileUnit{PerSecond, PerMinute}

// seconds is how many seconds one unit spans.
func (u PercentileUnit) seconds() float64 {
	if u == PerMinute {
		return 60
	}
	return 1
}

// Enforcement is where the limit's state lives.
type Enforcement string

// Enforcement modes.
const (
	Shared Enforcement = "shared"
	Local  Enforcement = "local"
)

// Enforcements are the values of Input.Enforcement (blank means the first).
var Enforcements = []Enforcement{Shared, Local}

// Defaults and bounds of the input. The bounds keep every derived number
// finite and, with the cross-checks in Size, inside algorithms' ranges.
const (
	DefaultHeadroom = 0.2
	DefaultMargin   = 2.0
	DefaultWindow   = 60.0 // seconds
	// DefaultBurstSeconds is how many seconds of rate the burst holds when
	// no peak is given (10–20 s is a common size).
	DefaultBurstSeconds = 10.0

	MinCapacity  = 0.001 // requests/s
	MaxCapacity  = 1e9   // requests/s
	MaxHeadroom  = 0.95  // of capacity
	MaxClients   = 100_000_000
	MaxTiers     = 16
	MaxEndpoints = 100
	MaxCost      = 1_000_000
	MaxReplicas  = 1000
	MaxWindow    = 366 * 86400.0 // seconds, as algorithms.MaxWindow
)

// normalize returns in with defaults applied, or every field error.
func (in Input) normalize() (Input, error) {
	var v errs
	v.in("capacity", in.Capacity, MinCapacity, MaxCapacity, "requests per second in [0.001, 1e9]")
	if in.Headroom == nil {
		in.Headroom = new(DefaultHeadroom)
	} else {
		v.in("headroom", *in.Headroom, 0, MaxHeadroom, "a fraction in [0, 0.95] (0.2 keeps 20 % free)")
	}

	// Clients, directly or as the tiers' total.
	if len(in.Tiers) > MaxTiers {
		v.add("tiers", strconv.Itoa(len(in.Tiers))+" tiers", fmt.Sprintf("at most %d", MaxTiers))
	} else {
		if len(in.Tiers) > 0 {
			in.Tiers = append([]TierInput(nil), in.Tiers...) // defaults must not write through to the caller's slice
		}
		names := map[string]bool{}
		total, counted := 0, true
		for i, t := range in.Tiers {
			f := fmt.Sprintf("tiers[%d]", i)
			name := strings.TrimSpace(t.Name)
			switch {
			case name == "" || utf8.RuneCountInString(name) > 64:
				v.add(f+".name", strconv.Quote(t.Name), "a name of 1 to 64 characters")
			case names[name]:
				v.add(f+".name", strconv.Quote(t.Name), "a name no other tier has")
			}
			names[name] = true
			if t.Clients < 1 || t.Clients > MaxClients {
				v.add(f+".clients", strconv.Itoa(t.Clients), "a whole number in [1, 100000000]")
				counted = false
			} else {
				total += t.Clients
			}
			if t.Multiplier == 0 {
				in.Tiers[i].Multiplier = 1
			} else {
				v.in(f+".multiplier", t.Multiplier, 0.001, 1000, "a multiplier of the per-client rate in [0.001, 1000]")
			}
		}
		if len(in.Tiers) > 0 {
			if counted && in.Clients != 0 && in.Clients != total {
				v.add("clients", strconv.Itoa(in.Clients), fmt.Sprintf("0 or the tiers' total, %d", total))
			}
			if total > MaxClients {
				v.add("clients", strconv.Itoa(total)+" (the tiers' total)", "at most 100000000")
			}
			in.Clients = total
		} else if in.Clients < 1 || in.Clients > MaxClients {
			v.add("clients", strconv.Itoa(in.Clients), "a whole number in [1, 100000000]")
		}
	}

	// Percentiles, in order.
	switch {
	case in.PercentileUnit == "":
		in.PercentileUnit = PerSecond
	case slices.Contains(PercentileUnits, in.PercentileUnit):
	default:
		v.add("percentile_unit", strconv.Quote(string(in.PercentileUnit)), `"second" or "minute"`)
		in.PercentileUnit = PerSecond // to word the percentiles' range
	}
	u := in.PercentileUnit.seconds()
	lo, hi := 1e-5*u, 1e6*u
	want := fmt.Sprintf("0 (not measured) or requests per %s in [%s, %s]", in.PercentileUnit, num(lo), num(hi))
	prev, prevName := 0.0, ""
	for _, p := range []struct {
		name string
		v    float64
	}{{"p50", in.P50}, {"p95", in.P95}, {"p99", in.P99}} {
		if p.v == 0 {
			continue
		}
		if !v.in(p.name, p.v, lo, hi, want) {
			continue
		}
		if p.v < prev {
			v.add(p.name, num(p.v), fmt.Sprintf("at least %s (%s): percentiles cannot decrease", prevName, num(prev)))
		}
		prev, prevName = p.v, p.name
	}

	if in.Margin == 0 {
		in.Margin = DefaultMargin
	} else {
		v.in("margin", in.Margin, 0.1, 100, "a multiplier of p99 in [0.1, 100] (2 is usual; below 1 throttles normal clients)")
	}

	switch {
	case in.Peak == 0 && in.PeakSeconds == 0:
	case in.Peak == 0:
		v.add("peak", "0", "a rate in requests/s when peak_seconds is set")
	case in.PeakSeconds == 0:
		v.add("peak_seconds", "0", "a duration in seconds when peak is set")
	default:
		v.in("peak", in.Peak, 1e-6, 1e9, "requests per second in [1e-06, 1e9]")
		v.in("peak_seconds", in.PeakSeconds, 0.001, 86400, "seconds in [0.001, 86400]")
	}

	if in.Window == 0 {
		in.Window = DefaultWindow
	} else {
		v.in("window", in.Window, 0.001, MaxWindow, "seconds in [0.001, 31622400] (up to 366 days)")
	}
	if in.MaxDelay != nil {
		v.in("max_delay", *in.MaxDelay, 0, 86400, "seconds in [0, 86400]")
	}

	if in.Replicas == 0 {
		in.Replicas = 1
	} else if in.Replicas < 1 || in.Replicas > MaxReplicas {
		v.add("replicas", strconv.Itoa(in.Replicas), "a whole number in [0, 1000] (0 means 1)")
	}
	switch {
	case in.Enforcement == "":
		in.Enforcement = Shared
	case slices.Contains(Enforcements, in.Enforcement):
	default:
		v.add("enforcement", strconv.Quote(string(in.Enforcement)), `"shared" or "local"`)
	}

	if len(in.Endpoints) > MaxEndpoints {
		v.add("endpoints", strconv.Itoa(len(in.Endpoints))+" endpoints", fmt.Sprintf("at most %d", MaxEndpoints))
	} else if len(in.Endpoints) > 0 {
		in.Endpoints = append([]Endpoint(nil), in.Endpoints...)
		routes := map[string]int{} // "METHOD path" → first index, as the policy file keys routes
		for i, e := range in.Endpoints {
			f := fmt.Sprintf("endpoints[%d]", i)
			if !validMethod(e.Method) {
				v.add(f+".method", strconv.Quote(e.Method), "an HTTP method such as GET or POST (letters, at most 16)")
			}
			route := strings.ToUpper(e.Method) + " " + e.Path
			if j, seen := routes[route]; seen {
				v.add(f+".path", strconv.Quote(e.Path), fmt.Sprintf("a route no other endpoint has (endpoints[%d] is also %s)", j, route))
			} else {
				routes[route] = i
			}
			if !strings.HasPrefix(e.Path, "/") || len(e.Path) > 1024 {
				v.add(f+".path", strconv.Quote(e.Path), "a path starting with / (at most 1024 bytes)")
			}
			switch {
			case e.Cost == 0:
				in.Endpoints[i].Cost = 1
			case e.Cost < 1 || e.Cost > MaxCost:
				v.add(f+".cost", strconv.FormatInt(e.Cost, 10), "tokens per request, a whole number in [1, 1000000]")
			}
		}
	}

	in.Retry = in.Retry.normalize(&v)
	return in, v.err()
}

func validMethod(m string) bool {
	if m == "" || len(m) > 16 {
		return false
	}
	for _, c := range m {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// Validate reports every field of in outside its range, as Errors: the
// error Size would return.
func (in Input) Validate() error {
	res, err := sizeLimits(in)
	if err != nil {
		return err
	}
	// The schedule's own ranges; the rest of Size cannot fail.
	tb, _ := res.Params(algorithms.NameTokenBucket)
	_, err = Schedule(res.Input.Retry, tb.RetryAfter.Value)
	return err
}

// maxCost is the largest endpoint cost (1 without endpoints) and the endpoint
// that has it.
func (in Input) maxCost() (int64, *Endpoint) {
	c, at := int64(1), (*Endpoint)(nil)
	for i := range in.Endpoints {
		if e := &in.Endpoints[i]; e.Cost > c {
			c, at = e.Cost, e
		}
	}
	return c, at
}

// weight is Σ clients × multiplier: how many base-rate clients the tiers
// amount to (just Clients without tiers).
func (in Input) weight() float64 {
	if len(in.Tiers) == 0 {
		return float64(in.Clients)
	}
	w := 0.0
	for _, t := range in.Tiers {
		w += float64(t.Clients) * t.Multiplier
	}
	return w
}
