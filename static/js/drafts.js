// Labeling drafts (kept by labeling.js in localStorage) outlive a submit until the server has
// confirmed it. A successful save redirects to another item, or to a page with none; a failed one
// (a 503 while the database restarts) leads back to the same item, whose page restores the draft.
// So on every page: a draft marked as sent whose item is not the one shown here was saved.
(function () {
  "use strict";
  try {
    var sent = sessionStorage.getItem("concord:draft-sent");
    if (!sent) { return; }
    var form = document.getElementById("label-form");
    if (form && form.dataset.draftKey === sent) { return; }
    localStorage.removeItem(sent);
    sessionStorage.removeItem("concord:draft-sent");
  } catch (err) { /* storage disabled: there are no drafts either */ }
})();
