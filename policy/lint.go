package policy

import (
	"fmt"
	"slices"

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
	ID       string        `json:"id"`
	Field    string        `json:"field,omitempty"`
	Line     int           `json:"line,omitempty"`
	Column   int           `json:"column,omitempty"`
	Message  string        `json:"message"`
	Fix      string        `json:"fix"`
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
)

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
// "invalid" (Decode refuses those already). With a sizing section (a
// client count) the calculator's design checks run on it: overcommit,
// undersized, limit_below_p99, burst_above_capacity. Then the policy's own
// checks: shadow mode left on, fail_closed, local enforcement on several
// replicas, a limit that cannot pass an endpoint's cost, a tier whose
// limit is above the global limit, fixed-window boundaries, a burst of 1,
// a window over a day, and no limit at all.
func Lint(p Policy) []Finding {
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

	if len(invalid) == 0 && p.sized() {
		if res, err := calc.Size(p.Design()); err == nil {
			for _, c := range res.Checks {
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
	}

	if p.Defaults.Mode == ModeShadow {
		add(calc.SeverityWarning, LintShadowMode, "defaults.mode",
			"Shadow mode is on: the limits only log what they would reject and reject nothing.",
			"Switch to mode: enforce once the shadow logs show who would be rejected; a policy left in shadow protects nothing.")
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
