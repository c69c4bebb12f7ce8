package server

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"strconv"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ratelab/ratelab/static"
)

// TestBrowserDrawsFromBrotli loads / in Chromium asking for brotli only
// (Chromium advertises br only over HTTPS, and the test server is plain
// HTTP), waits for every chart, and checks that the vendored scripts came
// as their brotli copies and decode to the very bytes of the embedded
// files: the copies are made outside Go, which cannot decode them.
func TestBrowserDrawsFromBrotli(t *testing.T) {
	s := newBrowserSession(t)
	ctx := s.ctx
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Encoding": "br"}}); err != nil {
		t.Fatal(err)
	}
	s.do(t, ctx, "load /", chromedp.Navigate(s.srv.URL+"/"))
	waitFor(t, ctx, "the charts", chartsDrawn)
	for _, name := range []string{"vendor/echarts.min.js", "vendor/htmx.min.js"} {
		raw, err := fs.ReadFile(static.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		br, ok := static.Brotli(name)
		if !ok {
			t.Fatalf("%s has no brotli copy", name)
		}
		u := strconv.Quote(static.Path(name))
		// The page loaded the script once; its resource timing says how many
		// bytes came over the wire and how many they decoded to.
		sizes := eval[[]int](t, ctx, `(function () {
  var e = performance.getEntriesByName(new URL(`+u+`, location.href).href)[0];
  return e ? [e.encodedBodySize, e.decodedBodySize] : [];
})()`)
		if len(sizes) != 2 || sizes[0] != len(br) || sizes[1] != len(raw) {
			t.Errorf("%s: the page got %v bytes (sent, decoded), want [%d %d] (brotli copy, file)", name, sizes, len(br), len(raw))
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(`+u+`).then(function (r) { return r.arrayBuffer(); })
  .then(function (b) { return crypto.subtle.digest("SHA-256", b); })
  .then(function (d) { return Array.from(new Uint8Array(d), function (x) { return x.toString(16).padStart(2, "0"); }).join(""); })`,
			chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: fetch in the page: %v", name, err)
		}
		sum := sha256.Sum256(raw)
		if want := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: the browser decoded bytes with sha256 %s, want the file's %s", name, got, want)
		}
	}
}
