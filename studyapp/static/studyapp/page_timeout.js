// A page with a time-out (oTree style): counts down from the page's seconds and, when they
// run out, submits the form with whatever was entered, marked as a time-out. The server
// believes the mark only when the time has really passed since the page was first shown.
(function () {
  "use strict";
  var form = document.querySelector("form.page-form[data-timeout-s]");
  if (!form) { return; }
  var left = parseInt(form.getAttribute("data-timeout-s"), 10);
  var shown = document.getElementById("time-left");
  var said = shown ? shown.getAttribute("data-text") : "";
  function tick() {
    if (shown) { shown.textContent = said.replace("{s}", String(Math.max(left, 0))); }
    if (left <= 0) {
      form.querySelector('input[name="timeout_happened"]').value = "1";
      form.submit();
      return;
    }
    left -= 1;
    window.setTimeout(tick, 1000);
  }
  tick();
})();
