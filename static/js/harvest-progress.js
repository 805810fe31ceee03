// Live progress of a harvest run: poll the run's API every 2 s and fill in the page's
// [data-field] elements; stop once the run is done, failed or cancelled.
(function () {
  "use strict";
  var root = document.getElementById("harvest-progress");
  if (!root || root.dataset.active !== "true") { return; }
  var INTERVAL_MS = 2000;
  var bar = document.getElementById("run-bar");
  var cancelForm = document.getElementById("cancel-form");
  var note = document.getElementById("poll-note");
  var timer = null;

  function valueAt(data, path) {
    return path.split(".").reduce(function (obj, key) { return obj == null ? obj : obj[key]; }, data);
  }

  function render(run) {
    root.querySelectorAll("[data-field]").forEach(function (el) {
      var value = valueAt(run, el.dataset.field);
      el.textContent = value == null ? "" : String(value);
      if (el.dataset.field === "error") { el.hidden = !value; }
    });
    var status = root.querySelector('[data-field="status_label"]');
    status.className = "status status-" + run.status;
    bar.value = run.progress.fraction;
    root.dataset.active = run.is_active ? "true" : "false";
    root.dataset.status = run.status;
    if (!run.is_active) {
      cancelForm.hidden = true;
      note.textContent = "";
    }
  }

  function poll() {
    fetch(root.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (run) {
        render(run);
        if (run.is_active) { timer = setTimeout(poll, INTERVAL_MS); }
      })
      .catch(function (err) {
        // A blip (server restart, network) should not end live updates: try again, and say so.
        note.textContent = (note.dataset.failed || "Could not refresh ({error}); trying again.")
          .split("{error}").join(err.message);
        timer = setTimeout(poll, INTERVAL_MS * 2);
      });
  }

  timer = setTimeout(poll, INTERVAL_MS);
  window.addEventListener("pagehide", function () { clearTimeout(timer); });
})();
