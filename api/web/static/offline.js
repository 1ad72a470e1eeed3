// Offline-first entry on the game screen. Without a connection (or while older entries still
// wait), a tapped turn or penalty is not posted: it goes into a queue in IndexedDB with an
// Idempotency-Key of its own and the game's version it was made for, is listed as waiting,
// and the queue is sent in order, one entry after another, when the connection returns
// (POST …/eintrag, api/web/offline.py). The server records an entry once per key; an entry
// made for an older version (another phone wrote meanwhile) is not recorded: the player
// chooses. The service worker (/sw.js) keeps the page, so a reload offline shows it again.
// localStorage "schocken.queue" = "always" sends every entry through the queue, "never" only
// when offline (api/bench); without it, a slow link decides (queueAlways).
(function () {
  "use strict";

  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(function () {});
  }

  var STORE = "entries";
  var GAME = null;
  // failed: the last send found no connection (a page restored offline may think it is online)
  var state = { entries: [], flushing: false, retry: null, failed: false, reload: false };

  function offline() { return !navigator.onLine || state.failed; }

  function openDb() {
    return new Promise(function (resolve, reject) {
      var req = indexedDB.open("schocken-offline", 1);
      req.onupgradeneeded = function () {
        var store = req.result.createObjectStore(STORE, { keyPath: "id", autoIncrement: true });
        store.createIndex("game", "game");
      };
      req.onsuccess = function () { resolve(req.result); };
      req.onerror = function () { reject(req.error); };
    });
  }

  // one IndexedDB transaction; resolves with the result of the request fn returns
  function tx(mode, fn) {
    return openDb().then(function (db) {
      return new Promise(function (resolve, reject) {
        var t = db.transaction(STORE, mode);
        var req = fn(t.objectStore(STORE));
        t.oncomplete = function () { db.close(); resolve(req ? req.result : undefined); };
        t.onerror = function () { db.close(); reject(t.error); };
      });
    });
  }

  function load() {
    return tx("readonly", function (s) { return s.index("game").getAll(GAME); })
      .then(function (rows) {
        state.entries = rows.sort(function (a, b) { return a.id - b.id; });
        return state.entries;
      });
  }

  function remove(ids) {
    return tx("readwrite", function (s) { ids.forEach(function (id) { s.delete(id); }); });
  }

  // the waiting entries renumbered from the game's version `seq` on (their order kept)
  function renumber(seq) {
    return tx("readwrite", function (s) {
      state.entries.forEach(function (e, i) { e.seq = seq + i; s.put(e); });
    });
  }

  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    var bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text) node.textContent = text;
    return node;
  }

  // ------------------------------------------------------------------ what the page shows

  function seats() {
    return Array.prototype.filter.call(document.querySelectorAll("#board .stack"), function (li) {
      return !li.classList.contains("is-out");
    }).map(function (li) { return li.getAttribute("data-player"); });
  }

  // whose turn it is after `n` more turns, as far as the phone can tell (null: a new round,
  // whose opener only the server knows)
  function predict(n) {
    var heading = document.getElementById("am-zug");
    if (!heading) return null;
    var current = heading.getAttribute("data-known") || heading.textContent.trim();
    heading.setAttribute("data-known", current);
    var order = seats();
    var inRound = document.querySelectorAll("#runde ol.turns li").length;
    for (var i = 0; i < n; i++) {
      inRound += 1;
      if (inRound >= order.length) return null;
      current = order[(order.indexOf(current) + 1) % order.length];
    }
    return current;
  }

  function turnsWaiting() {
    return state.entries.filter(function (e) { return e.kind === "turn"; }).length;
  }

  function statusText() {
    var n = state.entries.length;
    var allTurns = turnsWaiting() === n;
    var what = n === 1 ? (allTurns ? "1 Zug wartet" : "1 Eintrag wartet")
      : n + (allTurns ? " Züge warten" : " Einträge warten");
    if (offline()) return n ? "offline – " + what : "offline – Einträge bleiben auf diesem Handy, bis die Verbindung zurück ist";
    return n ? "Verbindung da – " + what + ", werden gesendet …" : "";
  }

  function render() {
    var box = document.getElementById("offline");
    var form = document.getElementById("eingabe");
    if (!box) {
      box = el("section", { id: "offline", class: "offline", role: "status", "aria-live": "polite" });
      box.appendChild(el("p", { id: "offline-status", class: "offline-status" }));
      var anchor = form || document.getElementById("board");
      if (!anchor) return;
      anchor.parentNode.insertBefore(box, anchor);
      // the waiting entries below the input, above the board: the input stays in view
      var board = document.getElementById("board");
      var waiting = el("section", { id: "offline-waiting", class: "offline card", "aria-label": "Wartende Einträge" });
      waiting.appendChild(el("ol", { id: "offline-list", class: "turns pending" }));
      board.parentNode.insertBefore(waiting, board);
    }
    var text = statusText();
    box.hidden = !text && !document.getElementById("offline-choice");
    document.getElementById("offline-status").textContent = text;
    document.getElementById("offline-waiting").hidden = !state.entries.length;
    var list = document.getElementById("offline-list");
    list.textContent = "";
    state.entries.forEach(function (e) {
      list.appendChild(el("li", { class: "pending" }, e.label + " – wartet"));
    });
    var heading = document.getElementById("am-zug");
    if (heading && state.entries.length) {
      var next = predict(turnsWaiting());
      heading.textContent = next || "wer die Runde verliert (neue Runde)";
    }
  }

  // ------------------------------------------------------------------ entering offline

  function entryOf(form, kind, submitter) {
    var fields = {};
    new FormData(form).forEach(function (v, k) { fields[k] = String(v); });
    if (submitter && submitter.name) fields[submitter.name] = submitter.value;
    if (kind === "penalty") {
      if (!(fields.reason || "").trim()) return "Bitte den Grund der Strafe eintragen.";
      return { fields: fields, label: "Strafe für " + fields.player + " (" + fields.reason.trim() + ")" };
    }
    var dieRows = form.querySelectorAll(".die-row").length;
    var dice = (fields.wurf || "").replace(/[^1-6]/g, "");
    if (!dice) {
      for (var i = 1; i <= dieRows; i++) dice += fields["d" + i] || "";
    }
    if (dice.length !== dieRows) return "Bitte alle " + dieRows + " Würfel wählen.";
    if (!fields.throws) return "Wie viele Würfe? Bitte eine der Wurf-Tasten antippen.";
    delete fields.player; // the server knows whose turn it is; the phone only guesses
    var who = predict(turnsWaiting());
    var throws = fields.throws === "blind" ? "blind" : fields.throws.replace("h", " aus der Hand");
    var label = (who ? who + ": " : "Zug: ") + dice.split("").join("-") + ", Würfe: " + throws;
    return { fields: fields, label: label };
  }

  function say(message) {
    var box = document.getElementById("offline-status");
    if (box) box.textContent = message;
  }

  function enqueue(form, kind, submitter) {
    var made = entryOf(form, kind, submitter);
    if (typeof made === "string") { render(); say(made); return; }
    var last = state.entries[state.entries.length - 1];
    var pageSeq = parseInt((form.querySelector("input[name=seq]") || {}).value || "0", 10);
    var entry = {
      game: GAME, key: newKey(), kind: kind, seq: last ? last.seq + 1 : pageSeq,
      fields: made.fields, label: made.label, at: Date.now(),
    };
    tx("readwrite", function (s) { return s.add(entry); }).then(function (id) {
      entry.id = id;
      state.entries.push(entry);
      form.reset();
      form.querySelectorAll("input[type=radio]").forEach(function (r) { r.checked = false; });
      form.dataset.sent = "";
      form.classList.remove("is-sending");
      var wurf = form.querySelector("input[name=wurf]");
      if (wurf) wurf.value = "";
      render();
      flush();
    });
  }

  // every entry through the queue: when asked (localStorage, api/bench) or on a slow link
  // (this page took over SLOW_MS from its request to its last byte: a form's POST, redirect and page
  // would wait twice as long; the queue frees the input at once and the board follows)
  var SLOW_MS = 400;
  function queueAlways() {
    var asked = window.localStorage && localStorage.getItem("schocken.queue");
    if (asked) return asked === "always"; // "never": the form's own POST (api/bench)
    var nav = performance.getEntriesByType && performance.getEntriesByType("navigation")[0];
    return !!nav && nav.responseEnd - nav.requestStart > SLOW_MS;
  }

  // whether the turn input is untouched (a new page may replace it without losing a tap)
  function blank() {
    var form = document.getElementById("eingabe");
    if (!form) return true;
    var wurf = form.querySelector("input[name=wurf]");
    return !form.querySelector("input[type=radio]:checked") && !(wurf && wurf.value);
  }

  function onSubmit(event) {
    var form = event.target;
    var action = form.getAttribute("action") || "";
    var kind = form.id === "eingabe" ? "turn" : /\/strafe$/.test(action) ? "penalty"
      : /\/rueckgaengig$/.test(action) ? "undo" : null;
    if (!kind || (!queueAlways() && !offline() && !state.entries.length && !state.flushing)) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (kind === "undo") {
      say("Rückgängig geht erst wieder, wenn alle wartenden Einträge gesendet sind.");
      return;
    }
    enqueue(form, kind, event.submitter);
  }

  // ------------------------------------------------------------------ sending

  function choice(message, buttons) {
    var old = document.getElementById("offline-choice");
    if (old) old.remove();
    var box = el("div", { id: "offline-choice", class: "card offline-choice", role: "alert" });
    box.appendChild(el("p", {}, message));
    var waiting = el("p", {}, "Wartend auf diesem Handy: " +
      state.entries.map(function (e) { return e.label; }).join("; ") + ".");
    box.appendChild(waiting);
    buttons.forEach(function (b) {
      var button = el("button", { type: "button", class: "wide" + (b.primary ? " primary" : ""), id: b.id }, b.text);
      button.addEventListener("click", function () { box.remove(); b.act(); });
      box.appendChild(button);
    });
    render();
    document.getElementById("offline").appendChild(box);
  }

  function dropAll() {
    return remove(state.entries.map(function (e) { return e.id; })).then(function () {
      location.reload();
    });
  }

  function conflict(data) {
    choice(data.message + " Was soll mit den wartenden Einträgen geschehen?", [
      { id: "offline-drop", text: "Verwerfen und neu eingeben", primary: true, act: dropAll },
      { id: "offline-force", text: "Trotzdem nach dem neuen Stand eintragen", act: function () {
        renumber(data.seq).then(flush);
      } },
    ]);
  }

  function rejected(entry, message) {
    choice("„" + entry.label + "“ wurde nicht angenommen: " + message, [
      { id: "offline-drop-one", text: "Diesen Eintrag verwerfen", primary: true, act: function () {
        remove([entry.id]).then(load).then(function () { return renumber(entry.seq); }).then(flush);
      } },
      { id: "offline-drop", text: "Alle wartenden verwerfen und neu eingeben", act: dropAll },
    ]);
  }

  function later() {
    clearTimeout(state.retry);
    state.retry = setTimeout(flush, 3000);
  }

  function send(entry) {
    var body = new URLSearchParams(entry.fields);
    body.set("seq", String(entry.seq));
    body.set("kind", entry.kind);
    return fetch(GAME + "/eintrag", {
      method: "POST",
      headers: { "Idempotency-Key": entry.key },
      body: body,
      credentials: "same-origin",
      redirect: "manual",
    });
  }

  function step(sent) {
    var entry = state.entries[0];
    if (!entry) {
      state.flushing = false;
      if (sent || state.reload) {
        state.reload = !blank(); // the server's board, unless a next turn is being tapped
        if (!state.reload) location.reload();
      }
      return undefined;
    }
    return send(entry).then(function (response) {
      return response.json().catch(function () { return null; }).then(function (data) {
        state.failed = false;
        if (response.ok && data) {
          return remove([entry.id]).then(load).then(function () { render(); return step(sent + 1); });
        }
        state.flushing = false;
        if (response.status === 409 && data && data.conflict) return conflict(data);
        if (data && data.rejected) return rejected(entry, data.message);
        if (response.status >= 500 || response.status === 429) return later();
        return choice("Der Server nimmt die Einträge nicht an (abgemeldet? Bitte neu laden und anmelden).", [
          { id: "offline-reload", text: "Neu laden", primary: true, act: function () { location.reload(); } },
        ]);
      });
    }, function () {
      state.flushing = false; // still no connection
      state.failed = true;
      render();
      later();
    });
  }

  function flush() {
    if (state.flushing || !navigator.onLine || document.getElementById("offline-choice")) return;
    if (!state.entries.length) { render(); return; }
    state.flushing = true;
    render();
    step(0);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var match = location.pathname.match(/^\/s\/[^/]+\/spiel\/\d+/);
    if (!match || !window.indexedDB) return;
    GAME = match[0];
    document.addEventListener("submit", onSubmit, true);
    window.addEventListener("online", function () { state.failed = false; flush(); });
    window.addEventListener("offline", render);
    load().then(function () { render(); flush(); });
  });
})();
