// Search-as-you-type over the taxonomy tree: a node stays visible when it, an ancestor's match
// or one of its descendants matches; matching branches open. `/` focuses the box.
(function () {
  "use strict";
  var input = document.getElementById("taxonomy-search");
  var status = document.getElementById("search-status");
  var nodes = Array.prototype.slice.call(document.querySelectorAll("#taxonomy-tree li.node"));

  function ownText(li) {
    var details = li.querySelector(":scope > details");
    var parts = [li.dataset.code];
    details.querySelectorAll(":scope > summary, :scope > .definition, :scope > .examples li")
      .forEach(function (el) { parts.push(el.textContent); });
    return parts.join(" ").toLowerCase();
  }
  var texts = new Map(nodes.map(function (li) { return [li, ownText(li)]; }));

  function apply() {
    var q = input.value.trim().toLowerCase();
    var shown = 0;
    nodes.forEach(function (li) { li.hidden = false; li.classList.remove("match"); });
    if (!q) { status.textContent = ""; return; }
    // Walk bottom-up: a node is kept if it matches or a kept child exists.
    nodes.slice().reverse().forEach(function (li) {
      var hit = texts.get(li).indexOf(q) !== -1;
      var keptChild = li.querySelector(":scope > details > ul > li.node:not([hidden])");
      li.hidden = !(hit || keptChild);
      if (hit) { li.classList.add("match"); shown++; }
      if (!li.hidden) { li.querySelector(":scope > details").open = true; }
    });
    status.textContent = shown ? shown + " matching categories" : "Nothing matches \u201c" + q + "\u201d.";
  }

  input.addEventListener("input", apply);
  document.addEventListener("keydown", function (e) {
    if (e.key === "/" && document.activeElement !== input) { e.preventDefault(); input.focus(); }
    if (e.key === "Escape" && document.activeElement === input) { input.value = ""; apply(); }
  });
})();
