// Package kong exports a policy to Kong Gateway's open-source
// rate-limiting plugin as a decK declarative file ([Target]).
//
// Model. Kong's rate-limiting counts requests in fixed, calendar-aligned
// windows of one second, minute, hour, day, month or year (UTC; several at
// once, each a number of requests), per limit_by identity: consumer,
// credential, ip, service, one header, or path. A request is rejected with
// error_code when any window is full; rejected requests are not counted.
// Counters live in each node (policy local), the database (cluster) or
// Redis (redis); fault_tolerant says whether requests pass when the store
// fails. Kong runs one rate-limiting instance per request: the most
// specific of consumer+route, consumer, route, service, global.
//
// Layout of the export: a service to Options.Upstream with a catch-all
// route and one route per endpoint that has a limit or a cost (and per
// earlier endpoint that overlaps one, without plugins), each a regex path
// of the template ({name} as one segment) with regex_priority in policy
// order, so the first matching endpoint wins; the default
// limit as the service's plugin; each tier as a consumer whose plugin
// replaces it (key-auth's anonymous consumer takes unauthenticated
// clients); endpoint limits as route plugins, repeated as consumer+route
// plugins so that they apply to every tier. A limit becomes, per window
// unit, the most a client that conforms to the policy can send in one
// window of that unit (burst + rate × unit for the buckets), so Kong never
// rejects a conforming client but lets up to twice that through across a
// window edge; only a fixed window of exactly one unit is exact.
package kong

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/policy"
)

// Target is the decK target.
var Target = export.Target{
	Name:   "kong",
	Title:  "Kong rate-limiting (decK)",
	Group:  export.Gateways,
	Render: render,
}

// Unit is a Kong rate-limiting window.
type Unit struct {
	Name    string // config field: "second", "minute"…
	Seconds int64
}

// Units are the windows the export uses, shortest first. Month and year
// are calendar periods of varying length and are left out.
var Units = []Unit{{"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400}}

// Period is one window limit of a rate-limiting config.
type Period struct {
	Unit  Unit
	Limit int64
}

// Periods is spec s as Kong windows: for each unit, the most requests a
// client that conforms to s can send in one calendar-aligned window of
// that unit, keeping a unit only when the others do not already imply
// it. exact is true only for a fixed window of exactly one unit; why says
// what differs otherwise.
func Periods(s algorithms.Spec) (ps []Period, exact bool, why string) {
	bound := make([]int64, len(Units))
	for i, u := range Units {
		bound[i] = most(s, u.Seconds)
	}
	for i, u := range Units {
		if i+1 < len(Units) && bound[i] >= bound[i+1] {
			continue // a longer window holds as few
		}
		if n := len(ps); n > 0 {
			prev := ps[n-1]
			if float64(bound[i]) >= float64(prev.Limit)*float64(u.Seconds/prev.Unit.Seconds) {
				continue // the shorter window's limit implies it
			}
		}
		ps = append(ps, Period{u, bound[i]})
	}
	w := int64(s.Window.Seconds())
	if s.Algorithm == algorithms.NameFixedWindow && s.Window.Seconds() == float64(w) &&
		slices.ContainsFunc(Units, func(u Unit) bool { return u.Seconds == w }) {
		return ps, true, ""
	}
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA, algorithms.NameLeakyBucket:
		r, b, bw := export.Bucket(s)
		why = fmt.Sprintf("Kong counts in fixed calendar windows; each limit is burst + rate × window (burst %d, rate %s/s), the most a conforming client sends in one window, so no conforming client is rejected, but up to twice a window's limit passes across its edge and the long-run rate may exceed the rate by burst/window", b, num(r))
		if bw != "" && s.Algorithm == algorithms.NameLeakyBucket {
			why += "; " + bw + " (Kong cannot delay)"
		}
	default:
		why = fmt.Sprintf("Kong has fixed calendar windows of one unit; each limit is the most a conforming client sends in one such window (%d per %s), so no conforming client is rejected, but Kong lets up to twice a window's limit through across its edge", s.Limit, s.Window)
		if s.Algorithm == algorithms.NameFixedWindow {
			why = fmt.Sprintf("a fixed window of %s is not one Kong unit; ", s.Window) + why
		}
	}
	return ps, false, why
}

// most is the most requests a client conforming to s sends in one window of
// t seconds aligned to the epoch (Kong's windows are UTC calendar units).
func most(s algorithms.Spec, t int64) int64 {
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA, algorithms.NameLeakyBucket:
		r, b, _ := export.Bucket(s)
		return max(1, int64(math.Floor(float64(b)+r*float64(t))))
	}
	n := s.Limit
	wns := s.Window.Nanoseconds()
	tns := t * 1e9
	windows := (tns + wns - 1) / wns // ⌈t/W⌉
	if s.Algorithm == algorithms.NameSlidingLog {
		// At most n in any interval of W: ⌈t/W⌉ intervals cover t.
		return n * windows
	}
	// fixed_window and sliding_window count in epoch-aligned windows of W.
	switch {
	case tns <= wns && wns%tns == 0:
		return n // the t window lies inside one W window
	case tns >= wns && tns%wns == 0:
		return n * (tns / wns) // t/W whole W windows
	default:
		return n * (windows + 1) // straddles one more window
	}
}

// scale is s for a request of cost c drawing from its own budget: rate
// and burst (or limit) divided by c, burst at least 1.
func scale(s algorithms.Spec, c int64) algorithms.Spec {
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA, algorithms.NameLeakyBucket:
		r, b, _ := export.Bucket(s)
		return algorithms.Spec{Algorithm: algorithms.NameTokenBucket, Rate: r / float64(c), Burst: max(1, b/c)}
	}
	out := s
	out.Limit = max(1, s.Limit/c)
	return out
}

// plugin is one rate-limiting instance.
type plugin struct {
	field   string // policy path
	spec    algorithms.Spec
	periods []Period
	exact   bool
	why     string
	limitBy string // ip, header, service
	header  string
	route   string // consumer+route scope
}

func (pl *planner) newPlugin(field string, s algorithms.Spec, k policy.Key) *plugin {
	ps, exact, why := Periods(s)
	p := &plugin{field: field, spec: s, periods: ps, exact: exact, why: why}
	switch k {
	case policy.KeyIP:
		p.limitBy = "ip"
	case policy.KeyGlobal:
		p.limitBy = "service"
	default:
		p.limitBy = "header"
		p.header = pl.o.KeyHeader(k)
	}
	return p
}

// params is the plugin's parameters as written in the file.
func (p *plugin) params() string {
	var parts []string
	for _, x := range p.periods {
		parts = append(parts, fmt.Sprintf("%s=%d", x.Unit.Name, x.Limit))
	}
	parts = append(parts, "limit_by="+p.limitBy)
	if p.header != "" {
		parts = append(parts, "header_name="+p.header)
	}
	return strings.Join(parts, " ")
}

type planner struct {
	p policy.Policy
	o export.Options
}

// route is one Kong route.
type route struct {
	name     string
	endpoint int // -1: catch-all
	methods  []string
	paths    []string
	// regexPriority orders the endpoint routes, all of one method and a
	// regex path: Kong tries a higher one first.
	regexPriority int
	plugin        *plugin // route-scoped
}

// consumer is one tier's consumer.
type consumer struct {
	username string
	tier     string
	plugins  []*plugin // [0] the tier's, then consumer+route ones
}

// num formats a float the shortest way that reads back the same.
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// ident is s as a Kong entity name: lower case letters, digits and '-'.
func ident(s string) string { return strings.Trim(strings.ReplaceAll(policy.Ident(s), "_", "-"), "-") }

// pathRegex is the Kong 3 regex path (Kong anchors it at the start of the
// path) matching exactly the paths the template matches, up to the end.
func pathRegex(template string) string { return "~" + export.PathPattern(template) + "$" }
