// An interview import's page: while the job is queued or running, load the page again every
// two seconds (the report is drawn on the server).
(function () {
  "use strict";
  var section = document.getElementById("interview-import-progress");
  if (section && section.dataset.active === "true") {
    window.setTimeout(function () { window.location.reload(); }, 2000);
  }
})();
