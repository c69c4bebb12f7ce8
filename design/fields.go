package design

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/policy"
)

// Kind is how a field's value is written.
type Kind string

// Kinds of field.
const (
	KindNumber  Kind = "number"  // a finite decimal number
	KindWhole   Kind = "whole"   // a whole number
	KindSeconds Kind = "seconds" // a duration in seconds
	KindEnum    Kind = "enum"    // one of Options
	KindText    Kind = "text"    // UTF-8 text
	KindBool    Kind = "bool"    // true or false
	KindList    Kind = "list"    // a comma-separated list of Options, or none
)

// Numeric reports whether the kind is written as a number.
func (k Kind) Numeric() bool { return k == KindNumber || k == KindWhole || k == KindSeconds }

// Row is the repeated section a field belongs to, or NoRow.
type Row string

// Rows.
const (
	NoRow       Row = ""
	TierRow     Row = "tiers"
	EndpointRow Row = "endpoints"
)

// Option is one allowed value of an enum or list field and how the form
// labels it.
type Option struct {
	Value, Label string
}

// Field describes one parameter of the design URL: its name, where it
// lives in the policy, how the form labels it, and how to read and write
// it. Fields is the table of them all; parsing, messages, the canonical
// query and the form are all driven by it.
type Field struct {
	// Name is the URL parameter. In a row it is the part after the row
	// prefix: "clients" for tiers.3.clients (see Param).
	Name string
	// Row is the repeated section of the field; NoRow for a scalar.
	Row Row
	// Path is the field's path in the policy file; in a row, "[N]" stands
	// for the row's place: "tiers[N].limit.burst".
	Path string
	// Section is the form section the field is drawn in.
	Section string
	// Label, Help and Unit are the form's words for it.
	Label, Help, Unit string
	Kind              Kind
	// Options are the allowed values of an enum or list field.
	Options []Option
	// Placeholder is what a blank field means, for the form to show.
	Placeholder string

	// implicit is the value that means the same as leaving the field out;
	// the canonical query of an imported policy leaves it out.
	implicit string
	// maxLen overrides maxValueLen.
	maxLen int
	// limitParam is "algorithm" or the limit parameter ("rate", "burst"…)
	// for a limit's fields, "" otherwise.
	limitParam string
	// patternParam is the pattern parameter ("rate", "count"…), "pattern"
	// for the pattern's name, "" for every other field.
	patternParam string
	// get formats the field of row i (0 for a scalar) from the design's
	// typed state; "" means not given.
	get func(d *Design, i int) string
	// set reads v into the design's typed state, or says why it cannot.
	set func(d *Design, i int, v string) error
}

// Param is the URL parameter of the field in row index (the index as the
// URL numbers it); for a scalar field it is Name.
func (f Field) Param(index int) string {
	if f.Row == NoRow {
		return f.Name
	}
	return string(f.Row) + "." + strconv.Itoa(index) + "." + f.Name
}

// param is the URL parameter of a row's field: "tiers.3.name".
func (r Row) param(index int, name string) string {
	return string(r) + "." + strconv.Itoa(index) + "." + name
}

// PolicyPath is the field's policy path in the row at policy position i.
func (f Field) PolicyPath(i int) string {
	return strings.Replace(f.Path, "[N]", "["+strconv.Itoa(i)+"]", 1)
}

// max is the longest value the field takes, in bytes.
func (f Field) max() int {
	if f.maxLen > 0 {
		return f.maxLen
	}
	return maxValueLen
}

// in sets the form's words of a field.
func (f Field) in(section, label, help, unit, placeholder string) Field {
	f.Section, f.Label, f.Help, f.Unit, f.Placeholder = section, label, help, unit, placeholder
	return f
}

// at is where a field's value lives in the policy being edited: the row
// at policy position i, or the scalar (i is then 0).
type at[T any] func(p *policy.Policy, i int) *T

func tier(p *policy.Policy, i int) *policy.Tier         { return &p.Tiers[i] }
func endpoint(p *policy.Policy, i int) *policy.Endpoint { return &p.Endpoints[i] }

func numberField(name, path string, v at[float64]) Field {
	return Field{Name: name, Path: path, Kind: KindNumber,
		get: func(d *Design, i int) string {
			if x := *v(&d.p, i); x != 0 {
				return formatNumber(x)
			}
			return ""
		},
		set: func(d *Design, i int, s string) error {
			x, err := parseNumber(s)
			*v(&d.p, i) = x
			return err
		}}
}

// optNumberField is a number whose 0 differs from leaving it out.
func optNumberField(name, path string, v at[*float64]) Field {
	return Field{Name: name, Path: path, Kind: KindNumber,
		get: func(d *Design, i int) string {
			if x := *v(&d.p, i); x != nil {
				return formatNumber(*x)
			}
			return ""
		},
		set: func(d *Design, i int, s string) error {
			x, err := parseNumber(s)
			if err == nil {
				*v(&d.p, i) = &x
			}
			return err
		}}
}

func wholeField[T ~int | ~int64](name, path string, v at[T]) Field {
	return Field{Name: name, Path: path, Kind: KindWhole,
		get: func(d *Design, i int) string {
			if x := *v(&d.p, i); x != 0 {
				return strconv.FormatInt(int64(x), 10)
			}
			return ""
		},
		set: func(d *Design, i int, s string) error {
			x, err := parseWhole(s)
			*v(&d.p, i) = T(x)
			return err
		}}
}

func secondsField(name, path string, v at[time.Duration]) Field {
	return Field{Name: name, Path: path, Kind: KindSeconds, Unit: "s",
		get: func(d *Design, i int) string {
			if x := *v(&d.p, i); x != 0 {
				return formatSeconds(x)
			}
			return ""
		},
		set: func(d *Design, i int, s string) error {
			x, err := parseSeconds(s)
			*v(&d.p, i) = x
			return err
		}}
}

// optSecondsField is a duration whose 0 differs from leaving it out.
func optSecondsField(name, path string, v at[*time.Duration]) Field {
	return Field{Name: name, Path: path, Kind: KindSeconds, Unit: "s",
		get: func(d *Design, i int) string {
			if x := *v(&d.p, i); x != nil {
				return formatSeconds(*x)
			}
			return ""
		},
		set: func(d *Design, i int, s string) error {
			x, err := parseSeconds(s)
			if err == nil {
				*v(&d.p, i) = &x
			}
			return err
		}}
}

func textField(name, path string, v at[string]) Field {
	return Field{Name: name, Path: path, Kind: KindText,
		get: func(d *Design, i int) string { return *v(&d.p, i) },
		set: func(d *Design, i int, s string) error {
			*v(&d.p, i) = s
			return parseText(s)
		}}
}

func enumField[T ~string](name, path string, options []Option, v at[T]) Field {
	values := optionValues(options)
	return Field{Name: name, Path: path, Kind: KindEnum, Options: options,
		get: func(d *Design, i int) string { return string(*v(&d.p, i)) },
		set: func(d *Design, i int, s string) error {
			if err := parseEnum(s, values); err != nil {
				return err
			}
			*v(&d.p, i) = T(s)
			return nil
		}}
}

func optionValues(options []Option) []string {
	out := make([]string, len(options))
	for i, o := range options {
		out[i] = o.Value
	}
	return out
}

var (
	keyOptions = []Option{
		{string(policy.KeyAPIKey), "api_key (one per API key)"}, {string(policy.KeyIP), "ip (one per client address)"},
		{string(policy.KeyAccount), "account (one per account)"}, {string(policy.KeyGlobal), "global (one for everyone)"},
	}
	headerOptions = []Option{
		{string(policy.HeadersIETF), "ietf: RateLimit and RateLimit-Policy (IETF draft)"},
		{string(policy.HeadersLegacy), "legacy: RateLimit-Limit, -Remaining, -Reset"},
		{string(policy.HeadersX), "x: X-RateLimit-*"},
	}
)

// jitterModeOptions are the jitter modes (calc.JitterModes) as the form
// offers them; blank is the default, proportional.
var jitterModeOptions = []Option{
	{string(algorithms.JitterProportional), "proportional (adds up to jitter × the wait)"},
	{string(algorithms.JitterFull), "full (anywhere from 0 to the wait)"},
	{string(algorithms.JitterEqual), "equal (half the wait, plus up to half)"},
	{string(algorithms.JitterDecorrelated), "decorrelated (from base to 3 × the last wait)"},
}

// noHeaders is the headers value for sending none.
const noHeaders = "none"

// headersField is the comma list of header styles; "none" sends none.
func headersField() Field {
	styles := optionValues(headerOptions)
	return Field{Name: "headers", Path: "defaults.response.headers", Kind: KindList, Options: headerOptions,
		get: func(d *Design, _ int) string {
			hs := d.p.Defaults.Response.Headers
			if hs == nil {
				return ""
			}
			if len(hs) == 0 {
				return noHeaders
			}
			parts := make([]string, len(hs))
			for i, h := range hs {
				parts[i] = string(h)
			}
			return strings.Join(parts, ",")
		},
		set: func(d *Design, _ int, s string) error {
			out := []policy.HeaderStyle{}
			if s != noHeaders {
				for part := range strings.SplitSeq(s, ",") {
					h := strings.TrimSpace(part)
					if err := parseEnum(h, styles); err != nil {
						return fmt.Errorf("%s: want a comma-separated list of %s, or %s", err, strings.Join(styles, ", "), noHeaders)
					}
					for _, had := range out {
						if string(had) == h {
							return fmt.Errorf("%s lists %s twice", quote(s), h)
						}
					}
					out = append(out, policy.HeaderStyle(h))
				}
			}
			d.p.Defaults.Response.Headers = out
			return nil
		}}
}

func retryAfterField() Field {
	return Field{Name: "retry_after", Path: "defaults.response.retry_after", Kind: KindBool,
		Options: []Option{{"true", "true: send Retry-After"}, {"false", "false: leave it out"}},
		get: func(d *Design, _ int) string {
			if b := d.p.Defaults.Response.RetryAfter; b != nil {
				return strconv.FormatBool(*b)
			}
			return ""
		},
		set: func(d *Design, _ int, s string) error {
			b, err := parseBool(s)
			if err == nil {
				d.p.Defaults.Response.RetryAfter = &b
			}
			return err
		}}
}

// The special values of a limit's algorithm.
const (
	// NoLimit is the algorithm of a default or global limit that is
	// left out (and of an endpoint without its own limit).
	NoLimit = "none"
	// InheritLimit is the algorithm of a tier that takes the default limit.
	InheritLimit = "default"
)

// limitParams are a limit's parameters, in form order.
var limitParams = []string{"rate", "burst", "queue", "limit", "window"}

// usedParams are the parameters of an algorithm, in limitParams order.
func usedParams(name algorithms.Name) []string {
	switch name {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		return []string{"rate", "burst"}
	case algorithms.NameLeakyBucket:
		return []string{"rate", "queue"}
	case algorithms.NameFixedWindow, algorithms.NameSlidingLog, algorithms.NameSlidingWindow:
		return []string{"limit", "window"}
	}
	return nil
}

// specParam formats the parameter param of s.
func specParam(s algorithms.Spec, param string) string {
	switch param {
	case "rate":
		return formatNumber(s.Rate)
	case "burst":
		return strconv.FormatInt(s.Burst, 10)
	case "queue":
		return strconv.FormatInt(s.Queue, 10)
	case "limit":
		return strconv.FormatInt(s.Limit, 10)
	case "window":
		return formatSeconds(s.Window)
	}
	return ""
}

// copyParam copies the parameter param from src to dst.
func copyParam(dst *algorithms.Spec, src algorithms.Spec, param string) {
	switch param {
	case "rate":
		dst.Rate = src.Rate
	case "burst":
		dst.Burst = src.Burst
	case "queue":
		dst.Queue = src.Queue
	case "limit":
		dst.Limit = src.Limit
	case "window":
		dst.Window = src.Window
	}
}

// scope is one place a limit can be: its URL prefix, its policy path and
// what its algorithm means when left out.
type scope struct {
	prefix  string // "limit" (after the row prefix for rows)
	row     Row
	path    string // "defaults.limit", "tiers[N].limit"
	section string
	// absent is the algorithm when none is given: token_bucket, or ""
	// for an endpoint; special is "none" or "default".
	absent  algorithms.Name
	special string
	// edit is the limit being edited and its pins.
	edit func(d *Design, i int) (*algorithms.Spec, *limitEdit)
}

var (
	defaultScope = scope{prefix: "limit", path: "defaults.limit", section: "limit",
		absent: algorithms.NameTokenBucket, special: NoLimit,
		edit: func(d *Design, _ int) (*algorithms.Spec, *limitEdit) { return &d.p.Defaults.Limit, &d.defaultEdit }}
	tierScope = scope{prefix: "limit", row: TierRow, path: "tiers[N].limit", section: "tiers",
		absent: algorithms.NameTokenBucket, special: InheritLimit,
		edit: func(d *Design, i int) (*algorithms.Spec, *limitEdit) { return &d.p.Tiers[i].Limit, &d.tierEdits[i] }}
	endpointScope = scope{prefix: "limit", row: EndpointRow, path: "endpoints[N].limit", section: "endpoints",
		special: NoLimit,
		edit: func(d *Design, i int) (*algorithms.Spec, *limitEdit) {
			return &d.p.Endpoints[i].Limit, &d.endpointEdits[i]
		}}
	globalScope = scope{prefix: "global.limit", path: "global.limit", section: "global",
		absent: algorithms.NameTokenBucket, special: NoLimit,
		edit: func(d *Design, _ int) (*algorithms.Spec, *limitEdit) { return &d.p.Global.Limit, &d.globalEdit }}
)

// limitFields are the algorithm and parameters of the limit at sc.
func limitFields(sc scope) []Field {
	var opts []Option
	if sc.special == InheritLimit {
		opts = append(opts, Option{InheritLimit, "default: the default limit"})
	}
	for _, n := range algorithms.Names {
		opts = append(opts, Option{string(n), string(n)})
	}
	if sc.special == NoLimit {
		opts = append(opts, Option{NoLimit, "none: no limit here"})
	}
	placeholder, implicit := string(sc.absent), string(sc.absent)
	if sc.absent == "" {
		placeholder, implicit = NoLimit, NoLimit
	}
	alg := Field{Name: sc.prefix + ".algorithm", Row: sc.row, Path: sc.path + ".algorithm", Kind: KindEnum,
		Options: opts, implicit: implicit, limitParam: "algorithm",
		get: func(d *Design, i int) string {
			s, e := sc.edit(d, i)
			switch {
			case !e.chosen:
				return ""
			case s.Algorithm == "":
				return sc.special
			}
			return string(s.Algorithm)
		},
		set: func(d *Design, i int, v string) error {
			if err := parseEnum(v, optionValues(opts)); err != nil {
				return err
			}
			s, e := sc.edit(d, i)
			e.chosen = true
			s.Algorithm = algorithms.Name(v)
			if v == sc.special {
				s.Algorithm = ""
			}
			return nil
		}}
	alg = alg.in(sc.section, "Algorithm", "the algorithm of this limit", "", placeholder)
	out := []Field{alg}
	words := map[string][3]string{
		"rate":   {"Rate", "sustained", "requests/s"},
		"burst":  {"Burst", "a rested client may send at once", "requests"},
		"queue":  {"Queue", "that may wait to be served", "requests"},
		"limit":  {"Limit", "per window", "requests"},
		"window": {"Window", "of the limit", "s"},
	}
	for _, param := range limitParams {
		f := Field{Name: sc.prefix + "." + param, Row: sc.row, Path: sc.path + "." + param, limitParam: param,
			get: func(d *Design, i int) string {
				s, e := sc.edit(d, i)
				if !e.pinned[param] {
					return ""
				}
				return specParam(*s, param)
			},
			set: func(d *Design, i int, v string) error {
				s, e := sc.edit(d, i)
				var err error
				switch param {
				case "rate":
					s.Rate, err = parseNumber(v)
				case "window":
					s.Window, err = parseSeconds(v)
				default:
					var x int64
					x, err = parseWhole(v)
					switch param {
					case "burst":
						s.Burst = x
					case "queue":
						s.Queue = x
					default:
						s.Limit = x
					}
				}
				if err == nil {
					e.pin(param)
				}
				return err
			}}
		switch param {
		case "rate":
			f.Kind = KindNumber
		case "window":
			f.Kind = KindSeconds
		default:
			f.Kind = KindWhole
		}
		w := words[param]
		hold := "blank: the proposal"
		if sc.row == EndpointRow {
			hold = "required with an algorithm: an endpoint limit has no proposal"
		}
		out = append(out, f.in(sc.section, w[0], w[1]+"; "+hold, w[2], ""))
	}
	return out
}

// patternParams are every parameter any pattern reads, in form order.
var patternParams = []string{"rate", "to", "duration", "count", "idle", "period", "window", "clients", "jitter", "key_by", "cost", "seed"}

// DefaultPattern is the chart pattern when the URL names none.
const DefaultPattern = algorithms.PatternRamp

// patternFields are the pattern's name and every parameter.
func patternFields() []Field {
	var opts []Option
	for _, p := range algorithms.Patterns {
		opts = append(opts, Option{string(p.Name), string(p.Name) + ": " + p.Shape})
	}
	name := Field{Name: "pattern", Path: "pattern", Kind: KindEnum, Options: opts, patternParam: "pattern",
		implicit: string(DefaultPattern),
		get:      func(d *Design, _ int) string { return string(d.pattern.Name) },
		set: func(d *Design, _ int, v string) error {
			d.pattern.Name = algorithms.PatternName(v)
			return nil
		}}
	out := []Field{name.in("pattern", "Pattern", "the traffic the charts simulate", "", string(DefaultPattern))}
	units := map[string]string{
		"rate": "requests/s", "to": "requests/s", "duration": "s", "count": "requests", "idle": "s", "period": "s",
		"window": "s", "clients": "clients", "jitter": "fraction", "cost": "tokens", "seed": "",
	}
	for _, param := range patternParams {
		f := Field{Name: "pattern." + param, Path: "pattern." + param, patternParam: param,
			get: func(d *Design, _ int) string { return patternValue(d.pattern, param) },
			set: func(d *Design, _ int, v string) error { return setPatternParam(&d.pattern, param, v) }}
		switch param {
		case "rate", "to", "jitter":
			f.Kind = KindNumber
		case "duration", "idle", "period", "window":
			f.Kind = KindSeconds
		case "key_by":
			f.Kind = KindEnum
			f.Options = []Option{{"ip", "ip (one key for the office)"}, {"api_key", "api_key (one per user)"}}
		default:
			f.Kind = KindWhole
		}
		var users []string
		for _, p := range algorithms.Patterns {
			for _, q := range p.Params {
				if q == param {
					users = append(users, string(p.Name))
				}
			}
		}
		label := strings.ReplaceAll(param, "_", " ")
		label = strings.ToUpper(label[:1]) + label[1:]
		out = append(out, f.in("pattern", label, "read by "+strings.Join(users, ", "), units[param], ""))
	}
	return out
}

// setPatternParam sets the pattern parameter param of p from v.
func setPatternParam(p *algorithms.Pattern, param, v string) error {
	switch param {
	case "rate", "to", "jitter":
		x, err := parseNumber(v)
		if err != nil {
			return err
		}
		switch param {
		case "rate":
			p.Rate = x
		case "to":
			p.To = x
		default:
			p.Jitter = x
		}
	case "duration", "idle", "period", "window":
		x, err := parseSeconds(v)
		if err != nil {
			return err
		}
		switch param {
		case "duration":
			p.Duration = x
		case "idle":
			p.Idle = x
		case "period":
			p.Period = x
		default:
			p.Window = x
		}
	case "count", "clients", "cost":
		x, err := parseWhole(v)
		if err != nil {
			return err
		}
		switch param {
		case "count":
			p.Count = int(x)
		case "clients":
			p.Clients = int(x)
		default:
			p.Cost = x
		}
	case "seed":
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s is out of range; want a whole number in [0, 18446744073709551615]", quote(v))
		}
		p.Seed = s
	case "key_by":
		p.KeyBy = v
	}
	return nil
}

// patternValue formats the pattern parameter param of p as the URL spells
// it (durations in seconds).
func patternValue(p algorithms.Pattern, param string) string {
	switch param {
	case "rate":
		return formatNumber(p.Rate)
	case "to":
		return formatNumber(p.To)
	case "jitter":
		return formatNumber(p.Jitter)
	case "duration":
		return formatSeconds(p.Duration)
	case "idle":
		return formatSeconds(p.Idle)
	case "period":
		return formatSeconds(p.Period)
	case "window":
		return formatSeconds(p.Window)
	case "count":
		return strconv.Itoa(p.Count)
	case "clients":
		return strconv.Itoa(p.Clients)
	case "cost":
		return strconv.FormatInt(max(p.Cost, 1), 10)
	case "seed":
		return strconv.FormatUint(p.Seed, 10)
	case "key_by":
		return p.KeyBy
	}
	return ""
}

// Fields is the design URL, field by field, in form order (which is also
// the order of the canonical query). Row fields appear once, for every row.
var Fields = buildFields()

func buildFields() []Field {
	num := func(v float64) string { return formatNumber(v) }
	fs := []Field{
		textField("name", "metadata.name", func(p *policy.Policy, _ int) *string { return &p.Metadata.Name }).
			in("policy", "Name", "names the policy in its file and every export", "", "design"),
		textField("description", "metadata.description", func(p *policy.Policy, _ int) *string { return &p.Metadata.Description }).
			in("policy", "Description", "what the policy is for (up to 4096 characters)", "", ""),

		numberField("capacity", "service.capacity", func(p *policy.Policy, _ int) *float64 { return &p.Service.Capacity }).
			in("service", "Capacity", "the rate at which latency starts to degrade (measured)", "requests/s", ""),
		optNumberField("headroom", "service.headroom", func(p *policy.Policy, _ int) **float64 { return &p.Service.Headroom }).
			in("service", "Headroom", "of capacity kept free", "fraction", num(calc.DefaultHeadroom)),
		wholeField("replicas", "service.replicas", func(p *policy.Policy, _ int) *int { return &p.Service.Replicas }).
			in("service", "Replicas", "instances that enforce the limits", "", "1"),
		enumField("enforcement", "service.enforcement",
			[]Option{{string(calc.Shared), "shared (one store, e.g. Redis)"}, {string(calc.Local), "local (each replica)"}},
			func(p *policy.Policy, _ int) *calc.Enforcement { return &p.Service.Enforcement }).
			in("service", "Enforcement", "where the counts live", "", string(calc.Shared)),
		enumField("on_store_failure", "service.on_store_failure",
			[]Option{{string(policy.FailOpen), "fail_open (admit, and alert)"}, {string(policy.FailClosed), "fail_closed (reject)"}},
			func(p *policy.Policy, _ int) *policy.StoreFailure { return &p.Service.OnStoreFailure }).
			in("service", "On store failure", "what an outage of the shared store does", "", string(policy.FailOpen)),

		wholeField("clients", "sizing.clients", func(p *policy.Policy, _ int) *int { return &p.Sizing.Clients }).
			in("clients", "Clients", "active at once (with tiers: blank or their total)", "clients", ""),
		numberField("p50", "sizing.p50", func(p *policy.Policy, _ int) *float64 { return &p.Sizing.P50 }).
			in("clients", "p50", "per-client rate, median", "", ""),
		numberField("p95", "sizing.p95", func(p *policy.Policy, _ int) *float64 { return &p.Sizing.P95 }).
			in("clients", "p95", "per-client rate", "", ""),
		numberField("p99", "sizing.p99", func(p *policy.Policy, _ int) *float64 { return &p.Sizing.P99 }).
			in("clients", "p99", "per-client rate; rate = p99 × margin", "", ""),
		enumField("percentile_unit", "sizing.percentile_unit",
			[]Option{{string(calc.PerSecond), "requests per second"}, {string(calc.PerMinute), "requests per minute"}},
			func(p *policy.Policy, _ int) *calc.PercentileUnit { return &p.Sizing.PercentileUnit }).
			in("clients", "Percentile unit", "unit of p50, p95 and p99", "", string(calc.PerSecond)),
		numberField("margin", "sizing.margin", func(p *policy.Policy, _ int) *float64 { return &p.Sizing.Margin }).
			in("clients", "Margin", "multiplier of p99", "", num(calc.DefaultMargin)),

		numberField("peak", "sizing.peak", func(p *policy.Policy, _ int) *float64 { return &p.Sizing.Peak }).
			in("burst", "Peak", "a client must be able to send this for peak_seconds", "requests/s", ""),
		numberField("peak_seconds", "sizing.peak_seconds", func(p *policy.Policy, _ int) *float64 { return &p.Sizing.PeakSeconds }).
			in("burst", "Peak seconds", "how long the peak lasts", "s", ""),

		secondsField("window", "sizing.window", func(p *policy.Policy, _ int) *time.Duration { return &p.Sizing.Window }).
			in("windows", "Window", "of the window algorithms", "s", num(calc.DefaultWindow)),
		optSecondsField("max_delay", "sizing.max_delay", func(p *policy.Policy, _ int) **time.Duration { return &p.Sizing.MaxDelay }).
			in("windows", "Max delay", "longest wait in the leaky bucket's queue; blank: a whole burst", "s", ""),
	}
	fs = append(fs, limitFields(defaultScope)...)
	fs = append(fs,
		withRow(TierRow, textField("name", "tiers[N].name", func(p *policy.Policy, i int) *string { return &tier(p, i).Name }).
			in("tiers", "Name", "", "", "")),
		withRow(TierRow, wholeField("clients", "tiers[N].clients", func(p *policy.Policy, i int) *int { return &tier(p, i).Clients }).
			in("tiers", "Clients", "active at once in this tier", "clients", "")),
		withRow(TierRow, numberField("multiplier", "tiers[N].multiplier", func(p *policy.Policy, i int) *float64 { return &tier(p, i).Multiplier }).
			in("tiers", "Multiplier", "of the per-client rate", "", "1")),
		withRow(TierRow, enumField("key", "tiers[N].key", keyOptions, func(p *policy.Policy, i int) *policy.Key { return &tier(p, i).Key }).
			in("tiers", "Key", "what identifies a client of this tier; blank: the default key", "", "")),
	)
	fs = append(fs, limitFields(tierScope)...)
	fs = append(fs,
		withRow(EndpointRow, textField("method", "endpoints[N].match.method", func(p *policy.Policy, i int) *string { return &endpoint(p, i).Match.Method }).
			in("endpoints", "Method", "", "", "GET")),
		withRow(EndpointRow, textField("path", "endpoints[N].match.path", func(p *policy.Policy, i int) *string { return &endpoint(p, i).Match.Path }).
			in("endpoints", "Path", "{name} matches one path segment", "", "/v1/reports")),
		withRow(EndpointRow, wholeField("cost", "endpoints[N].cost", func(p *policy.Policy, i int) *int64 { return &endpoint(p, i).Cost }).
			in("endpoints", "Cost", "tokens one request takes", "tokens", "1")),
	)
	fs = append(fs, limitFields(endpointScope)...)
	fs = append(fs, limitFields(globalScope)...)
	fs = append(fs,
		enumField("key", "defaults.key", keyOptions, func(p *policy.Policy, _ int) *policy.Key { return &p.Defaults.Key }).
			in("response", "Key", "what identifies a client", "", string(policy.KeyAPIKey)),
		enumField("mode", "defaults.mode",
			[]Option{{string(policy.ModeEnforce), "enforce (reject over the limit)"}, {string(policy.ModeShadow), "shadow (log what would be rejected)"}},
			func(p *policy.Policy, _ int) *policy.Mode { return &p.Defaults.Mode }).
			in("response", "Mode", "shadow rejects nothing: try limits before enforcing them", "", string(policy.ModeEnforce)),
		wholeField("status", "defaults.response.status", func(p *policy.Policy, _ int) *int { return &p.Defaults.Response.Status }).
			in("response", "Status", "the HTTP status of a rejection (429 is the standard)", "", "429"),
		headersField().in("response", "Headers", "rate-limit header styles sent, comma-separated; none sends none", "", string(policy.HeadersIETF)),
		retryAfterField().in("response", "Retry-After", "send Retry-After on a rejection", "", "true"),

		secondsField("retry.base", "sizing.retry.base", func(p *policy.Policy, _ int) *time.Duration { return &p.Sizing.Retry.Base }).
			in("retry", "Base", "first wait", "s", num(calc.DefaultRetryBase)),
		numberField("retry.factor", "sizing.retry.factor", func(p *policy.Policy, _ int) *float64 { return &p.Sizing.Retry.Factor }).
			in("retry", "Factor", "each wait × factor", "", num(calc.DefaultRetryFactor)),
		secondsField("retry.cap", "sizing.retry.cap", func(p *policy.Policy, _ int) *time.Duration { return &p.Sizing.Retry.Cap }).
			in("retry", "Cap", "longest wait", "s", num(calc.DefaultRetryCap)),
		wholeField("retry.attempts", "sizing.retry.attempts", func(p *policy.Policy, _ int) *int { return &p.Sizing.Retry.Attempts }).
			in("retry", "Attempts", "retries before giving up", "", strconv.Itoa(calc.DefaultRetryAttempts)),
		optNumberField("retry.jitter", "sizing.retry.jitter", func(p *policy.Policy, _ int) **float64 { return &p.Sizing.Retry.Jitter }).
			in("retry", "Jitter", "fraction added at random to each wait (proportional mode only)", "fraction", num(calc.DefaultRetryJitter)),
		enumField("retry.jitter_mode", "sizing.retry.jitter_mode", jitterModeOptions,
			func(p *policy.Policy, _ int) *string { return &p.Sizing.Retry.JitterMode }).
			in("retry", "Jitter mode", "how jitter draws each wait; the jitter fraction applies to proportional only", "", calc.DefaultRetryJitterMode),
	)
	fs = append(fs, patternFields()...)
	for i := range fs {
		switch fs[i].Name {
		case "name":
			if fs[i].Row == NoRow {
				fs[i].implicit = defaultName
			}
		case "description":
			fs[i].maxLen = 4 * 4096 // 4096 characters of up to 4 bytes
		}
	}
	return fs
}

// withRow puts a field in a row.
func withRow(r Row, f Field) Field {
	f.Row = r
	return f
}

// defaultName is the policy's name when the URL gives none.
const defaultName = "design"

// PatternValue is the pattern parameter param of p as the URL spells it
// (durations in seconds).
func PatternValue(p algorithms.Pattern, param string) string { return patternValue(p, param) }
