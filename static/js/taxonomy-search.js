// Search-as-you-type over the taxonomy tree: a node stays visible when it, an ancestor or one of
// its descendants matches; branches leading to matches open. `/` focuses the box.
(function () {
  "use strict";
  var input = document.getElementById("taxonomy-search");
  var status = document.getElementById("search-status");
  var nodes = Array.prototype.slice.call(document.querySelectorAll("#taxonomy-tree li.node"));
  // A sentence of the page, in its language (a data-* attribute the template translated), with
  // its {name} slots filled in.
  function say(el, key, values) {
    var text = el.dataset[key] || "";
    Object.keys(values).forEach(function (k) { text = text.split("{" + k + "}").join(values[k]); });
    return text;
  }

  function ownText(li) {
    var details = li.querySelector(":scope > details");
    var parts = [li.dataset.code, li.dataset.other || ""];  // the other language's name and definition
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
    // Bottom-up: a node is kept if it matches or keeps a child (so its branch stays reachable).
    nodes.slice().reverse().forEach(function (li) {
      var hit = texts.get(li).indexOf(q) !== -1;
      var keptChild = li.querySelector(":scope > details > ul > li.node:not([hidden])");
      li.hidden = !(hit || keptChild);
      if (hit) { li.classList.add("match"); shown++; }
      if (!li.hidden) { li.querySelector(":scope > details").open = true; }
    });
    // Top-down: everything under a matching node stays visible (its sub-themes are the detail).
    nodes.forEach(function (li) {
      var parent = li.parentElement.closest("li.node");
      if (parent && !parent.hidden && (parent.classList.contains("match") || parent.dataset.under)) {
        li.hidden = false;
        li.dataset.under = "1";
      } else {
        delete li.dataset.under;
      }
    });
    status.textContent = shown
      ? say(status, shown === 1 ? "matchesOne" : "matchesOther", { n: shown })
      : say(status, "none", { q: q });
  }

  input.addEventListener("input", apply);
  // `/` is a single-key shortcut: never while typing in a box, and not for a person who turned
  // them off (issue #32, data-single-keys).
  var switchEl = document.querySelector("[data-single-keys]");
  var singleKeys = !switchEl || switchEl.dataset.singleKeys !== "off";
  function typing(el) {
    return el && (el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable ||
      (el.tagName === "INPUT" && el.type !== "radio" && el.type !== "checkbox"));
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (e.key === "/" && singleKeys && !typing(document.activeElement)) { e.preventDefault(); input.focus(); }
    if (e.key === "Escape" && document.activeElement === input) { input.value = ""; apply(); }
  });
})();
