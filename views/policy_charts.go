package views

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
)

// Chart IDs of the whole-policy charts.
const (
	ChartPolicyAdmitted   = "chart-policy-admitted"
	ChartPolicyRejected   = "chart-policy-rejected"
	ChartPolicyCumulative = "chart-policy-cumulative"
)

// PolicyLane is one class of clients (the default, or a tier) sending the
// same traffic through the whole policy: its name as the legend shows it
// and the run. Every lane of a chart set shares one bin width.
type PolicyLane struct {
	Name string
	Run  engine.Result
}

// PolicyCharts draws the policy's own limits on the same traffic, one line
// per class of clients:
//
//   - ChartPolicyAdmitted: requests admitted per bin, and offered;
//   - ChartPolicyRejected: requests rejected per bin, one line per class
//     and limit that rejected any (the limit named first, as the 429 would
//     say);
//   - ChartPolicyCumulative: requests admitted so far, and offered.
//
// caption describes the traffic. lanes must not be empty.
func PolicyCharts(lanes []PolicyLane, caption string) []Chart {
	if len(lanes) == 0 {
		return nil
	}
	bin := lanes[0].Run.Bin
	n := 0
	for _, l := range lanes {
		n = max(n, len(l.Run.Series))
	}
	starts, ends := make([]float64, n), make([]float64, n)
	for i := range n {
		starts[i] = (time.Duration(i) * bin).Seconds()
		ends[i] = (time.Duration(i+1) * bin).Seconds()
	}
	per := func(r engine.Result, f func(engine.Bin) int64) []float64 {
		y := make([]float64, n)
		for i := 0; i < n && i < len(r.Series); i++ {
			y[i] = float64(f(r.Series[i]))
		}
		return y
	}
	sum := func(y []float64) []float64 {
		for i := 1; i < len(y); i++ {
			y[i] += y[i-1]
		}
		return y
	}
	offeredOf := func(b engine.Bin) int64 { return b.Offered }
	admittedOf := func(b engine.Bin) int64 { return b.Admitted }

	label := binLabel(bin)
	adm := lines{xName: "time (s)", yName: label, x: starts,
		series: []line{{name: SeriesOffered, y: per(lanes[0].Run, offeredOf), color: ColorReference, dashed: true}}}
	cum := lines{xName: "time (s)", yName: "requests", x: ends,
		series: []line{{name: SeriesOffered, y: sum(per(lanes[0].Run, offeredOf)), color: ColorReference, dashed: true}}}
	rej := lines{xName: "time (s)", yName: label, x: starts}
	for i, l := range lanes {
		w, col := laneWidth(i, len(lanes)), ClassColor(i)
		adm.series = append(adm.series, line{name: l.Name, y: per(l.Run, admittedOf), color: col, width: w})
		cum.series = append(cum.series, line{name: l.Name, y: sum(per(l.Run, admittedOf)), color: col, width: w})
		// A class's rejections take its colour; its second and later
		// limits are dashed, so two limits of one class stay apart.
		nth := 0
		for j, lim := range l.Run.Limits {
			if l.Run.Summary.RejectedBy[j] == 0 {
				continue
			}
			rej.series = append(rej.series, line{name: l.Name + " · by " + lim.Name,
				y: per(l.Run, func(b engine.Bin) int64 { return b.RejectedBy[j] }), color: col, dashed: nth > 0, width: w})
			nth++
		}
	}
	rejCaption := fmt.Sprintf("Requests rejected per %s bin, by the limit that rejected them; a rejected request takes no quota from any limit.", seconds(bin.Seconds()))
	if len(rej.series) == 0 {
		rejCaption = "No limit of the policy rejects any of this traffic."
		rej.series = []line{{name: "rejected", y: make([]float64, n), color: ColorReference}}
	}
	return []Chart{
		adm.chart(ChartPolicyAdmitted, "Your policy: admitted over time",
			fmt.Sprintf("Requests the whole policy admitted per %s bin for each class of clients sending the same traffic (%s): the client's limit, the endpoint's and the global limit together.", seconds(bin.Seconds()), caption)),
		rej.chart(ChartPolicyRejected, "Your policy: rejected over time", rejCaption),
		cum.chart(ChartPolicyCumulative, "Your policy: admitted so far",
			fmt.Sprintf("Requests the whole policy admitted so far for each class of clients, against those offered (%s).", caption)),
	}
}
