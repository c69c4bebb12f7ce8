// sliders.js ties each slider of the designer (input[type=range] with
// data-slider-for, built in Go, see views/sliders.go) to its text field.
// Moving the slider writes a value into the field and fires the field's
// input event, throttled while dragging, so htmx updates the results as
// for typing; typing in the field moves the slider. A blank field puts the slider at
// its placeholder (the default, or the calculator's proposal). The page
// sends the sliders hidden: without this script the form has only its
// text fields.
(function () {
  "use strict";

  var selector = "input[type=range][data-slider-for]";

  // spec reads a slider's span and scale.
  function spec(sl) {
    return {
      min: parseFloat(sl.getAttribute("data-slider-min")),
      max: parseFloat(sl.getAttribute("data-slider-max")),
      steps: parseFloat(sl.max) || 1000,
      log: sl.getAttribute("data-slider-scale") === "log",
      step: parseFloat(sl.getAttribute("data-slider-step")) || 0,
      integer: sl.hasAttribute("data-slider-integer")
    };
  }

  // twoDigits rounds v > 0 to two significant digits: 1234 is 1200,
  // 0.0456 is 0.046.
  function twoDigits(v) {
    var p = Math.pow(10, Math.floor(Math.log10(v)) - 1);
    return Math.round(v / p) * p;
  }

  // valueAt is the value of position pos (0 to s.steps).
  function valueAt(s, pos) {
    var t = pos / s.steps;
    var v;
    if (s.log) {
      v = twoDigits(s.min * Math.pow(s.max / s.min, t));
    } else {
      v = s.min + t * (s.max - s.min);
      if (s.step > 0) {
        v = Math.round(v / s.step) * s.step;
      }
    }
    if (s.integer) {
      v = Math.max(Math.round(s.min), Math.round(v));
    }
    return Math.min(s.max, Math.max(s.min, v));
  }

  // positionOf is the position of value v, at an end when v is outside
  // the span.
  function positionOf(s, v) {
    var t;
    if (s.log) {
      t = v > 0 ? Math.log(v / s.min) / Math.log(s.max / s.min) : 0;
    } else {
      t = (v - s.min) / (s.max - s.min);
    }
    return Math.round(Math.min(1, Math.max(0, t)) * s.steps);
  }

  // text writes v as people type it: no float noise (0.30000000000000004
  // is 0.3), no exponent for the values a slider gives.
  function text(v) {
    return String(Number(v.toPrecision(12)));
  }

  function fieldOf(sl) {
    return document.getElementById(sl.getAttribute("data-slider-for"));
  }

  // follow puts slider sl where its field's value (or placeholder) is,
  // and says the value to assistive technology.
  function follow(sl) {
    var f = fieldOf(sl);
    if (!f) {
      return;
    }
    var typed = f.value.trim();
    var v = parseFloat(typed !== "" ? typed : f.placeholder);
    if (isFinite(v)) {
      sl.value = String(positionOf(spec(sl), v));
    }
    sl.setAttribute("aria-valuetext", typed !== "" ? typed : (f.placeholder ? f.placeholder + " (default)" : "blank"));
  }

  function init(root) {
    if (!root || !root.querySelectorAll) {
      return;
    }
    Array.prototype.forEach.call(root.querySelectorAll(selector), function (sl) {
      sl.hidden = false;
      // The slider in hand stays under the reader's thumb: its value
      // rounds to a position a little off its own.
      if (sl !== document.activeElement) {
        follow(sl);
      }
    });
  }

  // A dragged slider fires an input event per frame; the results follow
  // at most every throttle milliseconds (the designer's pages allow a
  // client 5 requests a second), and at once when the slider is let go
  // (its change event), so the last value always gets its results.
  var throttle = 200;
  var pending = null; // the field whose input event waits
  var timer = 0;
  var last = 0;

  function send() {
    window.clearTimeout(timer);
    timer = 0;
    if (pending) {
      var f = pending;
      pending = null;
      last = Date.now();
      f.dispatchEvent(new Event("input", { bubbles: true }));
    }
  }

  function sendSoon(f) {
    pending = f;
    if (!timer) {
      timer = window.setTimeout(send, Math.max(0, last + throttle - Date.now()));
    }
  }

  // Capturing, so the slider's own events stop here: the form (htmx) sees
  // the field's input event instead, throttled.
  document.addEventListener("change", function (evt) {
    var t = evt.target;
    if (t && t.matches && t.matches(selector)) {
      evt.stopPropagation();
      send();
    }
  }, true);
  document.addEventListener("input", function (evt) {
    var t = evt.target;
    if (!t || !t.matches) {
      return;
    }
    if (t.matches(selector)) {
      evt.stopPropagation();
      var f = fieldOf(t);
      if (f) {
        f.value = text(valueAt(spec(t), parseFloat(t.value)));
        t.setAttribute("aria-valuetext", f.value);
        sendSoon(f);
      }
      return;
    }
    if (t.id) {
      // Typing moves the slider; the slider's own throttled event leaves
      // it where the reader's thumb is.
      var sl = document.querySelector('input[data-slider-for="' + t.id + '"]');
      if (sl && sl !== document.activeElement) {
        follow(sl);
      }
    }
  }, true);

  document.addEventListener("DOMContentLoaded", function () {
    init(document);
  });
  // Choosing an algorithm brings the form back with its own fields.
  document.addEventListener("htmx:afterSettle", function () {
    init(document);
  });
})();
