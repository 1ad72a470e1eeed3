/* The dashboard's charts, drawn from the JSON beside each of them (the pages carry no inline
   code: their Content-Security-Policy allows none). A wide screen shows every section open (and
   a year's monthly numbers); on a phone a section's charts are fitted to it when it is opened
   (drawn while hidden). */
(function () {
  "use strict";
  // Plotly's tool bar only on hover (the stylesheet hides it on a phone, where it would cover
  // the title); no zooming by dragging or scrolling, so a finger on a chart scrolls the page
  var CONFIG = {
    displaylogo: false,
    displayModeBar: "hover",
    responsive: true,
    scrollZoom: false,
    modeBarButtonsToRemove: ["zoom2d", "pan2d", "select2d", "lasso2d", "zoomIn2d", "zoomOut2d",
                             "autoScale2d", "resetScale2d"]
  };
  var wide = window.matchMedia("(min-width: 761px)").matches;
  if (wide) {
    document.querySelectorAll("details.block, details.wide-open").forEach(function (details) {
      details.open = true;
    });
  }
  // the year shown, in view in the row of years (it scrolls sideways on a phone)
  var years = document.querySelector("nav.years");
  var current = years && years.querySelector(".current");
  if (current && years.scrollWidth > years.clientWidth) {
    years.scrollLeft += current.getBoundingClientRect().left - years.getBoundingClientRect().left -
      (years.clientWidth - current.offsetWidth) / 2;
  }
  document.querySelectorAll("details.block").forEach(function (section) {
    section.addEventListener("toggle", function () {
      if (!section.open) return;
      section.querySelectorAll(".js-plotly-plot").forEach(function (plot) {
        Plotly.Plots.resize(plot);
      });
    });
  });
  document.querySelectorAll("script[data-chart]").forEach(function (data) {
    var figure = JSON.parse(data.textContent);
    Plotly.newPlot(data.getAttribute("data-chart"), figure.data, figure.layout, CONFIG);
  });
})();
