// The decision page: Continue stays inactive until the plans are ready (the status endpoint
// says so) and the study's minimum time on the page has passed; the page itself never moves
// on, so the rejection is read. Without JavaScript the button works at once and the server
// decides (the waiting page while the plans are not ready; a message before the minimum).
(function () {
  "use strict";
  var box = document.getElementById("decision-progress");
  var button = document.getElementById("decision-continue");
  if (!box || !button || !window.fetch) { return; }
  var bar = document.getElementById("progress-bar");
  var text = document.getElementById("progress-text");
  var late = document.getElementById("timed-out");
  var url = box.getAttribute("data-status-url");
  var said = {
    ready: box.getAttribute("data-text-ready") || "Your plans are ready.",
    running: box.getAttribute("data-text-running") || "Searching the customer database…",
    queued: box.getAttribute("data-text-queued") || "Waiting for the AI system…"
  };
  var ready = box.getAttribute("data-ready") === "1";
  var readAfter = Date.now() + 1000 * (parseInt(box.getAttribute("data-wait-s"), 10) || 0);
  var delay = 500;
  function update() {
    var open = ready && Date.now() >= readAfter;
    button.disabled = !open;
    button.setAttribute("aria-disabled", open ? "false" : "true");
    if (!open && ready) { window.setTimeout(update, Math.max(100, readAfter - Date.now())); }
  }
  function poll() {
    fetch(url, { headers: { "Accept": "application/json" }, cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        if (bar && s.step) { bar.value = s.step; }
        if (s.ready) {
          ready = true;
          if (text) { text.textContent = said.ready; }
          update();
          return;
        }
        if (text) { text.textContent = s.generation === "running" ? said.running : said.queued; }
        if (s.timed_out && late) { late.hidden = false; }
        delay = Math.min(delay * 1.5, 3000);
        window.setTimeout(poll, delay);
      })
      .catch(function () { delay = Math.min(delay * 2, 10000); window.setTimeout(poll, delay); });
  }
  update();
  if (!ready) { window.setTimeout(poll, delay); }
})();
