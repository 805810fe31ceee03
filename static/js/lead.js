// The lead's pages: keyboard shortcuts on the disputed queue and the resolve page, the searchable
// taxonomy picker, and the "hide volunteer names" toggle (remembered in this browser).
// The keys act only where they apply (issue #32, WCAG 2.1.4): with the focus on nothing, in the
// queue, the queue's links or the resolve form, never in a text box; Enter anywhere else does
// what it does there (opens the "Issue text", ticks nothing), so only the form decides. A person
// may turn the single-key ones off for good (the switch by the key list, data-single-keys).
(function () {
  "use strict";
  var NAMES_KEY = "concord.lead.hideNames";
  var switchEl = document.querySelector("[data-single-keys]");
  var singleKeys = !switchEl || switchEl.dataset.singleKeys !== "off";

  function typing(el) {
    return el && (el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
      (el.tagName === "INPUT" && el.type !== "radio" && el.type !== "checkbox"));
  }

  // ------------------------------------------------------------ hide names
  var hide = document.getElementById("hide-names");
  if (hide) {
    var stored = null;
    try { stored = window.localStorage.getItem(NAMES_KEY); } catch (e) { stored = null; }
    hide.checked = stored === "1";
    var applyNames = function () {
      document.body.classList.toggle("names-hidden", hide.checked);
      try { window.localStorage.setItem(NAMES_KEY, hide.checked ? "1" : "0"); } catch (e) { /* private mode */ }
    };
    hide.addEventListener("change", applyNames);
    applyNames();
  }

  // ------------------------------------------------------------ picker search
  var search = document.getElementById("picker-search");
  var picker = document.getElementById("picker");
  var pickerStatus = document.getElementById("picker-status");
  // A sentence of the page, in its language (a data-* attribute the template translated), with
  // its {name} slots filled in.
  function say(el, key, values) {
    var text = el.dataset[key] || "";
    Object.keys(values).forEach(function (k) { text = text.split("{" + k + "}").join(values[k]); });
    return text;
  }
  var choices = picker ? Array.prototype.slice.call(picker.querySelectorAll("li.choice")) : [];
  var groups = picker ? Array.prototype.slice.call(picker.querySelectorAll("li.group")) : [];

  function filterPicker() {
    var q = search.value.trim().toLowerCase();
    var shown = 0;
    choices.forEach(function (li) {
      var hit = !q || li.dataset.search.toLowerCase().indexOf(q) !== -1;
      li.hidden = !hit;
      if (hit) { shown++; }
    });
    // a group heading stays while one of its choices (up to the next heading) is shown
    groups.forEach(function (g) {
      var el = g.nextElementSibling, any = false;
      while (el && !el.classList.contains("group")) { if (!el.hidden) { any = true; } el = el.nextElementSibling; }
      g.hidden = !any;
    });
    if (pickerStatus) {
      pickerStatus.textContent = !q ? "" : (shown
        ? say(pickerStatus, shown === 1 ? "matchesOne" : "matchesOther", { n: shown })
        : say(pickerStatus, "none", { q: q }));
    }
  }
  function firstShown() {
    for (var i = 0; i < choices.length; i++) { if (!choices[i].hidden) { return choices[i]; } }
    return null;
  }
  if (search && picker) {
    search.addEventListener("input", filterPicker);
    search.addEventListener("keydown", function (e) {
      if (e.key === "Enter") {  // pick the first match instead of sending the form
        e.preventDefault();
        var li = firstShown();
        if (li) { pick(li.querySelector("input[type=radio]")); }
        search.blur();
      } else if (e.key === "Escape") {
        search.value = ""; filterPicker(); search.blur();
      }
    });
  }

  // ------------------------------------------------------------ resolve page
  var form = document.getElementById("resolve-form");
  var chosen = document.getElementById("chosen");
  var reason = document.getElementById("reason");
  var majority = form && form.dataset.majority ? form.dataset.majority.split(",") : [];

  function pick(radio) {
    if (!radio) { return; }
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
    var li = radio.closest("li");
    if (li) {
      if (li.hidden && search) { search.value = ""; filterPicker(); }
      li.scrollIntoView({ block: "nearest" });
    }
  }
  function nodeRadio(id) {
    return form ? form.querySelector('input[name="node"][value="' + id + '"]') : null;
  }
  function describeChoice() {
    var radio = form.querySelector('input[name="node"]:checked');
    if (!radio) { chosen.textContent = ""; reason.required = false; return; }
    var isMajority = majority.indexOf(radio.value) !== -1;
    reason.required = !isMajority;
    var label = radio.closest("label").textContent.replace(/\s+/g, " ").trim();
    chosen.textContent = say(chosen, isMajority ? "majority" : "other", { label: label });
  }
  if (form) {
    form.addEventListener("change", function (e) { if (e.target.name === "node") { describeChoice(); } });
    describeChoice();
  }

  // ------------------------------------------------------------ queue page
  var queue = document.getElementById("disputed-queue");
  var rows = queue ? Array.prototype.slice.call(queue.querySelectorAll("tbody tr")) : [];
  var current = -1;
  function moveRow(step) {
    if (!rows.length) { return; }
    if (current >= 0) { rows[current].classList.remove("current"); }
    current = Math.min(Math.max(current + step, 0), rows.length - 1);
    rows[current].classList.add("current");
    rows[current].querySelector("a.open-item").focus();
  }

  // ------------------------------------------------------------ keys
  var help = document.getElementById("key-help");
  var helpToggle = document.getElementById("key-help-toggle");
  function toggleHelp() { if (help) { help.hidden = !help.hidden; } }
  if (helpToggle) { helpToggle.addEventListener("click", toggleHelp); }

  var nav = document.querySelector(".queue-nav");
  function applies(el) {
    if (!el || el === document.body || el === document.documentElement) { return true; }
    return [form, queue, nav].some(function (area) { return area && area.contains(el); });
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) { return; }
    if (e.key === "Escape" && help && !help.hidden) {
      if (help.contains(document.activeElement) && helpToggle) { helpToggle.focus(); }  // not lost
      help.hidden = true;
      return;
    }
    var el = document.activeElement;
    if (typing(el) || !applies(el)) { return; }
    var key = e.key;
    if (key === "Enter") {
      // Decides from the form (or with the focus on nothing); a link or button does its own.
      if (!form || (el && (el.tagName === "A" || el.tagName === "BUTTON"))) { return; }
      e.preventDefault();
      form.requestSubmit();
      return;
    }
    if (!singleKeys || key.length !== 1) { return; }
    if (key === "?") { e.preventDefault(); toggleHelp(); return; }
    if (key === "/" && search) { e.preventDefault(); search.focus(); search.select(); return; }
    if (queue) {
      if (key === "j") { e.preventDefault(); moveRow(1); }
      else if (key === "k") { e.preventDefault(); moveRow(-1); }
      return;  // Enter on a focused link opens it, as usual
    }
    var next = document.getElementById("next-item");
    var prev = document.getElementById("prev-item");
    if (key === "j" && next) { e.preventDefault(); window.location.assign(next.href); return; }
    if (key === "k" && prev) { e.preventDefault(); window.location.assign(prev.href); return; }
    if (!form) { return; }
    if (key === "m" && form.dataset.suggestion) { e.preventDefault(); pick(nodeRadio(form.dataset.suggestion)); }
    else if (/^[1-9]$/.test(key)) {
      var proposed = document.querySelectorAll("#proposed li")[Number(key) - 1];
      if (proposed) { e.preventDefault(); pick(nodeRadio(proposed.dataset.nodeId)); }
    }
  });
})();
