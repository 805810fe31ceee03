// Live progress of a label import: poll the job's API every 1.5 s, move the bar and the step
// line; when the job ends, reload so the page shows the per-file report the server renders.
(function () {
  "use strict";
  var root = document.getElementById("label-import-progress");
  if (!root || root.dataset.active !== "true") { return; }
  var INTERVAL_MS = 1500;
  var timer = null;

  function poll() {
    fetch(root.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (job) {
        document.getElementById("import-bar").value = job.progress.fraction;
        document.getElementById("import-step").textContent = job.progress.step;
        if (job.is_active) { timer = setTimeout(poll, INTERVAL_MS); } else { window.location.reload(); }
      })
      .catch(function (err) {
        var note = document.getElementById("poll-note");
        note.textContent = (note.dataset.failed || "Could not refresh ({error}); trying again.")
          .split("{error}").join(err.message);
        timer = setTimeout(poll, INTERVAL_MS * 2);
      });
  }

  timer = setTimeout(poll, INTERVAL_MS);
  window.addEventListener("pagehide", function () { clearTimeout(timer); });
})();
