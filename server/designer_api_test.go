package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/ratelab/ratelab/views"
)

// TestChartsAgreeWithTheAPI checks the designer's admitted-over-time chart
// against the public API for the same design: POST /api/v1/calc gives the
// six algorithms' parameters, POST /api/v1/simulate runs each over the same
// pattern with the chart's bin width, and every bin must match.
func TestChartsAgreeWithTheAPI(t *testing.T) {
	q := "capacity=2000&clients=200&p99=5&window=30&pattern=periodic_bursts&pattern.count=80&pattern.period=4&pattern.duration=20"
	doc, _ := getDoc(t, "/?"+q)
	admitted := pageCharts(t, doc)[views.ChartAdmitted]

	rec := post(t, "/api/v1/calc", "application/json", `{"capacity": 2000, "clients": 200, "p99": 5, "window": 30}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("calc: %d %s", rec.Code, rec.Body)
	}
	type value struct{ Value float64 }
	var res struct {
		Algorithms []struct {
			Algorithm                         string
			Rate, Burst, Queue, Limit, Window *value
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Algorithms) != 6 {
		t.Fatalf("%d algorithms", len(res.Algorithms))
	}
	for _, a := range res.Algorithms {
		t.Run(a.Algorithm, func(t *testing.T) {
			var page struct {
				Name string
				Data [][2]float64
			}
			for _, s := range admitted.Series {
				if s.Name == a.Algorithm {
					page.Name = s.Name
					page.Data = append(page.Data, s.Data...)
				}
			}
			if len(page.Data) < 2 {
				t.Fatalf("no series for %s on the page", a.Algorithm)
			}
			bin := page.Data[1][0] - page.Data[0][0]
			limiter := map[string]any{"algorithm": a.Algorithm}
			for name, v := range map[string]*value{"rate": a.Rate, "burst": a.Burst, "queue": a.Queue, "limit": a.Limit, "window": a.Window} {
				if v != nil {
					limiter[name] = v.Value
				}
			}
			body, _ := json.Marshal(map[string]any{
				"limiter": limiter,
				"pattern": map[string]any{"name": "periodic_bursts", "count": 80, "period": 4, "duration": 20},
				"bin":     bin,
			})
			rec := post(t, "/api/v1/simulate", "application/json", string(body))
			if rec.Code != http.StatusOK {
				t.Fatalf("simulate: %d %s", rec.Code, rec.Body)
			}
			var sim struct {
				Series []struct{ Start, Admitted float64 }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &sim); err != nil {
				t.Fatal(err)
			}
			// The page follows the run a little past the last arrival; the
			// API's series ends with it. Bins they share must match, and the
			// page's extra bins hold nothing (no arrivals after the last).
			for i, p := range page.Data {
				want := 0.0
				if i < len(sim.Series) {
					want = sim.Series[i].Admitted
				}
				if p[1] != want {
					t.Fatalf("bin %d (%s s): page %g admitted, API %g", i, fmt.Sprint(p[0]), p[1], want)
				}
			}
			if len(sim.Series) > len(page.Data) {
				t.Errorf("API has %d bins, page %d", len(sim.Series), len(page.Data))
			}
		})
	}
}
