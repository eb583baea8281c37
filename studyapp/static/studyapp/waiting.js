// Polls the status endpoint and moves on once recourses are ready: one navigation, no
// reload loop. Without JavaScript the "Check again" link does the same by hand. After the
// study's waiting time-out the server says `timed_out` and the page shows why it still waits.
(function () {
  "use strict";
  var box = document.getElementById("progress");
  if (!box || !window.fetch) { return; }
  var bar = document.getElementById("progress-bar");
  var text = document.getElementById("progress-text");
  var url = box.getAttribute("data-status-url");
  // past the study's time-out: a clear message; the page keeps looking and moves on
  var late = document.getElementById("timed-out");
  var delay = 500;
  // texts come translated from the template (the study's language); English as a fallback
  var said = {
    ready: box.getAttribute("data-text-ready") || "Your plans are ready.",
    running: box.getAttribute("data-text-running") || "Searching the customer database…",
    queued: box.getAttribute("data-text-queued") || "Waiting for the AI system…"
  };
  function poll() {
    fetch(url, { headers: { "Accept": "application/json" }, cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        if (bar && s.step) { bar.value = s.step; }
        if (s.ready) {
          if (text) { text.textContent = said.ready; }
          window.location.replace(s.next);
          return;
        }
        if (text) { text.textContent = s.generation === "running" ? said.running : said.queued; }
        if (s.timed_out && late) { late.hidden = false; }
        delay = Math.min(delay * 1.5, 3000);
        window.setTimeout(poll, delay);
      })
      .catch(function () { delay = Math.min(delay * 2, 10000); window.setTimeout(poll, delay); });
  }
  window.setTimeout(poll, delay);
})();
