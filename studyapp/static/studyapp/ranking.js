// A ranking item without drag and drop. Every option keeps its rank select, so the form works
// without this script; the script adds buttons that move an option up or down the list, sets
// every select to its option's place in the list, and says the moved option's new rank.
(function () {
  "use strict";
  function options(list) {
    return Array.prototype.slice.call(list.querySelectorAll("li.ranking-option"));
  }
  function number(list) {
    options(list).forEach(function (li, i) { li.querySelector("select").value = String(i + 1); });
  }
  // ranks posted back that are a permutation (each once): show the options in that order
  // (only on load: moving the select in use would take the keyboard's focus from it)
  function sortByRank(list) {
    var items = options(list);
    var ranks = items.map(function (li) { return parseInt(li.querySelector("select").value, 10); });
    var seen = {};
    var whole = ranks.every(function (r) {
      var ok = r >= 1 && r <= items.length && !seen[r];
      seen[r] = true;
      return ok;
    });
    if (!whole) { return; }
    items.map(function (li, i) { return [ranks[i], li]; })
      .sort(function (a, b) { return a[0] - b[0]; })
      .forEach(function (pair) { list.appendChild(pair[1]); });
  }
  function button(li, dir) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = "ranking-move";
    b.setAttribute("data-dir", dir);
    b.setAttribute("aria-label", li.getAttribute(dir === "up" ? "data-up" : "data-down"));
    b.textContent = dir === "up" ? "\u2191" : "\u2193";
    return b;
  }
  function enhance(box) {
    box.setAttribute("data-enhanced", "");
    var list = box.querySelector("ol.ranking-options");
    var status = box.querySelector("[data-ranking-status]");
    sortByRank(list);
    options(list).forEach(function (li) {
      var moves = document.createElement("span");
      moves.className = "ranking-moves";
      moves.appendChild(button(li, "up"));
      moves.appendChild(button(li, "down"));
      li.appendChild(moves);
    });
    list.addEventListener("click", function (event) {
      var b = event.target.closest("button.ranking-move");
      if (!b) { return; }
      var li = b.closest("li.ranking-option");
      var up = b.getAttribute("data-dir") === "up";
      var other = up ? li.previousElementSibling : li.nextElementSibling;
      if (other) { list.insertBefore(up ? li : other, up ? other : li); }
      number(list);
      b.focus();
      var rank = options(list).indexOf(li) + 1;
      status.textContent = li.getAttribute("data-moved").replace("{rank}", String(rank));
    });
  }
  document.querySelectorAll("[data-ranking]:not([data-enhanced])").forEach(enhance);
})();
