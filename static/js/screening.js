// The screening page, keyboard first: `r` relevant, `n` not relevant (either one then puts the
// cursor in the optional reason), Enter sends the vote, `?` lists the keys, Esc closes the list.
(function () {
  "use strict";
  var form = document.getElementById("screen-form");
  var overlay = document.getElementById("keys-overlay");
  if (!form) { return; }
  var reason = document.getElementById("screen-reason");
  var choices = { r: "verdict-relevant", n: "verdict-irrelevant" };

  function typing(el) {
    return el && (el.tagName === "INPUT" && el.type !== "radio" || el.tagName === "TEXTAREA");
  }
  function openKeys() { overlay.hidden = false; document.getElementById("keys-close").focus(); }
  function closeKeys() { overlay.hidden = true; }
  document.getElementById("keys-open").addEventListener("click", openKeys);
  document.getElementById("keys-close").addEventListener("click", closeKeys);

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (!overlay.hidden) {
      if (e.key === "Escape" || e.key === "?") { e.preventDefault(); closeKeys(); }
      return;
    }
    if (typing(document.activeElement)) {
      if (e.key === "Escape") { document.activeElement.blur(); }
      return;
    }
    if (e.key === "?") { e.preventDefault(); openKeys(); return; }
    var id = choices[e.key.toLowerCase()];
    if (id) {
      e.preventDefault();
      document.getElementById(id).checked = true;
      reason.focus();
      return;
    }
    if (e.key === "Enter" && form.querySelector("input[name=verdict]:checked")) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
})();
