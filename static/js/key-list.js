// The key list of the labeling and screening pages (templates/labeling/_keys.html), a modal
// dialog (issue #32): the "Keys" button or the page's `?` opens it, Tab and Shift+Tab go round
// its own controls, and closing it gives the focus back to where it was (nothing, or the button).
// Each page's script makes one with concordKeyList(overlay) and decides which keys open it.
window.concordKeyList = function (overlay) {
  "use strict";
  var from = null;
  function open() {
    if (!overlay) { return; }
    from = document.activeElement;
    overlay.hidden = false;
    document.getElementById("keys-close").focus();
  }
  function close() {
    if (!overlay || overlay.hidden) { return; }
    overlay.hidden = true;
    if (from && from !== document.body && document.contains(from)) {
      from.focus();
    } else if (overlay.contains(document.activeElement)) {
      // Back to nothing, at once: the browser would move the focus off the hidden close button
      // only at its next rendering, and a key pressed before that went to the closed dialog.
      document.activeElement.blur();
    }
    from = null;
  }
  function keepTabIn(e) {
    var stops = Array.prototype.slice.call(overlay.querySelectorAll("button, a[href], input:not([type=hidden])"));
    if (!stops.length) { return; }
    var at = stops.indexOf(document.activeElement);
    var next = at < 0 ? 0 : (at + (e.shiftKey ? -1 : 1) + stops.length) % stops.length;
    e.preventDefault();
    stops[next].focus();
  }
  var opener = document.getElementById("keys-open");
  if (opener) { opener.addEventListener("click", open); }
  var closer = document.getElementById("keys-close");
  if (closer) { closer.addEventListener("click", close); }
  return { open: open, close: close, keepTabIn: keepTabIn };
};
