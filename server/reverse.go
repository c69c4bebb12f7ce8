package server

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/views"
)

// reversePath is the page for a limit someone already has.
const reversePath = "/reverse"

// reverseParams are the reverse form's fields, in order, with their labels
// and help; they are calc.Limit's JSON names.
var reverseParams = []struct{ name, label, help string }{
	{"algorithm", "Algorithm", "the limit's algorithm"},
	{"rate", "Rate", "requests/s (token_bucket, gcra, leaky_bucket)"},
	{"burst", "Burst", "requests (token_bucket, gcra)"},
	{"queue", "Queue", "requests that may wait (leaky_bucket)"},
	{"limit", "Limit", "requests per window (the window algorithms)"},
	{"window", "Window", "s (the window algorithms)"},
	{"capacity", "Capacity", "requests/s your service takes (optional: the designer needs it)"},
}

// handleReversePage answers GET /reverse?algorithm=…&rate=…: the form, and
// once the limit is valid, calc.Reverse's answer with a link that pins it
// as the designer's default limit. A bad value is a 422 with its message
// beside the field.
func handleReversePage(c echo.Context) error {
	q := c.QueryParams()
	v := views.ReverseView{Title: "ratelab: what does my limit do?"}
	msgs := map[string]string{}
	var l calc.Limit
	given := strings.TrimSpace(q.Get("algorithm")) != ""
	if given {
		l.Algorithm = algorithms.Name(strings.TrimSpace(q.Get("algorithm")))
		num := func(name string) float64 {
			s := strings.TrimSpace(q.Get(name))
			if s == "" {
				return 0
			}
			x, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				msgs[name] = name + ": " + strconv.Quote(s) + " is not a number"
				return 0
			}
			return x
		}
		whole := func(name string) int64 {
			x := num(name)
			if x != math.Trunc(x) || math.Abs(x) > 1e15 {
				msgs[name] = name + ": " + strconv.Quote(q.Get(name)) + " is not a whole number of ordinary size"
				return 0
			}
			return int64(x)
		}
		l.Rate, l.Burst, l.Queue, l.Limit, l.Window = num("rate"), whole("burst"), whole("queue"), whole("limit"), num("window")
		if c := num("capacity"); c < 0 {
			msgs["capacity"] = "capacity: " + strconv.Quote(q.Get("capacity")) + " is out of range; want requests per second above 0"
		}
	}
	status := http.StatusOK
	if given && len(msgs) == 0 {
		res, err := calc.Reverse(l)
		var es calc.Errors
		switch {
		case errors.As(err, &es):
			for _, e := range es {
				msgs[e.Field] = e.Error()
			}
		case err != nil:
			return err
		default:
			v.Result = &res
			v.DesignerURL = designerPath + "?" + pinnedLimit(l, strings.TrimSpace(q.Get("capacity")))
		}
	}
	if len(msgs) > 0 {
		status = http.StatusUnprocessableEntity
	}
	for _, p := range reverseParams {
		f := views.Field{Name: p.name, ID: "r-" + p.name, Label: p.label, Help: p.help, Value: q.Get(p.name), Error: msgs[p.name]}
		if p.name == "algorithm" {
			for _, n := range algorithms.Names {
				f.Options = append(f.Options, views.Option{Value: string(n), Label: string(n)})
			}
		} else {
			f.Numeric = true
		}
		v.Fields = append(v.Fields, f)
	}
	return render(c, status, views.ReversePage(v))
}

// pinnedLimit is the design query that pins l as the default limit, with
// no global limit (the designer proposes none without measurements) and
// the capacity when given.
func pinnedLimit(l calc.Limit, capacity string) string {
	q := url.Values{"limit.algorithm": {string(l.Algorithm)}, "global.limit.algorithm": {"none"}}
	if capacity != "" {
		q.Set("capacity", capacity)
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	switch l.Algorithm {
	case algorithms.NameTokenBucket, algorithms.NameGCRA:
		q.Set("limit.rate", f(l.Rate))
		q.Set("limit.burst", strconv.FormatInt(l.Burst, 10))
	case algorithms.NameLeakyBucket:
		q.Set("limit.rate", f(l.Rate))
		q.Set("limit.queue", strconv.FormatInt(l.Queue, 10))
	default:
		q.Set("limit.limit", strconv.FormatInt(l.Limit, 10))
		q.Set("limit.window", f(l.Window))
	}
	return q.Encode()
}
