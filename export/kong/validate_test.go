package kong

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
)

// The types below mirror the decK declarative file (format 3.0) and the
// schemas of the rate-limiting and key-auth plugins, for the parts the
// export writes, with Kong's field names. Decoding with unknown fields
// disallowed rejects any field Kong does not know at that place; Validate
// re-implements the rate-limiting plugin's schema rules on top, since no
// Kong tool installs here. They check the export's own output in tests
// only, so they live in a test file and the production package does not
// carry them.

// File is a decK file.
type File struct {
	FormatVersion string      `yaml:"_format_version"`
	Services      []*Service  `yaml:"services"`
	Consumers     []*Consumer `yaml:"consumers"`
	Plugins       []*Plugin   `yaml:"plugins"`
}

// Service is a Kong service with its routes and plugins.
type Service struct {
	Name           string    `yaml:"name"`
	URL            string    `yaml:"url"`
	Host           string    `yaml:"host"`
	Port           int       `yaml:"port"`
	Protocol       string    `yaml:"protocol"`
	Path           string    `yaml:"path"`
	Retries        *int      `yaml:"retries"`
	ConnectTimeout *int      `yaml:"connect_timeout"`
	ReadTimeout    *int      `yaml:"read_timeout"`
	WriteTimeout   *int      `yaml:"write_timeout"`
	Enabled        *bool     `yaml:"enabled"`
	Tags           []string  `yaml:"tags"`
	Routes         []*Route  `yaml:"routes"`
	Plugins        []*Plugin `yaml:"plugins"`
}

// Route is a Kong route.
type Route struct {
	Name          string              `yaml:"name"`
	Methods       []string            `yaml:"methods"`
	Paths         []string            `yaml:"paths"`
	Hosts         []string            `yaml:"hosts"`
	Headers       map[string][]string `yaml:"headers"`
	Protocols     []string            `yaml:"protocols"`
	StripPath     *bool               `yaml:"strip_path"`
	PreserveHost  *bool               `yaml:"preserve_host"`
	RegexPriority *int                `yaml:"regex_priority"`
	Tags          []string            `yaml:"tags"`
	Plugins       []*Plugin           `yaml:"plugins"`
}

// Consumer is a Kong consumer.
type Consumer struct {
	Username           string               `yaml:"username"`
	CustomID           string               `yaml:"custom_id"`
	Tags               []string             `yaml:"tags"`
	Plugins            []*Plugin            `yaml:"plugins"`
	KeyauthCredentials []*KeyauthCredential `yaml:"keyauth_credentials"`
}

// KeyauthCredential is a key-auth credential of a consumer.
type KeyauthCredential struct {
	Key  string   `yaml:"key"`
	TTL  *int     `yaml:"ttl"`
	Tags []string `yaml:"tags"`
}

// Plugin is a plugin instance; Config is decoded by Name. Route, Service
// and Consumer name the entities it is scoped to beside where it is
// nested.
type Plugin struct {
	Name         string          `yaml:"name"`
	InstanceName string          `yaml:"instance_name"`
	Config       yaml.RawMessage `yaml:"config"`
	Enabled      *bool           `yaml:"enabled"`
	Protocols    []string        `yaml:"protocols"`
	Tags         []string        `yaml:"tags"`
	Route        string          `yaml:"route"`
	Service      string          `yaml:"service"`
	Consumer     string          `yaml:"consumer"`
}

// RateLimiting is the rate-limiting plugin's config (Kong 3.x schema).
type RateLimiting struct {
	Second            *float64 `yaml:"second"`
	Minute            *float64 `yaml:"minute"`
	Hour              *float64 `yaml:"hour"`
	Day               *float64 `yaml:"day"`
	Month             *float64 `yaml:"month"`
	Year              *float64 `yaml:"year"`
	LimitBy           string   `yaml:"limit_by"`
	HeaderName        string   `yaml:"header_name"`
	Path              string   `yaml:"path"`
	Policy            string   `yaml:"policy"`
	FaultTolerant     *bool    `yaml:"fault_tolerant"`
	Redis             *Redis   `yaml:"redis"`
	HideClientHeaders *bool    `yaml:"hide_client_headers"`
	ErrorCode         *float64 `yaml:"error_code"`
	ErrorMessage      *string  `yaml:"error_message"`
	SyncRate          *float64 `yaml:"sync_rate"`
}

// Redis is the shared Redis config (kong.tools.redis.schema).
type Redis struct {
	Host           string `yaml:"host"`
	Port           *int   `yaml:"port"`
	Timeout        *int   `yaml:"timeout"`
	ConnectTimeout *int   `yaml:"connect_timeout"`
	SendTimeout    *int   `yaml:"send_timeout"`
	ReadTimeout    *int   `yaml:"read_timeout"`
	Username       string `yaml:"username"`
	Password       string `yaml:"password"`
	Database       *int   `yaml:"database"`
	SSL            *bool  `yaml:"ssl"`
	SSLVerify      *bool  `yaml:"ssl_verify"`
	ServerName     string `yaml:"server_name"`
}

// KeyAuth is the key-auth plugin's config.
type KeyAuth struct {
	KeyNames        []string `yaml:"key_names"`
	Anonymous       string   `yaml:"anonymous"`
	HideCredentials *bool    `yaml:"hide_credentials"`
	KeyInHeader     *bool    `yaml:"key_in_header"`
	KeyInQuery      *bool    `yaml:"key_in_query"`
	KeyInBody       *bool    `yaml:"key_in_body"`
	RunOnPreflight  *bool    `yaml:"run_on_preflight"`
	Realm           string   `yaml:"realm"`
}

// periods are a rate-limiting config's windows, shortest first.
func (c *RateLimiting) periods() []struct {
	name string
	v    *float64
} {
	return []struct {
		name string
		v    *float64
	}{{"second", c.Second}, {"minute", c.Minute}, {"hour", c.Hour}, {"day", c.Day}, {"month", c.Month}, {"year", c.Year}}
}

var headerToken = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// CheckRateLimiting applies the rate-limiting plugin's schema rules: at
// least one window; each a number > 0; a longer window's limit not below
// a shorter one's; limit_by one of consumer, credential, ip, service,
// header, path, with header_name for header and path for path; policy
// local, cluster or redis, redis needing redis.host, redis.port and
// redis.timeout; sync_rate −1 unless the policy is redis, where it is −1
// or at least 0.02; error_code > 0.
func CheckRateLimiting(c *RateLimiting) error {
	var set []string
	var prevName string
	var prev float64
	for _, p := range c.periods() {
		if p.v == nil {
			continue
		}
		if *p.v <= 0 {
			return fmt.Errorf("config.%s: %v must be greater than 0", p.name, *p.v)
		}
		if prevName != "" && *p.v < prev {
			return fmt.Errorf("the limit for %s(%.1f) cannot be lower than the limit for %s(%.1f)", p.name, *p.v, prevName, prev)
		}
		// Every shorter window counts: keep the largest seen so far.
		if *p.v >= prev {
			prevName, prev = p.name, *p.v
		}
		set = append(set, p.name)
	}
	if len(set) == 0 {
		return errors.New("at least one of these fields must be non-empty: config.second, config.minute, config.hour, config.day, config.month, config.year")
	}
	switch c.LimitBy {
	case "", "consumer", "credential", "ip", "service":
	case "header":
		if c.HeaderName == "" {
			return errors.New("config.header_name: required field missing (limit_by header)")
		}
	case "path":
		if c.Path == "" {
			return errors.New("config.path: required field missing (limit_by path)")
		}
	default:
		return fmt.Errorf("config.limit_by: %q: expected one of: consumer, credential, ip, service, header, path", c.LimitBy)
	}
	if c.HeaderName != "" && !headerToken.MatchString(c.HeaderName) {
		return fmt.Errorf("config.header_name: %q is not a header name", c.HeaderName)
	}
	if c.Path != "" && !strings.HasPrefix(c.Path, "/") {
		return fmt.Errorf("config.path: %q should start with /", c.Path)
	}
	policy := c.Policy
	if policy == "" {
		policy = "local"
	}
	switch policy {
	case "local", "cluster":
	case "redis":
		r := c.Redis
		switch {
		case r == nil || r.Host == "":
			return errors.New("config.redis.host: required field missing (policy redis)")
		case r.Port == nil:
			return errors.New("config.redis.port: required field missing (policy redis)")
		case *r.Port < 0 || *r.Port > 65535:
			return fmt.Errorf("config.redis.port: %d is not a port", *r.Port)
		case r.Timeout == nil:
			return errors.New("config.redis.timeout: required field missing (policy redis)")
		}
	default:
		return fmt.Errorf("config.policy: %q: expected one of: local, cluster, redis", c.Policy)
	}
	sync := -1.0
	if c.SyncRate != nil {
		sync = *c.SyncRate
	}
	if policy != "redis" && sync != -1 {
		return errors.New("config.sync_rate: sync_rate can only be used with the redis policy")
	}
	if policy == "redis" && sync != -1 && sync < 0.02 {
		return errors.New("config.sync_rate: sync_rate must be greater than 0.02, or -1 to disable")
	}
	if c.ErrorCode != nil && *c.ErrorCode <= 0 {
		return fmt.Errorf("config.error_code: %v must be greater than 0", *c.ErrorCode)
	}
	return nil
}

// Validate decodes a decK file strictly (unknown fields are errors, plugin
// configs decoded by plugin name) and checks: _format_version "3.0";
// services with unique names and absolute http(s) URLs; routes with unique
// names, at least one of paths, methods, hosts, paths starting with / or
// ~/ (regex paths compiling), upper-case methods; consumers with a unique
// username or custom_id; only rate-limiting and key-auth plugins, each
// config passing its schema ([CheckRateLimiting]; key-auth: key names,
// an anonymous consumer that exists); a plugin's route, service and
// consumer references existing; at most one instance of a plugin per
// scope (Kong's uniqueness of name × service × route × consumer).
func Validate(body []byte) (*File, error) {
	var f File
	if err := yaml.UnmarshalWithOptions(body, &f, yaml.DisallowUnknownField()); err != nil {
		return nil, err
	}
	if f.FormatVersion != "3.0" {
		return nil, fmt.Errorf("_format_version %q, want \"3.0\"", f.FormatVersion)
	}
	v := &validator{f: &f, routes: map[string]bool{}, services: map[string]bool{}, consumers: map[string]bool{}, scopes: map[string]bool{}}
	v.collect()
	for _, s := range f.Services {
		for _, r := range s.Routes {
			for _, p := range r.Plugins {
				v.plugin(p, "route "+r.Name, s.Name, r.Name, "")
			}
		}
		for _, p := range s.Plugins {
			v.plugin(p, "service "+s.Name, s.Name, "", "")
		}
	}
	for _, c := range f.Consumers {
		for _, p := range c.Plugins {
			v.plugin(p, "consumer "+c.Username, "", "", c.Username)
		}
	}
	for _, p := range f.Plugins {
		v.plugin(p, "global", "", "", "")
	}
	return &f, errors.Join(v.errs...)
}

type validator struct {
	f                           *File
	routes, services, consumers map[string]bool
	scopes                      map[string]bool
	errs                        []error
}

func (v *validator) fail(format string, a ...any) { v.errs = append(v.errs, fmt.Errorf(format, a...)) }

var method = regexp.MustCompile(`^[A-Z]+$`)

// collect checks services, routes and consumers and records their names.
func (v *validator) collect() {
	for i, s := range v.f.Services {
		if s.Name == "" {
			v.fail("services[%d]: name required", i)
		} else if v.services[s.Name] {
			v.fail("service %s: name is not unique", s.Name)
		}
		v.services[s.Name] = true
		u, err := url.Parse(s.URL)
		if s.URL == "" && s.Host == "" || s.URL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			v.fail("service %s: url %q is not an absolute http(s) URL", s.Name, s.URL)
		}
		for j, r := range s.Routes {
			if r.Name == "" {
				v.fail("service %s routes[%d]: name required", s.Name, j)
			} else if v.routes[r.Name] {
				v.fail("route %s: name is not unique", r.Name)
			}
			v.routes[r.Name] = true
			if len(r.Paths) == 0 && len(r.Methods) == 0 && len(r.Hosts) == 0 && len(r.Headers) == 0 {
				v.fail("route %s: must set one of methods, hosts, headers, paths", r.Name)
			}
			for _, p := range r.Paths {
				if re, ok := strings.CutPrefix(p, "~"); ok {
					if _, err := regexp.Compile(re); err != nil || !strings.HasPrefix(re, "/") {
						v.fail("route %s: path %q is not a valid regex path", r.Name, p)
					}
				} else if !strings.HasPrefix(p, "/") {
					v.fail("route %s: path %q should start with / (or ~/ for a regex)", r.Name, p)
				}
			}
			for _, m := range r.Methods {
				if !method.MatchString(m) {
					v.fail("route %s: method %q is not an upper-case method", r.Name, m)
				}
			}
		}
	}
	for i, c := range v.f.Consumers {
		id := c.Username
		if id == "" {
			id = c.CustomID
		}
		if id == "" {
			v.fail("consumers[%d]: username or custom_id required", i)
		} else if v.consumers[id] {
			v.fail("consumer %s: not unique", id)
		}
		v.consumers[id] = true
	}
}

// plugin checks one plugin nested at where, scoped to the nesting entities
// and its own references.
func (v *validator) plugin(p *Plugin, where, service, route, consumer string) {
	if p.Route != "" {
		if !v.routes[p.Route] {
			v.fail("%s plugin %s: route %q is not defined", where, p.Name, p.Route)
		}
		route = p.Route
	}
	if p.Service != "" {
		if !v.services[p.Service] {
			v.fail("%s plugin %s: service %q is not defined", where, p.Name, p.Service)
		}
		service = p.Service
	}
	if p.Consumer != "" {
		if !v.consumers[p.Consumer] {
			v.fail("%s plugin %s: consumer %q is not defined", where, p.Name, p.Consumer)
		}
		consumer = p.Consumer
	}
	scope := strings.Join([]string{p.Name, p.InstanceName, service, route, consumer}, "\x00")
	if route != "" {
		// A route-scoped plugin is keyed by route alone.
		scope = strings.Join([]string{p.Name, p.InstanceName, "", route, consumer}, "\x00")
	}
	if v.scopes[scope] {
		v.fail("%s plugin %s: a second instance with the same scope (route %q, service %q, consumer %q)", where, p.Name, route, service, consumer)
	}
	v.scopes[scope] = true
	switch p.Name {
	case "rate-limiting":
		var c RateLimiting
		if err := yaml.UnmarshalWithOptions(p.Config, &c, yaml.DisallowUnknownField()); err != nil {
			v.fail("%s plugin rate-limiting: %v", where, err)
			return
		}
		if err := CheckRateLimiting(&c); err != nil {
			v.fail("%s plugin rate-limiting: %v", where, err)
		}
	case "key-auth":
		var c KeyAuth
		if err := yaml.UnmarshalWithOptions(p.Config, &c, yaml.DisallowUnknownField()); err != nil {
			v.fail("%s plugin key-auth: %v", where, err)
			return
		}
		for _, k := range c.KeyNames {
			if !headerToken.MatchString(k) {
				v.fail("%s plugin key-auth: key name %q is not a header name", where, k)
			}
		}
		if c.Anonymous != "" && !v.consumers[c.Anonymous] {
			v.fail("%s plugin key-auth: anonymous consumer %q is not defined", where, c.Anonymous)
		}
	default:
		v.fail("%s: plugin %q is not one the export writes", where, p.Name)
	}
}

// decodeStrict decodes b into v with unknown fields disallowed.
func decodeStrict(b []byte, v any) error {
	return yaml.UnmarshalWithOptions(b, v, yaml.DisallowUnknownField())
}
