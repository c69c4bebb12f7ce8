package server

import (
	"math"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// logPosition is where value v sits on a logarithmic slider from lo to hi
// of 1000 positions: the fraction log(v/lo)/log(hi/lo) of the way.
func logPosition(v, lo, hi float64) int {
	return int(math.Round(1000 * math.Log(v/lo) / math.Log(hi/lo)))
}

// TestBrowserSliders: the designer's sliders show with JavaScript, sit
// where their fields' values (or, blank, their placeholders) are, move
// when the field is typed in, and write their value into the field when
// moved by keyboard, which updates the results as typing does.
func TestBrowserSliders(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	waitFor(t, ctx, "the charts", chartsDrawn)

	pos := func(name string) int {
		t.Helper()
		v := eval[string](t, ctx, `document.querySelector('[data-testid="slider-`+name+`"]').value`)
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("slider %s: value %q", name, v)
		}
		return n
	}
	for _, name := range []string{"capacity", "clients", "p99", "margin", "limit.rate", "limit.burst"} {
		if eval[bool](t, ctx, `(function () { var el = document.querySelector('[data-testid="slider-`+name+`"]'); return !el || el.hidden || el.getBoundingClientRect().width === 0; })()`) {
			t.Errorf("slider %s is missing or not shown", name)
		}
	}
	// p99 = 5 on 0.01 to 10 000; capacity = 2000 on 10 to 1e6; margin blank
	// means its placeholder, 2, on a linear 1 to 10.
	if got, want := pos("p99"), logPosition(5, 0.01, 1e4); got != want {
		t.Errorf("p99 slider at %d; want %d for 5", got, want)
	}
	if got, want := pos("capacity"), logPosition(2000, 10, 1e6); got != want {
		t.Errorf("capacity slider at %d; want %d for 2000", got, want)
	}
	if got, want := pos("margin"), int(math.Round(1000*(2-1)/9.0)); got != want {
		t.Errorf("margin slider at %d; want %d for the placeholder 2", got, want)
	}

	// Typing moves the slider.
	eval[bool](t, ctx, `document.getElementById("f-p99").select() || true`)
	s.do(t, ctx, "type p99 100", chromedp.KeyEvent("100"))
	waitFor(t, ctx, "the results to update", `document.querySelector('[data-testid="summary-rate"]').textContent === "200 requests/s"`)
	if got, want := pos("p99"), logPosition(100, 0.01, 1e4); got != want {
		t.Errorf("p99 slider at %d after typing 100; want %d", got, want)
	}

	// The arrow key moves the slider one position: 100 × 1e6^(1/1000) is
	// 101.4, which two significant digits make 100 again, so press until
	// the field changes; the first value past 100 is 110 (two digits).
	s.do(t, ctx, "focus the p99 slider", chromedp.Focus(chromedp.CSS(`[data-testid="slider-p99"]`)))
	for i := 0; i < 12 && eval[string](t, ctx, `document.getElementById("f-p99").value`) == "100"; i++ {
		s.do(t, ctx, "press the right arrow", chromedp.KeyEvent(kb.ArrowRight))
	}
	if got := eval[string](t, ctx, `document.getElementById("f-p99").value`); got != "110" {
		t.Fatalf("p99 field %q after moving its slider up; want 110", got)
	}
	// The rate is p99 × margin (2): the results follow the slider.
	waitFor(t, ctx, "the results to follow the slider", `document.querySelector('[data-testid="summary-rate"]').textContent === "220 requests/s"`)
	if got := eval[string](t, ctx, `document.querySelector('[data-testid="slider-p99"]').getAttribute("aria-valuetext")`); got != "110" {
		t.Errorf("aria-valuetext %q; want the value, 110", got)
	}
	if got := eval[string](t, ctx, `new URL(location.href).searchParams.get("p99")`); got != "110" {
		t.Errorf("address p99=%q; want the slider's 110", got)
	}
}
