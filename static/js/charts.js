// charts.js draws ratelab's charts. The page carries each chart's echarts
// option as JSON data in a data-chart-option attribute (built in Go, see
// views/charts.go); this script is the only code that reads it. It draws
// every chart when the page loads, disposes the charts htmx is about to
// replace, and draws the new ones after each swap. Charts follow the
// reader's colour scheme unless data-chart-theme fixes one, and are drawn
// again when the scheme changes. No inline script or
// style is involved, so the page's Content-Security-Policy
// (script-src 'self'; style-src 'self') holds.
(function () {
  "use strict";

  var selector = "[data-chart-option]";

  function each(root, fn) {
    if (!root || !root.querySelectorAll) {
      return;
    }
    if (root.matches && root.matches(selector)) {
      fn(root);
    }
    Array.prototype.forEach.call(root.querySelectorAll(selector), fn);
  }

  // scheme is the reader's colour scheme query, or null without matchMedia.
  var scheme = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  // follows reports whether el's chart follows the reader's colour scheme:
  // data-chart-theme "auto" (embeds) or no data-chart-theme at all (the
  // designer's charts). "light" and "dark" are fixed.
  function follows(el) {
    var theme = el.getAttribute("data-chart-theme");
    return theme === null || theme === "" || theme === "auto";
  }

  // draw initialises the charts under root that are not drawn yet, dark
  // when their data-chart-theme is "dark", or when it follows the reader's
  // scheme and that is dark. Series carry their own colours (the same in
  // both themes); the dark theme draws the axes, labels and legend light
  // on the page's dark background.
  function draw(root) {
    if (typeof echarts === "undefined") {
      return; // the data tables carry the numbers
    }
    each(root, function (el) {
      if (echarts.getInstanceByDom(el)) {
        return;
      }
      var option;
      try {
        option = JSON.parse(el.getAttribute("data-chart-option"));
      } catch (err) {
        return;
      }
      var dark = el.getAttribute("data-chart-theme") === "dark" || (follows(el) && scheme !== null && scheme.matches);
      var chart = echarts.init(el, dark ? "dark" : null, { renderer: "canvas" });
      if (dark) {
        option.backgroundColor = "transparent"; // the page's background shows
      }
      chart.setOption(option);
      el.setAttribute("data-chart-theme-used", dark ? "dark" : "light");
      el.setAttribute("data-chart-drawn", "true");
    });
  }

  // redrawFollowing draws again, in the new scheme, every chart that
  // follows the reader's scheme.
  function redrawFollowing() {
    if (typeof echarts === "undefined") {
      return;
    }
    each(document, function (el) {
      var chart = echarts.getInstanceByDom(el);
      if (chart && follows(el)) {
        chart.dispose();
      }
    });
    draw(document);
  }

  // dispose releases the charts under root before htmx removes them.
  function dispose(root) {
    if (typeof echarts === "undefined") {
      return;
    }
    each(root, function (el) {
      var chart = echarts.getInstanceByDom(el);
      if (chart) {
        chart.dispose();
      }
    });
  }

  function resizeAll() {
    if (typeof echarts === "undefined") {
      return;
    }
    each(document, function (el) {
      var chart = echarts.getInstanceByDom(el);
      if (chart) {
        chart.resize();
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    draw(document);
  });
  document.addEventListener("htmx:beforeSwap", function (evt) {
    dispose(evt.detail && evt.detail.target);
  });
  document.addEventListener("htmx:afterSwap", function () {
    // With an outerHTML swap the event's target is the element that was
    // replaced, so look at the whole document; drawn charts are skipped.
    draw(document);
  });
  document.addEventListener("htmx:historyRestore", function () {
    draw(document);
  });
  // upload.js swaps in a page part with charts after an upload.
  document.addEventListener("ratelab:swapped", function () {
    draw(document);
  });

  if (scheme !== null) {
    if (scheme.addEventListener) {
      scheme.addEventListener("change", redrawFollowing);
    } else if (scheme.addListener) {
      scheme.addListener(redrawFollowing); // older Safari
    }
  }

  var pending = 0;
  window.addEventListener("resize", function () {
    window.clearTimeout(pending);
    pending = window.setTimeout(resizeAll, 150);
  });
})();
