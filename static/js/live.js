// live.js keeps the designer steady while htmx swaps its results as the
// reader types: the <details> panels in the results (data tables, "why?",
// "Use in docs") stay open or closed as the reader left them (each carries
// a stable id), the window keeps its scroll position, and while the design
// has problems the results are marked stale (the server then answers with
// the stale note only, and the last valid results stay). Focus needs no
// help: htmx replaces the results, never the form's inputs.
(function () {
  "use strict";

  var saved = null;

  function results() {
    return document.getElementById("results");
  }

  // mark sets the results' stale class while the stale note shows above
  // a valid design's results.
  function mark() {
    var r = results();
    var note = document.getElementById("results-stale");
    if (!r) {
      return;
    }
    var stale = !!(note && note.hasAttribute("data-stale") && r.querySelector('[data-testid="policy-limits"]'));
    r.classList.toggle("stale", stale);
  }

  function restore() {
    if (!saved) {
      return;
    }
    var r = results();
    if (r) {
      Object.keys(saved.open).forEach(function (id) {
        var d = document.getElementById(id);
        if (d && d.tagName === "DETAILS" && r.contains(d) && d.open !== saved.open[id]) {
          d.open = saved.open[id];
        }
      });
    }
    if (window.scrollX !== saved.x || window.scrollY !== saved.y) {
      window.scrollTo(saved.x, saved.y);
    }
  }

  document.addEventListener("htmx:beforeSwap", function (evt) {
    var target = evt.detail && evt.detail.target;
    if (!target || target.id !== "results") {
      return;
    }
    var open = {};
    Array.prototype.forEach.call(target.querySelectorAll("details[id]"), function (d) {
      open[d.id] = d.open;
    });
    saved = { open: open, x: window.scrollX, y: window.scrollY };
  });
  document.addEventListener("htmx:afterSwap", function () {
    restore();
    mark();
  });
  document.addEventListener("htmx:oobAfterSwap", mark);
  document.addEventListener("htmx:afterSettle", function () {
    restore();
    saved = null;
    mark();
  });
})();
