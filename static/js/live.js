// live.js keeps the designer steady while htmx swaps its results as the
// reader types: each field's message arrives with the results and is put
// beside its field; the <details> panels in the results (data tables, "why?",
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

  // The blocks app.css lays out only near the viewport, each known by its
  // data-testid.
  var blocks = ".result-block[data-testid], .chart-figure[data-testid]";

  document.addEventListener("htmx:beforeSwap", function (evt) {
    var target = evt.detail && evt.detail.target;
    if (!target || target.id !== "results") {
      return;
    }
    var open = {};
    Array.prototype.forEach.call(target.querySelectorAll("details[id]"), function (d) {
      open[d.id] = d.open;
    });
    var heights = {};
    Array.prototype.forEach.call(target.querySelectorAll(blocks), function (b) {
      heights[b.getAttribute("data-testid")] = b.getBoundingClientRect().height;
    });
    saved = { open: open, heights: heights, x: window.scrollX, y: window.scrollY };
  });

  // size gives each block of the new results the height of the block it
  // replaces until it is laid out, before anything measures the page.
  function size() {
    var r = results();
    if (!saved || !r) {
      return;
    }
    Array.prototype.forEach.call(r.querySelectorAll(blocks), function (b) {
      var h = saved.heights[b.getAttribute("data-testid")];
      if (h > 0) {
        b.style.containIntrinsicSize = "auto " + Math.round(h) + "px";
      }
    });
  }
  document.addEventListener("htmx:afterSwap", function (evt) {
    var target = evt.detail && evt.detail.target;
    if (target && target.id === "results") {
      size();
    }
  }, true);
  // Before htmx removes the old results (the new ones are in place by
  // then), their contents go at once: htmx would otherwise walk every one
  // of their hundreds of elements, firing an event for each, to undo
  // htmx processing that nothing inside the results has (their charts
  // were disposed before the swap).
  document.addEventListener("htmx:beforeCleanupElement", function (evt) {
    var el = evt.target;
    if (el && el.id === "results" && el !== results()) {
      el.replaceChildren();
    }
  });

  // messages copies each field's message from the carrier the server
  // swapped in (#field-messages, one <p data-msg-for> per field) into the
  // element beside the field, touching only those that changed, and
  // empties the carrier.
  function messages() {
    var carrier = document.getElementById("field-messages");
    if (!carrier || carrier.children.length === 0) {
      return;
    }
    Array.prototype.forEach.call(carrier.children, function (m) {
      var el = document.getElementById(m.getAttribute("data-msg-for"));
      if (!el) {
        return;
      }
      if (el.textContent !== m.textContent) {
        el.textContent = m.textContent;
      }
      if (el.className !== m.className) {
        el.className = m.className;
      }
    });
    carrier.textContent = "";
  }

  // A response swaps the results and, out of band, the messages and the
  // stale note, each with its own afterSwap: act once, after the last.
  var pending = false;
  function afterSwaps() {
    if (pending) {
      return;
    }
    pending = true;
    Promise.resolve().then(function () {
      pending = false;
      messages();
      restore();
      mark();
    });
  }
  document.addEventListener("htmx:afterSwap", afterSwaps);
  document.addEventListener("htmx:oobAfterSwap", afterSwaps);
  document.addEventListener("htmx:afterSettle", function () {
    restore();
    saved = null;
    mark();
  });
})();
