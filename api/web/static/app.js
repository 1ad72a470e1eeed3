// Progressive enhancement of the pub form. Every page works without this file.
(function () {
  "use strict";

  // Typing "114" into the dice field selects the die buttons; tapping a die clears the text.
  function enhanceTurnForm(form) {
    var typed = form.querySelector("input[name=wurf]");
    var rows = form.querySelectorAll(".die-row");
    if (!typed || !rows.length) return;
    typed.addEventListener("input", function () {
      var digits = typed.value.replace(/[^1-6]/g, "").split("");
      rows.forEach(function (row, i) {
        row.querySelectorAll("input[type=radio]").forEach(function (r) {
          r.checked = digits.length === rows.length && r.value === digits[i];
        });
      });
    });
    rows.forEach(function (row, i) {
      row.addEventListener("change", function () {
        typed.value = "";
        typed.removeAttribute("aria-invalid");
        var next = rows[i + 1];
        if (next && !next.querySelector("input:checked")) {
          var first = next.querySelector("input");
          if (first) first.focus({ preventScroll: true });
        }
      });
    });
  }

  // One submission per form: a double tap must not record a turn twice.
  function guardDoubleSubmit(form) {
    form.addEventListener("submit", function (event) {
      if (form.dataset.sent === "1") {
        event.preventDefault();
        return;
      }
      form.dataset.sent = "1";
      form.classList.add("is-sending");
    });
  }

  // The "wie Regelwerk (…)" hints follow the chosen preset.
  function enhancePresetChoice(form) {
    var radios = form.querySelectorAll("input[name=preset]");
    if (!radios.length) return;
    function update() {
      var chosen = form.querySelector("input[name=preset]:checked");
      if (!chosen) return;
      form.querySelectorAll("[data-per-preset]").forEach(function (el) {
        var values = JSON.parse(el.getAttribute("data-per-preset"));
        var text = "wie Regelwerk (" + values[chosen.value] + ")";
        if (el.tagName === "OPTION") el.textContent = text;
        else el.setAttribute("placeholder", text);
      });
    }
    radios.forEach(function (r) { r.addEventListener("change", update); });
    update();
  }

  // "Schlüssel kopieren" where the browser allows writing to the clipboard
  function enhanceCopyButtons() {
    if (!navigator.clipboard || !window.isSecureContext) return;
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source) return;
      button.hidden = false;
      button.addEventListener("click", function () {
        navigator.clipboard.writeText(source.textContent.trim()).then(function () {
          button.textContent = "Kopiert ✓";
        });
      });
    });
  }

  function enhance(root) {
    root.querySelectorAll("form").forEach(function (form) {
      guardDoubleSubmit(form);
      enhancePresetChoice(form);
    });
    var turn = root.querySelector("#eingabe");
    if (turn) enhanceTurnForm(turn);
  }

  document.addEventListener("DOMContentLoaded", function () {
    enhanceCopyButtons();
    enhance(document);
  });
  // the game screen drawn anew by the phone's engine (offline.js)
  document.addEventListener("schocken:screen", function (event) { enhance(event.detail); });

  // pages restored from the back/forward cache must accept a submission again
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form").forEach(function (form) {
      form.dataset.sent = "";
      form.classList.remove("is-sending");
    });
  });
})();
