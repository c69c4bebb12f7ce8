package views

import (
	"encoding/json"
	"testing"
)

// yAxes is a chart's y axes as its option draws them.
func yAxes(t *testing.T, c Chart) []map[string]any {
	t.Helper()
	var option struct {
		YAxis []map[string]any `json:"yAxis"`
	}
	if err := json.Unmarshal([]byte(c.Option), &option); err != nil {
		t.Fatal(err)
	}
	return option.YAxis
}

// TestShareScale: two designs' charts of a kind are drawn from 0 to one
// maximum, a round number at or above the highest point of either, and
// tick at steps that divide it; the timeline's rows keep their own axis.
// The numbers are worked by hand: a highest point of 15 on one grid
// each makes 0–15 in steps of 5 (15/5 = 3 a tick, rounded up to 5); a
// grid beside a chart of two lanes (room for two ticks a lane: 15/2 =
// 7.5, rounded up to 10) makes 0–20, the lanes ticking by 10 and the
// grid, which has room for five ticks, by 5.
func TestShareScale(t *testing.T) {
	x := []float64{0, 1, 2}
	one := func(top float64) Chart {
		return lines{xName: "time (s)", yName: "requests", x: x, series: []line{{name: "a", y: []float64{1, top, 2}}}}.chart("c", "t", "")
	}
	lanes := func(top float64) Chart {
		var l lines
		l.xName, l.yName, l.x = "time (s)", "requests", x
		l.add(line{name: "a", y: []float64{1, top, 2}})
		l.add(line{name: "b", y: []float64{0, 1, 1}})
		return l.chart("c", "t", "")
	}
	type want struct{ max, step float64 }
	for _, c := range []struct {
		name string
		a, b Chart
		a1   want // every axis of a
		b1   want
	}{
		{"two grids", one(15), one(7), want{15, 5}, want{15, 5}},
		{"a grid beside lanes", one(7), lanes(15), want{20, 5}, want{20, 10}},
		{"lanes beside lanes", lanes(3), lanes(15), want{20, 10}, want{20, 10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := c.a, c.b
			ShareScale(&a, &b)
			for _, side := range []struct {
				name string
				c    Chart
				w    want
			}{{"a", a, c.a1}, {"b", b, c.b1}} {
				ys := yAxes(t, side.c)
				if len(ys) == 0 {
					t.Fatalf("%s: no y axis", side.name)
				}
				for i, y := range ys {
					if y["min"] != 0.0 || y["max"] != side.w.max || y["interval"] != side.w.step {
						t.Errorf("%s: y axis %d from %v to %v by %v; want 0 to %v by %v", side.name, i, y["min"], y["max"], y["interval"], side.w.max, side.w.step)
					}
				}
			}
		})
	}
	// A chart whose y axis lists rows keeps its own, and so does the one
	// beside it.
	timeline := one(3)
	timeline.Option = `{"yAxis":[{"type":"category","data":["default"]}]}`
	other := one(15)
	before := other.Option
	ShareScale(&timeline, &other)
	if other.Option != before || timeline.Option != `{"yAxis":[{"type":"category","data":["default"]}]}` {
		t.Errorf("a category axis changed the scales: %s / %s", timeline.Option, other.Option)
	}
}
