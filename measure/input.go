package measure

import (
	"fmt"
	"net/url"
	"time"

	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/design"
)

// Input returns the calculator inputs the measurement fills, for the
// window whose rates become the percentiles: 1 s gives requests per second
// (calc.PerSecond), 1 min requests per minute (calc.PerMinute); the window
// must have been measured.
//
//   - Clients is the number of distinct keys in the log: every client that
//     was active at some time, an upper bound of those active at once.
//   - P50, P95 and P99 are WindowStats' percentiles of that window.
//   - With the 1-minute window and 1 s also measured, Peak is the p99 of
//     the per-client busiest-second counts, for PeakSeconds 1: the p99
//     client must be able to send its busiest second at once.
//
// Capacity, headroom and the rest are not in a log and stay zero: the user
// adds them. Endpoint costs are not either; CalcEndpoints lists the busiest
// endpoints to weigh.
func (r *Result) Input(window time.Duration) (calc.Input, error) {
	var unit calc.PercentileUnit
	switch window {
	case time.Second:
		unit = calc.PerSecond
	case time.Minute:
		unit = calc.PerMinute
	default:
		return calc.Input{}, fmt.Errorf("window %v: the calculator takes percentiles per second (1s) or per minute (1m)", window)
	}
	ws, ok := r.window(window)
	if !ok {
		return calc.Input{}, fmt.Errorf("window %v was not measured (measured: %s)", window, r.windowList())
	}
	if r.Clients == 0 {
		return calc.Input{}, fmt.Errorf("no client with a key in %d requests: check the key", r.Requests)
	}
	in := calc.Input{
		Clients:        r.Clients,
		P50:            float64(ws.P50),
		P95:            float64(ws.P95),
		P99:            float64(ws.P99),
		PercentileUnit: unit,
	}
	if s, ok := r.window(time.Second); ok && window == time.Minute && s.P99 > 0 {
		in.Peak = float64(s.P99)
		in.PeakSeconds = 1
	}
	return in, nil
}

func (r *Result) window(w time.Duration) (WindowStats, bool) {
	for _, ws := range r.Windows {
		if ws.Window == w {
			return ws, true
		}
	}
	return WindowStats{}, false
}

func (r *Result) windowList() string {
	s := ""
	for i, ws := range r.Windows {
		if i > 0 {
			s += ", "
		}
		s += ws.Window.String()
	}
	return s
}

// CalcEndpoints returns up to n of the busiest endpoints as calculator
// endpoints with cost 0 (one token), for the user to weigh; endpoints the
// calculator would refuse (a method that is not 1 to 16 letters, a path not
// starting with '/' or over 1024 bytes) are left out.
func (r *Result) CalcEndpoints(n int) []calc.Endpoint {
	var out []calc.Endpoint
	for _, e := range r.Endpoints {
		if len(out) >= min(n, calc.MaxEndpoints) {
			break
		}
		if len(e.Method) < 1 || len(e.Method) > 16 || len(e.Path) < 1 || e.Path[0] != '/' || len(e.Path) > 1024 {
			continue
		}
		letters := true
		for _, c := range e.Method {
			letters = letters && ('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z')
		}
		if letters {
			out = append(out, calc.Endpoint{Method: e.Method, Path: e.Path})
		}
	}
	return out
}

// Query encodes the fields of in that a measurement fills as the
// designer's query parameters (see package design): clients, p50, p95,
// p99, percentile_unit, peak, peak_seconds and endpoints.<i>.method/path/
// cost, and any other calculator field in that is set. Zero fields are left
// out.
func Query(in calc.Input) url.Values { return design.FromInput(in).Values() }
