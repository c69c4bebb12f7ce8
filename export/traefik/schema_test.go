package traefik

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// The types below mirror the parts of Traefik v3's dynamic configuration
// (package pkg/config/dynamic) that the export writes, with Traefik's field
// names. Decoding into them with unknown fields disallowed rejects any
// field Traefik does not know at that place (and, being a subset, any
// Traefik feature the export does not use). Validate and ValidateCRD check
// the export's own output in tests only, so they live in a test file and
// the production package does not carry them.

// Configuration is a dynamic configuration file.
type Configuration struct {
	HTTP *HTTPConfiguration `yaml:"http"`
}

// HTTPConfiguration is the http section.
type HTTPConfiguration struct {
	Routers     map[string]*Router     `yaml:"routers"`
	Middlewares map[string]*Middleware `yaml:"middlewares"`
	Services    map[string]*Service    `yaml:"services"`
}

// Router is an HTTP router: a rule, its priority (higher wins; Traefik's
// default is the rule's length), the middlewares applied in order, and
// the service.
type Router struct {
	EntryPoints []string `yaml:"entryPoints"`
	Middlewares []string `yaml:"middlewares"`
	Service     string   `yaml:"service"`
	Rule        string   `yaml:"rule"`
	RuleSyntax  string   `yaml:"ruleSyntax"`
	Priority    int      `yaml:"priority"`
}

// Middleware holds exactly one middleware type.
type Middleware struct {
	RateLimit *RateLimit `yaml:"rateLimit"`
	Headers   *Headers   `yaml:"headers"`
	Chain     *Chain     `yaml:"chain"`
}

// Chain applies middlewares in order.
type Chain struct {
	Middlewares []string `yaml:"middlewares"`
}

// Headers is the headers middleware, the part the export uses: request
// headers set to a value (an empty value removes the header).
type Headers struct {
	CustomRequestHeaders  map[string]string `yaml:"customRequestHeaders"`
	CustomResponseHeaders map[string]string `yaml:"customResponseHeaders"`
}

// RateLimit is the rateLimit middleware: a token bucket of Burst tokens
// (default 1) refilled at Average per Period (default 1 s); Average 0
// means no limit.
type RateLimit struct {
	Average         int64            `yaml:"average"`
	Period          Duration         `yaml:"period"`
	Burst           int64            `yaml:"burst"`
	SourceCriterion *SourceCriterion `yaml:"sourceCriterion"`
	Redis           *Redis           `yaml:"redis"`
}

// SourceCriterion says what one source is: at most one of the three.
type SourceCriterion struct {
	IPStrategy        *IPStrategy `yaml:"ipStrategy"`
	RequestHeaderName string      `yaml:"requestHeaderName"`
	RequestHost       bool        `yaml:"requestHost"`
}

// IPStrategy picks the client IP: the connection's address, or from
// X-Forwarded-For by depth or by excluding IPs; IPv6Subnet groups IPv6
// addresses by prefix length.
type IPStrategy struct {
	Depth       int      `yaml:"depth"`
	ExcludedIPs []string `yaml:"excludedIPs"`
	IPv6Subnet  *int     `yaml:"ipv6Subnet"`
}

// Redis is the rateLimit's shared store (Traefik v3.4+).
type Redis struct {
	Endpoints      []string       `yaml:"endpoints"`
	TLS            map[string]any `yaml:"tls"`
	Username       string         `yaml:"username"`
	Password       string         `yaml:"password"`
	DB             int            `yaml:"db"`
	PoolSize       int            `yaml:"poolSize"`
	MinIdleConns   int            `yaml:"minIdleConns"`
	MaxActiveConns int            `yaml:"maxActiveConns"`
	ReadTimeout    *Duration      `yaml:"readTimeout"`
	WriteTimeout   *Duration      `yaml:"writeTimeout"`
	DialTimeout    *Duration      `yaml:"dialTimeout"`
}

// Service is an HTTP service, a load balancer over servers here.
type Service struct {
	LoadBalancer *LoadBalancer `yaml:"loadBalancer"`
}

// LoadBalancer balances over servers.
type LoadBalancer struct {
	Servers        []Server `yaml:"servers"`
	PassHostHeader *bool    `yaml:"passHostHeader"`
}

// Server is one backend.
type Server struct {
	URL    string `yaml:"url"`
	Weight *int   `yaml:"weight"`
}

// Duration is Traefik's duration (paerser types.Duration): a whole number
// is seconds, anything else a Go duration string.
type Duration time.Duration

// UnmarshalYAML parses a Traefik duration.
func (d *Duration) UnmarshalYAML(b []byte) error {
	s := strings.TrimSpace(string(b))
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	} else if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		s = s[1 : len(s)-1]
	}
	v, err := ParseDuration(s)
	*d = Duration(v)
	return err
}

// ParseDuration parses s as Traefik does: a whole number of seconds, or a
// Go duration ("1m30s").
func ParseDuration(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(s)
}

// Validate decodes a dynamic configuration strictly and checks Traefik's
// rules for the parts the export uses: every router has a rule of known
// matchers with balanced quotes and parentheses, an existing service and
// existing middlewares; every middleware has exactly one type; every
// rateLimit has average ≥ 1 with average·10⁹ inside int64, a period ≥ 0
// and burst ≥ 1 and exactly one source criterion; every service has
// servers with absolute URLs.
func Validate(body []byte) (*Configuration, error) {
	var c Configuration
	if err := yaml.UnmarshalWithOptions(body, &c, yaml.DisallowUnknownField()); err != nil {
		return nil, err
	}
	if c.HTTP == nil {
		return nil, errors.New("no http section")
	}
	h := c.HTTP
	var errs []error
	for _, name := range sortedKeys(h.Middlewares) {
		if err := checkMiddleware(h.Middlewares[name], h.Middlewares); err != nil {
			errs = append(errs, fmt.Errorf("middleware %s: %w", name, err))
		}
	}
	for _, name := range sortedKeys(h.Services) {
		if err := checkService(h.Services[name]); err != nil {
			errs = append(errs, fmt.Errorf("service %s: %w", name, err))
		}
	}
	for _, name := range sortedKeys(h.Routers) {
		r := h.Routers[name]
		if r == nil {
			errs = append(errs, fmt.Errorf("router %s: empty", name))
			continue
		}
		if err := CheckRule(r.Rule); err != nil {
			errs = append(errs, fmt.Errorf("router %s: rule: %w", name, err))
		}
		if _, ok := h.Services[r.Service]; !ok {
			errs = append(errs, fmt.Errorf("router %s: service %q is not defined", name, r.Service))
		}
		for _, m := range r.Middlewares {
			if _, ok := h.Middlewares[m]; !ok {
				errs = append(errs, fmt.Errorf("router %s: middleware %q is not defined", name, m))
			}
		}
		if r.Priority < 0 {
			errs = append(errs, fmt.Errorf("router %s: priority %d is negative", name, r.Priority))
		}
	}
	return &c, errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func checkMiddleware(m *Middleware, all map[string]*Middleware) error {
	if m == nil {
		return errors.New("no middleware type")
	}
	n := 0
	for _, set := range []bool{m.RateLimit != nil, m.Headers != nil, m.Chain != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%d middleware types; want exactly one", n)
	}
	switch {
	case m.RateLimit != nil:
		return CheckRateLimit(m.RateLimit)
	case m.Chain != nil:
		for _, c := range m.Chain.Middlewares {
			if _, ok := all[c]; !ok {
				return fmt.Errorf("chain: middleware %q is not defined", c)
			}
		}
	case m.Headers != nil:
		for k := range m.Headers.CustomRequestHeaders {
			if !headerName.MatchString(k) {
				return fmt.Errorf("headers: %q is not a header name", k)
			}
		}
	}
	return nil
}

var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// CheckRateLimit checks Traefik's rules for a rateLimit, and ratelab's:
// an explicit average and exactly one source criterion.
func CheckRateLimit(r *RateLimit) error {
	if r.Average < 1 {
		return fmt.Errorf("average %d: want at least 1 (0 disables the limit)", r.Average)
	}
	if r.Average > (1<<63-1)/int64(time.Second) {
		return fmt.Errorf("average %d: average × 10⁹ overflows int64", r.Average)
	}
	if r.Period < 0 {
		return fmt.Errorf("period %s: negative value not valid for period", time.Duration(r.Period))
	}
	if r.Burst < 1 {
		return fmt.Errorf("burst %d: want at least 1", r.Burst)
	}
	sc := r.SourceCriterion
	if sc == nil {
		return errors.New("sourceCriterion: missing")
	}
	n := 0
	if sc.IPStrategy != nil {
		n++
		if sc.IPStrategy.Depth < 0 {
			return fmt.Errorf("ipStrategy.depth %d is negative", sc.IPStrategy.Depth)
		}
	}
	if sc.RequestHeaderName != "" {
		n++
		if !headerName.MatchString(sc.RequestHeaderName) {
			return fmt.Errorf("requestHeaderName %q is not a header name", sc.RequestHeaderName)
		}
	}
	if sc.RequestHost {
		n++
	}
	if n != 1 {
		return fmt.Errorf("sourceCriterion: %d kinds set; want exactly one of ipStrategy, requestHeaderName, requestHost", n)
	}
	if r.Redis != nil && len(r.Redis.Endpoints) == 0 {
		return errors.New("redis: no endpoints")
	}
	return nil
}

func checkService(s *Service) error {
	if s == nil || s.LoadBalancer == nil {
		return errors.New("no loadBalancer")
	}
	if len(s.LoadBalancer.Servers) == 0 {
		return errors.New("loadBalancer: no servers")
	}
	for _, sv := range s.LoadBalancer.Servers {
		u, err := url.Parse(sv.URL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return fmt.Errorf("server url %q is not an absolute URL", sv.URL)
		}
	}
	return nil
}

// matchers are Traefik v3's HTTP rule matchers and their argument counts.
var matchers = map[string]int{
	"Header": 2, "HeaderRegexp": 2, "Host": 1, "HostRegexp": 1, "Method": 1,
	"Path": 1, "PathPrefix": 1, "PathRegexp": 1, "Query": 2, "QueryRegexp": 2, "ClientIP": 1,
}

// CheckRule checks a Traefik v3 HTTP rule: matchers from the v3 list with
// their number of string arguments (backtick or double quoted), combined
// with &&, || and !, parentheses balanced; Path and PathPrefix values
// start with '/', regexps compile (Go syntax, as Traefik's).
func CheckRule(rule string) error {
	_, err := matchRule(rule, nil)
	return err
}

// request is what matchRule evaluates a rule against.
type request struct {
	Method, Path string
	Header       http.Header
}

// matchRule parses rule and, when req is not nil, evaluates it for req
// (Method, Path, PathPrefix, PathRegexp, Header, HeaderRegexp, as Traefik
// v3 evaluates them; other matchers are false).
func matchRule(rule string, req *request) (bool, error) {
	p := &ruleParser{s: rule, req: req}
	v, err := p.expr()
	if err != nil {
		return false, err
	}
	p.space()
	if p.i != len(p.s) {
		return false, fmt.Errorf("unexpected %q at %d", p.s[p.i:], p.i)
	}
	return v, nil
}

type ruleParser struct {
	s   string
	i   int
	req *request
}

func (p *ruleParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *ruleParser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

// expr = and { "||" and }
func (p *ruleParser) expr() (bool, error) {
	v, err := p.and()
	for err == nil && p.eat("||") {
		var w bool
		w, err = p.and()
		v = v || w
	}
	return v, err
}

// and = term { "&&" term }
func (p *ruleParser) and() (bool, error) {
	v, err := p.term()
	for err == nil && p.eat("&&") {
		var w bool
		w, err = p.term()
		v = v && w
	}
	return v, err
}

// term = "!" term | "(" expr ")" | matcher "(" args ")"
func (p *ruleParser) term() (bool, error) {
	if p.eat("!") {
		v, err := p.term()
		return !v, err
	}
	if p.eat("(") {
		v, err := p.expr()
		if err != nil {
			return false, err
		}
		if !p.eat(")") {
			return false, fmt.Errorf("missing ) at %d", p.i)
		}
		return v, nil
	}
	p.space()
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] >= 'A' && p.s[p.i] <= 'Z' || p.s[p.i] >= 'a' && p.s[p.i] <= 'z') {
		p.i++
	}
	name := p.s[start:p.i]
	want, ok := matchers[name]
	if !ok {
		return false, fmt.Errorf("unknown matcher %q at %d", name, start)
	}
	if !p.eat("(") {
		return false, fmt.Errorf("%s: missing ( at %d", name, p.i)
	}
	var args []string
	for {
		a, err := p.str()
		if err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
		args = append(args, a)
		if !p.eat(",") {
			break
		}
	}
	if !p.eat(")") {
		return false, fmt.Errorf("%s: missing ) at %d", name, p.i)
	}
	if len(args) != want {
		return false, fmt.Errorf("%s takes %d arguments, got %d", name, want, len(args))
	}
	var re *regexp.Regexp
	switch name {
	case "Path", "PathPrefix":
		if !strings.HasPrefix(args[0], "/") {
			return false, fmt.Errorf("%s(%q): path must start with /", name, args[0])
		}
	case "HeaderRegexp", "QueryRegexp":
		var err error
		if re, err = regexp.Compile(args[1]); err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
	case "PathRegexp", "HostRegexp":
		var err error
		if re, err = regexp.Compile(args[0]); err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
	}
	r := p.req
	if r == nil {
		return false, nil
	}
	switch name {
	case "Method":
		return r.Method == strings.ToUpper(args[0]), nil
	case "Path":
		return r.Path == args[0], nil
	case "PathPrefix":
		return strings.HasPrefix(r.Path, args[0]), nil
	case "PathRegexp":
		return re.MatchString(r.Path), nil
	case "Header":
		return slices.Contains(r.Header.Values(args[0]), args[1]), nil
	case "HeaderRegexp":
		return slices.ContainsFunc(r.Header.Values(args[0]), re.MatchString), nil
	}
	return false, nil
}

// str reads a backtick or double-quoted string.
func (p *ruleParser) str() (string, error) {
	p.space()
	if p.i >= len(p.s) {
		return "", errors.New("missing string argument")
	}
	switch p.s[p.i] {
	case '`':
		end := strings.IndexByte(p.s[p.i+1:], '`')
		if end < 0 {
			return "", fmt.Errorf("unterminated ` at %d", p.i)
		}
		v := p.s[p.i+1 : p.i+1+end]
		p.i += end + 2
		return v, nil
	case '"':
		for j := p.i + 1; j < len(p.s); j++ {
			if p.s[j] == '\\' {
				j++
				continue
			}
			if p.s[j] == '"' {
				v, err := strconv.Unquote(p.s[p.i : j+1])
				if err != nil {
					return "", fmt.Errorf("bad string at %d: %w", p.i, err)
				}
				p.i = j + 1
				return v, nil
			}
		}
		return "", fmt.Errorf("unterminated \" at %d", p.i)
	}
	return "", fmt.Errorf("want a quoted string at %d", p.i)
}

// Kubernetes resources of Traefik's CRDs (traefik.io/v1alpha1), the parts
// the export uses.

// Object is one Kubernetes document's envelope.
type Object struct {
	APIVersion string          `yaml:"apiVersion"`
	Kind       string          `yaml:"kind"`
	Metadata   ObjectMeta      `yaml:"metadata"`
	Spec       yaml.RawMessage `yaml:"spec"`
}

// ObjectMeta is a resource's name and namespace.
type ObjectMeta struct {
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
}

// MiddlewareSpec is the Middleware CRD's spec (one middleware type); in
// the CRD rateLimit.period is an IntOrString, read by [Duration]'s rules.
type MiddlewareSpec = Middleware

// IngressRouteSpec is the IngressRoute CRD's spec.
type IngressRouteSpec struct {
	EntryPoints []string       `yaml:"entryPoints"`
	Routes      []CRDRoute     `yaml:"routes"`
	TLS         map[string]any `yaml:"tls"`
}

// CRDRoute is one IngressRoute route.
type CRDRoute struct {
	Match       string          `yaml:"match"`
	Kind        string          `yaml:"kind"`
	Priority    int             `yaml:"priority"`
	Syntax      string          `yaml:"syntax"`
	Services    []CRDService    `yaml:"services"`
	Middlewares []MiddlewareRef `yaml:"middlewares"`
}

// CRDService is a Kubernetes Service a route sends to.
type CRDService struct {
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
	Kind      string `yaml:"kind"`
	Port      any    `yaml:"port"`
	Weight    *int   `yaml:"weight"`
}

// MiddlewareRef names a Middleware resource.
type MiddlewareRef struct {
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
}

// Resources are the documents of a CRD file, decoded.
type Resources struct {
	Middlewares   map[string]*MiddlewareSpec
	IngressRoutes map[string]*IngressRouteSpec
}

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// ValidateCRD decodes a multi-document file of traefik.io/v1alpha1
// Middleware and IngressRoute resources strictly, checks each Middleware
// spec as [Validate] checks a middleware, and each IngressRoute's routes:
// kind Rule, a valid match, services with a name and port, and middlewares
// that are defined in the file.
func ValidateCRD(body []byte) (*Resources, error) {
	res := &Resources{Middlewares: map[string]*MiddlewareSpec{}, IngressRoutes: map[string]*IngressRouteSpec{}}
	dec := yaml.NewDecoder(bytes.NewReader(body), yaml.DisallowUnknownField())
	var errs []error
	var routes []string
	for i := 0; ; i++ {
		var o Object
		err := dec.Decode(&o)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if o.APIVersion == "" && o.Kind == "" && o.Spec == nil {
			continue // an empty document (comments only)
		}
		if o.APIVersion != "traefik.io/v1alpha1" {
			return nil, fmt.Errorf("document %d: apiVersion %q, want traefik.io/v1alpha1", i, o.APIVersion)
		}
		if !dns1123.MatchString(o.Metadata.Name) || len(o.Metadata.Name) > 253 {
			errs = append(errs, fmt.Errorf("document %d: metadata.name %q is not a DNS-1123 name", i, o.Metadata.Name))
		}
		switch o.Kind {
		case "Middleware":
			var m MiddlewareSpec
			if err := yaml.UnmarshalWithOptions(o.Spec, &m, yaml.DisallowUnknownField()); err != nil {
				return nil, fmt.Errorf("middleware %s: %w", o.Metadata.Name, err)
			}
			res.Middlewares[o.Metadata.Name] = &m
		case "IngressRoute":
			var r IngressRouteSpec
			if err := yaml.UnmarshalWithOptions(o.Spec, &r, yaml.DisallowUnknownField()); err != nil {
				return nil, fmt.Errorf("ingressroute %s: %w", o.Metadata.Name, err)
			}
			res.IngressRoutes[o.Metadata.Name] = &r
			routes = append(routes, o.Metadata.Name)
		default:
			return nil, fmt.Errorf("document %d: kind %q, want Middleware or IngressRoute", i, o.Kind)
		}
	}
	for _, name := range sortedKeys(res.Middlewares) {
		if err := checkMiddleware(res.Middlewares[name], res.Middlewares); err != nil {
			errs = append(errs, fmt.Errorf("middleware %s: %w", name, err))
		}
	}
	for _, name := range routes {
		for j, r := range res.IngressRoutes[name].Routes {
			if r.Kind != "Rule" {
				errs = append(errs, fmt.Errorf("ingressroute %s route %d: kind %q, want Rule", name, j, r.Kind))
			}
			if err := CheckRule(r.Match); err != nil {
				errs = append(errs, fmt.Errorf("ingressroute %s route %d: match: %w", name, j, err))
			}
			if len(r.Services) == 0 {
				errs = append(errs, fmt.Errorf("ingressroute %s route %d: no services", name, j))
			}
			for _, s := range r.Services {
				if s.Name == "" || s.Port == nil {
					errs = append(errs, fmt.Errorf("ingressroute %s route %d: service needs name and port", name, j))
				}
			}
			for _, m := range r.Middlewares {
				if _, ok := res.Middlewares[m.Name]; !ok {
					errs = append(errs, fmt.Errorf("ingressroute %s route %d: middleware %q is not defined", name, j, m.Name))
				}
			}
		}
	}
	return res, errors.Join(errs...)
}

// String formats d as a Go duration ("2s").
func (d Duration) String() string { return time.Duration(d).String() }
