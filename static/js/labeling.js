// The labeling page, keyboard first, with no page load between items.
//
// The picker shows one level at a time (type -> theme -> sub-theme). Every visible option shows
// its key (1-9, then letters; `s` skips and `u` undoes, so they are not option keys): pressing it
// chooses the option and goes one level down; arrows move the focus without choosing, and the
// focused option shows its definition and examples (fetched once from categories.json, cached by
// the browser under the taxonomy's version). `/` searches; in the search box the digits pick
// results. Enter submits; Backspace goes up a level, or on a fresh item undoes (as does `u`).
// The keys act only where they apply (issue #32, WCAG 2.1.4): with the focus on nothing, in the
// label panel or on the issue's heading, never in a text box; a person may turn the single-key
// ones (digits, letters, `/`, `?`) off for good (the switch in the key list, data-single-keys).
// The focus never falls to the page: a choice leaves it on the picker (or the summary once the
// label is whole), and each new item moves it to the issue's heading while a polite live region
// says the issue's title; the page's title follows the item.
//
// Items come from the labeling API: the page holds the next item ready (a second reservation,
// through the same claim as any other), so after Enter the next issue is on screen at once while
// the label is sent in the background. The label stays a draft in localStorage until the server
// confirms it. A refusal (or no answer) does not take the screen from the item the volunteer is
// on: a notice at the top of the label panel names the refused item and the reason, and "Go back
// to it" returns to it with the volunteer's words (kept as its draft meanwhile). An expired
// sign-in (the API's "not_authenticated") keeps the drafts and links to sign in again, back to
// the item whose label did not go through. The URL follows the item (history.pushState), so a
// reload or Back loads it from the server. Texts come from the page (json_script "label-text"),
// translated there.
// Without JavaScript the page still works: every category of the label depth is listed, and the
// form posts to the server.
(function () {
  "use strict";
  var form = document.getElementById("label-form");
  var overlay = document.getElementById("keys-overlay");
  var panel = document.getElementById("label-panel");
  var switchEl = document.querySelector("[data-single-keys]");
  var singleKeys = !switchEl || switchEl.dataset.singleKeys !== "off";

  function typing(el) {
    return el && (el.tagName === "INPUT" && el.type !== "radio" || el.tagName === "TEXTAREA" ||
      el.isContentEditable);
  }

  // The key list (static/js/key-list.js): a modal dialog the "Keys" button or `?` opens.
  var keyList = window.concordKeyList(overlay);
  var openKeys = keyList.open, closeKeys = keyList.close, keepTabIn = keyList.keepTabIn;

  // Where the page's keys act: the focus on nothing, in the label panel, or on the issue's
  // heading (where each new item puts it); never a link or a box elsewhere on the page.
  function applies(el) {
    if (!el || el === document.body || el === document.documentElement) { return true; }
    return !!(panel && panel.contains(el)) || el.id === "issue-title";
  }

  if (!form) {
    document.addEventListener("keydown", function (e) {
      if (e.key === "Tab" && overlay && !overlay.hidden) { keepTabIn(e); return; }
      if (e.key === "?" && singleKeys && applies(document.activeElement) && !typing(document.activeElement)) {
        e.preventDefault();
        openKeys();
      }
      if (e.key === "Escape") { closeKeys(); }
    });
    return;
  }

  var T = JSON.parse(document.getElementById("label-text").textContent);
  var cfg = form.dataset;
  var picker = document.getElementById("picker");
  var levels = Array.prototype.slice.call(picker.querySelectorAll(".level"));
  var depth = levels.length;
  var keys = picker.dataset.keys;
  var issueEl = document.getElementById("issue");
  var search = document.getElementById("label-search");
  var searchStatus = document.getElementById("search-status");
  var pathEl = document.getElementById("picker-path");
  var info = document.getElementById("option-info");
  var summary = document.getElementById("summary");
  var hint = document.getElementById("summary-hint");
  var draftStatus = document.getElementById("draft-status");
  var errorEl = document.getElementById("label-error");
  var statusEl = document.getElementById("flow-status");
  var heading = document.getElementById("label-heading");
  var announcer = document.getElementById("issue-announce");
  var notice = document.getElementById("refused-notice");
  var submitButton = document.getElementById("submit-label");
  var versionInput = form.querySelector("input[name=version]");
  var skipForm = document.getElementById("skip-form");
  var skip = document.getElementById("skip");
  var skipReason = document.getElementById("skip-reason");
  var proposeLink = document.getElementById("propose-link");
  var csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  var summaryRequired = cfg.summaryRequired === "1";
  var byCode = {};
  picker.querySelectorAll("li.opt").forEach(function (li) { byCode[li.dataset.code] = li; });
  // Codes from the type down (the path a choice sets), and each leaf's path of names, shown
  // beside search results: the page sends only each option's parent.
  picker.querySelectorAll("li.opt").forEach(function (li) {
    var codes = [li.dataset.code];
    for (var up = byCode[li.dataset.parent]; up; up = byCode[up.dataset.parent]) { codes.unshift(up.dataset.code); }
    li.dataset.codes = codes.join(" ");
  });
  levels[levels.length - 1].querySelectorAll("li.opt").forEach(function (li) {
    var names = li.dataset.codes.split(" ").slice(0, -1).map(function (c) { return nameOf(c); });
    if (!names.length) { return; }
    var path = document.createElement("span");
    path.className = "path";
    path.textContent = names.join(" \u203a ");
    li.querySelector("label").appendChild(path);
  });
  var details = {};  // code -> {definition, below, examples}, once categories.json is in
  var texts = new Map();  // leaf option -> the text a search looks in

  function fmt(text, values) {
    return text.replace(/%\((\w+)\)s/g, function (m, name) { return values[name] == null ? "" : String(values[name]); });
  }
  // Text for HTML, inside an element or an attribute's quotes: all five of & < > " ' escaped.
  var ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  function esc(text) {
    return (text == null ? "" : String(text)).replace(/[&<>"']/g, function (c) { return ESCAPES[c]; });
  }
  // "open the original" leads to the issue's own tracker, built from its host, names and number
  // (as the server builds it), never to a URL a forge or an import gave; no link for anything else.
  var TRACKERS = { github: "https://github.com/", gitee: "https://gitee.com/" };
  function trackerUrl(issue) {
    var names = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(issue.repository || "");
    var number = /^[A-Za-z0-9]+$/.test(issue.number || "");
    if (!Object.prototype.hasOwnProperty.call(TRACKERS, issue.host) || !names || !number) { return ""; }
    return TRACKERS[issue.host] + issue.repository + "/issues/" + issue.number;
  }
  function urlFor(template, id) { return template.replace("/0/", "/" + id + "/"); }

  // ------------------------------------------------------------ search texts and details
  function detailText(code) {
    var d = details[code];
    if (!d) { return ""; }
    return [d.definition, d.other || ""].concat(d.below, d.examples.map(function (x) { return x[1]; })).join(" ");
  }

  function buildTexts() {
    // A leaf matches on its own text and details and its ancestors' names and definitions.
    levels[depth - 1].querySelectorAll("li.opt").forEach(function (li) {
      var parts = [li.querySelector("label").textContent, detailText(li.dataset.code)];
      li.dataset.codes.split(" ").slice(0, -1).forEach(function (c) {
        var up = byCode[c];
        if (up) { parts.push(nameOf(c), details[c] ? details[c].definition : ""); }
      });
      texts.set(li, parts.join(" ").toLowerCase().replace(/\s+/g, " "));
    });
  }

  function loadDetails() {
    fetch(cfg.categoriesUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data) { return; }
        details = data.categories;
        buildTexts();
        if (search.value.trim()) { render(); }
        var focused = optionOf(document.activeElement);
        if (focused) { showInfo(focused); }
      })
      .catch(function () { /* names and codes still work; definitions come with the next page */ });
  }

  function optionOf(el) { return el && el.closest ? el.closest("#picker li.opt") : null; }

  function showInfo(li) {
    var d = details[li.dataset.code];
    li.appendChild(info);  // right under the option, wherever the panel is scrolled
    info.textContent = "";
    var title = document.createElement("p");
    title.className = "info-title";
    title.textContent = li.dataset.code + " " + nameOf(li.dataset.code);
    info.appendChild(title);
    if (d && d.definition) {
      var def = document.createElement("p");
      def.className = "definition";
      def.textContent = d.definition;
      info.appendChild(def);
    }
    if (d && d.below.length) {
      var below = document.createElement("p");
      below.className = "below";
      below.textContent = fmt(T.includes, { names: d.below.join("; ") });
      info.appendChild(below);
    }
    if (d && d.examples.length) {
      var list = document.createElement("ul");
      list.className = "examples";
      d.examples.forEach(function (x) {
        var item = document.createElement("li");
        var kind = document.createElement("span");
        kind.className = "kind";
        kind.textContent = x[0];
        item.appendChild(kind);
        item.appendChild(document.createTextNode(x[1]));
        list.appendChild(item);
      });
      info.appendChild(list);
    }
    info.hidden = false;
  }

  // ------------------------------------------------------------ the picker
  var path = [];  // chosen codes, type first

  function nameOf(code) {
    var li = byCode[code];
    return li ? li.querySelector("label > span").textContent : code;
  }

  function visibleOptions() {
    var level = search.value.trim() ? levels[depth - 1] : levels[Math.min(path.length, depth - 1)];
    return Array.prototype.slice.call(level.querySelectorAll("li.opt:not([hidden])"));
  }

  function render() {
    picker.classList.add("js");
    var q = search.value.trim().toLowerCase();
    var current = Math.min(path.length, depth - 1);
    levels.forEach(function (level, i) { level.hidden = q ? i !== depth - 1 : i !== current; });
    if (q) {
      var shown = 0;
      var words = q.split(/\s+/);
      levels[depth - 1].querySelectorAll("li.opt").forEach(function (li) {
        var text = texts.get(li) || li.textContent.toLowerCase();
        var hit = words.every(function (w) { return text.indexOf(w) !== -1; });
        li.hidden = !hit;
        if (hit) { shown++; }
      });
      picker.classList.add("searching");
      searchStatus.textContent = shown ? fmt(T.matching, { n: shown }) : fmt(T.noMatch, { q: search.value.trim() });
    } else {
      picker.classList.remove("searching");
      searchStatus.textContent = "";
      var parent = current === 0 ? "" : path[current - 1];
      levels[current].querySelectorAll("li.opt").forEach(function (li) { li.hidden = (li.dataset.parent || "") !== parent; });
    }
    visibleOptions().forEach(function (li, i) { li.querySelector("kbd").textContent = keys.charAt(i); });
    // Radios follow the path, so a reload or a submit without the script sends what is shown.
    picker.querySelectorAll("input[type=radio]").forEach(function (r) { r.checked = path.indexOf(r.value) !== -1; });
    var types = levels[0].querySelectorAll("li.opt").length;
    pathEl.textContent = path.length ? path.map(nameOf).join(" \u203a ") +
      (path.length < depth ? " \u203a \u2026" : "") + "  " + T.upHint :
      fmt(T.chooseType, { keys: keys.charAt(0) + "\u2013" + keys.charAt(types - 1) });
    var type = path.length ? byCode[path[0]] : null;
    hint.textContent = type && type.dataset.hint ? type.dataset.hint : cfg.defaultHint;
  }

  function choose(code) {
    var li = byCode[code];
    if (!li) { return; }
    path = li.dataset.codes.split(" ");
    if (search.value) { search.value = ""; }
    info.hidden = true;
    clearError();
    render();
    if (path.length >= depth) { summary.focus(); } else { focusPicker(); }
    saveDraft();
  }

  function up() {
    if (!path.length) { return; }
    path = path.slice(0, Math.min(path.length, depth) - 1);
    info.hidden = true;
    render();
    saveDraft();
  }

  function moveFocus(step) {
    var options = visibleOptions();
    if (!options.length) { return; }
    var at = options.indexOf(optionOf(document.activeElement));
    var next = at < 0 ? (step > 0 ? 0 : options.length - 1) : Math.max(0, Math.min(options.length - 1, at + step));
    options[next].querySelector("input").focus();
  }

  // The picker (tabindex=-1) holds the focus between choices: the keys still choose, Tab and
  // the arrows lead on to the options, and a screen reader stays in the label panel.
  function focusPicker() { picker.focus(); }

  // ------------------------------------------------------------ drafts
  var draftKey = cfg.draftKey;

  function saveDraft() {
    try {
      localStorage.setItem(draftKey, JSON.stringify({ path: path, summary: summary.value, at: Date.now() }));
      draftStatus.textContent = T.draftKept;
    } catch (err) { /* storage full or disabled: the form still works */ }
  }

  function dropDraft(rec) {
    try { localStorage.removeItem(rec.draftKey); } catch (err) { /* nothing to clear */ }
  }

  function loadDraft() {
    var draft = null;
    try { draft = JSON.parse(localStorage.getItem(draftKey) || "null"); } catch (err) { draft = null; }
    if (!draft) { return false; }
    path = (draft.path || []).filter(function (c) { return byCode[c]; });
    if (!summary.value && draft.summary) { summary.value = draft.summary; }
    draftStatus.textContent = T.draftRestored;
    return true;
  }

  // ------------------------------------------------------------ messages
  function setStatus(text) { statusEl.textContent = text; }
  function showError(text, onward) {
    errorEl.textContent = text;
    if (onward) {  // the item is not (or no longer) mine to label: a way on, by key or click
      var next = document.createElement("button");
      next.type = "button";
      next.className = "link";
      next.id = "go-on";
      next.textContent = T.goOn;
      next.addEventListener("click", goOn);
      errorEl.appendChild(document.createTextNode(" "));
      errorEl.appendChild(next);
    }
    errorEl.hidden = false;
  }
  function clearError() { errorEl.hidden = true; errorEl.textContent = ""; }

  function missing() {
    if (!path.length) { return { text: T.missingType, focus: focusPicker }; }
    if (path.length < depth) {
      return { text: fmt(T.missingBelow, { path: path.map(nameOf).join(" \u203a ") }), focus: focusPicker };
    }
    if (summaryRequired && !summary.value.trim()) {
      return { text: T.missingSummary, focus: function () { summary.focus(); } };
    }
    return null;
  }

  // ------------------------------------------------------------ items
  function draftKeyOf(id) { return cfg.draftPrefix + id + ":" + cfg.user; }

  function issueHtml(p) {
    var issue = p.issue;
    var host = T.hosts[issue.host] || issue.host;
    var url = trackerUrl(issue);
    var link = url ? ' href="' + esc(url) + '"' : "";
    var meta = [];
    if (issue.author) { meta.push(esc(fmt(T.by, { author: issue.author }))); }
    if (issue.created_at) { meta.push(esc(issue.created_at.slice(0, 10))); }
    if (issue.state) { meta.push(esc(issue.state)); }
    var html = '<p class="crumbs"><span id="issue-source">' + esc(host + " \u00b7 " + issue.repository + " #" + issue.number) +
      '</span> \u00b7 <a id="issue-link"' + link + ' target="_blank" rel="noopener noreferrer nofollow">' + esc(T.openOriginal) + "</a></p>" +
      '<h1 id="issue-title" class="issue-title" tabindex="-1">' + p.title_html + "</h1>" +
      '<p class="meta" id="issue-meta">' + meta.join(" \u00b7 ") + "</p>";
    if (issue.labels.length) {
      html += '<p class="tracker-labels" id="issue-tags">' + issue.labels.map(function (l) { return '<span class="tag">' + esc(l) + "</span>"; }).join("") + "</p>";
    }
    if (p.keywords.length) {
      html += '<p class="keywords" id="issue-keywords">' + esc(T.keywords) + " " +
        p.keywords.map(function (k) { return '<mark class="kw">' + esc(k) + "</mark>"; }).join(" ") + "</p>";
    }
    // title_html, body_html and the comments' HTML are sanitized by the server (nh3).
    html += '<div class="markdown issue-text" id="issue-body">' + (p.body_html || '<p class="hint">' + esc(T.noDescription) + "</p>") + "</div>";
    if (p.comments.length) {
      html += '<div id="issue-comments"><h2 class="comments-title">' + esc(T.comments) + " (" + p.comments.length + ')</h2><ol class="comments">' +
        p.comments.map(function (c) {
          var when = c.created_at ? " \u00b7 " + esc(c.created_at.slice(0, 16).replace("T", " ")) : "";
          return '<li class="comment"><p class="meta">' + esc(c.author || T.someone) + when + '</p><div class="markdown">' + c.body_html + "</div></li>";
        }).join("") + "</ol></div>";
    }
    return html;
  }

  function recFromPayload(p) {
    return {
      id: p.id, issue: p.issue.repository + "#" + p.issue.number, html: issueHtml(p),
      reservedUntil: p.reserved_until, version: null, draftKey: draftKeyOf(p.id), path: null, summary: "",
    };
  }

  var first = {
    id: Number(cfg.item), issue: cfg.issue, html: null, reservedUntil: cfg.reservedUntil || null, draftKey: cfg.draftKey,
    version: versionInput.value ? Number(versionInput.value) : null, path: null, summary: "",
    // An edit opened from "My labels" goes back there through the server, as without the script.
    native: !!form.querySelector("input[name=next]"),
  };
  first.html = issueEl.innerHTML;
  var current = first;
  var ready = [];  // items handed to me and held ready, next first
  var pending = {};  // item id -> the request saving its label or skip
  var undoable = [];  // labels and skips the volunteer may take back, last on top
  var fetching = null;
  var exhausted = false;
  var refused = [];  // items whose label or skip the server refused, waiting in the notice
  var expiredFor = null;  // the sign-in expired: the item the "sign in" link returns to

  function inHand() {
    var ids = ready.map(function (r) { return r.id; }).concat(Object.keys(pending).map(Number),
      refused.map(function (x) { return x.rec.id; }));
    if (current) { ids.push(current.id); }
    return ids;
  }

  function api(method, url, body) {
    var init = {
      method: method, credentials: "same-origin",
      headers: { Accept: "application/json", "X-CSRFToken": csrf },
    };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(url, init).then(function (r) {
      if (r.status === 204) { return { status: 204, body: null, reason: r.headers.get("Concord-Reason") }; }
      return r.json().then(function (data) { return { status: r.status, body: data }; },
        function () { return { status: r.status, body: {} }; });
    });
  }

  function reasonOf(r) {
    var b = r.body || {};
    if (typeof b.detail === "string") { return b.detail; }
    return Object.keys(b).map(function (k) { return k + ": " + [].concat(b[k]).join(" "); }).join("; ") || String(r.status);
  }

  // The API's answer to a request without a (live) sign-in: 401/403 with code "not_authenticated".
  function signedOut(r) {
    return (r.status === 401 || r.status === 403) && !!r.body && r.body.code === "not_authenticated";
  }

  function prefetch() {
    if (ready.length || fetching || exhausted || expiredFor) { return fetching; }
    fetching = api("POST", cfg.nextUrl, { exclude: inHand() }).then(function (r) {
      fetching = null;
      if (signedOut(r)) { if (current) { signInExpired(current, false); } return; }
      if (r.status === 200 && inHand().indexOf(r.body.id) === -1) { ready.push(recFromPayload(r.body)); }
      // "holding": the server hands out nothing more while this page holds its most (the item
      // on screen, one ready, one label on its way); ask again once a label has landed.
      if (r.status === 204 && r.reason !== "holding") { exhausted = true; }
    }, function () { fetching = null; });
    return fetching;
  }

  // `announce`: a new item took the screen (the next one, or one brought back): the focus goes
  // to its heading and the live region says its title. Otherwise (an undo) the focus goes where
  // the label left off.
  function show(rec, announce) {
    current = rec;
    if (rec.html !== null) { issueEl.innerHTML = rec.html; }
    issueEl.dataset.item = rec.id;
    issueEl.scrollTop = 0;
    form.dataset.item = rec.id;
    form.action = urlFor(cfg.itemUrl, rec.id);
    skipForm.action = form.action.replace(/label\/$/, "skip/");
    skipForm.hidden = rec.version !== null;
    skip.open = false;
    skipReason.value = "";
    versionInput.value = rec.version === null ? "" : rec.version;
    heading.textContent = rec.version === null ? T.yourLabel : T.editLabel;
    submitButton.firstChild.nodeValue = (rec.version === null ? T.submit : T.saveChange) + " ";
    if (proposeLink) { proposeLink.href = proposeLink.href.replace(/item=\d+/, "item=" + rec.id); }
    ["others-labels", "my-label-readonly"].forEach(function (id) {
      var el = document.getElementById(id);
      if (el) { el.remove(); }
    });
    if (rec.reservedUntil) {
      document.getElementById("reserved-until").textContent = new Date(rec.reservedUntil).toTimeString().slice(0, 5);
      document.getElementById("reserved").hidden = false;
    }
    draftKey = rec.draftKey;
    draftStatus.textContent = "";
    search.value = "";
    info.hidden = true;
    summary.value = rec.summary || "";
    path = rec.path ? rec.path.slice() : [];
    if (!rec.path) { loadDraft(); }
    clearError();
    render();
    document.title = fmt(T.pageTitle, { issue: rec.issue, project: T.project }) + " \u00b7 Concord";
    window.scrollTo(0, 0);
    var title = document.getElementById("issue-title");
    if (announce && title) {
      title.tabIndex = -1;
      title.focus({ preventScroll: true });
      // Emptied first, so that a title like the last one is said again.
      var said = title.textContent.replace(/\s+/g, " ").trim();
      announcer.textContent = "";
      window.setTimeout(function () { announcer.textContent = said; }, 0);
    } else if (path.length >= depth) {
      summary.focus();
    } else {
      focusPicker();
    }
    prefetch();
  }

  function go(rec, announce) {
    show(rec, announce);
    history.pushState({ item: rec.id }, "", form.action);
  }

  function stillHeld(rec) {
    // A minute of margin: the label must reach the server while the item is still mine.
    return !rec.reservedUntil || Date.parse(rec.reservedUntil) > Date.now() + 60000;
  }

  function advance() {
    current = null;
    ready = ready.filter(function (rec) { return rec.version !== null || stillHeld(rec); });
    if (ready.length) { go(ready.shift(), true); return; }
    setStatus(T.loading);
    Promise.resolve(fetching || prefetch()).then(function () {
      if (current) { return; }  // a refusal brought an item back meanwhile
      if (ready.length) { go(ready.shift(), true); return; }
      var waits = Object.keys(pending).map(function (id) { return pending[id]; });
      Promise.all(waits).then(function () {
        if (current) { return; }
        // The labels have landed: ask once more, unless the server said nothing is left.
        return exhausted ? null : Promise.resolve(fetching || prefetch());
      }).then(function () {
        if (current) { return; }
        if (ready.length) { go(ready.shift(), true); return; }
        // A refused item waits in the notice, or the sign-in expired: stay on this page.
        if (refused.length) { goBack(refused[0]); return; }
        if (expiredFor) { show(expiredFor, true); history.replaceState({ item: expiredFor.id }, "", form.action); return; }
        // Nothing more to hand out (or no answer): the server's page says why.
        window.location.assign(cfg.emptyUrl);
      });
    });
  }

  // The volunteer has begun on the item on screen: a choice, a word, a search, or the cursor in
  // a box.
  function started() {
    return path.length > 0 || !!summary.value || !!search.value || typing(document.activeElement);
  }

  function keepWords() {
    // The words on screen go with their item when another one takes the screen.
    if (!current) { return; }
    current.path = path.slice();
    current.summary = summary.value;
  }

  function bringBack(rec, message, onward, noticeText) {
    if (!current || current === rec) {  // nobody is on another item: show it at once
      refused = refused.filter(function (x) { return x.rec !== rec; });
      show(rec, true);
      history.replaceState({ item: rec.id }, "", form.action);
      showError(message, onward);
      setStatus("");
      renderNotice();
      return;
    }
    // Someone is on another item: the refused one waits in the notice, its words kept as its
    // draft, until the volunteer chooses to go back to it.
    refused = refused.filter(function (x) { return x.rec !== rec; });
    refused.push({ rec: rec, message: message, onward: onward, text: noticeText });
    var fresh = !started();
    renderNotice();
    setStatus(noticeText);  // the live region announces it
    if (fresh) { notice.querySelector("button").focus(); }
  }

  function goBack(entry) {
    refused = refused.filter(function (x) { return x !== entry; });
    keepWords();
    if (current && current !== entry.rec) { ready.unshift(current); }
    go(entry.rec, true);
    showError(entry.message, entry.onward);
    setStatus("");
    renderNotice();
  }

  function signInExpired(rec, unsaved) {
    // Keep the first item whose words did not go through; one the page merely showed gives way.
    if (expiredFor && (expiredFor.unsaved || !unsaved)) { return; }
    expiredFor = rec;
    rec.unsaved = unsaved;
    var text = fmt(unsaved ? T.signInExpiredUnsaved : T.signInExpired, { issue: rec.issue });
    renderNotice();
    setStatus(text);
  }

  function loginUrl(rec) {
    var back = new URL(urlFor(cfg.itemUrl, rec.id), window.location.href);
    return cfg.loginUrl + "?next=" + encodeURIComponent(back.pathname);
  }

  function renderNotice() {
    // One line per refused item, newest last; the expired sign-in first.
    if (!notice) { return; }
    notice.textContent = "";
    if (expiredFor) {
      var p = document.createElement("p");
      p.id = "signin-expired";
      p.textContent = fmt(expiredFor.unsaved ? T.signInExpiredUnsaved : T.signInExpired, { issue: expiredFor.issue }) + " ";
      var a = document.createElement("a");
      a.id = "signin-link";
      a.href = loginUrl(expiredFor);
      a.textContent = T.signIn;
      p.appendChild(a);
      notice.appendChild(p);
    }
    refused.forEach(function (entry) {
      var line = document.createElement("p");
      line.className = "refused-item";
      line.dataset.item = entry.rec.id;
      line.appendChild(document.createTextNode(entry.text + " "));
      var back = document.createElement("button");
      back.type = "button";
      back.className = "secondary go-back";
      back.textContent = T.goBack;
      back.addEventListener("click", function () { goBack(entry); });
      line.appendChild(back);
      notice.appendChild(line);
    });
    notice.hidden = !expiredFor && !refused.length;
  }

  function goOn() {
    // Leave an item the server refused for good (the refusal said why); its draft goes too.
    if (!current) { return; }
    dropDraft(current);
    advance();
  }

  function bumpCount() {
    var count = document.getElementById("my-count");
    var bar = document.getElementById("my-progress");
    count.textContent = String(Number(count.textContent) + 1);
    bar.value = Number(bar.value) + 1;
  }

  function submitLabel() {
    if (!current) { return; }
    var problem = missing();
    if (problem) { showError(problem.text); problem.focus(); return; }
    var rec = current;
    rec.path = path.slice();
    rec.summary = summary.value;
    saveDraft();
    var wasEdit = rec.version !== null;
    setStatus(fmt(T.saving, { issue: rec.issue }));
    var url = urlFor(cfg.annotationUrl, rec.id);
    var body = { node: path[depth - 1], summary: summary.value, version: rec.version };
    pending[rec.id] = api("PUT", url, body).then(function (r) {
      delete pending[rec.id];
      if (r.status === 200 || r.status === 201) {
        dropDraft(rec);
        rec.version = r.body.version;
        rec.editable = r.body.editable;
        undoable.push({ kind: "label", rec: rec });
        if (r.status === 201) { bumpCount(); }
        setStatus(fmt(r.status === 201 ? T.saved : T.edited, { code: r.body.node, issue: rec.issue }));
      } else if (wasEdit && r.status === 409) {
        // The stored label stands (the item is complete, or changed elsewhere): say so, go on.
        dropDraft(rec);
        setStatus(fmt(T.refused, { reason: reasonOf(r) }));
      } else if (signedOut(r)) {
        // The words stay a draft on this device; signing in again leads back to this item.
        signInExpired(rec, true);
      } else {
        // 403/409: the rule refused the item itself (a 400 is about the form: fix and resend).
        bringBack(rec, fmt(T.refused, { reason: reasonOf(r) }), r.status === 403 || r.status === 409,
          fmt(T.labelNotice, { issue: rec.issue, reason: reasonOf(r) }));
      }
    }, function () {
      delete pending[rec.id];
      bringBack(rec, T.offline, false, fmt(T.labelNotice, { issue: rec.issue, reason: T.noAnswer }));
    });
    advance();
  }

  function skipCurrent() {
    if (!current) { return; }
    var rec = current;
    rec.path = path.slice();
    rec.summary = summary.value;
    pending[rec.id] = api("POST", urlFor(cfg.skipUrl, rec.id), { reason: skipReason.value }).then(function (r) {
      delete pending[rec.id];
      if (r.status === 200 || r.status === 201) {
        undoable.push({ kind: "skip", rec: rec });
        setStatus(fmt(T.skipped, { issue: rec.issue }));
      } else if (signedOut(r)) {
        signInExpired(rec, true);
      } else {
        bringBack(rec, fmt(T.skipRefused, { reason: reasonOf(r) }), r.status === 403 || r.status === 409,
          fmt(T.skipNotice, { issue: rec.issue, reason: reasonOf(r) }));
      }
    }, function () {
      delete pending[rec.id];
      bringBack(rec, T.offline, false, fmt(T.skipNotice, { issue: rec.issue, reason: T.noAnswer }));
    });
    advance();
  }

  function undo() {
    var waits = Object.keys(pending).map(function (id) { return pending[id]; });
    if (waits.length) { Promise.all(waits).then(undo, undo); return; }
    var last = undoable.pop();
    if (!last) { setStatus(T.nothingToUndo); return; }
    var rec = last.rec;
    if (last.kind === "label") {
      if (rec.editable === false) { setStatus(fmt(T.undoComplete, { issue: rec.issue })); return; }
      keepWords();
      if (current) { ready.unshift(current); }
      go(rec);
      setStatus(fmt(T.undoLabel, { issue: rec.issue }));
      return;
    }
    api("DELETE", urlFor(cfg.skipUrl, rec.id)).then(function (r) {
      if (r.status !== 200) { setStatus(fmt(T.undoRefused, { reason: reasonOf(r) })); return; }
      rec.reservedUntil = r.body.reserved_until;
      keepWords();
      if (current) { ready.unshift(current); }
      go(rec);
      setStatus(fmt(T.undoSkip, { issue: rec.issue }));
    }, function () { setStatus(T.offline); });
  }

  // ------------------------------------------------------------ events
  form.noValidate = true;  // the script says what is missing, in words
  picker.addEventListener("change", function (e) {
    if (e.target.type === "radio") { choose(e.target.value); }
  });
  picker.addEventListener("focusin", function (e) {
    var li = optionOf(e.target);
    if (li) { showInfo(li); }
  });
  search.addEventListener("input", function () { render(); });
  search.addEventListener("keydown", function (e) {
    var at = keys.indexOf(e.key);
    if (singleKeys && /^[0-9]$/.test(e.key) && at >= 0 && search.value.trim()) {
      // In search mode the digits pick results instead of typing into the box.
      var hit = visibleOptions()[at];
      e.preventDefault();
      if (hit) { choose(hit.dataset.code); }
    } else if (e.key === "Enter") {
      e.preventDefault();
      var firstHit = visibleOptions()[0];
      if (firstHit && search.value.trim()) { choose(firstHit.dataset.code); }
    } else if (e.key === "Escape") {
      e.preventDefault();
      search.value = "";
      render();
      focusPicker();
    } else if (e.key === "ArrowDown") {
      e.preventDefault();
      moveFocus(1);
    }
  });
  summary.addEventListener("input", function () { clearError(); saveDraft(); });
  summary.addEventListener("keydown", function (e) {
    // Esc leaves the summary box, so that the keys choose categories again.
    if (e.key === "Escape") { e.preventDefault(); focusPicker(); }
  });
  form.addEventListener("submit", function (e) {
    if (current && current.native) {
      var problem = missing();
      if (problem) { e.preventDefault(); showError(problem.text); problem.focus(); return; }
      // The server saves it and leads back to "My labels"; the draft is dropped there once the
      // save is confirmed (drafts.js).
      try { sessionStorage.setItem("concord:draft-sent", draftKey); } catch (err) { /* no storage */ }
      return;
    }
    e.preventDefault();
    submitLabel();
  });
  skipForm.addEventListener("submit", function (e) {
    e.preventDefault();
    skipCurrent();
  });
  window.addEventListener("popstate", function () { window.location.reload(); });

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (overlay && !overlay.hidden) {
      if (e.key === "Escape" || (e.key === "?" && singleKeys)) { e.preventDefault(); closeKeys(); }
      if (e.key === "Tab") { keepTabIn(e); }
      return;
    }
    var el = document.activeElement;
    if (e.key === "Escape" && skip.open && skip.contains(el)) {
      // Out of the skip box, onto its summary: the focus stays in the panel.
      skip.open = false;
      skip.querySelector("summary").focus();
      return;
    }
    if (typing(el) || !applies(el)) { return; }
    if (e.key === "ArrowDown" || e.key === "ArrowUp" || e.key === "ArrowLeft" || e.key === "ArrowRight") {
      if (optionOf(el) || e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();  // a radio would otherwise be chosen by the arrow
        moveFocus(e.key === "ArrowDown" || e.key === "ArrowRight" ? 1 : -1);
      }
      return;
    }
    if (e.key === "Enter") {
      var li = optionOf(el);
      if (li && path[path.length - 1] !== li.dataset.code) { e.preventDefault(); choose(li.dataset.code); return; }
      if (el && (el.tagName === "BUTTON" || el.tagName === "A" || el.tagName === "SUMMARY")) { return; }
      e.preventDefault();
      form.requestSubmit();
      return;
    }
    if (e.key === "Backspace") {
      e.preventDefault();
      if (path.length) { up(); } else if (!current || !current.native) { undo(); }
      return;
    }
    // The rest are single keys: only for a person who keeps them on.
    if (!singleKeys || e.key.length !== 1) { return; }
    if (e.key === "?") { e.preventDefault(); openKeys(); return; }
    if (e.key === "/") { e.preventDefault(); search.focus(); return; }
    if (e.key === "u") { e.preventDefault(); undo(); return; }
    if (e.key === "s" && !skipForm.hidden) {
      e.preventDefault();
      skip.open = true;
      skipReason.focus();
      return;
    }
    var at = keys.indexOf(e.key);
    if (at >= 0) {
      var option = visibleOptions()[at];
      if (option) { e.preventDefault(); choose(option.dataset.code); }
    }
  });

  var checked = picker.querySelector("input[name=node]:checked");
  if (checked) {  // the server filled the form (an edit, or input kept after an error)
    path = byCode[checked.value].dataset.codes.split(" ");
    try { localStorage.removeItem(draftKey); } catch (err) { /* nothing to clear */ }
  } else {
    loadDraft();
  }
  buildTexts();
  render();
  if (!first.native) { history.replaceState({ item: first.id }, "", form.action); }
  if (path.length >= depth) { summary.focus(); }
  loadDetails();
  if (!first.native) { prefetch(); }
})();
