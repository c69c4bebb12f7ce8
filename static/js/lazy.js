// lazy.js: a <details data-lazy-src="URL"> holds only its summary and a
// link ([data-lazy-body]) until it is opened; then its content is fetched
// from URL, a page whose [data-panel-body] element holds it, and put in
// place of the link. Without JavaScript the link opens that page. The
// toggle listener is on the document (capture: toggle does not bubble),
// so panels htmx swaps in, and panels an update keeps open, load too. A
// failed fetch leaves the link, and the next opening tries again.
(function () {
  "use strict";

  function load(d) {
    var holder = d.querySelector("[data-lazy-body]");
    if (!holder || d.hasAttribute("data-lazy-loading")) {
      return;
    }
    d.setAttribute("data-lazy-loading", "");
    fetch(d.getAttribute("data-lazy-src"), { credentials: "same-origin" })
      .then(function (res) {
        if (!res.ok) {
          throw new Error("status " + res.status);
        }
        return res.text();
      })
      .then(function (html) {
        var body = new DOMParser().parseFromString(html, "text/html").querySelector("[data-panel-body]");
        if (body && holder.isConnected) {
          var nodes = Array.prototype.map.call(body.childNodes, function (n) { return document.importNode(n, true); });
          holder.replaceWith.apply(holder, nodes);
          d.setAttribute("data-lazy-loaded", "");
        }
      })
      .catch(function () {})
      .then(function () { d.removeAttribute("data-lazy-loading"); });
  }

  document.addEventListener("toggle", function (evt) {
    var d = evt.target;
    if (d && d.open && d.matches && d.matches("details[data-lazy-src]")) {
      load(d);
    }
  }, true);

  function loadOpen() {
    Array.prototype.forEach.call(document.querySelectorAll("details[data-lazy-src][open]"), load);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", loadOpen);
  } else {
    loadOpen();
  }
})();
