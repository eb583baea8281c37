// Polls the status endpoint and moves on once recourses are ready: one navigation, no
// reload loop. Without JavaScript the "Check again" link does the same by hand.
(function () {
  "use strict";
  var box = document.getElementById("progress");
  if (!box || !window.fetch) { return; }
  var bar = document.getElementById("progress-bar");
  var text = document.getElementById("progress-text");
  var url = box.getAttribute("data-status-url");
  var delay = 500;
  function poll() {
    fetch(url, { headers: { "Accept": "application/json" }, cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        if (bar && s.step) { bar.value = s.step; }
        if (s.ready) {
          if (text) { text.textContent = "Your plans are ready."; }
          window.location.replace(s.next);
          return;
        }
        if (text) { text.textContent = s.generation === "running" ? "Searching the customer database…" : "Waiting for the AI system…"; }
        delay = Math.min(delay * 1.5, 3000);
        window.setTimeout(poll, delay);
      })
      .catch(function () { delay = Math.min(delay * 2, 10000); window.setTimeout(poll, delay); });
  }
  window.setTimeout(poll, delay);
})();
