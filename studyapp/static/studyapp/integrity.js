/* Integrity signals (studyapp/integrity/): on a rating or question page whose study has them
   switched on, count pastes into each field (and their characters, never the text), the
   times the tab is hidden or the window loses the focus and the time away, the time spent
   typing, and the time from the page's showing to each field's first answer. All of it is
   kept in the form's hidden `integrity` field and leaves the page only with the page's own
   submit: no request of its own. Checked on the server (integrity/payload.py). */
(function () {
  "use strict";
  var form = document.querySelector("form.page-form");
  var out = form && form.querySelector('input[type="hidden"][name="integrity"]');
  if (!out) return;
  var TYPING_GAP_MS = 2000;
  var t0 = performance.now();
  var signals = { v: 1, page_ms: 0, blurs: 0, hidden: 0, away_ms: 0, fields: {} };
  var lastInput = {};
  var pasting = {};
  var awaySince = null;
  function now() { return performance.now() - t0; }
  function isText(el) {
    return el.tagName === "TEXTAREA" ||
      (el.tagName === "INPUT" && /^(text|search|email|number|url|tel)$/.test(el.type));
  }
  function tracked(el) {
    if (!el || !el.name || el.form !== form) return false;
    if (el.name === "integrity" || el.name === "csrfmiddlewaretoken") return false;
    return el.type !== "hidden" && el.type !== "submit" && el.type !== "button";
  }
  function field(name) {
    if (!signals.fields[name]) {
      signals.fields[name] = { pastes: 0, pasted_chars: 0, inputs: 0, typing_ms: 0, first_ms: null };
    }
    return signals.fields[name];
  }
  function write() {
    var ms = now();
    signals.page_ms = Math.round(ms);
    var away = signals.away_ms + (awaySince === null ? 0 : ms - awaySince);
    var copy = JSON.parse(JSON.stringify(signals));
    copy.away_ms = Math.round(away);
    out.value = JSON.stringify(copy);
  }
  function goAway() { if (awaySince === null) awaySince = now(); }
  function comeBack() {
    if (awaySince !== null && !document.hidden && document.hasFocus()) {
      signals.away_ms += now() - awaySince;
      awaySince = null;
    }
  }
  form.addEventListener("paste", function (e) {
    var el = e.target;
    if (!tracked(el)) return;
    var f = field(el.name);
    var data = e.clipboardData ? e.clipboardData.getData("text") : "";
    f.pastes += 1;
    f.pasted_chars += data.length;
    pasting[el.name] = true;
    write();
  }, true);
  function answered(e) {
    var el = e.target;
    if (!tracked(el)) return;
    var f = field(el.name);
    var ms = now();
    f.inputs += 1;
    if (f.first_ms === null) f.first_ms = Math.round(ms);
    if (isText(el)) {
      var last = lastInput[el.name];
      if (pasting[el.name]) {
        pasting[el.name] = false;  /* a paste's own input is no typing */
      } else if (last !== undefined && ms - last <= TYPING_GAP_MS) {
        f.typing_ms += Math.round(ms - last);
      }
      lastInput[el.name] = ms;
    }
    write();
  }
  form.addEventListener("input", answered, true);
  form.addEventListener("change", function (e) {
    /* choices that fire no input event (older browsers): counted once, here */
    if (!tracked(e.target) || isText(e.target)) return;
    if (!field(e.target.name).inputs) answered(e);
  }, true);
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) { signals.hidden += 1; goAway(); } else { comeBack(); }
    write();
  });
  window.addEventListener("blur", function () { signals.blurs += 1; goAway(); write(); });
  window.addEventListener("focus", function () { comeBack(); write(); });
  form.addEventListener("submit", write, true);
  write();
})();
