package measure

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/internal/integration"
)

// clickhouse is a throwaway ClickHouse server started by a test, reached
// over its HTTP interface on 127.0.0.1.
type clickhouse struct {
	url    string // http://127.0.0.1:port/
	dir    string
	client *http.Client
}

// clickhouseConfig is the server's config: loopback only, everything
// under dir, logs in files there, at most 1 GiB per query (18.16 has no
// max_server_memory_usage; max_memory_usage bounds each query), small
// caches, and a time zone other than UTC, so a query that depended on
// the server's zone would fail.
const clickhouseConfig = `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>information</level>
    <log>%[1]s/server.log</log>
    <errorlog>%[1]s/server.err.log</errorlog>
    <size>10M</size>
    <count>1</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <tcp_port>%[2]d</tcp_port>
  <http_port>%[3]d</http_port>
  <path>%[1]s/data/</path>
  <tmp_path>%[1]s/tmp/</tmp_path>
  <user_files_path>%[1]s/user_files/</user_files_path>
  <format_schema_path>%[1]s/format_schemas/</format_schema_path>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>8</max_concurrent_queries>
  <timezone>Europe/Berlin</timezone>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
</yandex>
`

// clickhouseUsers has one user, default, without a password, from
// 127.0.0.1 only.
const clickhouseUsers = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>1073741824</max_memory_usage>
      <max_execution_time>60</max_execution_time>
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default></default></quotas>
</yandex>
`

// startClickHouse starts a server for t in a temporary directory, with its
// own config on free loopback ports, and waits (at most 60 s) until it
// answers /ping; it is stopped when t ends. A server that exits at once
// (a port taken since FreePort) is started again on other ports, three
// times at most.
func startClickHouse(t *testing.T) *clickhouse {
	t.Helper()
	bin := integration.Need(t, "clickhouse-server", "clickhouse-server")
	for attempt := 1; ; attempt++ {
		dir := t.TempDir()
		tcp, web := integration.FreePort(t), integration.FreePort(t)
		conf := filepath.Join(dir, "config.xml")
		if err := os.WriteFile(conf, fmt.Appendf(nil, clickhouseConfig, dir, tcp, web), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "users.xml"), []byte(clickhouseUsers), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dir, "stdout.log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--config-file="+conf)
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, out
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", bin, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait(); out.Close() }()
		ch := &clickhouse{url: "http://" + integration.Addr(web) + "/", dir: dir, client: &http.Client{Timeout: 60 * time.Second}}
		stop := func() {
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-exited
			}
		}
		err = ch.wait(exited, 60*time.Second)
		if err == nil {
			t.Cleanup(stop)
			return ch
		}
		stop()
		if attempt < 3 && strings.Contains(ch.log(), "Address already in use") {
			t.Logf("attempt %d: a port was taken, starting again", attempt)
			continue
		}
		t.Fatalf("clickhouse-server: %v\n%s", err, ch.log())
	}
}

// wait polls /ping until the server answers "Ok.", exits, or d passes.
func (ch *clickhouse) wait(exited <-chan error, d time.Duration) error {
	deadline := time.Now().Add(d)
	c := &http.Client{Timeout: time.Second}
	for {
		resp, err := c.Get(ch.url + "ping")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.TrimSpace(string(body)) == "Ok." {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited before answering: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer on %sping within %v (last: %v)", ch.url, d, err)
		}
	}
}

// log is the server's output and error log, for a failure message.
func (ch *clickhouse) log() string {
	var b strings.Builder
	for _, f := range []string{"stdout.log", "server.err.log"} {
		data, _ := os.ReadFile(filepath.Join(ch.dir, f))
		if len(data) > 8000 {
			data = data[len(data)-8000:]
		}
		fmt.Fprintf(&b, "%s:\n%s\n", f, data)
	}
	return b.String()
}

// query runs sql, with body as an INSERT's data, and returns the rows of
// its TabSeparated output with the tabs made commas.
func (ch *clickhouse) query(t *testing.T, sql string, body []byte) []string {
	t.Helper()
	u := ch.url
	if body != nil {
		u += "?query=" + url.QueryEscape(sql)
	} else {
		body = []byte(sql)
	}
	resp, err := ch.client.Post(u, "text/plain", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("clickhouse: %v\nquery:\n%s", err, sql)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("clickhouse: %s %v\n%s\nquery:\n%s", resp.Status, err, out, sql)
	}
	return strings.Fields(strings.ReplaceAll(string(out), "\t", ","))
}

// TestClickHouseLive loads the requests TestPostgreSQL uses into a real
// ClickHouse (Debian 12's is 18.16) and checks that ClickHouse's query
// gives the percentiles that Measure reads from the log itself.
func TestClickHouseLive(t *testing.T) {
	ch := startClickHouse(t)

	// The requests TestPostgreSQL uses, as a log and as rows, plus rows
	// whose key is NULL, which the log cannot have and the query must not
	// count as a client.
	log, generated := sqlRequests()
	rows := bytes.NewBuffer(slices.Clip(generated))
	for i := range 50 {
		fmt.Fprintf(rows, "2024-06-01 12:00:%02d,\\N\n", i%3)
	}
	windows := sqlWindows
	res, err := Measure(context.Background(), bytes.NewReader(log), accesslog.Config{Key: accesslog.Key{Kind: accesslog.KeyHeader, Name: "X-API-Key"}}, Options{Windows: windows})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, w := range res.Windows {
		if w.Late != 0 {
			t.Errorf("window %v: %d late requests; the generator keeps within 3 windows", w.Window, w.Late)
		}
		want = append(want, fmt.Sprintf("%d,%d,%d,%d,%d,%d", w.Seconds, res.Clients, w.P50, w.P95, w.P99, w.Max))
	}
	if w := res.Windows[0]; !(w.P50 < w.P95 && w.P95 < w.P99 && w.P99 < w.Max) {
		t.Errorf("1 s window %+v: want p50 < p95 < p99 < max, a generator that spreads clients", w)
	}

	// A database and a capitalised table: the generated SQL must quote them.
	ch.query(t, "CREATE DATABASE logs", nil)
	ch.query(t, "CREATE TABLE logs.`Requests` (ts DateTime('UTC'), api_key Nullable(String)) ENGINE = Memory", nil)
	ch.query(t, "INSERT INTO logs.`Requests` FORMAT CSV", rows.Bytes())
	if got := ch.query(t, "SELECT count() FROM logs.`Requests`", nil); !slices.Equal(got, []string{"40050"}) {
		t.Fatalf("table has %v rows, want 40050", got)
	}
	if got := ch.query(t, "SELECT version()", nil); len(got) == 1 {
		t.Logf("ClickHouse %s", got[0])
	}
	sql, err := ClickHouse(Table{Name: "logs.Requests", Time: "ts", Key: "api_key"}, windows)
	if err != nil {
		t.Fatal(err)
	}
	got := ch.query(t, sql, nil)
	t.Logf("window_seconds,clients,p50,p95,p99,max: ClickHouse %v, Measure %v", got, want)
	if !slices.Equal(got, want) {
		t.Errorf("ClickHouse (window_seconds,clients,p50,p95,p99,max):\n got %v\nwant %v (Measure)", got, want)
	}

	// Unix seconds with fractions instead of timestamps: floor keeps each
	// request in its second.
	ch.query(t, "CREATE TABLE epoch ENGINE = Memory AS SELECT toFloat64(toUnixTimestamp(ts)) + 0.75 AS at, api_key AS `Key` FROM logs.`Requests`", nil)
	sql, err = ClickHouse(Table{Name: "epoch", Time: "at", Key: "Key", TimeIsEpoch: true}, windows)
	if err != nil {
		t.Fatal(err)
	}
	if got := ch.query(t, sql, nil); !slices.Equal(got, want) {
		t.Errorf("ClickHouse with epoch seconds:\n got %v\nwant %v", got, want)
	}
}
