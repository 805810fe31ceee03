// Live progress of an export job: poll the job's API every 1.5 s and fill in the page's
// [data-field] elements; once the job is done, show the download link; stop when it ends.
(function () {
  "use strict";
  var root = document.getElementById("export-progress");
  if (!root || root.dataset.active !== "true") { return; }
  var INTERVAL_MS = 1500;
  var bar = document.getElementById("export-bar");
  var download = document.getElementById("download");
  var link = document.getElementById("download-link");
  var note = document.getElementById("poll-note");
  var timer = null;

  function valueAt(data, path) {
    return path.split(".").reduce(function (obj, key) { return obj == null ? obj : obj[key]; }, data);
  }

  function render(job) {
    root.querySelectorAll("[data-field]").forEach(function (el) {
      var value = valueAt(job, el.dataset.field);
      el.textContent = value == null ? "" : String(value);
      if (el.dataset.field === "error") { el.hidden = !value; }
    });
    root.querySelector('[data-field="status_label"]').className = "status status-" + job.status;
    bar.value = job.progress.fraction;
    root.dataset.active = job.is_active ? "true" : "false";
    root.dataset.status = job.status;
    if (job.download_url) {
      link.href = job.download_url;
      download.hidden = false;
    }
    if (!job.is_active) { note.textContent = ""; }
  }

  function poll() {
    fetch(root.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (job) {
        render(job);
        if (job.is_active) { timer = setTimeout(poll, INTERVAL_MS); }
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
