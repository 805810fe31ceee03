// The coding page of an interview transcript: the passage to code comes from the mouse's
// selection in the transcript, or from the keyboard: the arrow keys move between lines, Space or
// Enter takes the line (with Shift, every line from the one taken before), then the category box
// has the focus and Enter applies the code. Offsets count characters of the transcript's text:
// each line's data-start is where it begins (in code points, as Python counts them).
(function () {
  "use strict";
  var lines = document.getElementById("transcript-lines");
  var form = document.getElementById("coding-form");
  if (!lines || !form) { return; }
  var start = form.querySelector("[name=start]");
  var end = form.querySelector("[name=end]");
  var shown = document.getElementById("passage-shown");
  var category = form.querySelector("[name=node_code]");
  var empty = shown.textContent;
  var taken = null; // the line Space or Enter took last

  function lineOf(node) {
    var el = node && (node.nodeType === 1 ? node : node.parentNode);
    return el && el.closest ? el.closest("#transcript-lines > li") : null;
  }

  // The transcript offset of a boundary point (node, offset) inside `line`.
  function offsetAt(line, node, offset, atEnd) {
    var text = line.querySelector(".line-text");
    if (!text.contains(node)) {
      return Number(atEnd ? line.dataset.end : line.dataset.start);
    }
    var range = document.createRange();
    range.setStart(text, 0);
    range.setEnd(node, offset);
    // characters as the server counts them (code points: a character beyond the BMP is one)
    return Number(line.dataset.start) + Array.from(range.toString()).length;
  }

  function mark(from, to) {
    Array.prototype.forEach.call(lines.children, function (li) {
      var s = Number(li.dataset.start), e = Number(li.dataset.end);
      li.classList.toggle("chosen", from < e && s < to);
    });
  }

  function choose(from, to, words) {
    if (to <= from) { return; }
    start.value = from;
    end.value = to;
    shown.textContent = words;
    mark(from, to);
  }

  lines.addEventListener("mouseup", function () {
    var sel = window.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount) { return; }
    var range = sel.getRangeAt(0);
    var first = lineOf(range.startContainer), last = lineOf(range.endContainer);
    if (!first || !last) { return; }
    choose(
      offsetAt(first, range.startContainer, range.startOffset, false),
      offsetAt(last, range.endContainer, range.endOffset, true),
      sel.toString().trim()
    );
  });

  function takeLines(line, extend) {
    var from = line, to = line;
    if (extend && taken) {
      var before = Number(taken.dataset.start) < Number(line.dataset.start);
      from = before ? taken : line;
      to = before ? line : taken;
    } else {
      taken = line;
    }
    var words = [];
    for (var li = from; li; li = li.nextElementSibling) {
      words.push(li.querySelector(".line-text").textContent);
      if (li === to) { break; }
    }
    choose(Number(from.dataset.start), Number(to.dataset.end), words.join("\n"));
  }

  lines.addEventListener("keydown", function (e) {
    var line = lineOf(e.target);
    if (!line) { return; }
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      var next = e.key === "ArrowDown" ? line.nextElementSibling : line.previousElementSibling;
      if (next) { e.preventDefault(); next.focus(); }
    } else if (e.key === " " || e.key === "Enter") {
      e.preventDefault();
      takeLines(line, e.shiftKey);
      if (!e.shiftKey) { category.focus(); }
    }
  });

  form.addEventListener("submit", function (e) {
    if (!start.value || !end.value) {
      e.preventDefault();
      shown.textContent = empty;
      var first = lines.querySelector("li");
      if (first) { first.focus(); }
    }
  });
})();
