// The screening page, keyboard first: `r` relevant, `n` not relevant (either one then puts the
// cursor in the optional reason, where the other vote's key still switches until a reason is
// typed), Enter sends the vote (or says that none is chosen yet), `?` lists the keys, Esc closes
// the list. As on the labeling page (issue #32), the keys act with the focus on nothing or in
// the vote panel, and a person may turn the single-key ones off (data-single-keys).
(function () {
  "use strict";
  var form = document.getElementById("screen-form");
  var overlay = document.getElementById("keys-overlay");
  if (!form) { return; }
  var panel = document.getElementById("label-panel");
  var switchEl = document.querySelector("[data-single-keys]");
  var singleKeys = !switchEl || switchEl.dataset.singleKeys !== "off";
  function applies(el) {
    return !el || el === document.body || el === document.documentElement || panel.contains(el);
  }
  var reason = document.getElementById("screen-reason");
  var choices = { r: "verdict-relevant", n: "verdict-irrelevant" };
  var error = document.getElementById("screen-error");
  form.noValidate = true;  // the page says what is missing, in words
  form.addEventListener("submit", function (e) {
    if (form.querySelector("input[name=verdict]:checked")) { return; }
    e.preventDefault();
    error.textContent = form.dataset.missing;
    error.hidden = false;
  });
  function vote(id) {
    document.getElementById(id).checked = true;
    error.hidden = true;
  }

  function typing(el) {
    return el && (el.tagName === "INPUT" && el.type !== "radio" || el.tagName === "TEXTAREA");
  }
  // The key list (static/js/key-list.js): a modal dialog the "Keys" button or `?` opens.
  var keyList = window.concordKeyList(overlay);
  var closeKeys = keyList.close, keepTabIn = keyList.keepTabIn, openKeys = keyList.open;

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (!overlay.hidden) {
      if (e.key === "Escape" || (e.key === "?" && singleKeys)) { e.preventDefault(); closeKeys(); }
      if (e.key === "Tab") { keepTabIn(e); }
      return;
    }
    if (!applies(document.activeElement)) { return; }
    if (typing(document.activeElement)) {
      if (e.key === "Escape") {  // out of the reason box onto the vote, still in the panel
        (form.querySelector("input[name=verdict]:checked") || document.getElementById("verdict-relevant")).focus();
      }
      var switched = singleKeys && choices[e.key.toLowerCase()];
      if (switched && document.activeElement === reason && !reason.value &&
          !document.getElementById(switched).checked) {
        // No reason typed yet: the key of the other vote switches to it; the key of the vote
        // already chosen types its letter (a reason may start with "no ...").
        e.preventDefault();
        vote(switched);
      }
      return;
    }
    if (e.key === "?" && singleKeys) { e.preventDefault(); openKeys(); return; }
    var id = singleKeys && choices[e.key.toLowerCase()];
    if (id) {
      e.preventDefault();
      vote(id);
      reason.focus();
      return;
    }
    var el = document.activeElement;
    if (e.key === "Enter" && !(el && (el.tagName === "BUTTON" || el.tagName === "A"))) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
})();
