package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// attack is one reproduction of a finding: its name, what it once did to
// the server, and how to fire it at base. Each attack comes from its own
// client addresses (X-Forwarded-For 127.2.<n>.*), so the server's per-client
// limits see it as its own client and not as the well-formed one.
type attack struct {
	name, finding string
	fire          func(ctx context.Context, a *attacker)
}

// attacker is what an attack fires with.
type attacker struct {
	base   string
	n      int // the attack's number, for its addresses
	client *http.Client
	t      *tally
}

// ip is the attack's i-th client address.
func (a *attacker) ip(i int) string { return fmt.Sprintf("127.2.%d.%d", a.n, 1+i%250) }

// parallel runs f(i) for i in [0, n) at once and waits.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}

// simulateLimiter is the limiter of the simulate attacks.
const simulateLimiter = `{"algorithm":"token_bucket","rate":10,"burst":10}`

// multipartLog is a /measure upload of the log that body yields, with the
// form fields before it.
func multipartLog(fields map[string]string, body io.Reader) (contentType string, r io.Reader) {
	const boundary = "abuserun-boundary"
	var head strings.Builder
	for k, v := range fields {
		fmt.Fprintf(&head, "--%s\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", boundary, k, v)
	}
	fmt.Fprintf(&head, "--%s\r\nContent-Disposition: form-data; name=\"log\"; filename=\"access.log\"\r\nContent-Type: text/plain\r\n\r\n", boundary)
	return "multipart/form-data; boundary=" + boundary,
		io.MultiReader(strings.NewReader(head.String()), body, strings.NewReader("\r\n--"+boundary+"--\r\n"))
}

// combinedLine is an nginx combined log line.
func combinedLine(ip string, at time.Time, path string) string {
	return fmt.Sprintf("%s - - [%s] \"GET %s HTTP/1.1\" 200 5 \"-\" \"abuserun\"\n", ip, at.Format("02/Jan/2006:15:04:05 -0700"), path)
}

var logStart = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// heavyDesign is a design whose charts simulate the most the designer
// allows: 200 000 arrivals of a steady pattern.
const heavyDesign = "capacity=2000&clients=200&p99=5&tiers.0.name=free&tiers.0.clients=150&tiers.1.name=paid&tiers.1.clients=50&tiers.1.multiplier=4" +
	"&pattern=steady&pattern.rate=1000&pattern.clients=2&pattern.duration=100"

// attacks are the reproductions, in the order they run.
var attacks = []attack{
	{"simulate-empty-arrivals", "a 64 MiB body of empty arrivals was decoded whole before the arrival cap: 2.67 GB, then the capped server died",
		func(ctx context.Context, a *attacker) {
			body := &repeat{prefix: `{"limiter":` + simulateLimiter + `,"arrivals":[`, unit: `{},`, n: (64 << 20) / 3, suffix: `{}]}`}
			send(ctx, a.client, a.t, a.ip(0), http.MethodPost, a.base+"/api/v1/simulate", "application/json", body)
		}},
	{"simulate-million-patterns", "a 130-byte pattern request built a 130 MB answer; six at once killed the server (one client may start 40)",
		func(ctx context.Context, a *attacker) {
			body := `{"limiter":` + simulateLimiter + `,"pattern":{"name":"steady","rate":1000000,"duration":1}}`
			parallel(40, func(i int) {
				send(ctx, a.client, a.t, a.ip(0), http.MethodPost, a.base+"/api/v1/simulate", "application/json", strings.NewReader(body))
			})
		}},
	{"simulate-endpoint-maze", "a policy of 100 endpoints whose templates (8 segments, each {x} or the same 130-byte word) one path reaches every node of without a match made a policy's decision cost 10 µs: a 100 KB pattern request of a million arrivals took 11.7 s of CPU (10 × an ordinary one), and a policy's run heeded no deadline",
		func(ctx context.Context, a *attacker) {
			word := strings.Repeat("w", 130)
			var eps []string
			for i := range 100 {
				path := ""
				for j := range 7 {
					if (i>>j)&1 == 0 {
						path += "/{x}"
					} else {
						path += "/" + word
					}
				}
				eps = append(eps, fmt.Sprintf(`{"match":{"method":"GET","path":"%s/e%d"}}`, path, i))
			}
			body := `{"policy":{"apiVersion":"ratelab/v1","kind":"RateLimitPolicy","metadata":{"name":"maze"},"service":{"capacity":1000},` +
				`"defaults":{"limit":{"algorithm":"token_bucket","rate":10,"burst":20}},"endpoints":[` + strings.Join(eps, ",\n") + `]},` +
				`"pattern":{"name":"poisson","rate":10,"duration":95,"clients":1000},` +
				`"mix":{"requests":[{"method":"GET","path":"` + strings.Repeat("/"+word, 7) + `/none","share":1}]},"decisions":false}`
			// One alone (three at once would each hold the request the
			// limiter charged on the way in, and none could then pay for
			// its arrivals), then three more at once.
			send(ctx, a.client, a.t, a.ip(0), http.MethodPost, a.base+"/api/v1/simulate", "application/json", strings.NewReader(body))
			parallel(3, func(i int) {
				send(ctx, a.client, a.t, a.ip(0), http.MethodPost, a.base+"/api/v1/simulate", "application/json", strings.NewReader(body))
			})
		}},
	{"lint-yaml-bomb", "1 MiB of '{' cost 300 MB of heap before the depth check; 40 lints at once killed the server",
		func(ctx context.Context, a *attacker) {
			parallel(40, func(i int) {
				send(ctx, a.client, a.t, a.ip(0), http.MethodPost, a.base+"/api/v1/policy/lint", "application/yaml",
					&repeat{unit: "{", n: 1 << 20})
			})
		}},
	{"lint-disguised-bomb", "YAML the pre-scan misread as text ('{]' then ',0' lines; '[a:\"' then '[' lines; a '-' far right then lines of tabs; a block scalar under a long blank line, then '[' lines) reached the tokenizer: 111, 78, 39 and 69 MB for 256 KiB; a quoted scalar over lines of tabs took the pre-scan 1.2 s a line, and tabs inside a double-quoted string the tokenizer 0.7 s a line; 33 lints of each at once",
		func(ctx context.Context, a *attacker) {
			parallel(200, func(i int) {
				var body *repeat
				switch i % 6 {
				case 0:
					body = &repeat{prefix: "{]", unit: strings.Repeat(",0", 500) + "\n", n: 250}
				case 1:
					body = &repeat{prefix: "[a:\"\n", unit: strings.Repeat("[", 1000) + "\n", n: 250}
				case 2:
					body = &repeat{prefix: strings.Repeat(" ", 60_000) + "-\n", unit: strings.Repeat("\t", 60_000) + "\n", n: 3}
				case 3:
					body = &repeat{prefix: ">\n   \n 0", unit: " " + strings.Repeat("[", 60_000) + "\n", n: 4}
				case 4:
					body = &repeat{prefix: "a: \"x\n", unit: " " + strings.Repeat("\t", 60_000) + "x\n", n: 4}
				default:
					body = &repeat{unit: "- \"x" + strings.Repeat("\t", 60_000) + "y\"\n", n: 4}
				}
				send(ctx, a.client, a.t, a.ip(i), http.MethodPost, a.base+"/api/v1/policy/lint", "application/yaml", body)
			})
		}},
	{"lint-unmodelled-bomb", "YAML the policy pre-scan still misreads (found by a generator of short documents: a block scalar, then '\">a: {@a:'; '{]' then a '*%' line) let 200 KB of brackets or '- ' through to the tokenizer: 57 and 25 MB each; 40 lints at once",
		func(ctx context.Context, a *attacker) {
			parallel(40, func(i int) {
				body := &repeat{prefix: "- |-\n\n\">a: {@a: [{ - ]\n", unit: strings.Repeat("[", 1000) + "\n", n: 200}
				if i%2 == 1 {
					body = &repeat{prefix: "{]\n- *%|\n|*#- a\n", unit: strings.Repeat("- ", 500) + "\n", n: 200}
				}
				send(ctx, a.client, a.t, a.ip(i), http.MethodPost, a.base+"/api/v1/policy/lint", "application/yaml", body)
			})
		}},
	{"import-yaml-bomb", "12 imports of 1 MiB of '{' at once killed the server; /import was not rate limited",
		func(ctx context.Context, a *attacker) {
			parallel(12, func(i int) {
				ct, body := multipartPolicy(&repeat{unit: "{", n: 1 << 20})
				send(ctx, a.client, a.t, a.ip(0), http.MethodPost, a.base+"/import", ct, body)
			})
		}},
	{"slow-uploads", "each open /measure upload held 2 MB for up to 10 minutes, without a limit on how many: 3 000 slow connections killed the server",
		slowUploads},
	{"distinct-clients", "/measure kept ~740 B per distinct client: a 200 MB CSV of distinct clients took 7.07 GB",
		func(ctx context.Context, a *attacker) {
			const n = 200 << 20 / 80
			ct, body := multipartLog(map[string]string{"format": "combined"}, &lines{n: n, line: func(i int) string {
				return combinedLine(fmt.Sprintf("127.%d.%d.%d", 10+i>>16&0xff, i>>8&0xff, i&0xff), logStart.Add(time.Duration(i)*time.Millisecond), "/v1/items")
			}})
			send(ctx, a.client, a.t, a.ip(0), http.MethodPost, a.base+"/measure", ct, body)
		}},
	{"one-crowded-second", "the replay held every request of a whole-second timestamp: a 100 MB nginx log of one second took 329 MB",
		func(ctx context.Context, a *attacker) {
			const n = 100 << 20 / 80
			ct, body := multipartLog(map[string]string{"format": "combined"}, &lines{n: n, line: func(i int) string {
				return combinedLine(fmt.Sprintf("127.9.%d.%d", i>>8&0x3, i&0xff), logStart, "/v1/items")
			}})
			send(ctx, a.client, a.t, a.ip(0), http.MethodPost, a.base+"/measure", ct, body)
		}},
	{"heavy-pages", "a designer, embed or export GET costs up to 0.9 CPU-s; 20 at once ran past the write timeout and every client got an empty reply",
		func(ctx context.Context, a *attacker) {
			paths := []string{"/?", "/designer/results?", "/embed/policy-admitted?", "/embed/admitted.svg?", "/exports?", "/export/nginx?"}
			parallel(20, func(i int) {
				q := heavyDesign + fmt.Sprintf("&pattern.seed=%d", i)
				send(ctx, a.client, a.t, a.ip(0), http.MethodGet, a.base+paths[i%len(paths)]+q, "", nil)
			})
		}},
	{"heavy-compare", "a check, not a finding: /compare charts two designs, each as heavy as a designer page (and, since 8 December, takes addresses of up to 64 KiB); 20 at once",
		func(ctx context.Context, a *attacker) {
			parallel(20, func(i int) {
				// Half on A's own traffic, half on a storm of retries.
				q := url.Values{"a": {heavyDesign}, "b": {heavyDesign + "&limit.algorithm=gcra"}, "pattern": {[]string{"", "retry_storm"}[i%2]}}
				send(ctx, a.client, a.t, a.ip(0), http.MethodGet, a.base+"/compare?"+q.Encode(), "", nil)
			})
		}},
	{"export-injection", "a description with CR, NEL, LS or PS escaped the comment of the Envoy exports (a ClusterRoleBinding to cluster-admin); a name with LS added keys to the OpenAPI export",
		func(ctx context.Context, a *attacker) {
			hostile := []string{"x\rkind: ClusterRoleBinding", "x\u0085dynamic_resources: {}", "x\u2028paths: {}", "x\u2029---", "<img src=x onerror=alert(1)>"}
			targets := []string{"envoy-gateway", "envoy-local", "envoy-ratelimit", "openapi", "markdown", "nginx", "haproxy", "redis-lua", "xtime-rate"}
			// Each hostile text from its own client address: the point is
			// what the exports answer, not the pages' rate limit.
			for i, h := range hostile {
				for _, tg := range targets {
					for _, field := range []string{"description", "name"} {
						q := "capacity=1000&clients=10&p99=2&" + field + "=" + url.QueryEscape(h)
						send(ctx, a.client, a.t, a.ip(i), http.MethodGet, a.base+"/export/"+tg+"?"+q, "", nil)
					}
				}
			}
		}},
	{"long-design-header", "HX-Push-Url and /import's Location echoed the whole design: a 3.1 KB design gave a 502 behind nginx's default buffers",
		func(ctx context.Context, a *attacker) {
			q := "capacity=1000&clients=10&p99=2&description=" + url.QueryEscape(strings.Repeat("a long description ", 200))
			for i := range 8 {
				q += fmt.Sprintf("&tiers.%d.name=tier%d&tiers.%d.clients=1", i, i, i)
			}
			send(ctx, a.client, a.t, a.ip(0), http.MethodGet, a.base+"/designer/results?"+q, "", nil)
			send(ctx, a.client, a.t, a.ip(0), http.MethodGet, a.base+"/?"+q, "", nil)
			policy := "apiVersion: ratelab/v1\nkind: RateLimitPolicy\nmetadata: {name: long, description: " + strings.Repeat("word ", 800) + "}\n" +
				"service: {capacity: 1000}\ndefaults: {limit: {algorithm: token_bucket, rate: 5, burst: 50}}\n"
			ct, body := multipartPolicy(strings.NewReader(policy))
			send(ctx, a.client, a.t, a.ip(1), http.MethodPost, a.base+"/import", ct, body)
		}},
	{"aborted-upload", "a client aborting an upload was logged as ERROR 500",
		func(ctx context.Context, a *attacker) {
			parallel(4, func(i int) {
				c, err := dialLoopback(ctx, a.base)
				if err != nil {
					a.t.failed("dial", err)
					return
				}
				defer c.Close()
				ct, body := multipartLog(map[string]string{"format": "combined"}, &lines{n: 2000, line: func(j int) string {
					return combinedLine("127.8.0.1", logStart.Add(time.Duration(j)*time.Second), "/v1/items")
				}})
				head := fmt.Sprintf("POST /measure HTTP/1.1\r\nHost: abuserun\r\nX-Forwarded-For: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", a.ip(i), ct, 10<<20)
				if _, err := io.WriteString(c, head); err != nil {
					a.t.failed("write", err)
					return
				}
				io.CopyN(c, body, 64<<10) // then hang up, far from the declared length
				a.t.mu.Lock()
				a.t.requests++
				a.t.closed++ // by us, on purpose
				a.t.mu.Unlock()
			})
		}},
}

// multipartPolicy is an import form with the policy file body.
func multipartPolicy(body io.Reader) (string, io.Reader) {
	const boundary = "abuserun-policy"
	head := fmt.Sprintf("--%s\r\nContent-Disposition: form-data; name=\"policy\"; filename=\"policy.yaml\"\r\nContent-Type: application/yaml\r\n\r\n", boundary)
	return "multipart/form-data; boundary=" + boundary,
		io.MultiReader(strings.NewReader(head), body, strings.NewReader("\r\n--"+boundary+"--\r\n"))
}

// dialLoopback opens a raw connection to the server behind base.
func dialLoopback(ctx context.Context, base string) (net.Conn, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", u.Host)
}

// Slow uploads: 3 000 connections from 300 client addresses, each sending a
// /measure upload's headers and then a byte every two seconds, for at most
// slowFor. The server must answer or close them, not hold their memory.
const (
	slowConns = 3000
	slowFor   = 40 * time.Second
)

func slowUploads(ctx context.Context, a *attacker) {
	ctx, cancel := context.WithTimeout(ctx, slowFor)
	defer cancel()
	parallel(slowConns, func(i int) {
		c, err := dialLoopback(ctx, a.base)
		if err != nil {
			a.t.failed("dial", err)
			return
		}
		defer c.Close()
		ip := fmt.Sprintf("127.3.%d.%d", i/10/250, 1+(i/10)%250)
		ct, _ := multipartLog(map[string]string{"format": "combined"}, strings.NewReader(""))
		head := fmt.Sprintf("POST /measure HTTP/1.1\r\nHost: abuserun\r\nX-Forwarded-For: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ip, ct, 1<<20)
		if _, err := io.WriteString(c, head); err != nil {
			a.t.failed("write", err)
			return
		}
		answered := make(chan *http.Response, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				answered <- nil
				return
			}
			resp.Body.Close()
			answered <- resp
		}()
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case resp := <-answered:
				if resp == nil {
					a.t.mu.Lock()
					a.t.requests++
					a.t.closed++
					a.t.mu.Unlock()
				} else {
					a.t.record("slow upload", resp)
				}
				return
			case <-tick.C:
				c.SetWriteDeadline(time.Now().Add(time.Second))
				if _, err := c.Write([]byte("x")); err != nil {
					// The server closed its side; its answer, if any, follows.
					continue
				}
			case <-ctx.Done():
				a.t.mu.Lock()
				a.t.requests++
				a.t.held++
				a.t.mu.Unlock()
				return
			}
		}
	})
}
