package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ratelab/ratelab/internal/liveserver"
)

// pages are the pages photographed: the example design; a tiered one (the
// README's example) whose paid tier pins GCRA, charted under an
// idle-then-burst pattern; and the compare page of a design whose default
// limit pins a burst of 40 against the same design unpinned (the link
// the designer offers for pinned numbers).
var pages = []struct{ name, path string }{
	{"designer", "/"},
	{"tiered", "/?capacity=2000&p99=5&tiers.0.name=free&tiers.0.clients=180&tiers.1.name=paid&tiers.1.clients=20&tiers.1.multiplier=4&tiers.1.limit.algorithm=gcra&pattern=idle_then_burst&pattern.count=300"},
	{"compare", "/compare?a=%2F%3Fcapacity%3D2000%26clients%3D200%26p99%3D5%26limit.algorithm%3Dgcra%26limit.burst%3D40%26pattern%3Didle_then_burst&b=%2F%3Fcapacity%3D2000%26clients%3D200%26p99%3D5%26limit.algorithm%3Dgcra%26pattern%3Didle_then_burst"},
}

// viewport is a screen size, in CSS pixels at a device scale factor of 1,
// so a PNG's pixels are the viewport's.
type viewport struct {
	w, h   int64
	mobile bool // mobile and touch emulation (a phone's layout viewport)
}

// viewports are the sizes issue 14 checks the designer at.
var viewports = []viewport{
	{1440, 900, false},
	{390, 844, true},
}

// fileName is where a page's screenshot at v goes.
func fileName(page string, v viewport) string {
	return fmt.Sprintf("%s-%dx%d.png", page, v.w, v.h)
}

// serverArgs turn the per-client page and API limits off: the browser is
// one client loading every page and asset several times in a row.
var serverArgs = []string{"-api-rate", "0", "-page-rate", "0"}

// pageTimeout bounds loading one page and drawing its charts.
const pageTimeout = 30 * time.Second

// chartsDrawn holds once the page has loaded, its fonts are in and every
// chart is drawn: each [data-chart-option] element has data-chart-drawn
// (static/js/charts.js sets it) and a canvas.
const chartsDrawn = `(function () {
  if (document.readyState !== "complete" || document.fonts.status !== "loaded") {
    return false;
  }
  var all = document.querySelectorAll("[data-chart-option]");
  if (all.length === 0) {
    return false;
  }
  for (var i = 0; i < all.length; i++) {
    if (!all[i].hasAttribute("data-chart-drawn") || !all[i].querySelector("canvas")) {
      return false;
    }
  }
  return true;
})()`

// nextFrames resolves after two animation frames, so what was drawn last
// is on the screen.
const nextFrames = `new Promise(function (resolve) {
  requestAnimationFrame(function () { requestAnimationFrame(function () { resolve(true); }); });
})`

// capture starts the server, takes every screenshot, stops the server and
// only then writes the files, so a failed run leaves the old ones.
func capture(ctx context.Context, o options, stdout, progress io.Writer) error {
	if _, err := os.Stat(o.chromium); err != nil {
		return fmt.Errorf("chromium: %w (install Debian's chromium package, or pass -chromium)", err)
	}
	bin := o.bin
	if bin == "" {
		dir, err := os.MkdirTemp("", "ratelab-screenshots-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		fmt.Fprintln(progress, "building ./cmd/web")
		if bin, err = liveserver.Build(ctx, dir); err != nil {
			return err
		}
	}
	srv, err := liveserver.Start(ctx, bin, liveserver.Options{Args: serverArgs})
	if err != nil {
		return err
	}
	base := "http://" + srv.Addr()
	fmt.Fprintf(progress, "server on %s\n", base)

	shots, shotErr := shoot(ctx, o.chromium, base, srv.Addr(), progress)
	if err := srv.Stop(); err != nil && shotErr == nil {
		shotErr = fmt.Errorf("stop server: %w", err)
	}
	if shotErr != nil {
		return shotErr
	}

	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	for _, s := range shots {
		path := filepath.Join(o.dir, s.name)
		if err := os.WriteFile(path, s.png, 0o644); err != nil {
			return err
		}
		fmt.Fprintln(stdout, path)
	}
	return nil
}

// shot is one screenshot in memory.
type shot struct {
	name string
	png  []byte
}

// shoot runs one headless Chromium with a fresh profile and takes every
// page at every viewport, each in a new tab.
func shoot(ctx context.Context, chromium, base, host string, progress io.Writer) ([]shot, error) {
	profile, err := os.MkdirTemp("", "ratelab-screenshots-profile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(profile),
	)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(browser); err != nil { // starts the browser
		return nil, fmt.Errorf("start chromium: %w", err)
	}

	var shots []shot
	for _, p := range pages {
		for _, v := range viewports {
			name := fileName(p.name, v)
			fmt.Fprintf(progress, "%s: %s\n", name, p.path)
			png, err := shootOne(browser, base+p.path, host, v)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", name, p.path, err)
			}
			shots = append(shots, shot{name, png})
		}
	}
	return shots, nil
}

// shootOne opens u in a new tab at v, waits for the charts and captures the
// viewport.
func shootOne(browser context.Context, u, host string, v viewport) ([]byte, error) {
	w := &watcher{host: host}
	tab, cancel := chromedp.NewContext(browser, chromedp.WithListener(w.listen))
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(tab, pageTimeout)
	defer cancelTimeout()

	// The tab's first action attaches it; the timeout bounds the rest.
	if err := chromedp.Do(tab); err != nil {
		return nil, fmt.Errorf("open tab: %w", err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: v.w, Height: v.h, DeviceScaleFactor: 1, Mobile: v.mobile,
	}); err != nil {
		return nil, fmt.Errorf("set viewport: %w", err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: v.mobile}); err != nil {
		return nil, fmt.Errorf("set touch: %w", err)
	}
	// Light mode whatever the machine prefers, so reruns agree.
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}},
	}); err != nil {
		return nil, fmt.Errorf("set colour scheme: %w", err)
	}
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(u))
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if resp.Status != http.StatusOK {
		return nil, fmt.Errorf("load: status %d", resp.Status)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](chartsDrawn, chromedp.WithPollingTimeout(pageTimeout))); err != nil {
		return nil, fmt.Errorf("waiting for every chart to be drawn: %w", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](nextFrames, chromedp.EvalAwaitPromise)); err != nil {
		return nil, fmt.Errorf("waiting for a frame: %w", err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	if err := w.err(); err != nil {
		return nil, err
	}
	return png, nil
}

// watcher records, from a tab's events, what makes a screenshot wrong: a
// request to any host but the server, and an uncaught exception.
type watcher struct {
	host string

	mu       sync.Mutex
	problems []string
}

// listen runs in the tab's event loop: it only records.
func (w *watcher) listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		u, err := url.Parse(ev.Request.URL)
		switch {
		case err != nil:
			w.problems = append(w.problems, fmt.Sprintf("request to an unparsable URL %q", ev.Request.URL))
		case u.Scheme == "data":
		case u.Host != w.host:
			w.problems = append(w.problems, "request to another host: "+ev.Request.URL)
		}
	case *runtime.EventExceptionThrown:
		msg := ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			msg += " " + ev.ExceptionDetails.Exception.Description
		}
		w.problems = append(w.problems, "uncaught exception: "+msg)
	}
}

// err is every problem recorded so far, or nil.
func (w *watcher) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(w.problems, "; "))
}
