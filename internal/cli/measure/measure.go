// Package measure is the ratelab measure command: it reads an access log and measures what the rate
// limit calculator needs: per-client request rates and their percentiles
// across clients, peak bursts per client, the busiest endpoints, and the
// lines it could not read (package measure defines the numbers).
//
//	ratelab measure [-format combined|json|csv] [-key ip|header:<name>|field:<name>]
//	                [-window 1s,1m] [-json] [file|-]
//	ratelab measure -sql postgres|clickhouse|duckdb -table T -time-column C -key-column C [-epoch] [-window 1s,1m]
//	ratelab measure -sql duckdb -parquet 'logs/*.parquet' -time-column C -key-column C [-epoch] [-window 1s,1m]
//	ratelab measure -policy policy.yaml [-tiers keys.csv] [-rejections out.csv] [log options] [file|-]
//
// With no file, or "-", it reads standard input. The report ends with the
// calculator's values and the designer's query string for them ("one click
// fills the calculator"); -json prints the whole measurement, the values
// and the query as one JSON object instead. While it reads, a progress line
// goes to standard error when that is a terminal.
//
// For the combined format, -key header:X-API-Key reads the header from an
// extra quoted field after the user agent (-extra says which, 1 first),
// logged by nginx as '... "$http_user_agent" "$http_x_api_key"'. For JSON
// and CSV, -time-field, -ip-field, -method-field, -path-field and
// -request-field rename the fields; header:X-API-Key reads the field
// http_x_api_key.
//
// -sql prints the same measurement as a query for a warehouse table instead
// of reading a log; for DuckDB, -parquet reads the requests from Parquet
// files (a path or glob) instead of a table, so an access log kept as
// Parquet is measured by running the query in DuckDB.
//
// -policy replays the log through a policy file in the same pass (package
// shadow): the shadow-mode report of who would have been rejected, by
// which limit, how often and when; -rejections writes every would-be
// rejection as CSV. A client's tier comes from the log (-tier-field for
// JSON and CSV, -tier-extra for the combined format) or from -tiers, a
// key,tier list; a client with neither gets the default limit.
//
// The exit status is 0 on success, 2 for bad usage or a log that cannot be
// read or has no parseable line.
package measure

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/internal/cli"
	"github.com/ratelab/ratelab/measure"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/shadow"
)

// Exit statuses.
const (
	exitOK    = cli.ExitOK
	exitLog   = cli.ExitUsage
	exitUsage = cli.ExitUsage
)

// Run is the command with its arguments (without the program name) and
// streams; it stops reading when ctx is cancelled, and a progress line goes
// to stderr when that is a terminal. It returns the exit status.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, args, stdin, stdout, stderr, cli.IsTerminal(stderr), time.Now)
}

// progressEvery is the shortest time between two progress lines.
const progressEvery = 250 * time.Millisecond

// report is what -json prints.
type report struct {
	Result *measure.Result `json:"result"`
	// Calculator is the calculator's input for CalculatorWindow, and Query
	// the designer's query string for it.
	CalculatorWindow string      `json:"calculator_window,omitempty"`
	Calculator       *calc.Input `json:"calculator,omitempty"`
	Query            string      `json:"query,omitempty"`
	CalculatorError  string      `json:"calculator_error,omitempty"`
	// Shadow is the replay through -policy.
	Shadow *shadow.Report `json:"shadow,omitempty"`
}

// run is the command with its arguments (without the program name) and
// streams; terminal says whether stderr is a terminal (for the progress
// line), now reads the clock that paces it. It returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, terminal bool, now func() time.Time) int {
	fs := flag.NewFlagSet("ratelab measure", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "combined", "log format: combined, json or csv")
	keyFlag := fs.String("key", "ip", "client key: ip, header:<name> or field:<name>")
	extra := fs.Int("extra", 1, "combined format: which extra quoted field after the user agent holds the -key header")
	windowsFlag := fs.String("window", "1s,1m", "comma-separated windows, whole seconds (1s, 1m, 10s, 1h)")
	calcWindow := fs.String("calc-window", "", "window whose percentiles fill the calculator: 1s or 1m (default 1m if measured, else 1s)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	top := fs.Int("top", 10, "how many clients and endpoints to list")
	var fields accesslog.Fields
	fs.StringVar(&fields.Time, "time-field", "", `JSON field or CSV column of the time (default "time")`)
	fs.StringVar(&fields.IP, "ip-field", "", `JSON field or CSV column of the client address (default "remote_addr")`)
	fs.StringVar(&fields.Method, "method-field", "", `JSON field or CSV column of the method (default "method")`)
	fs.StringVar(&fields.Path, "path-field", "", `JSON field or CSV column of the path (default "path")`)
	fs.StringVar(&fields.Request, "request-field", "", `JSON field or CSV column of "METHOD path PROTO", used without method and path (default "request")`)
	fs.StringVar(&fields.Tier, "tier-field", "", "-policy: JSON field or CSV column of the client's tier (default none)")
	tierExtra := fs.Int("tier-extra", 0, "-policy, combined format: which extra quoted field after the user agent holds the client's tier (0: none)")
	comma := fs.String("comma", ",", "CSV separator, one byte (\\t for tab)")
	sqlDialect := fs.String("sql", "", "print the measurement as SQL instead: postgres, clickhouse or duckdb")
	table := fs.String("table", "", "-sql: table, or schema.table")
	parquet := fs.String("parquet", "", "-sql duckdb: Parquet file or glob to read instead of a table")
	timeCol := fs.String("time-column", "", "-sql: time column")
	keyCol := fs.String("key-column", "", "-sql: client key column")
	epoch := fs.Bool("epoch", false, "-sql: the time column holds Unix seconds")
	policyFile := fs.String("policy", "", "replay the log through this policy file: the shadow-mode report")
	tiersFile := fs.String("tiers", "", "-policy: a CSV of key,tier for logs that do not say a client's tier")
	rejections := fs.String("rejections", "", "-policy: write every would-be rejection to this CSV file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ratelab measure [-format combined|json|csv] [-key ip|header:<name>|field:<name>] [-window 1s,1m] [-json] [file|-]")
		fmt.Fprintln(stderr, "       ratelab measure -sql postgres|clickhouse|duckdb -table T -time-column C -key-column C [-epoch] [-window 1s,1m]")
		fmt.Fprintln(stderr, "       ratelab measure -sql duckdb -parquet FILE|GLOB -time-column C -key-column C [-epoch] [-window 1s,1m]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "ratelab measure: "+format+"\n", a...)
		return exitUsage
	}
	windows, err := parseWindows(*windowsFlag)
	if err != nil {
		return usage("%v", err)
	}

	if *sqlDialect == "" && *parquet != "" {
		return usage("-parquet needs -sql duckdb")
	}
	if *sqlDialect != "" {
		t := measure.Table{Name: *table, Parquet: *parquet, Time: *timeCol, Key: *keyCol, TimeIsEpoch: *epoch}
		var q string
		switch *sqlDialect {
		case "postgres", "postgresql":
			q, err = measure.PostgreSQL(t, windows)
		case "clickhouse":
			q, err = measure.ClickHouse(t, windows)
		case "duckdb":
			q, err = measure.DuckDB(t, windows)
		default:
			return usage("-sql %q: want postgres, clickhouse or duckdb", *sqlDialect)
		}
		if err != nil {
			return usage("%v", err)
		}
		fmt.Fprint(stdout, q)
		return exitOK
	}

	key, err := accesslog.ParseKey(*keyFlag)
	if err != nil {
		return usage("-key: %v", err)
	}
	sep := *comma
	if sep == `\t` {
		sep = "\t"
	}
	if len(sep) != 1 {
		return usage("-comma %q: want one byte", *comma)
	}
	cfg := accesslog.Config{Format: accesslog.Format(*format), Key: key, Extra: *extra, TierExtra: *tierExtra, Fields: fields, Comma: sep[0]}
	if *top < 1 || *top > 10000 {
		return usage("-top %d: want 1 to 10000", *top)
	}
	opts := measure.Options{Windows: windows, TopClients: *top, TopEndpoints: *top}
	if _, err := measure.New(opts); err != nil {
		return usage("%v", err)
	}
	if _, err := accesslog.NewReader(strings.NewReader(""), cfg); err != nil {
		return usage("%v", err)
	}
	cw, err := chooseCalcWindow(*calcWindow, windows)
	if err != nil {
		return usage("%v", err)
	}
	if *policyFile == "" && (*tiersFile != "" || *rejections != "") {
		return usage("-tiers and -rejections need -policy")
	}
	var replay *shadow.Replayer
	var rejectionsOut *os.File
	if *policyFile != "" {
		p, err := policy.DecodeFile(*policyFile, nil)
		if err != nil {
			return usage("-policy %s: %v", *policyFile, err)
		}
		so := shadow.Options{Top: *top}
		if *tiersFile != "" {
			if so.Tiers, err = readTiers(*tiersFile); err != nil {
				return usage("-tiers %s: %v", *tiersFile, err)
			}
		}
		if *rejections != "" {
			if rejectionsOut, err = os.Create(*rejections); err != nil {
				return usage("-rejections: %v", err)
			}
			defer rejectionsOut.Close()
			so.Rejections = rejectionsOut
		}
		if replay, err = shadow.New(p, so); err != nil {
			return usage("-policy %s: %v", *policyFile, err)
		}
		// The replay is sharded by client across the cores, in the
		// measurement's pass (on one core too, where whole chunks ran
		// faster than record by record). The report is the same.
		opts.Replay = replay.Sharded()
	}
	files := fs.Args()
	if len(files) > 1 {
		return usage("one log at a time, got %d", len(files))
	}
	name := "-"
	if len(files) == 1 {
		name = files[0]
	}
	in := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "ratelab measure: %v\n", err)
			return exitLog
		}
		defer f.Close()
		in = f
	}

	start := now()
	if terminal {
		last := start
		opts.Progress = func(lines, bytes int64) {
			if t := now(); t.Sub(last) >= progressEvery {
				last = t
				fmt.Fprintf(stderr, "\r%d lines, %.1f MB read…", lines, float64(bytes)/1e6)
			}
		}
	}
	res, err := measure.Measure(ctx, in, cfg, opts)
	if terminal {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		fmt.Fprintf(stderr, "ratelab measure: %s: %v\n", name, err)
		return exitLog
	}
	rep := report{Result: res}
	if replay != nil {
		sr, err := replay.Report()
		if err == nil && rejectionsOut != nil {
			err = rejectionsOut.Close()
		}
		if err != nil {
			fmt.Fprintf(stderr, "ratelab measure: -rejections: %v\n", err)
			return exitLog
		}
		rep.Shadow = &sr
	}
	elapsed := now().Sub(start)

	if cw != 0 {
		rep.CalculatorWindow = window(cw)
		if ci, err := res.Input(cw); err != nil {
			rep.CalculatorError = err.Error()
		} else {
			rep.Calculator = &ci
			rep.Query = measure.Query(ci).Encode()
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "ratelab measure: %v\n", err)
			return exitLog
		}
		return exitOK
	}
	printReport(stdout, rep, elapsed)
	return exitOK
}

// readTiers reads a CSV of key,tier rows (a header row "key,tier" is
// skipped).
func readTiers(name string) (map[string]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = 2
	tiers := map[string]string{}
	for i := 1; ; i++ {
		row, err := r.Read()
		if err == io.EOF {
			return tiers, nil
		}
		if err != nil {
			return nil, err
		}
		if i == 1 && row[0] == "key" && row[1] == "tier" {
			continue
		}
		tiers[row[0]] = row[1]
	}
}

// parseWindows parses "1s,1m,10s".
func parseWindows(s string) ([]time.Duration, error) {
	var ws []time.Duration
	for _, p := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("-window %q: %v", p, err)
		}
		ws = append(ws, d)
	}
	return ws, nil
}

// chooseCalcWindow is the -calc-window, or 1 min when measured, else 1 s
// when measured, else none (0).
func chooseCalcWindow(flag string, windows []time.Duration) (time.Duration, error) {
	has := func(w time.Duration) bool {
		for _, x := range windows {
			if x == w {
				return true
			}
		}
		return false
	}
	if flag != "" {
		d, err := time.ParseDuration(flag)
		if err != nil || d != time.Second && d != time.Minute {
			return 0, fmt.Errorf("-calc-window %q: want 1s or 1m", flag)
		}
		if !has(d) {
			return 0, fmt.Errorf("-calc-window %s is not among -window", d)
		}
		return d, nil
	}
	for _, w := range []time.Duration{time.Minute, time.Second} {
		if has(w) {
			return w, nil
		}
	}
	return 0, nil
}

func printReport(w io.Writer, rep report, elapsed time.Duration) {
	r := rep.Result
	fmt.Fprintf(w, "read %d lines in %s: %d requests, %d clients, %d without a key, %d bad lines\n",
		r.Lines, elapsed.Round(time.Millisecond), r.Requests, r.Clients, r.NoKey, r.Bad.Count)
	if r.Requests > 0 {
		fmt.Fprintf(w, "from %s to %s (%s)\n", r.From.Format(time.RFC3339), r.To.Format(time.RFC3339), r.Span)
	}

	fmt.Fprintf(w, "\nper-client rate: requests in the client's busiest window (aligned to the epoch);\npercentiles across the %d clients by nearest rank\n", r.Clients)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window\tp50\tp95\tp99\tmax\tbusiest client\tservice peak\tat\tlate\t")
	for _, ws := range r.Windows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t%d\t\n", window(ws.Window), ws.P50, ws.P95, ws.P99, ws.Max, ws.MaxKey,
			ws.ServicePeak, ws.ServicePeakAt.Format(time.RFC3339), ws.Late)
	}
	tw.Flush()

	if len(r.TopClients) > 0 {
		fmt.Fprintf(w, "\npeak bursts: top %d clients by their %s peak\n", len(r.TopClients), window(r.Windows[0].Window))
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := "client\trequests\t"
		for _, ws := range r.Windows {
			head += "peak/" + window(ws.Window) + "\tat\t"
		}
		fmt.Fprintln(tw, head)
		for _, c := range r.TopClients {
			fmt.Fprintf(tw, "%s\t%d\t", c.Key, c.Requests)
			for _, p := range c.Peaks {
				fmt.Fprintf(tw, "%d\t%s\t", p.Requests, p.At.Format(time.RFC3339))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}

	if len(r.Endpoints) > 0 {
		fmt.Fprintf(w, "\nbusiest endpoints (%d distinct patterns", r.DistinctEndpoints)
		if r.OtherEndpoints > 0 {
			fmt.Fprintf(w, ", %d requests to patterns past the limit", r.OtherEndpoints)
		}
		fmt.Fprintln(w, ")")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, e := range r.Endpoints {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t\n", e.Method, e.Path, e.Requests, 100*e.Share)
		}
		tw.Flush()
	}

	if r.Bad.Count > 0 {
		fmt.Fprintf(w, "\nbad lines: %d (skipped)\n", r.Bad.Count)
		for _, why := range sortedReasons(r.Bad.ByReason) {
			fmt.Fprintf(w, "  %s: %d\n", why, r.Bad.ByReason[why])
		}
		for _, ex := range r.Bad.Examples {
			fmt.Fprintf(w, "  line %d: %s: %q\n", ex.Line, ex.Reason, ex.Text)
		}
	}

	fmt.Fprintln(w)
	switch {
	case rep.Calculator != nil:
		in := rep.Calculator
		fmt.Fprintf(w, "calculator (percentiles per %s):\n", in.PercentileUnit)
		fmt.Fprintf(w, "  clients %d, p50 %g, p95 %g, p99 %g", in.Clients, in.P50, in.P95, in.P99)
		if in.Peak > 0 {
			fmt.Fprintf(w, ", peak %g/s for %gs", in.Peak, in.PeakSeconds)
		}
		fmt.Fprintf(w, "\n  /?%s\n", rep.Query)
		fmt.Fprintln(w, "  add capacity (the service's ceiling in requests/s) to complete the design")
	case rep.CalculatorError != "":
		fmt.Fprintf(w, "calculator: %s\n", rep.CalculatorError)
	default:
		fmt.Fprintln(w, "calculator: measure a 1s or 1m window to fill it")
	}
	if rep.Shadow != nil {
		printShadow(w, rep.Shadow)
	}
}

// printShadow prints the shadow-mode report: what the policy would have
// rejected, by limit, the top offenders and the busiest bins.
func printShadow(w io.Writer, s *shadow.Report) {
	share := 0.0
	if s.Requests > 0 {
		share = 100 * float64(s.Rejected) / float64(s.Requests)
	}
	fmt.Fprintf(w, "\nshadow replay: %d of %d requests (%.2f %%) would have been rejected, %d of %d clients\n",
		s.Rejected, s.Requests, share, s.ClientsRejected, s.Clients)
	if s.Reordered > 0 {
		fmt.Fprintf(w, "  %d requests were logged out of order and replayed at the latest time seen\n", s.Reordered)
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  limit\tspec\tchecked\twould reject")
	for _, l := range s.Limits {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\n", l.Field, l.Spec, l.Checked, l.Rejected)
	}
	tw.Flush()
	if len(s.Top) > 0 {
		fmt.Fprintln(w, "  top offenders:")
		tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "    key\ttier\trequests\twould reject\tfirst")
		for _, o := range s.Top {
			tier := o.Tier
			if tier == "" {
				tier = "-"
			}
			fmt.Fprintf(tw, "    %s\t%s\t%d\t%d\t%s\n", o.Key, tier, o.Requests, o.Rejected, o.FirstRejected.Format(time.RFC3339))
		}
		tw.Flush()
	}
	var worst shadow.Bin
	for _, b := range s.Series {
		if b.Rejected > worst.Rejected {
			worst = b
		}
	}
	if worst.Rejected > 0 {
		fmt.Fprintf(w, "  worst %s: from %s, %d of %d requests would have been rejected\n",
			s.Bin, worst.Start.Format(time.RFC3339), worst.Rejected, worst.Requests)
	}
}

func sortedReasons(m map[accesslog.Reason]int64) []accesslog.Reason {
	var rs []accesslog.Reason
	for r := range m {
		rs = append(rs, r)
	}
	// Most frequent first, then by name.
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && (m[rs[j]] > m[rs[j-1]] || m[rs[j]] == m[rs[j-1]] && rs[j] < rs[j-1]); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
	return rs
}

// window writes a window of whole seconds as 1s, 90s, 1m or 2h.
func window(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}
