package measure

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/internal/integration"
)

// postgres is a throwaway PostgreSQL server started by a test, reached
// with psql over a unix socket in its own temporary directory.
type postgres struct {
	bin, dir string
	port     int
	asUser   []string // the command prefix that runs the server's programs
}

// startPostgres initialises and starts a server for t; it is stopped and
// removed when t ends. PostgreSQL refuses to run as root, so as root
// (as in CI) the server's programs run as the postgres user through
// runuser, in a directory given to that user; psql, a client, runs as
// whoever we are.
func startPostgres(t *testing.T) *postgres {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.Reverse(dirs) // the newest version first
	initdb := integration.Need(t, "initdb", "postgresql", dirs...)
	// initdb may be a link in PATH to the versioned directory, which also
	// has pg_ctl and psql.
	if real, err := filepath.EvalSymlinks(initdb); err == nil {
		initdb = real
	}
	bin := filepath.Dir(initdb)
	pg := &postgres{bin: bin, port: integration.FreePort(t)}
	dir, err := os.MkdirTemp("", "ratelab-pg-")
	if err != nil {
		t.Fatal(err)
	}
	pg.dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, PostgreSQL needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		pg.asUser = []string{integration.Need(t, "runuser", "util-linux"), "-u", "postgres", "--"}
	}
	data := filepath.Join(dir, "data")
	pg.run(t, "initdb", "-D", data, "-U", "ratelab", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -p %d -F", dir, pg.port)
	pg.run(t, "pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "start")
	t.Cleanup(func() {
		cmd := pg.command("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("stopping postgres: %v\n%s", err, out)
		}
	})
	return pg
}

func (pg *postgres) command(prog string, args ...string) *exec.Cmd {
	argv := append(slices.Clone(pg.asUser), filepath.Join(pg.bin, prog))
	argv = append(argv, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = pg.dir
	return cmd
}

func (pg *postgres) run(t *testing.T, prog string, args ...string) {
	t.Helper()
	if out, err := pg.command(prog, args...).CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(pg.dir, "server.log"))
		t.Fatalf("%s: %v\n%s\nserver log:\n%s", prog, err, out, log)
	}
}

// psql runs sql with stdin as COPY's input and returns the rows, unaligned
// and comma-separated.
func (pg *postgres) psql(t *testing.T, sql string, stdin []byte) []string {
	t.Helper()
	cmd := exec.Command(filepath.Join(pg.bin, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-h", pg.dir, "-p", strconv.Itoa(pg.port), "-U", "ratelab", "-d", "postgres",
		"-A", "-t", "-F", ",", "-c", sql)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("psql: %v\n%s\nquery:\n%s", err, stderr.String(), sql)
	}
	return strings.Fields(string(out))
}

// TestPostgreSQL loads a generated log's requests into a real PostgreSQL
// and checks that PostgreSQL's query gives the percentiles that Measure
// reads from the log itself.
func TestPostgreSQL(t *testing.T) {
	pg := startPostgres(t)

	// The log, keyed by the X-API-Key header (times in UTC+2), and the same
	// requests as table rows (times in UTC): one generator, two renderings.
	var log, rows bytes.Buffer
	z := time.FixedZone("", 2*3600)
	var line []byte
	genEvents(40000, 400, 42, func(e *event) {
		line = appendCombined(line[:0], e, z)
		log.Write(line)
		fmt.Fprintf(&rows, "%s,%s,%s,%s\n", e.at.Format(time.RFC3339), e.key, e.method, e.path)
	})
	windows := []time.Duration{time.Second, 10 * time.Second, time.Minute}
	res, err := Measure(context.Background(), &log, accesslog.Config{Key: accesslog.Key{Kind: accesslog.KeyHeader, Name: "X-API-Key"}}, Options{Windows: windows})
	if err != nil {
		t.Fatal(err)
	}

	// A schema and a capitalised table: the generated SQL must quote them.
	pg.psql(t, `CREATE SCHEMA logs; CREATE TABLE logs."Requests" (ts timestamptz NOT NULL, api_key text, method text, path text)`, nil)
	pg.psql(t, `COPY logs."Requests" (ts, api_key, method, path) FROM STDIN WITH (FORMAT csv)`, rows.Bytes())
	if got := pg.psql(t, `SELECT count(*) FROM logs."Requests"`, nil); len(got) != 1 || got[0] != "40000" {
		t.Fatalf("table has %v rows, want 40000", got)
	}
	sql, err := PostgreSQL(Table{Name: "logs.Requests", Time: "ts", Key: "api_key"}, windows)
	if err != nil {
		t.Fatal(err)
	}
	got := pg.psql(t, sql, nil)
	var want []string
	for _, w := range res.Windows {
		if w.Late != 0 {
			t.Errorf("window %v: %d late requests; the generator keeps within 3 windows", w.Window, w.Late)
		}
		want = append(want, fmt.Sprintf("%d,%d,%d,%d,%d,%d", w.Seconds, res.Clients, w.P50, w.P95, w.P99, w.Max))
	}
	t.Logf("window_seconds,clients,p50,p95,p99,max: PostgreSQL %v, Measure %v", got, want)
	if !slices.Equal(got, want) {
		t.Errorf("PostgreSQL (window_seconds,clients,p50,p95,p99,max):\n got %v\nwant %v (Measure)", got, want)
	}
	// The numbers must not be trivial: distinct percentiles in the 1 s window.
	if w := res.Windows[0]; !(w.P50 < w.P95 && w.P95 < w.P99 && w.P99 < w.Max) {
		t.Errorf("1 s window %+v: want p50 < p95 < p99 < max, a generator that spreads clients", w)
	}

	// The same table with Unix seconds instead of timestamps.
	pg.psql(t, `CREATE TABLE epoch AS SELECT extract(epoch FROM ts)::bigint AS at, api_key AS "Key" FROM logs."Requests"`, nil)
	sql, err = PostgreSQL(Table{Name: "epoch", Time: "at", Key: "Key", TimeIsEpoch: true}, windows)
	if err != nil {
		t.Fatal(err)
	}
	if got := pg.psql(t, sql, nil); !slices.Equal(got, want) {
		t.Errorf("PostgreSQL with epoch seconds:\n got %v\nwant %v", got, want)
	}

	// Percentile's float rank is percentile_disc's: 0.07·100 rounds up to
	// rank 8 in both.
	got = pg.psql(t, `SELECT percentile_disc(0.07) WITHIN GROUP (ORDER BY x) FROM generate_series(1, 100) AS x`, nil)
	seq := make([]int64, 100)
	for i := range seq {
		seq[i] = int64(i + 1)
	}
	if want := strconv.FormatInt(Percentile(seq, 0.07), 10); len(got) != 1 || got[0] != want {
		t.Errorf("percentile_disc(0.07) of 1…100 = %v, Percentile = %s", got, want)
	}
}
