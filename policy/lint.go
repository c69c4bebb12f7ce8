package policy

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
)

// Finding is one problem Lint found: how bad (calc's severities: error, a
// policy that cannot work as meant; warning, one that will surprise
// someone; info, a fact to know), a stable ID, what and how to fix it, and
// where: Field is the path of the culprit ("tiers[1].limit"), Line and
// Column its place in the YAML it was decoded from (0 for a policy built
// in code).
type Finding struct {
	Severity calc.Severity `json:"severity"`
	// The stable ID of the check, such as overcommit or fail_closed.
	ID string `json:"id"`
	// The path of the culprit, as in tiers[1].limit.
	Field string `json:"field,omitempty"`
	// 1-based; absent (0) when unknown.
	Line int `json:"line,omitempty"`
	// 1-based; absent (0) when unknown.
	Column int `json:"column,omitempty"`
	// What is wrong.
	Message string `json:"message"`
	// How to fix it.
	Fix string `json:"fix"`
}

// Lint IDs of the policy's own checks; the calculator's keep calc's IDs
// (calc.CheckOvercommit, …).
const (
	LintInvalid        = "invalid"
	LintShadowMode     = "shadow_mode"
	LintFailClosed     = "fail_closed"
	LintTierOverGlobal = "tier_above_global"
	LintBurstBelowCost = calc.CheckBurstBelowCost
	LintLocalReplicas  = calc.CheckLocalReplicas
	LintFixedWindow    = calc.CheckFixedWindowBoundary
	LintNoLimit        = "no_limit"
	// LintNotExportable: text no export target may carry (see
	// Policy.ExportErrors).
	LintNotExportable = "not_exportable"
	// LintGlobalBelowClient: the global limit admits less than one
	// client's designed peak, capacity or rate (see globalBelowClient).
	LintGlobalBelowClient = "global_below_client"
	// LintShadowedEndpoint: an endpoint an earlier one always matches
	// first, so it never matches.
	LintShadowedEndpoint = "endpoint_shadowed"
	// LintRejectStatus: rejections answered with a status other than 429
	// or 503.
	LintRejectStatus = "reject_status"
	// LintNoRetryAfter: rejections without Retry-After.
	LintNoRetryAfter = "no_retry_after"
	// LintTierKeyedByIP: a tier of authenticated clients keyed by address.
	LintTierKeyedByIP = "tier_keyed_by_ip"
)

// LintDescription is a one-line description of each lint ID of the
// policy's own checks, the calculator's included (calc.CheckDescription),
// for tools that list the rules a report can hold (ratelab lint's SARIF
// rules); TestEveryLintDescribed holds it to the Lint constants.
var LintDescription = func() map[string]string {
	m := map[string]string{
		LintInvalid:           "The policy file does not decode: a YAML, field or value error.",
		LintShadowMode:        "The limits run in shadow mode: they reject nothing yet.",
		LintFailClosed:        "An outage of the shared store rejects every request (fail_closed).",
		LintTierOverGlobal:    "A tier's limit admits more than the global limit.",
		LintNoLimit:           "A class of clients has no limit at all.",
		LintNotExportable:     "Text that no export target may carry.",
		LintGlobalBelowClient: "The global limit admits less than one client's designed peak, capacity or rate.",
		LintShadowedEndpoint:  "An endpoint that an earlier one always matches first, so it never matches.",
		LintRejectStatus:      "Rejections are answered with a status other than 429 or 503.",
		LintNoRetryAfter:      "Rejections carry no Retry-After.",
		LintTierKeyedByIP:     "A tier of authenticated clients is keyed by address.",
	}
	for id, d := range calc.CheckDescription {
		m[id] = d
	}
	return m
}()

// designChecks are the calculator checks about the design itself, which
// lint reports from the sizing section. The calculator's checks on the
// limits it derived are replaced by the same checks on the policy's own
// limits.
var designChecks = map[string]string{
	calc.CheckOvercommit:         "service.capacity",
	calc.CheckUndersized:         "service.capacity",
	calc.CheckLimitBelowP99:      "sizing.p99",
	calc.CheckBurstAboveCapacity: "service.capacity",
}

// limitChecks are calc's checks of a single limit (calc.Reverse) that lint
// keeps; the rest are about export targets.
var limitChecks = []string{calc.CheckBurstOfOne, calc.CheckFixedWindowBoundary, calc.CheckWindowOverADay}

// Lint checks a policy and returns its findings, errors first, then in the
// order of the document. A value out of range is an error finding with ID
// "invalid" (Decode refuses those already); text that no export target
// may carry (Policy.ExportErrors) is an error "not_exportable". With a
// sizing section (a client count) the calculator's design checks run on
// it: overcommit, undersized, limit_below_p99, burst_above_capacity. Then
// the policy's own checks: shadow mode left on, a rejection status other
// than 429 or 503, rejections without Retry-After, fail_closed, local
// enforcement on several replicas, a tier of authenticated clients keyed
// by IP, no limit at all, a limit that cannot pass an endpoint's cost, a
// tier whose limit is above the global limit, a global limit that admits
// less than one client's designed peak (an error), capacity or rate, an
// endpoint shadowed by an earlier one, fixed-window boundaries, a burst of
// 1, and a window over a day.
func Lint(p Policy) []Finding { return lint(p, nil) }

// LintSized is Lint for a policy the caller has already sized: sizing
// must be calc.Size(p.Design())'s result without error. It saves sizing
// twice.
func LintSized(p Policy, sizing calc.Result) []Finding { return lint(p, &sizing) }

func lint(p Policy, sizing *calc.Result) []Finding {
	out := []Finding{}
	add := func(sev calc.Severity, id, field, msg, fix string) {
		f := Finding{Severity: sev, ID: id, Field: field, Message: msg, Fix: fix}
		if at, ok := p.Pos(field); ok {
			f.Line, f.Column = at.Line, at.Column
		}
		out = append(out, f)
	}
	invalid := valueErrors(p)
	for _, e := range invalid {
		add(calc.SeverityError, LintInvalid, e.Field, e.Message, "Bring the value into its range.")
	}
	for _, e := range p.ExportErrors() {
		add(calc.SeverityError, LintNotExportable, e.Field, e.Message+": every export target refuses the policy.", sentence(e.Hint))
	}

	if len(invalid) == 0 && p.Sized() && sizing == nil {
		if res, err := calc.Size(p.Design()); err == nil {
			sizing = &res
		}
	}
	if len(invalid) == 0 && p.Sized() && sizing != nil {
		for _, c := range sizing.Checks {
			field, ok := designChecks[c.ID]
			if !ok {
				continue
			}
			if c.ID == calc.CheckLimitBelowP99 && c.Subject != "rate" {
				field = c.Subject
			}
			add(c.Severity, c.ID, field, c.Message, c.Fix)
		}
	}

	if p.Defaults.Mode == ModeShadow {
		add(calc.SeverityWarning, LintShadowMode, "defaults.mode",
			"Shadow mode is on: the limits only log what they would reject and reject nothing.",
			"Switch to mode: enforce once the shadow logs show who would be rejected; a policy left in shadow protects nothing.")
	}
	if c := p.Defaults.Response.Code(); c != 429 && c != 503 && c >= 400 && c <= 599 {
		add(calc.SeverityWarning, LintRejectStatus, "defaults.response.status",
			fmt.Sprintf("Rejected requests get status %d: clients, SDKs and proxies recognise a rate limit by 429 Too Many Requests (or 503 when the service sheds load) and back off on it; a %d reads as a different failure, and is either given up on or retried at once.", c, c),
			fmt.Sprintf("Set status: 429 instead of %d; use 503 only for shedding load when the whole service is overloaded.", c))
	}
	if !p.Defaults.Response.SendsRetryAfter() {
		add(calc.SeverityWarning, LintNoRetryAfter, "defaults.response.retry_after",
			"retry_after is false: rejected clients are not told when the limit admits them again, so most retry at once, and a crowd of them retrying together is a retry storm that keeps them rejected and loads the limiter.",
			"Set retry_after: true (the default), so clients wait as long as the limit needs.")
	}
	if p.Service.OnStoreFailure == FailClosed {
		add(calc.SeverityWarning, LintFailClosed, "service.on_store_failure",
			"fail_closed rejects every request while the shared store is unreachable: a store outage becomes an outage of the whole API.",
			"Use fail_open with an alert on store errors (what most teams do), or keep local fallback limits for the outage.")
	}
	if p.Service.Enforcement == calc.Local && p.Service.Replicas > 1 {
		add(calc.SeverityWarning, LintLocalReplicas, "service.enforcement",
			fmt.Sprintf("Each of the %d replicas enforces every limit on its own: a client gets up to %d × its limit.", p.Service.Replicas, p.Service.Replicas),
			fmt.Sprintf("Enforce in one shared store (e.g. Redis), or divide each limit by %d: exact only when the balancer spreads each client's requests evenly.", p.Service.Replicas))
	}

	for i, t := range p.Tiers {
		key, field := t.Key, fmt.Sprintf("tiers[%d].key", i)
		if key == "" {
			key, field = p.Defaults.Key, "defaults.key"
		}
		if key != KeyIP || anonymous(t.Name) {
			continue
		}
		fix := fmt.Sprintf("Give tier %s key: api_key (or account); keep ip for anonymous clients.", t.Name)
		if field == "defaults.key" {
			fix = fmt.Sprintf("Give tier %s key: api_key (or account), or set defaults.key to one of them and key: ip only on the anonymous tier.", t.Name)
		}
		add(calc.SeverityWarning, LintTierKeyedByIP, field,
			fmt.Sprintf("Tier %s is keyed by ip: its clients are authenticated, yet every client behind one NAT, proxy or mobile carrier shares a single %s limit, and a client that changes address gets a fresh one.", t.Name, t.Name),
			fix)
	}

	type limited struct {
		field string
		spec  algorithms.Spec
	}
	var limits []limited
	if p.Defaults.Limit.Algorithm != "" {
		limits = append(limits, limited{"defaults.limit", p.Defaults.Limit})
	}
	for i, t := range p.Tiers {
		if t.Limit.Algorithm != "" {
			limits = append(limits, limited{fmt.Sprintf("tiers[%d].limit", i), t.Limit})
		}
	}
	for i, e := range p.Endpoints {
		if e.Limit.Algorithm != "" {
			limits = append(limits, limited{fmt.Sprintf("endpoints[%d].limit", i), e.Limit})
		}
	}
	if p.Global.Limit.Algorithm != "" {
		limits = append(limits, limited{"global.limit", p.Global.Limit})
	}
	if len(limits) == 0 {
		add(calc.SeverityError, LintNoLimit, "defaults",
			"The policy sets no limit: not a default, tier, endpoint or global one.",
			"Add defaults.limit (the per-client limit) and a global limit at the usable rate.")
	}

	// Costs: a request whose cost exceeds a limit's capacity never passes
	// it. An endpoint's cost counts against its own limit and against the
	// per-client and global limits every request passes.
	for i, e := range p.Endpoints {
		cost := max(e.Cost, 1)
		field := fmt.Sprintf("endpoints[%d]", i)
		for _, l := range limits {
			if l.spec.Validate() != nil || (parentSection(l.field) == "endpoints" && l.field != field+".limit") {
				continue
			}
			if c := l.spec.Capacity(); c < cost {
				add(calc.SeverityError, LintBurstBelowCost, l.field,
					fmt.Sprintf("%s lets at most %d tokens through at once, below the cost %d of %s %s: that request can never pass.",
						l.spec, c, cost, e.Match.Method, e.Match.Path),
					fmt.Sprintf("Raise its capacity (burst, queue + 1 or limit) to at least %d, or lower the endpoint's cost.", cost))
			}
		}
	}

	// A tier above the global limit: one client of the tier may take more
	// than the whole service admits.
	if g := p.Global.Limit; g.Algorithm != "" && g.Validate() == nil {
		for i, t := range p.Tiers {
			s := t.Limit
			if s.Algorithm == "" || s.Validate() != nil {
				continue
			}
			if pace(s) > pace(g) || s.Capacity() > g.Capacity() {
				add(calc.SeverityWarning, LintTierOverGlobal, fmt.Sprintf("tiers[%d].limit", i),
					fmt.Sprintf("Tier %s allows one client %s, more than the global limit %s allows all clients together: a single client can starve the others.",
						t.Name, s, g),
					"Lower the tier's limit below the global limit (a fraction of it), or raise the global limit if the service can take it.")
			}
		}
	}

	for _, f := range globalBelowClient(p) {
		add(f.Severity, LintGlobalBelowClient, "global.limit", f.Message, f.Fix)
	}

	for i, e := range p.Endpoints {
		if j, ok := shadowedBy(p.Endpoints, i); ok {
			first := p.Endpoints[j]
			fix := fmt.Sprintf("List %s first: move endpoints[%d] above endpoints[%d] (the more specific path first), or remove it.", e.Match.Path, i, j)
			if covers(e.Match, first.Match) {
				fix = fmt.Sprintf("Merge endpoints[%d] into endpoints[%d]: the two match the same requests (their {name}s differ only in name), so reordering does not help.", i, j)
			}
			add(calc.SeverityWarning, LintShadowedEndpoint, fmt.Sprintf("endpoints[%d].match", i),
				fmt.Sprintf("endpoints[%d] (%s %s) can never match: endpoints[%d] (%s %s) comes first and matches every request it would, and the first endpoint that matches decides the cost and the endpoint limit.",
					i, e.Match.Method, e.Match.Path, j, first.Match.Method, first.Match.Path),
				fix)
		}
	}

	for _, l := range limits {
		if l.spec.Validate() != nil {
			continue
		}
		rev, err := calc.Reverse(calc.LimitOf(l.spec))
		if err != nil {
			continue
		}
		for _, c := range rev.Checks {
			if slices.Contains(limitChecks, c.ID) {
				add(c.Severity, c.ID, l.field, c.Message, c.Fix)
			}
		}
	}

	slices.SortStableFunc(out, func(a, b Finding) int { return rank(a.Severity) - rank(b.Severity) })
	return out
}

// parentSection is the top-level section of a path: "endpoints" for
// "endpoints[2].limit".
func parentSection(path string) string {
	for i, c := range path {
		if c == '.' || c == '[' {
			return path[:i]
		}
	}
	return path
}

// pace is the sustained rate a limit allows one key, in requests/s.
func pace(s algorithms.Spec) float64 {
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA, algorithms.NameLeakyBucket:
		return s.Rate
	}
	return float64(s.Limit) / s.Window.Seconds()
}

func rank(s calc.Severity) int {
	switch s {
	case calc.SeverityError:
		return 0
	case calc.SeverityWarning:
		return 1
	}
	return 2
}

// sentence is s with its first letter upper case and a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	if c := s[0]; c >= 'a' && c <= 'z' {
		s = string(c-'a'+'A') + s[1:]
	}
	return strings.TrimSuffix(s, ".") + "."
}

// anonymousNames are tier names that say their clients are not
// authenticated, so that keying them by IP is all one can do.
var anonymousNames = []string{"anonymous", "anon", "public", "unauthenticated", "guest"}

// anonymous reports whether a tier name is one of anonymousNames, ignoring
// ASCII case (as tier names are matched).
func anonymous(name string) bool {
	for _, a := range anonymousNames {
		if len(name) == len(a) && LowerASCII(name) == a {
			return true
		}
	}
	return false
}

// shadowedBy reports the first endpoint before eps[i] that matches every
// request eps[i] matches (see covers), so that eps[i] never matches. An
// endpoint with the very same method and path is a duplicate, which
// validation reports, and paths that ValidPath refuses are left to it.
func shadowedBy(eps []Endpoint, i int) (int, bool) {
	later := eps[i].Match
	if !ValidPath(later.Path) {
		return 0, false
	}
	for j, e := range eps[:i] {
		m := e.Match
		if m.Path == later.Path || !ValidPath(m.Path) {
			continue
		}
		if covers(m, later) {
			return j, true
		}
	}
	return 0, false
}

// covers reports whether every request that b matches, a matches too: the
// same method, ignoring ASCII case as requests are matched (there is no
// "any method": a policy names one on every endpoint, and the engine
// compares it), and path templates with as many segments in which each of
// a's segments is a {name} or the same literal. A {name} matches one
// non-empty segment, so it covers a literal segment or another {name},
// never an empty one ("/a/" has an empty last segment); a literal covers
// only itself.
func covers(a, b Match) bool {
	if LowerASCII(a.Method) != LowerASCII(b.Method) {
		return false
	}
	as, bs := strings.Split(a.Path, "/"), strings.Split(b.Path, "/")
	if len(as) != len(bs) {
		return false
	}
	for k, s := range as {
		if IsPlaceholder(s) {
			if bs[k] == "" {
				return false
			}
		} else if IsPlaceholder(bs[k]) || s != bs[k] {
			return false
		}
	}
	return true
}

// globalBelowClient compares, for the default limit and each tier's own
// limit, what one client may send over a span of s seconds with the most
// the global limit admits over the same span, counting that client alone
// (every other client only lowers it):
//
//	sent      with a designed peak in the sizing (peak requests/s for
//	          peak_seconds): the peak's n = ⌈peak × peak_seconds⌉
//	          requests, evenly spaced, so s = (n − 1)/peak, cut to what
//	          the client's own limit admits of them; without a peak, the
//	          client limit's capacity at once (s = 0)
//	admits(s) token_bucket, gcra:  ⌊burst + rate × s⌋
//	          leaky_bucket:        ⌊queue + 1 + rate × s⌋
//	          the three windows:   limit × (⌈s / window⌉ + 1), at least
//	                               limit: [t, t+s] touches at most
//	                               ⌈s/window⌉ + 1 windows, and none of the
//	                               three admits more than limit in one
//	                               (capped at n for the peak)
//
// admits is an upper bound (a bucket holds at most its burst and refills
// at its rate), so a cut it reports is a real one. When admits(s) of the
// global limit is below what one client's limit lets through of the
// designed peak, the peak the limits were sized for cannot pass: an error.
// Without a peak, a global capacity below the default limit's is a
// warning, and so is a global long-run rate below the default limit's
// rate (one client at its limit is throttled by everyone's); for a tier's
// own limit those two are tier_above_global's. A tier that inherits the
// default limit is reported with it.
func globalBelowClient(p Policy) []Finding {
	g := p.Global.Limit
	if g.Algorithm == "" || g.Validate() != nil {
		return nil
	}
	peak, secs := p.Sizing.Peak, p.Sizing.PeakSeconds
	sized := peak > 0 && secs > 0 && !math.IsInf(peak*secs, 0)
	var n int64
	var span float64
	if sized {
		n = int64(math.Ceil(peak*secs - 1e-9))
		span = float64(n-1) / peak
	}
	var inheriting []string
	for _, t := range p.Tiers {
		if t.Limit.Algorithm == "" {
			inheriting = append(inheriting, t.Name)
		}
	}
	var out []Finding
	for _, l := range p.Limits() {
		if l.Scope != ScopeDefault && l.Scope != ScopeTier || l.Spec.Validate() != nil {
			continue
		}
		who := l.Field
		if l.Scope == ScopeTier {
			var i int
			if _, err := fmt.Sscanf(l.Field, "tiers[%d].limit", &i); err != nil || i >= len(p.Tiers) || p.Tiers[i].Limit.Algorithm == "" {
				continue // inherits the default limit: reported with it
			}
			who = fmt.Sprintf("tier %s (%s)", l.Tier, l.Field)
		} else if len(inheriting) == 1 {
			who = fmt.Sprintf("%s (also tier %s)", l.Field, inheriting[0])
		} else if len(inheriting) > 1 {
			who = fmt.Sprintf("%s (also tiers %s)", l.Field, strings.Join(inheriting, ", "))
		}
		c := l.Spec
		if sized {
			own := min(n, admits(c, span))
			if got := min(n, admits(g, span)); got < own {
				out = append(out, Finding{Severity: calc.SeverityError,
					Message: fmt.Sprintf("The designed peak is %s requests/s for %s s, %d requests from one client, and %s %s admits up to %d of them, but global.limit %s admits at most %d in those %s s (%s) for all clients together: at least %d of the peak's %d requests are rejected even with no other client sending.",
						short(peak), short(secs), n, who, c, own, g, got, short(span), admitsFormula(g, span), n-got, n),
					Fix: fmt.Sprintf("Raise global.limit to admit %d requests in %s s (%s), or lower sizing.peak if the service cannot take it.", own, short(span), needed(g, own, span))})
				continue
			}
		}
		var why, fix []string
		if !sized {
			if cc, gc := c.Capacity(), admits(g, 0); gc < cc {
				why = append(why, fmt.Sprintf("global.limit %s admits at most %d requests at once for all clients together, fewer than the %d one client may send at once", g, gc, cc))
				fix = append(fix, needed(g, cc, 0))
			}
		}
		if l.Scope == ScopeDefault && pace(g) < pace(c) {
			what := "global.limit " + g.String()
			if len(why) > 0 {
				what = "it"
			}
			why = append(why, fmt.Sprintf("%s sustains %s requests/s for all clients together, below the %s requests/s of one client, so a single client at its limit is throttled by everyone's", what, short(pace(g)), short(pace(c))))
			fix = append(fix, "a long-run rate of at least "+short(pace(c))+" requests/s")
		}
		if len(why) > 0 {
			out = append(out, Finding{Severity: calc.SeverityWarning,
				Message: fmt.Sprintf("One client's limit is %s %s, but %s.", who, c, strings.Join(why, "; and ")),
				Fix:     fmt.Sprintf("Raise global.limit (%s) so one client fits in it with room for the others, or lower %s.", strings.Join(fix, ", and "), l.Field)})
		}
	}
	return out
}

// admits is the most s admits over a span of span seconds, from rested;
// see globalBelowClient.
func admits(s algorithms.Spec, span float64) int64 {
	var x float64
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		x = float64(s.Burst) + s.Rate*span
	case algorithms.NameLeakyBucket:
		x = float64(s.Queue+1) + s.Rate*span
	default:
		x = float64(s.Limit) * (math.Ceil(span/s.Window.Seconds()) + 1)
	}
	if x >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(math.Floor(x + 1e-9))
}

// admitsFormula is admits's formula with s's numbers: "⌊burst + rate × s⌋
// = ⌊100 + 100 × 1.997⌋".
func admitsFormula(s algorithms.Spec, span float64) string {
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		return fmt.Sprintf("⌊burst + rate × s⌋ = ⌊%d + %s × %s⌋", s.Burst, short(s.Rate), short(span))
	case algorithms.NameLeakyBucket:
		return fmt.Sprintf("⌊queue + 1 + rate × s⌋ = ⌊%d + 1 + %s × %s⌋", s.Queue, short(s.Rate), short(span))
	}
	return fmt.Sprintf("limit × (⌈s / window⌉ + 1) = %d × (⌈%s / %s⌉ + 1), the windows those seconds can touch", s.Limit, short(span), short(s.Window.Seconds()))
}

// needed is the parameter s needs to admit want requests over span
// seconds at its own rate or window: "burst ≥ 401 at rate 100/s".
func needed(s algorithms.Spec, want int64, span float64) string {
	switch s.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		return fmt.Sprintf("burst ≥ %d at rate %s/s", int64(math.Max(1, math.Ceil(float64(want)-s.Rate*span-1e-9))), short(s.Rate))
	case algorithms.NameLeakyBucket:
		return fmt.Sprintf("queue ≥ %d at rate %s/s", int64(math.Max(0, math.Ceil(float64(want)-s.Rate*span-1e-9)-1)), short(s.Rate))
	}
	touched := math.Ceil(span/s.Window.Seconds()) + 1
	return fmt.Sprintf("limit ≥ %d per %s", int64(math.Ceil(float64(want)/touched)), s.Window)
}

// short formats a number with at most three decimals: 1.997, 100, 0.5.
func short(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64)
}
