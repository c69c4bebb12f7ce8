// charts.js draws ratelab's charts. The page carries each chart's echarts
// option as JSON data in a data-chart-option attribute (built in Go, see
// views/charts.go); this script is the only code that reads it. It draws
// every chart when the page loads, disposes the charts htmx is about to
// replace, and draws the new ones after each swap. No inline script or
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

  // draw initialises the charts under root that are not drawn yet.
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
      // data-chart-theme: "dark", or "auto" to follow the reader's colour
      // scheme (embeds); anything else is the default light theme.
      var theme = el.getAttribute("data-chart-theme");
      if (theme === "auto") {
        theme = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
      }
      var dark = theme === "dark";
      var chart = echarts.init(el, dark ? "dark" : null, { renderer: "canvas" });
      if (dark) {
        option.backgroundColor = "transparent"; // the page's background shows
      }
      chart.setOption(option);
      el.setAttribute("data-chart-theme-used", dark ? "dark" : "light");
      el.setAttribute("data-chart-drawn", "true");
    });
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

  var pending = 0;
  window.addEventListener("resize", function () {
    window.clearTimeout(pending);
    pending = window.setTimeout(resizeAll, 150);
  });
})();
