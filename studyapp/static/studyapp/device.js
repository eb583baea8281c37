/* The welcome page: the participant's device, posted with the start button (checked on the
   server, participation/device.py). A touch screen whose short side is under 600 px is a
   phone, a larger one a tablet, a mouse or trackpad a desktop; the window's size is in CSS
   px. Measured again at the click, after any rotation. */
(function () {
  "use strict";
  var form = document.querySelector("form.start-form");
  if (!form || !form.elements.device_class) return;
  function measure() {
    var coarse = window.matchMedia("(pointer: coarse)").matches;
    var shortSide = Math.min(window.screen.width, window.screen.height);
    form.elements.device_class.value = !coarse ? "desktop" : shortSide < 600 ? "phone" : "tablet";
    form.elements.viewport_width.value = String(Math.round(window.innerWidth));
    form.elements.viewport_height.value = String(Math.round(window.innerHeight));
  }
  measure();
  form.addEventListener("submit", measure);
})();
