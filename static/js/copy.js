// copy.js: a button with data-copy="<id>" copies the text of the element
// with that id (a read-only textarea, or a preview's <pre>) to the
// clipboard and says so on the button for a moment. Delegated from the
// document, so buttons htmx swaps in work too. Without the Clipboard API
// it selects the text instead.
(function () {
  "use strict";

  document.addEventListener("click", function (evt) {
    var button = evt.target && evt.target.closest ? evt.target.closest("button[data-copy]") : null;
    if (!button) {
      return;
    }
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) {
      return;
    }
    var label = button.textContent;
    function done(text) {
      button.textContent = text;
      button.setAttribute("data-copied", text === "Copied" ? "true" : "false");
      window.setTimeout(function () {
        button.textContent = label;
      }, 1500);
    }
    // A textarea has a value to select; a preview (<pre>) has text, which
    // a range selects.
    var text = "value" in field ? field.value : field.textContent;
    field.focus();
    if (field.select) {
      field.select();
    } else if (window.getSelection) {
      var range = document.createRange();
      range.selectNodeContents(field);
      window.getSelection().removeAllRanges();
      window.getSelection().addRange(range);
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(
        function () { done("Copied"); },
        function () { done("Press Ctrl+C"); }
      );
    } else {
      done("Press Ctrl+C");
    }
  });
})();
