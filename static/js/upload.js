// upload.js: a form with data-upload-progress="<progress id>" uploads with
// XMLHttpRequest so the <progress> element shows how much of the file has
// been sent, then swaps the page's <main> for the response's (the server
// answers with the whole page, as it does without JavaScript) and tells
// charts.js to draw ("ratelab:swapped"). A submit button with
// data-upload-skip (a download) submits the ordinary way.
(function () {
  "use strict";

  document.addEventListener("submit", function (evt) {
    var form = evt.target;
    if (!form || !form.hasAttribute || !form.hasAttribute("data-upload-progress")) {
      return;
    }
    if (evt.submitter && evt.submitter.hasAttribute("data-upload-skip")) {
      return;
    }
    if (typeof XMLHttpRequest === "undefined" || typeof FormData === "undefined" || typeof DOMParser === "undefined") {
      return;
    }
    evt.preventDefault();
    var progress = document.getElementById(form.getAttribute("data-upload-progress"));
    var buttons = form.querySelectorAll("button");
    Array.prototype.forEach.call(buttons, function (b) { b.disabled = true; });
    if (progress) {
      progress.hidden = false;
      progress.removeAttribute("value");
    }
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.upload.addEventListener("progress", function (e) {
      if (progress && e.lengthComputable) {
        progress.max = e.total;
        progress.value = e.loaded;
      }
    });
    xhr.addEventListener("load", function () {
      var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
      var fresh = doc.querySelector("main");
      var old = document.querySelector("main");
      if (fresh && old) {
        old.replaceWith(document.importNode(fresh, true));
        document.dispatchEvent(new CustomEvent("ratelab:swapped"));
      } else {
        fail("The server answered " + xhr.status + ": " + xhr.responseText.slice(0, 300));
      }
    });
    xhr.addEventListener("error", function () {
      fail("The upload failed: the connection was lost or refused.");
    });
    function fail(msg) {
      Array.prototype.forEach.call(buttons, function (b) { b.disabled = false; });
      if (progress) {
        progress.hidden = true;
      }
      var p = document.createElement("p");
      p.className = "problems";
      p.setAttribute("role", "alert");
      p.textContent = msg;
      form.appendChild(p);
    }
    xhr.send(new FormData(form));
  });
})();
