package envoyratelimit

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	commonrl "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/envoyproxy/ratelimit/src/provider"
	rlredis "github.com/envoyproxy/ratelimit/src/redis"
	"github.com/envoyproxy/ratelimit/src/server"
	service "github.com/envoyproxy/ratelimit/src/service"
	"github.com/envoyproxy/ratelimit/src/settings"
	"github.com/envoyproxy/ratelimit/src/stats"
	gostats "github.com/lyft/gostats"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc/health"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"sigs.k8s.io/yaml"

	"github.com/ratelab/ratelab/export"
)

// epoch is the Unix time, in seconds, of the schedules' virtual time 0: a
// multiple of every unit the service counts (second … week, its 30-day
// month and 365-day year), so that the service's windows, aligned to the
// Unix epoch, start where the engine's, aligned to virtual 0, do.
const epoch = 86400 * 7 * 30 * 73

// clock is the service's time source in virtual time: whole seconds since
// the Unix epoch, set by the test before each request.
type clock struct{ now atomic.Int64 }

// UnixNow is utils.TimeSource's method.
func (c *clock) UnixNow() int64 { return c.now.Load() }

// set moves the clock to virtual time at (the service reads whole seconds).
func (c *clock) set(at time.Duration) { c.now.Store(epoch + int64(at/time.Second)) }

// longExpiry is the service's expiration jitter source drawing the
// largest jitter every time: a window's Redis key lives its unit plus
// jitterSeconds of real time, so a loaded machine never expires a virtual
// window's counter between two requests.
type longExpiry struct{}

// jitterSeconds is EXPIRATION_JITTER_MAX_SECONDS.
const jitterSeconds = 3600

func (longExpiry) Int63() int64 { return jitterSeconds - 1 }
func (longExpiry) Seed(int64)   {}

// startService runs the service's own code on the export: its file
// provider (the runtime loader watching RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/
// config/, where the export's file goes), its config loader, its Redis
// fixed-window cache on the Redis at addr, and its ShouldRateLimit; the
// local cache is off (its default) and time is c.
func startService(t *testing.T, addr string, c *clock, ex export.Export) pb.RateLimitServiceServer {
	t.Helper()
	// The service logs every load and connection at info and warning.
	logrus.SetLevel(logrus.ErrorLevel)
	root := t.TempDir()
	dir := filepath.Join(root, "ratelimit", "config")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ex.Filename), ex.Body, 0o644); err != nil {
		t.Fatal(err)
	}
	s := settings.NewSettings()
	s.RuntimePath, s.RuntimeSubdirectory, s.RuntimeAppDirectory, s.RuntimeWatchRoot = root, "ratelimit", "config", false
	s.RedisSocketType, s.RedisType, s.RedisUrl, s.RedisPoolSize = "tcp", "SINGLE", addr, 2
	s.ExpirationJitterMaxSeconds = jitterSeconds
	store := gostats.NewStore(gostats.NewNullSink(), false)
	sm := stats.NewStatManager(store, s)
	client := rlredis.NewClientImpl(store.Scope("redis_pool"), false, "", s.RedisSocketType, s.RedisType, s.RedisUrl, s.RedisPoolSize,
		s.RedisPipelineWindow, s.RedisPipelineLimit, nil, false, nil, s.RedisTimeout, s.RedisPoolOnEmptyBehavior, "")
	t.Cleanup(func() { client.Close() })
	cache := rlredis.NewFixedRateLimitCacheImpl(client, nil, c, rand.New(longExpiry{}), s.ExpirationJitterMaxSeconds, nil,
		s.NearLimitRatio, s.CacheKeyPrefix, sm, s.StopCacheKeyIncrementWhenOverlimit)
	hc := server.NewHealthChecker(health.NewServer(), "ratelimit", false)
	// NewService waits for the provider's first load of the directory.
	svc := service.NewService(cache, provider.NewFileProvider(s, sm, store), sm, hc, c, false, false, false)
	cfg, _, _ := svc.GetCurrentConfig()
	if cfg == nil || cfg.IsEmptyDomains() {
		t.Fatalf("the service loaded no domain from %s:\n%s", ex.Filename, ex.Body)
	}
	return svc
}

// filter is the Envoy ratelimit HTTP filter of the export's Notes, read
// with go-control-plane's types.
type filter struct{ *rlv3.RateLimit }

// readFilter finds the filter in the notes (the YAML after the first line
// of the note that holds http_filters).
func readFilter(t *testing.T, ex export.Export) filter {
	t.Helper()
	for _, n := range ex.Notes {
		_, doc, ok := strings.Cut(n, "\n")
		if !ok || !strings.HasPrefix(doc, "http_filters:") {
			continue
		}
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var h hcmv3.HttpConnectionManager
		if err := protojson.Unmarshal(j, &h); err != nil {
			t.Fatalf("the notes' filter: %v", err)
		}
		m, err := h.GetHttpFilters()[0].GetTypedConfig().UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		return filter{m.(*rlv3.RateLimit)}
	}
	t.Fatal("no http_filters in the export's notes")
	return filter{}
}

// request is one HTTP request as Envoy sees it.
type request struct {
	At      time.Duration
	Remote  string            // client address
	Headers map[string]string // lower-case names, with :method and :path
	// Route is the name of the route the request matched (what
	// %ROUTE_NAME% formats).
	Route string
}

// fullMatch is Envoy's safe_regex semantics: RE2, matching the whole value.
func fullMatch(re, s string) (bool, error) {
	r, err := regexp.Compile(`^(?:` + re + `)$`)
	if err != nil {
		return false, err
	}
	return r.MatchString(s), nil
}

// descriptors are the descriptors Envoy sends for q, by the semantics of
// each rate_limits action the export uses: an action that produces no
// entry (a request_headers header absent, a header_value_match whose
// result is not expect_match) drops its whole descriptor; hits_addend's
// format %ROUTE_NAME% is the route's name.
func (f filter) descriptors(q request) ([]*commonrl.RateLimitDescriptor, error) {
	var out []*commonrl.RateLimitDescriptor
next:
	for _, rl := range f.GetRateLimits() {
		d := &commonrl.RateLimitDescriptor{}
		for _, a := range rl.GetActions() {
			var key, value string
			switch {
			case a.GetRequestHeaders() != nil:
				rh := a.GetRequestHeaders()
				v, ok := q.Headers[strings.ToLower(rh.GetHeaderName())]
				if !ok {
					if rh.GetSkipIfAbsent() {
						continue
					}
					continue next
				}
				key, value = rh.GetDescriptorKey(), v
			case a.GetRemoteAddress() != nil:
				key, value = "remote_address", q.Remote
			case a.GetGenericKey() != nil:
				key, value = a.GetGenericKey().GetDescriptorKey(), a.GetGenericKey().GetDescriptorValue()
				if key == "" {
					key = "generic_key"
				}
			case a.GetHeaderValueMatch() != nil:
				hv := a.GetHeaderValueMatch()
				all := true
				for _, h := range hv.GetHeaders() {
					v, present := q.Headers[strings.ToLower(h.GetName())]
					sm := h.GetStringMatch()
					var ok bool
					switch {
					case !present:
						ok = false
					case sm.GetSafeRegex() != nil:
						m, err := fullMatch(sm.GetSafeRegex().GetRegex(), v)
						if err != nil {
							return nil, err
						}
						ok = m
					case sm.GetExact() != "":
						ok = v == sm.GetExact()
					default:
						return nil, fmt.Errorf("header matcher %v is not modelled", h)
					}
					if h.GetInvertMatch() {
						ok = !ok
					}
					all = all && ok
				}
				expect := hv.GetExpectMatch() == nil || hv.GetExpectMatch().GetValue()
				if all != expect {
					continue next
				}
				key, value = hv.GetDescriptorKey(), hv.GetDescriptorValue()
				if key == "" {
					key = "header_match"
				}
			default:
				return nil, fmt.Errorf("rate_limits action %v is not modelled", a)
			}
			d.Entries = append(d.Entries, &commonrl.RateLimitDescriptor_Entry{Key: key, Value: value})
		}
		if ha := rl.GetHitsAddend(); ha != nil {
			switch {
			case ha.GetFormat() == "%ROUTE_NAME%":
				n, err := strconv.ParseUint(q.Route, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("route name %q is no number", q.Route)
				}
				d.HitsAddend = wrapperspb.UInt64(n)
			case ha.GetFormat() != "":
				return nil, fmt.Errorf("hits_addend format %q is not modelled", ha.GetFormat())
			case ha.GetNumber() != nil:
				d.HitsAddend = wrapperspb.UInt64(ha.GetNumber().GetValue())
			}
		}
		if len(d.Entries) > 0 {
			out = append(out, d)
		}
	}
	return out, nil
}

// ask is the service's answer to q: whether the overall code is OK. Envoy
// does not ask when no descriptor was built.
func ask(ctx context.Context, svc pb.RateLimitServiceServer, c *clock, f filter, q request) (bool, error) {
	ds, err := f.descriptors(q)
	if err != nil || len(ds) == 0 {
		return true, err
	}
	c.set(q.At)
	resp, err := svc.ShouldRateLimit(ctx, &pb.RateLimitRequest{Domain: f.GetDomain(), Descriptors: ds})
	if err != nil {
		return false, err
	}
	return resp.GetOverallCode() == pb.RateLimitResponse_OK, nil
}

// unitSeconds is the length of the service's units (src/utils.UnitToDivider).
var unitSeconds = map[string]int64{"second": 1, "minute": 60, "hour": 3600, "day": 86400,
	"week": 7 * 86400, "month": 30 * 86400, "year": 365 * 86400}

// mappedWindow is what a limit's mapping says the service counts.
var mappedWindow = regexp.MustCompile(`rate_limit \{unit: (\w+), requests_per_unit: (\d+)\}`)

// window is a limit as the export maps it: Requests per Unit seconds.
type window struct {
	Requests, Unit int64
	Mapping        export.Mapping
}

// windows reads each limit's window from its mapping's To, by field.
func windows(t *testing.T, ex export.Export) map[string]window {
	t.Helper()
	out := map[string]window{}
	for _, m := range ex.Mappings {
		if !strings.HasSuffix(m.Field, ".limit") {
			continue
		}
		sm := mappedWindow.FindStringSubmatch(m.To)
		if sm == nil || unitSeconds[sm[1]] == 0 {
			t.Fatalf("%s: no rate_limit in mapping %q", m.Field, m.To)
		}
		n, _ := strconv.ParseInt(sm[2], 10, 64)
		out[m.Field] = window{Requests: n, Unit: unitSeconds[sm[1]], Mapping: m}
	}
	return out
}
