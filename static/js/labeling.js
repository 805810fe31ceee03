// The labeling page, keyboard first. The picker shows one level at a time (type -> theme ->
// sub-theme): digits 1-9 choose among the visible options and go one level down, Backspace goes
// up, `/` searches names, definitions and examples, Enter submits (from the summary), `s` skips,
// `?` lists the keys and Esc closes the list. The chosen category and the summary are kept as a
// draft in localStorage (per project, item and user) until the server confirms the submit.
// Without JavaScript the page still works: every category of the label depth is listed.
(function () {
  "use strict";
  var form = document.getElementById("label-form");
  // A sentence of the page in its language (data-say-* on the form, translated by the template),
  // with its {name} slots filled in; the English fallback keeps the page working without them.
  function say(key, fallback, values) {
    var text = (form && form.dataset[key]) || fallback;
    Object.keys(values || {}).forEach(function (k) { text = text.split("{" + k + "}").join(values[k]); });
    return text;
  }
  var overlay = document.getElementById("keys-overlay");

  function typing(el) {
    return el && (el.tagName === "INPUT" && el.type !== "radio" || el.tagName === "TEXTAREA" ||
      el.isContentEditable);
  }

  function openKeys() { if (overlay) { overlay.hidden = false; document.getElementById("keys-close").focus(); } }
  function closeKeys() { if (overlay) { overlay.hidden = true; } }
  var keysOpen = document.getElementById("keys-open");
  if (keysOpen) { keysOpen.addEventListener("click", openKeys); }
  var keysClose = document.getElementById("keys-close");
  if (keysClose) { keysClose.addEventListener("click", closeKeys); }

  if (!form) {
    document.addEventListener("keydown", function (e) {
      if (e.key === "?" && !typing(document.activeElement)) { e.preventDefault(); openKeys(); }
      if (e.key === "Escape") { closeKeys(); }
    });
    return;
  }

  var picker = document.getElementById("picker");
  var levels = Array.prototype.slice.call(picker.querySelectorAll(".level"));
  var depth = levels.length;
  var search = document.getElementById("label-search");
  var searchStatus = document.getElementById("search-status");
  var pathEl = document.getElementById("picker-path");
  var summary = document.getElementById("summary");
  var hint = document.getElementById("summary-hint");
  var draftStatus = document.getElementById("draft-status");
  var skip = document.getElementById("skip");
  var skipReason = document.getElementById("skip-reason");
  var draftKey = form.dataset.draftKey;
  var defaultHint = form.dataset.defaultHint;
  var byCode = {};
  picker.querySelectorAll("li.opt").forEach(function (li) { byCode[li.dataset.code] = li; });
  var texts = new Map();
  levels[depth - 1].querySelectorAll("li.opt").forEach(function (li) {
    // A leaf matches on its own text and its ancestors' names and definitions.
    var parts = [li.textContent];
    var codes = li.dataset.codes.split(" ");
    codes.slice(0, -1).forEach(function (c) {
      var up = byCode[c];
      if (up) {
        var name = up.querySelector(".name");
        var def = up.querySelector(".definition");
        parts.push(name ? name.textContent : "", def ? def.textContent : "");
      }
    });
    texts.set(li, parts.join(" ").toLowerCase().replace(/\s+/g, " "));
  });

  var path = [];  // chosen codes, type first

  function nameOf(code) {
    var li = byCode[code];
    return li ? li.querySelector(".name").textContent : code;
  }

  function visibleOptions() {
    var q = search.value.trim();
    if (q) {
      return Array.prototype.slice.call(levels[depth - 1].querySelectorAll("li.opt:not([hidden])"));
    }
    var level = levels[Math.min(path.length, depth - 1)];
    return Array.prototype.slice.call(level.querySelectorAll("li.opt:not([hidden])"));
  }

  function number(options) {
    options.forEach(function (li, i) { li.querySelector(".n").textContent = i < 9 ? String(i + 1) : ""; });
  }

  function render() {
    picker.classList.add("js");
    var q = search.value.trim().toLowerCase();
    var current = Math.min(path.length, depth - 1);
    levels.forEach(function (level, i) {
      level.hidden = q ? i !== depth - 1 : i !== current;
    });
    if (q) {
      var shown = 0;
      levels[depth - 1].querySelectorAll("li.opt").forEach(function (li) {
        var words = q.split(/\s+/);
        var text = texts.get(li) || "";
        var hit = words.every(function (w) { return text.indexOf(w) !== -1; });
        li.hidden = !hit;
        if (hit) { shown++; }
      });
      picker.classList.add("searching");
      searchStatus.textContent = !shown
        ? say("sayNone", "Nothing matches \u201c{q}\u201d.", { q: search.value.trim() })
        : shown > 9
          ? say("sayMatchingMany", "{n} matching (digits pick the first 9); Enter takes the first.", { n: shown })
          : say("sayMatching", "{n} matching; Enter takes the first.", { n: shown });
    } else {
      picker.classList.remove("searching");
      searchStatus.textContent = "";
      var parent = current === 0 ? "" : path[current - 1];
      levels[current].querySelectorAll("li.opt").forEach(function (li) {
        li.hidden = li.dataset.parent !== parent;
      });
    }
    number(visibleOptions());
    // Radios follow the path, so a reload or a submit sends what is shown.
    picker.querySelectorAll("input[type=radio]").forEach(function (r) {
      r.checked = path.indexOf(r.value) !== -1;
    });
    pathEl.textContent = path.length ? path.map(nameOf).join(" \u203a ") +
      (path.length < depth ? " \u203a \u2026" : "") + "  " + say("sayUp", "(Backspace: up a level)") :
      say("sayChooseType", "Choose a type (1\u2013{n})",
          { n: Math.min(9, levels[0].querySelectorAll("li.opt").length) });
    var type = path.length ? byCode[path[0]] : null;
    hint.textContent = type && type.dataset.hint ? type.dataset.hint : defaultHint;
  }

  function choose(code) {
    var li = byCode[code];
    if (!li) { return; }
    path = li.dataset.codes.split(" ");
    if (search.value) { search.value = ""; }
    render();
    if (path.length >= depth) { summary.focus(); }
    saveDraft();
  }

  function up() {
    if (!path.length) { return; }
    path = path.slice(0, Math.min(path.length, depth) - 1);
    render();
    saveDraft();
  }

  // ------------------------------------------------------------ draft
  function saveDraft() {
    try {
      localStorage.setItem(draftKey, JSON.stringify({ path: path, summary: summary.value, at: Date.now() }));
      draftStatus.textContent = say("sayDraftKept", "Draft kept on this device.");
    } catch (err) { /* storage full or disabled: the form still works */ }
  }

  function loadDraft() {
    var checked = picker.querySelector("input[name=node]:checked");
    if (checked) {  // the server filled the form (an edit, or input kept after an error)
      path = byCode[checked.value].dataset.codes.split(" ");
      try { localStorage.removeItem(draftKey); } catch (err) { /* nothing to clear */ }
      return;
    }
    var draft = null;
    try { draft = JSON.parse(localStorage.getItem(draftKey) || "null"); } catch (err) { draft = null; }
    if (!draft) { return; }
    path = (draft.path || []).filter(function (c) { return byCode[c]; });
    if (!summary.value && draft.summary) { summary.value = draft.summary; }
    draftStatus.textContent = say("sayDraftRestored", "Draft restored.");
  }

  // ------------------------------------------------------------ events
  picker.addEventListener("change", function (e) {
    if (e.target.type === "radio") { choose(e.target.value); }
  });
  search.addEventListener("input", function () { render(); });
  search.addEventListener("keydown", function (e) {
    if (e.key === "Enter") {
      e.preventDefault();
      var first = visibleOptions()[0];
      if (first) { choose(first.dataset.code); }
    } else if (e.key === "Escape") {
      e.preventDefault();
      search.value = "";
      render();
      search.blur();
    } else if (e.key === "ArrowDown") {
      var opt = visibleOptions()[0];
      if (opt) { e.preventDefault(); opt.querySelector("input").focus(); }
    }
  });
  summary.addEventListener("input", saveDraft);
  form.addEventListener("submit", function () {
    // Kept until the server confirms the save (drafts.js), so a failed save loses nothing.
    try { sessionStorage.setItem("concord:draft-sent", draftKey); } catch (err) { /* no storage */ }
  });

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (overlay && !overlay.hidden) {
      if (e.key === "Escape" || e.key === "?") { e.preventDefault(); closeKeys(); }
      return;
    }
    var el = document.activeElement;
    if (e.key === "Escape" && skip && skip.open) { skip.open = false; return; }
    if (typing(el)) { return; }
    if (e.key === "?") { e.preventDefault(); openKeys(); return; }
    if (e.key === "/") { e.preventDefault(); search.focus(); return; }
    if (/^[1-9]$/.test(e.key)) {
      var opt = visibleOptions()[Number(e.key) - 1];
      if (opt) { e.preventDefault(); choose(opt.dataset.code); }
      return;
    }
    if (e.key === "Backspace") { e.preventDefault(); up(); return; }
    if (e.key === "s" && skip) {
      e.preventDefault();
      skip.open = true;
      skipReason.focus();
      return;
    }
    if (e.key === "Enter" && path.length >= depth && el && el.type !== "submit") {
      e.preventDefault();
      if (!summary.value.trim()) { summary.focus(); } else { form.requestSubmit(); }
    }
  });

  loadDraft();
  render();
  if (path.length >= depth) { summary.focus(); } else if (document.activeElement === document.body) {
    picker.focus({ preventScroll: true });
  }
})();
