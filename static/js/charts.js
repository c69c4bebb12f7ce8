// charts.js draws ratelab's charts. The page carries each chart's echarts
// option as JSON data in a data-chart-option attribute (built in Go, see
// views/charts.go); this script is the only code that reads it. It draws
// the charts when the page loads and after each htmx swap (those in the
// viewport at once, the rest when the browser is idle); a chart htmx
// replaces hands its echarts instance to its successor of the same id,
// and the others are disposed. Charts follow the
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

  // dark reports whether el's chart is drawn dark: its data-chart-theme
  // is "dark", or it follows the reader's scheme and that is dark.
  function dark(el) {
    return el.getAttribute("data-chart-theme") === "dark" || (follows(el) && scheme !== null && scheme.matches);
  }

  // drawOne draws the chart of el from its option, in the instance el
  // already has (one it took over, see adopt) or a new one. Series carry
  // their own colours (the same in both themes); the dark theme draws the
  // axes, labels and legend light on the page's dark background.
  function drawOne(el) {
    if (!el.isConnected || el.hasAttribute("data-chart-drawn")) {
      return;
    }
    var option;
    try {
      option = JSON.parse(el.getAttribute("data-chart-option"));
    } catch (err) {
      return;
    }
    var d = dark(el);
    fitLabels(option, el.clientWidth);
    fitLaneNames(option, el.clientWidth);
    // The height the page's style gives the chart, without what a
    // legend added to it last time.
    var before = el.style.height;
    el.style.height = "";
    var added = fitLegend(option, el.clientWidth, el.clientHeight, !el.classList.contains("embed-chart"));
    if (added > 0) {
      el.style.height = el.clientHeight + added + "px";
    }
    if (el.style.height !== before) {
      el.setAttribute("data-chart-resize", "");
    }
    var chart = echarts.getInstanceByDom(el) || echarts.init(el, d ? "dark" : null, { renderer: "canvas" });
    if (d) {
      option.backgroundColor = "transparent"; // the page's background shows
    }
    chart.setOption(option, true); // the new option replaces the old whole
    if (el.hasAttribute("data-chart-resize")) {
      el.removeAttribute("data-chart-resize");
      chart.resize();
    }
    el.setAttribute("data-chart-theme-used", d ? "dark" : "light");
    el.setAttribute("data-chart-drawn", "true");
    el.setAttribute("data-chart-width", String(el.clientWidth));
  }

  // fitLabels fits the truncated labels of a category y axis (the request
  // timeline's rows, "class · outcome", which name the limit that
  // rejected) to the chart: a wide chart gives them 30 % of its width, up
  // to 300 px, so a desktop shows them whole; a narrow one (a phone) keeps
  // the option's width and writes each label on two lines, the class
  // above the outcome, in a smaller size that two lines of fit a row.
  function fitLabels(option, width) {
    var axes = Array.isArray(option.yAxis) ? option.yAxis : [option.yAxis];
    axes.forEach(function (ax) {
      var label = ax && ax.type === "category" ? ax.axisLabel : null;
      if (!label || label.overflow !== "truncate" || !(label.width > 0)) {
        return;
      }
      if (width >= narrowChart) {
        label.width = Math.max(label.width, Math.min(300, Math.round(0.3 * width)));
        return;
      }
      label.fontSize = 11;
      label.lineHeight = 13;
      label.formatter = function (name) {
        return name.replace(" · ", "\n");
      };
    });
  }

  // fitLaneNames cuts the label above each of stacked lanes (its y
  // axis's name, written from the lane's left edge) at the chart's right
  // edge, so a long limit name ends in an ellipsis instead of running off
  // the canvas.
  function fitLaneNames(option, width) {
    var grids = option.grid;
    if (!Array.isArray(grids) || grids.length < 2 || !Array.isArray(option.yAxis)) {
      return;
    }
    option.yAxis.forEach(function (ax) {
      var g = grids[ax.gridIndex || 0];
      if (!ax.name || !g || typeof g.left !== "number") {
        return;
      }
      ax.nameTruncate = { maxWidth: Math.max(0, width - g.left - 4), ellipsis: "…" };
      ax.tooltip = { show: true }; // the whole name, on hover or touch
      ax.triggerEvent = true;
    });
  }

  // narrowChart is the width, in CSS pixels, below which a chart is a
  // phone's.
  var narrowChart = 600;

  // fitLegend makes room for a chart's legend. The option's legend is one
  // row, centred (views/charts.go); echarts wraps a legend too long for the
  // chart onto more rows, which then ran over the y axis's name and the
  // plot (on a phone most legends; on a desktop, long limit names). Such
  // a legend, and any on a narrow chart, is laid out in rows from the left
  // (a name wider than the chart cut, and shown whole on hover or touch),
  // and the plot moves down by the rows added: the one grid's top clears
  // the legend and the axis's name, stacked lanes move down whole. It
  // returns how many pixels taller the chart must be for its plots to
  // keep their height; with grow false (an embed, as tall as its frame)
  // the lanes share the height left instead, and it returns 0.
  function fitLegend(option, width, height, grow) {
    var legend = option.legend;
    if (!legend || legend.show === false) {
      return 0;
    }
    var room = width - 2 * legendSide;
    var rows = legendRows(legendNames(option), room);
    if (rows === 1 && width >= narrowChart) {
      return 0; // one row, centred, clear of the axis's name at the left
    }
    legend.left = legendSide;
    legend.right = legendSide;
    legend.textStyle = { width: room - legendIcon, overflow: "truncate" };
    legend.tooltip = { show: true };
    var grids = Array.isArray(option.grid) ? option.grid : option.grid ? [option.grid] : [];
    if (grids.length === 0 || !(height > 0)) {
      return 0;
    }
    var px = function (v) {
      return typeof v === "string" && v.slice(-1) === "%" ? (parseFloat(v) * height) / 100 : Number(v);
    };
    if (grids.length === 1) {
      var top = legendHeight(rows) + axisNameRoom;
      var lower = Math.max(0, top - px(grids[0].top));
      grids[0].top = top;
      return grow ? lower : 0;
    }
    var added = legendHeight(rows) - legendHeight(1);
    if (added <= 0) {
      return 0;
    }
    var first = px(grids[0].top);
    var last = grids[grids.length - 1];
    var bottom = px(last.top) + px(last.height);
    if (grow) {
      // Every lane as it was, lower, in a chart that much taller.
      var pct = function (v) {
        return ((100 * v) / (height + added)).toFixed(2) + "%";
      };
      grids.forEach(function (g) {
        var h = px(g.height);
        g.top = pct(px(g.top) + added);
        g.height = pct(h);
      });
      return added;
    }
    if (!(bottom > first + added)) {
      return 0;
    }
    var k = (bottom - first - added) / (bottom - first);
    grids.forEach(function (g) {
      var h = px(g.height);
      g.top = Math.round(first + added + (px(g.top) - first) * k);
      g.height = Math.round(h * k);
    });
    return 0;
  }

  // A legend as echarts 6 lays it out in 12 px sans-serif (measured):
  // an item 31 px wider than its name, items 8 apart (itemGap), wrapped
  // where the next would pass the room between the legend's sides; rows
  // 13.2 px tall and 21.2 apart (rounded up here), 5 px of padding.
  // legendSide is the margin at each side, axisNameRoom the room a y
  // axis's name needs above the plot.
  var legendIcon = 31;
  var legendGap = 8;
  var legendItem = 14;
  var legendPitch = 22;
  var legendPadding = 5;
  var legendSide = 8;
  var axisNameRoom = 30;

  // legendNames are the series' names, each once: the legend's items.
  function legendNames(option) {
    var names = [];
    (option.series || []).forEach(function (s) {
      if (s.name && names.indexOf(s.name) < 0) {
        names.push(s.name);
      }
    });
    return names;
  }

  var measure = null;

  // legendRows is how many rows echarts wraps the names onto in a
  // legend room wide, erring by two pixels towards one row more (a gap)
  // rather than one fewer (rows over the plot).
  function legendRows(names, room) {
    if (measure === null) {
      measure = document.createElement("canvas").getContext("2d");
    }
    if (!measure) {
      return names.length;
    }
    measure.font = "12px sans-serif";
    var rows = 1;
    var x = 0;
    names.forEach(function (n) {
      var w = Math.min(legendIcon + Math.ceil(measure.measureText(n).width), room);
      if (x > 0 && x + w > room - 2) {
        rows++;
        x = 0;
      }
      x += w + legendGap;
    });
    return rows;
  }

  function legendHeight(rows) {
    return 2 * legendPadding + legendItem + (rows - 1) * legendPitch;
  }

  // kept holds, by id, the drawn charts of the content htmx is about to
  // replace, for the new content's charts of the same ids to take over:
  // an echarts instance given a new option draws it in about half the
  // time a new instance takes.
  var kept = {};

  function keep(root) {
    each(root, function (el) {
      if (el.id && echarts.getInstanceByDom(el)) {
        kept[el.id] = el;
      }
    });
  }

  // adopt returns the element to draw el's chart in: the kept chart of
  // el's id, put in el's place with el's option, size and labels, when
  // it is drawn in the theme el needs; else el.
  function adopt(el) {
    var old = el.id ? kept[el.id] : null;
    if (!old) {
      return el;
    }
    delete kept[el.id];
    if (old === el) {
      return el; // the swap left it in place
    }
    if (old.getAttribute("data-chart-theme-used") !== (dark(el) ? "dark" : "light")) {
      echarts.getInstanceByDom(old).dispose();
      return el;
    }
    if (old.className !== el.className) {
      old.className = el.className;
      old.setAttribute("data-chart-resize", "");
    }
    ["data-chart-option", "data-chart-theme", "role", "aria-label"].forEach(function (name) {
      if (el.hasAttribute(name)) {
        old.setAttribute(name, el.getAttribute(name));
      } else {
        old.removeAttribute(name);
      }
    });
    old.removeAttribute("data-chart-drawn");
    el.replaceWith(old);
    return old;
  }

  // release disposes the kept charts no new chart took over.
  function release() {
    Object.keys(kept).forEach(function (id) {
      var chart = echarts.getInstanceByDom(kept[id]);
      if (chart) {
        chart.dispose();
      }
    });
    kept = {};
  }

  // inView reports whether el shows in the viewport. Charts just outside
  // it are drawn in the first idle moments after those in view, before a
  // reader can scroll to them. The chart's figure is measured rather than
  // the chart: the results lay out a figure far from the viewport only
  // when it comes near it (app.css), and measuring inside it would lay it
  // out now.
  function inView(el) {
    var r = (el.closest("figure") || el).getBoundingClientRect();
    var h = window.innerHeight || document.documentElement.clientHeight;
    return r.bottom > 0 && r.top < h;
  }

  // drawn tells tests and other scripts that charts went up, and how many
  // wait to be drawn.
  function drawn() {
    document.dispatchEvent(new CustomEvent("ratelab:drawn", { detail: { pending: queue.length } }));
  }

  // The charts waiting to be drawn, far from the viewport, one at a time
  // when the browser is idle, so an update shows the charts in view
  // without waiting for the others and typing stays responsive.
  var queue = [];
  var scheduled = false;
  var idle = window.requestIdleCallback || function (fn) {
    return window.setTimeout(fn, 16);
  };

  function drainLater() {
    if (scheduled || queue.length === 0) {
      return;
    }
    scheduled = true;
    idle(function () {
      scheduled = false;
      var el = queue.shift();
      if (el) {
        drawOne(el);
        drawn();
      }
      drainLater();
    });
  }

  // draw draws the charts under root that are not drawn yet: those in
  // the viewport at once, the others queued for idle time.
  function draw(root) {
    if (typeof echarts === "undefined") {
      return; // the data tables carry the numbers
    }
    var now = [];
    queue = queue.filter(function (el) {
      return el.isConnected;
    });
    each(root, function (el) {
      el = adopt(el);
      if (el.hasAttribute("data-chart-drawn") || queue.indexOf(el) >= 0) {
        return;
      }
      if (inView(el)) {
        now.push(el);
      } else {
        queue.push(el);
      }
    });
    release();
    now.forEach(drawOne);
    if (now.length > 0) {
      drawn();
    }
    drainLater();
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
        el.removeAttribute("data-chart-drawn");
      }
    });
    draw(document);
  }

  // resizeAll fits every drawn chart to its new size: a chart whose width
  // changed (a phone turned, a window narrowed) is drawn again from its
  // option, as its labels and legend rows depend on the width.
  function resizeAll() {
    if (typeof echarts === "undefined") {
      return;
    }
    each(document, function (el) {
      var chart = echarts.getInstanceByDom(el);
      if (!chart) {
        return;
      }
      if (el.getAttribute("data-chart-width") === String(el.clientWidth)) {
        chart.resize();
        return;
      }
      el.removeAttribute("data-chart-drawn");
      el.setAttribute("data-chart-resize", "");
      drawOne(el);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    draw(document);
  });
  document.addEventListener("htmx:beforeSwap", function (evt) {
    if (typeof echarts !== "undefined" && evt.detail && evt.detail.shouldSwap) {
      keep(evt.detail.target);
    }
  });
  // One response swaps the results and, out of band, every field's
  // message: htmx fires afterSwap for each. The charts are drawn once,
  // after the last swap of the task (a microtask runs when the response's
  // handling returns), not once per swap, each of which would lay the page
  // out again. With an outerHTML swap the event's target is the element
  // that was replaced, so the whole document is looked at; drawn charts
  // are skipped.
  var pendingDraw = false;
  document.addEventListener("htmx:afterSwap", function () {
    if (pendingDraw) {
      return;
    }
    pendingDraw = true;
    Promise.resolve().then(function () {
      pendingDraw = false;
      draw(document);
    });
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
