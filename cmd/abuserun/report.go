package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ratelab/ratelab/internal/liveserver"
)

// serverArgs are the server's flags for the run: it trusts X-Forwarded-For
// from 127.0.0.1, so each attack and the well-formed client are clients of
// their own; everything else is the server's defaults, as deployed.
var serverArgs = []string{"-trusted-proxies", "127.0.0.1"}

// result is one attack's outcome.
type result struct {
	attack
	t    *tally
	took time.Duration
}

// report is the whole run.
type report struct {
	results             []result
	good                *tally // the well-formed client
	peakRSS, idleRSS    int64
	peakAddressSpace    int64 // VmPeak, against the RLIMIT_AS cap
	logLines, logErrors int
	logKept             []string
	exitErr             error
	drain               *tally // the upload in flight at SIGTERM
	took                time.Duration
}

// abuse builds and starts the server, fires the attacks one after the other
// while the well-formed client runs, then stops the server with an upload
// in flight.
func abuse(ctx context.Context, o options, progress io.Writer) (*report, error) {
	start := time.Now()
	raiseFileLimit(slowConns + 1000)
	dir, err := os.MkdirTemp("", "abuserun-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := o.bin
	if bin == "" {
		fmt.Fprintln(progress, "abuserun: building ./cmd/web")
		if bin, err = liveserver.Build(ctx, dir); err != nil {
			return nil, err
		}
	}
	srv, err := liveserver.Start(ctx, bin, liveserver.Options{Args: serverArgs, AddressSpace: o.addressSpace, Files: slowConns + 2000})
	if err != nil {
		return nil, err
	}
	base := "http://" + srv.Addr()
	fmt.Fprintf(progress, "abuserun: server pid %d on %s, address space %d MiB\n", srv.Pid(), srv.Addr(), o.addressSpace>>20)
	rep := &report{good: newTally(), drain: newTally()}
	rep.idleRSS, _ = srv.RSS()

	// The well-formed client, until the attacks are over.
	goodCtx, stopGood := context.WithCancel(ctx)
	var goodDone sync.WaitGroup
	goodDone.Go(func() { wellFormed(goodCtx, base, rep.good) })

	for i, at := range attacks {
		if o.only != "" && at.name != o.only {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(progress, "abuserun: %s\n", at.name)
		a := &attacker{base: base, n: i, client: newClient(64), t: newTally()}
		t0 := time.Now()
		at.fire(ctx, a)
		rep.results = append(rep.results, result{attack: at, t: a.t, took: time.Since(t0)})
		a.client.CloseIdleConnections()
		select {
		case <-srv.Exited():
			stopGood()
			goodDone.Wait()
			rep.exitErr = fmt.Errorf("the server died during %s: %v\n%s", at.name, srv.Err(), liveserver.Truncate(srv.Stderr(), 2000))
			rep.took = time.Since(start)
			return rep, nil
		default:
		}
	}
	// A last round of well-formed requests after the attacks.
	time.Sleep(time.Second)
	stopGood()
	goodDone.Wait()

	// SIGTERM with an upload in flight: it is served, and the server exits 0.
	drainUpload(ctx, base, srv, rep.drain)
	if rss, ok := srv.PeakRSS(); ok {
		rep.peakRSS = rss
	}
	if as, ok := srv.PeakAddressSpace(); ok {
		rep.peakAddressSpace = as
	}
	rep.exitErr = srv.Wait() // the SIGTERM is drainUpload's
	rep.logLines, rep.logErrors, _, rep.logKept = srv.Log()
	rep.took = time.Since(start)
	return rep, nil
}

// wellFormed is an ordinary client: the health check, a calculation, a
// small simulation and the designer, over and over, each of which must be
// answered 200.
func wellFormed(ctx context.Context, base string, t *tally) {
	client := newClient(4)
	const ip = "127.1.0.1"
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		req := []func(){
			func() { send(ctx, client, t, ip, http.MethodGet, base+"/healthz", "", nil) },
			func() {
				send(ctx, client, t, ip, http.MethodPost, base+"/api/v1/calc", "application/json",
					strings.NewReader(`{"capacity": 1000, "clients": 20, "p99": 2}`))
			},
			func() {
				send(ctx, client, t, ip, http.MethodPost, base+"/api/v1/simulate", "application/json",
					strings.NewReader(`{"limiter": {"algorithm": "gcra", "rate": 5, "burst": 10}, "arrivals": [{"at": 0}, {"at": 0.1}, {"at": 0.2}]}`))
			},
			func() { send(ctx, client, t, ip, http.MethodGet, base+"/?capacity=1000&clients=20&p99=2", "", nil) },
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			// A cancelled request at the end is the run's, not the server's.
			req[n%len(req)]()
		}
	}
}

// drainUpload starts a well-formed upload that takes about two seconds to
// send, sends the server SIGTERM in the middle of it, and records the
// upload's answer.
func drainUpload(ctx context.Context, base string, srv *liveserver.Server, t *tally) {
	body := &lines{n: 4000, line: func(i int) string {
		if i%400 == 0 {
			time.Sleep(200 * time.Millisecond) // the upload is in flight for ~2 s
		}
		return combinedLine("127.7.0.1", logStart.Add(time.Duration(i)*time.Second), "/v1/items")
	}}
	ct, r := multipartLog(map[string]string{"format": "combined"}, body)
	done := make(chan struct{})
	go func() {
		defer close(done)
		send(ctx, newClient(1), t, "127.7.0.2", http.MethodPost, base+"/measure", ct, r)
	}()
	time.Sleep(500 * time.Millisecond)
	if err := srv.Signal(syscall.SIGTERM); err != nil {
		t.failed("SIGTERM", err)
	}
	<-done
}

// raiseFileLimit lets this process hold n connections.
func raiseFileLimit(n uint64) {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return
	}
	if lim.Cur < n {
		lim.Cur = min(n, lim.Max)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}

// failures lists what broke the run's promises.
func (r *report) failures(o options) []string {
	var out []string
	if r.exitErr != nil {
		var ee interface{ ExitCode() int }
		if errors.As(r.exitErr, &ee) {
			out = append(out, fmt.Sprintf("the server exited with status %d after SIGTERM", ee.ExitCode()))
		} else {
			out = append(out, r.exitErr.Error())
		}
	}
	if r.good.errs > 0 || r.good.requests == 0 || len(r.good.statuses) != 1 || r.good.statuses[200] == 0 {
		out = append(out, fmt.Sprintf("the well-formed client got %s and %d errors: %s", r.good.statusList(), r.good.errs, strings.Join(r.good.notes, "; ")))
	}
	for _, res := range r.results {
		if res.t.bad > 0 {
			out = append(out, fmt.Sprintf("%s: %d answers with a 5xx: %s", res.name, res.t.bad, strings.Join(res.t.notes, "; ")))
		}
		if res.t.held > 0 {
			out = append(out, fmt.Sprintf("%s: %d connections still open after %s: the server neither answered nor closed them", res.name, res.t.held, slowFor))
		}
		if res.t.big > 0 {
			out = append(out, fmt.Sprintf("%s: %d response headers over %d bytes", res.name, res.t.big, maxHeaderBytes))
		}
	}
	if r.drain.statuses[200] != 1 {
		out = append(out, fmt.Sprintf("the upload in flight at SIGTERM got %s, %d errors (%s); want it served", r.drain.statusList(), r.drain.errs, strings.Join(r.drain.notes, "; ")))
	}
	if r.peakRSS > o.rssLimit {
		out = append(out, fmt.Sprintf("peak RSS %d MiB, over %d MiB", r.peakRSS>>20, o.rssLimit>>20))
	}
	if r.logErrors > 0 {
		out = append(out, fmt.Sprintf("the server logged %d ERROR lines: %s", r.logErrors, strings.Join(r.logKept, " | ")))
	}
	return out
}

// write prints the report as Markdown.
func (r *report) write(w io.Writer) {
	fmt.Fprintf(w, "\n| attack | what it once did | requests | answers | no answer | bad 5xx | time |\n|---|---|---:|---|---:|---:|---:|\n")
	for _, res := range r.results {
		fmt.Fprintf(w, "| `%s` | %s | %d | %s | %d | %d | %.1f s |\n", res.name, res.finding, res.t.requests, res.t.statusList(), res.t.errs, res.t.bad, res.took.Seconds())
	}
	fmt.Fprintf(w, "\nwell-formed client: %d requests, %s, %d without an answer\n", r.good.requests, r.good.statusList(), r.good.errs)
	fmt.Fprintf(w, "upload in flight at SIGTERM: %s; server exit: %v\n", r.drain.statusList(), orOK(r.exitErr))
	fmt.Fprintf(w, "server RSS: %d MiB idle, %d MiB peak; address space %d MiB peak; %d log lines, %d at ERROR; run %.0f s\n",
		r.idleRSS>>20, r.peakRSS>>20, r.peakAddressSpace>>20, r.logLines, r.logErrors, r.took.Seconds())
}

func orOK(err error) string {
	if err == nil {
		return "0 (clean)"
	}
	return err.Error()
}
