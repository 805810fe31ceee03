// "Download PNG" on report charts: draw the chart's inline SVG onto a canvas (twice the size,
// white background) and save the canvas as a PNG file. Buttons carry the figure's id in
// data-chart-target and the file name in data-filename. The SVG is loaded from a data: URL,
// which the page's Content-Security-Policy allows for images; nothing leaves the browser.
(function () {
  "use strict";
  var SCALE = 2;

  function svgDataUrl(svg) {
    var copy = svg.cloneNode(true);
    copy.setAttribute("xmlns", "http://www.w3.org/2000/svg");
    var text = new XMLSerializer().serializeToString(copy);
    return "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text);
  }

  function save(href, filename) {
    var link = document.createElement("a");
    link.href = href;
    link.download = filename;
    document.body.appendChild(link);
    link.click();
    link.remove();
  }

  function toPng(button) {
    var figure = document.getElementById(button.dataset.chartTarget);
    var svg = figure && figure.querySelector("svg");
    if (!svg) { return; }
    var width = Number(svg.getAttribute("width")) || svg.getBoundingClientRect().width;
    var height = Number(svg.getAttribute("height")) || svg.getBoundingClientRect().height;
    var image = new Image();
    image.onload = function () {
      var canvas = document.createElement("canvas");
      canvas.width = Math.ceil(width * SCALE);
      canvas.height = Math.ceil(height * SCALE);
      var context = canvas.getContext("2d");
      context.fillStyle = "#ffffff";
      context.fillRect(0, 0, canvas.width, canvas.height);
      context.drawImage(image, 0, 0, canvas.width, canvas.height);
      canvas.toBlob(function (blob) {
        var url = URL.createObjectURL(blob);
        save(url, button.dataset.filename || "chart.png");
        setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
      }, "image/png");
    };
    image.onerror = function () { button.textContent = button.dataset.failed || "PNG failed; use SVG"; };
    image.src = svgDataUrl(svg);
  }

  document.querySelectorAll("button.chart-png").forEach(function (button) {
    button.addEventListener("click", function () { toPng(button); });
  });
})();
