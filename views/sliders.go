package views

import "strconv"

// Slider is the range control beside a numeric field of the designer:
// dragging it (or pressing the arrow keys on it) writes a value into the
// field, as typing would, and the results follow. It spans Min to Max in
// the field's unit, on a logarithmic scale when Log (rates and counts,
// whose sensible values span orders of magnitude), else linearly; values
// are rounded to two significant digits on a log scale, to Step on a
// linear one, and to whole numbers when Integer. static/js/sliders.js
// draws it (the page sends it hidden, so without JavaScript the form has
// only its text fields) and keeps it in step with the field, including a
// blank field, whose position is its placeholder (the default or the
// calculator's proposal).
type Slider struct {
	Min, Max float64
	Log      bool
	Step     float64 // of a linear slider
	Integer  bool
}

// sliders are the fields that have one, by URL parameter: the measured
// inputs a reader explores ("what if p99 doubled?") and the default
// limit's rate and burst. The spans hold every realistic value; a value
// typed outside one puts the slider at its end and is kept as typed.
var sliders = map[string]Slider{
	"capacity":    {Min: 10, Max: 1e6, Log: true},
	"clients":     {Min: 1, Max: 1e6, Log: true, Integer: true},
	"p50":         {Min: 0.01, Max: 1e4, Log: true},
	"p95":         {Min: 0.01, Max: 1e4, Log: true},
	"p99":         {Min: 0.01, Max: 1e4, Log: true},
	"margin":      {Min: 1, Max: 10, Step: 0.1},
	"headroom":    {Min: 0, Max: 0.9, Step: 0.01},
	"replicas":    {Min: 1, Max: 64, Step: 1, Integer: true},
	"limit.rate":  {Min: 0.01, Max: 1e5, Log: true},
	"limit.burst": {Min: 1, Max: 1e6, Log: true, Integer: true},
}

// SliderSteps is the number of positions of every slider (its input's
// max; min is 0), fine enough that a log slider over eight orders of
// magnitude moves by under 2 % a step.
const SliderSteps = 1000

// Slider returns the field's slider, and false for a field without one.
func (f Field) Slider() (Slider, bool) {
	if !f.Numeric {
		return Slider{}, false
	}
	s, ok := sliders[f.Name]
	return s, ok
}

// Scale is "log" or "linear", for the slider's data-slider-scale.
func (s Slider) Scale() string {
	if s.Log {
		return "log"
	}
	return "linear"
}

// Attr formats v for a data attribute: the shortest decimal that reads
// back as v.
func (Slider) Attr(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
