// A form sent back with errors (WCAG 3.3.1): the focus goes to the first error of the page instead
// of staying at its top: a field Django marked aria-invalid="true" (its aria-describedby names
// the error text, so a screen reader reads label, value and error), or a message of the form's
// own (its errors as a whole, a group's), whichever comes first. Error boxes a page's script
// fills later stay hidden until then and are passed over; pages without errors are left alone.
(function () {
  "use strict";
  var candidates = document.querySelectorAll("main form [aria-invalid=true], main form .error, main form .fielderror");
  var target = Array.prototype.find.call(candidates, function (el) { return el.getClientRects().length > 0; });
  if (!target) { return; }
  if (!target.matches("input, select, textarea, button") && !target.hasAttribute("tabindex")) {
    target.setAttribute("tabindex", "-1");
  }
  target.focus();
})();
