// Entry on the game screen with the phone's own engine (engine.js: api/rules under Pyodide,
// driven through api/table/browser.py). Once the engine is loaded, every turn, penalty or throw
// of the card "Wurf für Wurf" (with its decision) is checked on the phone first, exactly as the
// server will: an illegal entry is refused at once with the engine's German message and nothing
// is kept. An accepted entry is kept in
// IndexedDB (with its player, an Idempotency-Key and the game's version it was made for), the
// screen is drawn anew by the engine (the server's own partial) with the entry's sentences and
// banners (after a throw: the open turn, its dice set aside and throws used, or the turn it
// finished), and the queue is sent in order to POST …/eintrag (api/web/offline.py), online at
// once, offline when the connection returns. The server records an entry once per key and only
// on the version it was made for; when another phone wrote meanwhile, the engine applies each
// waiting entry again *for its own player* on the server's new state, and the player decides
// about every entry that no longer fits (drop it, or take its dice back into the input; a throw
// is dropped with the later throws of its turn).
// Before the engine is loaded (the first seconds of a first visit), the form posts as a plain
// form; offline, nothing is taken that the engine has not checked.
(function () {
  "use strict";

  // the service worker keeps the pages and the engine for a cellar without signal (sw.js)
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(function () {});
  }

  var STORE = "entries";
  var KEY = /^[\x21-\x7e]{1,255}$/;
  var GAME = null;
  var state = {
    rows: [], // the waiting entries (IndexedDB rows), in order
    engine: false, // the engine has loaded this game
    flushing: false,
    retry: null,
    failed: false, // the last send found no connection
    said: [], // the sentences of the entries sent since the last connection loss
    offlineMade: false, // an entry of the current queue was made without a connection
    view: null, // the engine's last answer
  };

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

  var KINDS = ["turn", "throw", "penalty"];

  // the player an entry is for (a penalty's is inside it)
  function playerOf(kind, body) {
    return kind === "penalty" ? body.penalty && body.penalty.player : body.player;
  }

  // a row this page can send: made by this script for this game, its player named
  function sound(row) {
    var body = row && row.body;
    var player = body && playerOf(row.kind, body);
    return !!row && row.game === GAME && typeof row.key === "string" && KEY.test(row.key) &&
      KINDS.indexOf(row.kind) >= 0 && Number.isInteger(row.seq) && row.seq >= 0 &&
      typeof row.player === "string" && row.player !== "" && player === row.player &&
      !!row.fields && typeof row.fields === "object" && row.fields.player === row.player;
  }

  function load() {
    return tx("readonly", function (s) { return s.index("game").getAll(GAME); })
      .then(function (rows) {
        rows.sort(function (a, b) { return a.id - b.id; });
        var bad = rows.filter(function (r) { return !sound(r); });
        state.rows = rows.filter(sound);
        if (!bad.length) return state.rows;
        return remove(bad.map(function (r) { return r.id; })).then(function () {
          notice(bad.length === 1 ? "Ein beschädigter Eintrag auf diesem Handy wurde verworfen (nicht gesendet)."
            : bad.length + " beschädigte Einträge auf diesem Handy wurden verworfen (nicht gesendet).");
          return state.rows;
        });
      });
  }

  function remove(ids) {
    return tx("readwrite", function (s) { ids.forEach(function (id) { s.delete(id); }); });
  }

  function save(rows) {
    return tx("readwrite", function (s) { rows.forEach(function (r) { s.put(r); }); });
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

  function engine(name, arg) { return window.SchockenEngine.call(name, arg); }

  function waitingOf(rows) {
    return rows.map(function (r) { return { kind: r.kind, body: r.body, label: r.label }; });
  }

  // ------------------------------------------------------------------ what the page shows

  function statusText() {
    var n = state.rows.length;
    var turns = state.rows.filter(function (r) { return r.kind === "turn"; }).length;
    var what = n === 1 ? (turns ? "1 Zug wartet" : "1 Eintrag wartet")
      : n + (turns === n ? " Züge warten" : " Einträge warten");
    if (offline()) return n ? "Offline – " + what : "Offline – Einträge bleiben auf diesem Handy, bis die Verbindung zurück ist.";
    if (n && document.getElementById("offline-choice")) return "Verbindung da – " + what + ": bitte unten entscheiden.";
    return n ? "Verbindung da – " + what + ", werden gesendet …" : "";
  }

  function box() {
    var found = document.getElementById("offline");
    if (found) return found;
    var screen = document.getElementById("screen");
    if (!screen) return null;
    found = el("section", { id: "offline", class: "offline", role: "status", "aria-live": "polite" });
    found.appendChild(el("p", { id: "offline-status", class: "offline-status" }));
    screen.parentNode.insertBefore(found, screen);
    return found;
  }

  function notice(message) {
    var b = box();
    if (!b) return;
    var p = el("p", { class: "offline-notice" }, message);
    b.appendChild(p);
    b.hidden = false;
  }

  // the waiting entries, each with its player, below the turn input
  function renderWaiting() {
    var old = document.getElementById("offline-waiting");
    if (old) old.remove();
    var waiting = (state.view && state.view.waiting) || [];
    if (!state.rows.length) return;
    var section = el("section", { id: "offline-waiting", class: "offline card", "aria-label": "Wartende Einträge" });
    var list = el("ol", { id: "offline-list", class: "turns pending" });
    state.rows.forEach(function (r, i) {
      var w = waiting[i] || {};
      var text = (w.label || r.label) + (w.refused ? " – passt nicht mehr: " + w.refused : " – wartet");
      list.appendChild(el("li", { class: w.refused ? "pending refused" : "pending" }, text));
    });
    section.appendChild(list);
    var anchor = document.getElementById("undo") || document.getElementById("eingabe") ||
      document.getElementById("board");
    if (anchor) anchor.parentNode.insertBefore(section, anchor.nextSibling);
  }

  // "Chancen" follow the dice of the throw card as they are tapped: the phone's engine (loaded
  // for it the first time) computes them; without it the card's "Chancen zeigen" asks the server
  function showChancen(answer) {
    var box = document.getElementById("chancen");
    if (!box) return;
    box.querySelectorAll(".chancen-lines, .chancen-note").forEach(function (n) { n.remove(); });
    var heading = box.querySelector("h3");
    if (answer.lines && answer.lines.length) {
      var list = el("ol", { class: "chancen-lines" });
      answer.lines.forEach(function (line) { list.appendChild(el("li", {}, line)); });
      heading.insertAdjacentElement("afterend", list);
    } else if (answer.note) {
      heading.insertAdjacentElement("afterend", el("p", { class: "muted chancen-note" }, answer.note));
    }
  }
  function onThrowDice(event) {
    var card = document.getElementById("wurf-fuer-wurf");
    if (!card || !card.contains(event.target) || !/^w\d$/.test(event.target.name || "")) return;
    if (!document.getElementById("chancen")) return; // the Stammtisch does not show them
    var rows = card.querySelectorAll(".throw-row");
    var dice = [];
    rows.forEach(function (row, i) {
      var chosen = row.querySelector("input[name=w" + (i + 1) + "]:checked");
      if (chosen) dice.push(Number(chosen.value));
    });
    if (dice.length !== rows.length) return;
    needEngine().then(function () {
      return engine("chancen", { dice: dice });
    }).then(showChancen, function () {}); // no engine: "Chancen zeigen" asks the server
  }

  function render() {
    var b = box();
    if (!b) return;
    var text = statusText();
    document.getElementById("offline-status").textContent = text;
    b.hidden = !text && !document.getElementById("offline-choice") && !b.querySelector(".offline-notice");
    renderWaiting();
  }

  // the engine's screen in place of the old one: the open <details> stay open, app.js
  // enhances the new forms, the turn input keeps the focus it had
  function show(view) {
    state.view = view;
    var screen = document.getElementById("screen");
    if (!screen || !view || !view.html) { render(); return; }
    var open = Array.prototype.map.call(screen.querySelectorAll("details[open]"), function (d) {
      return d.id || d.className;
    });
    var focused = document.activeElement && screen.contains(document.activeElement);
    var template = document.createElement("template");
    template.innerHTML = view.html.trim();
    var fresh = template.content.firstElementChild;
    fresh.querySelectorAll("details").forEach(function (d) {
      if (open.indexOf(d.id || d.className) >= 0) d.open = true;
    });
    screen.replaceWith(fresh);
    document.dispatchEvent(new CustomEvent("schocken:screen", { detail: fresh }));
    // a decided game takes no invitations and cannot be abandoned any more
    ["einladen", "abbrechen"].forEach(function (id) {
      var section = document.getElementById(id);
      if (section) section.hidden = !!view.finished;
    });
    render();
    if (focused) {
      var first = fresh.querySelector("#eingabe input[type=radio]") || fresh.querySelector("#wurf");
      if (first) first.focus({ preventScroll: true });
    }
  }

  function formError(form, field, message) {
    form.querySelectorAll(".error.offline-error").forEach(function (p) { p.remove(); });
    var p = el("p", { class: "error offline-error", role: "alert", id: "err-" + field }, message);
    var target = field === "dice" ? form.querySelector("fieldset.dice")
      : field === "reason" ? form.querySelector("#pen-reason")
      : field === "throw" ? form.querySelector("#offener-zug") : form.querySelector("fieldset.throws") ||
        form.querySelector("button[type=submit]");
    (target || form.lastElementChild).insertAdjacentElement("afterend", p);
    form.dataset.sent = "";
    form.classList.remove("is-sending");
  }

  // ------------------------------------------------------------------ entering

  function fieldsOf(form, submitter) {
    var fields = {};
    new FormData(form).forEach(function (v, k) { fields[k] = String(v); });
    if (submitter && submitter.name) fields[submitter.name] = submitter.value;
    delete fields.csrf_token;
    delete fields.seq;
    return fields;
  }

  function enter(form, kind, fields) {
    return engine("enter", { kind: kind, fields: fields }).then(function (answer) {
      if (!answer.ok) { formError(form, answer.field, answer.message); return; }
      var body = answer.entry.body;
      var player = playerOf(kind, body);
      fields.player = player;
      var row = {
        game: GAME, key: newKey(), kind: kind, seq: answer.entry.seq, player: player,
        fields: fields, body: body, label: answer.entry.label, at: Date.now(), offline: offline(),
      };
      return tx("readwrite", function (s) { return s.add(row); }).then(function (id) {
        row.id = id;
        state.rows.push(row);
        show(answer);
        flush();
      });
    }, function (error) {
      formError(form, "form", "Die Spiel-Engine hat einen Fehler gemeldet: " + error.message);
    });
  }

  // the rows of the waiting entries the engine forgot (``dropped``: a throw with the later
  // throws of its turn) forgotten here too
  function forget(view) {
    var gone = (view.dropped || []).map(function (i) { return state.rows[i]; });
    return remove(gone.map(function (r) { return r.id; })).then(function () {
      state.rows = state.rows.filter(function (r) { return gone.indexOf(r) < 0; });
      return gone;
    });
  }

  // undo before anything else was sent: the last waiting entry is taken back on the phone
  function undoWaiting() {
    var last = state.rows.length - 1;
    if (state.flushing && last === 0) {
      say("Dieser Eintrag wird gerade gesendet; gleich noch einmal versuchen.");
      return;
    }
    var row = state.rows[last];
    engine("drop", { index: last }).then(function (view) {
      return forget(view).then(function () {
        show(view);
        say("Zurückgenommen (war noch nicht gesendet): " + row.label + ".");
      });
    });
  }

  function say(message) {
    render();
    var status = document.getElementById("offline-status");
    if (status) { status.textContent = message; box().hidden = false; }
  }

  // every entry through the phone's engine and the queue: offline, with entries waiting, or on a
  // slow link (this page took over SLOW_MS from its request to its last byte: a form's POST,
  // redirect and page would wait twice as long). Otherwise the plain form (the server answers
  // with the next page), as before the engine. localStorage "schocken.queue" = "always" or
  // "never" decides instead (api/bench).
  var SLOW_MS = 400;
  function queueAlways() {
    var asked = window.localStorage && localStorage.getItem("schocken.queue");
    if (asked) return asked === "always";
    var nav = performance.getEntriesByType && performance.getEntriesByType("navigation")[0];
    return !!nav && nav.responseEnd - nav.requestStart > SLOW_MS;
  }

  function throughEngine() {
    return offline() || state.rows.length > 0 || state.flushing || queueAlways();
  }

  function onSubmit(event) {
    var form = event.target;
    var action = form.getAttribute("action") || "";
    var kind = form.id === "eingabe" ? "turn" : /\/strafe$/.test(action) ? "penalty"
      : /\/wurf$/.test(action) ? "throw" : /\/rueckgaengig$/.test(action) ? "undo" : null;
    if (!kind || !throughEngine()) return; // online: the plain form, the server answers
    event.preventDefault();
    event.stopImmediatePropagation();
    if (kind === "throw" && event.submitter && event.submitter.value === "odds") {
      // "Chancen zeigen" writes nothing: the phone's engine draws what the server would
      needEngine().then(function () {
        return engine("show_odds", { fields: fieldsOf(form, event.submitter) })
          .then(show, function (error) { say(error.message); });
      }, function () {}); // no engine: needEngine said so
      return;
    }
    if (kind === "undo") {
      if (state.rows.length && state.engine) undoWaiting();
      else say("Rückgängig geht ohne Verbindung nur für Einträge, die noch auf diesem Handy warten.");
      return;
    }
    if (form.dataset.busy === "1") return; // a double tap takes one entry
    var fields = fieldsOf(form, event.submitter);
    if (!state.engine) {
      // checked as soon as the engine is there; nothing waits unchecked
      state.pending = { form: form, kind: kind, fields: fields };
      say("Die Spielregeln werden auf diesem Handy geladen – der Eintrag wird gleich geprüft …");
      needEngine();
      return;
    }
    form.dataset.busy = "1";
    var done = function () { form.dataset.busy = ""; };
    enter(form, kind, fields).then(done, done);
  }

  // ------------------------------------------------------------------ choices

  function choice(message, lines, buttons) {
    var old = document.getElementById("offline-choice");
    if (old) old.remove();
    var card = el("div", { id: "offline-choice", class: "card offline-choice", role: "alert" });
    card.appendChild(el("p", {}, message));
    if (lines.length) {
      var list = el("ul", { class: "offline-lines" });
      lines.forEach(function (line) { list.appendChild(el("li", {}, line)); });
      card.appendChild(list);
    }
    buttons.forEach(function (b) {
      var button = el("button", { type: "button", class: "wide" + (b.primary ? " primary" : ""), id: b.id }, b.text);
      button.addEventListener("click", function () { card.remove(); render(); b.act(); });
      card.appendChild(button);
    });
    var b = box();
    b.appendChild(card);
    render();
    card.scrollIntoView({ block: "nearest" });
  }

  function dropAll() {
    return engine("drop_all", {}).then(function (view) {
      return remove(state.rows.map(function (r) { return r.id; })).then(function () {
        state.rows = [];
        show(view);
        say("Die wartenden Einträge dieses Handys wurden verworfen.");
      });
    });
  }

  function lineOf(w) {
    return w.refused ? w.label + " – passt nicht mehr: " + w.refused : w.label + " – passt";
  }

  // another phone wrote meanwhile: the screen shows the server's state with this phone's
  // entries applied again, each for its own player; the player chooses
  function conflict(data) {
    engine("rebase", { state: data.state }).then(function (view) {
      show(view);
      choice(data.message + " So passen die wartenden Einträge dieses Handys zum neuen Stand:",
        view.waiting.map(lineOf), [
          { id: "offline-drop", text: "Verwerfen und neu eingeben", primary: true, act: dropAll },
          { id: "offline-force", text: "Trotzdem nach dem neuen Stand eintragen", act: function () { settle(view); } },
        ]);
    });
  }

  // a game decided (or abandoned) on another phone takes nothing more
  function closed(data) {
    engine("rebase", { state: data.state }).then(function (view) {
      show(view);
      choice(data.message, state.rows.map(function (r) { return r.label; }), [
        { id: "offline-drop", text: "Wartende Einträge verwerfen", primary: true, act: dropAll },
      ]);
    });
  }

  // every waiting entry either fits the new state (it keeps its player, gets the new
  // version) or is dropped or taken back into the input by the player; then the queue goes on
  function settle(view) {
    var index = view.waiting.findIndex(function (w) { return w.refused; });
    if (index < 0) {
      state.rows.forEach(function (r, i) { r.seq = view.waiting[i].seq; });
      save(state.rows).then(flush);
      return;
    }
    var row = state.rows[index];
    var w = view.waiting[index];
    var drop = function (edit) {
      engine("drop", { index: index }).then(function (next) {
        return forget(next).then(function () {
          show(next);
          if (edit) refill(row);
          settle(next);
        });
      });
    };
    var what = row.kind === "throw" ? "Diesen Wurf verwerfen (mit den späteren Würfen seines Zugs)"
      : "Diesen Eintrag verwerfen";
    var buttons = [{ id: "offline-drop-one", text: what, primary: true, act: function () { drop(false); } }];
    if (row.kind !== "throw") { // a throw is not taken back into an input: its turn has moved on
      buttons.push({ id: "offline-edit-one", text: "Würfel in die Eingabe übernehmen", act: function () { drop(true); } });
    }
    choice("„" + w.label + "“ passt nicht zum neuen Stand: " + w.refused, [], buttons);
  }

  // the dice of a dropped turn back in the input, to be entered for whoever is at turn now
  function refill(row) {
    var form = document.getElementById("eingabe");
    if (!form || row.kind !== "turn") return;
    var dice = row.body.dice || [];
    var typed = form.querySelector("input[name=wurf]");
    if (typed) typed.value = dice.join("");
    dice.forEach(function (pip, i) {
      var radio = form.querySelector("input[name=d" + (i + 1) + "][value='" + pip + "']");
      if (radio) radio.checked = true;
    });
    say("Die Würfel " + dice.join("-") + " sind in der Eingabe: für wen waren sie? Bitte prüfen und den Wurf-Knopf tippen.");
  }

  function rejected(row, message) {
    choice("„" + row.label + "“ wurde nicht angenommen: " + message, [], [
      { id: "offline-drop-one", text: "Diesen Eintrag verwerfen", primary: true, act: function () {
        engine("drop", { index: 0 }).then(function (view) {
          return forget(view).then(function () { show(view); flush(); });
        });
      } },
      { id: "offline-drop", text: "Alle wartenden verwerfen", act: dropAll },
    ]);
  }

  // ------------------------------------------------------------------ sending

  function later() {
    clearTimeout(state.retry);
    state.retry = setTimeout(flush, 3000);
  }

  function send(row) {
    var body = new URLSearchParams(row.fields);
    var token = document.querySelector("input[name=csrf_token]");
    body.set("csrf_token", token ? token.value : "");
    body.set("seq", String(row.seq));
    body.set("kind", row.kind);
    body.set("player", row.player);
    return fetch(GAME + "/eintrag", {
      method: "POST",
      headers: { "Idempotency-Key": row.key },
      body: body,
      credentials: "same-origin",
      redirect: "manual",
    });
  }

  // the sentences of a flush, in order, after it: for entries made offline (online ones were
  // announced when they were tapped)
  function flushed() {
    if (!state.said.length || !state.offlineMade) { state.said = []; return; }
    var lines = [["sync", "Nachgetragen, jetzt auf dem Server:"]].concat(state.said);
    state.said = [];
    state.offlineMade = false;
    engine("render", { announcements: lines }).then(show);
  }

  function step() {
    var row = state.rows[0];
    if (!row) { state.flushing = false; render(); flushed(); return undefined; }
    return send(row).then(function (response) {
      return response.json().catch(function () { return null; }).then(function (data) {
        state.failed = false;
        if (response.ok && data) {
          state.said = state.said.concat(data.messages || []);
          if (row.offline) state.offlineMade = true;
          return engine("confirm", { seq: data.seq }).then(function () {
            return remove([row.id]);
          }).then(function () {
            state.rows.shift();
            render();
            return step();
          });
        }
        state.flushing = false;
        render();
        if (response.status === 409 && data && data.closed) return closed(data);
        if (response.status === 409 && data && data.conflict) return conflict(data);
        if (data && data.rejected) return rejected(row, data.message);
        if (response.status >= 500 || response.status === 429) return later();
        return choice("Der Server nimmt die Einträge nicht an (abgemeldet? Bitte neu laden und anmelden). Sie bleiben so lange auf diesem Handy.", [], [
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
    if (state.flushing || !state.engine || !navigator.onLine || document.getElementById("offline-choice")) return;
    if (!state.rows.length) { render(); return; }
    state.flushing = true;
    render();
    step();
  }

  // ------------------------------------------------------------------ start

  function pageState() {
    var script = document.getElementById("spielstand");
    try { return script ? JSON.parse(script.textContent) : null; } catch (e) { return null; }
  }

  var PAGE = null;
  var booting = null;

  // the engine started and this game loaded into it (once); then the tap that waited for it.
  // Rejects when the engine cannot start (engine.js: its files not on this phone offline, or
  // no answer in time): the page says so, and the next need tries again
  function needEngine() {
    if (booting) return booting;
    var starting = window.SchockenEngine.start();
    document.documentElement.setAttribute("data-engine", "loading"); // then "ready" or "failed"
    booting = Promise.all([state.loaded, starting]).then(function () {
      return engine("load", { state: PAGE, waiting: waitingOf(state.rows) });
    }).then(function (view) {
      state.engine = true;
      document.documentElement.setAttribute("data-engine", "ready");
      if (state.rows.length) show(view); else state.view = view;
      var pending = state.pending;
      state.pending = null;
      if (pending) {
        var form = document.getElementById(pending.form.id) || pending.form;
        enter(form, pending.kind, pending.fields);
      }
      flush();
    });
    booting.catch(function (error) {
      // nothing waits unchecked: the tap that waited for the engine is dropped
      document.documentElement.setAttribute("data-engine", "failed");
      state.pending = null;
      booting = null;
      say(error.message + " Offline nimmt dieses Handy ohne die Spiel-Engine nichts an.");
    });
    return booting;
  }

  document.addEventListener("DOMContentLoaded", function () {
    PAGE = pageState();
    if (!PAGE || !window.indexedDB || !window.SchockenEngine) return;
    GAME = PAGE.game;
    document.addEventListener("submit", onSubmit, true);
    document.addEventListener("change", onThrowDice);
    window.addEventListener("online", function () { state.failed = false; render(); flush(); });
    window.addEventListener("offline", function () { render(); needEngine(); });
    // a first visit (e.g. through an invite link) is not yet in the service worker's hands:
    // the engine is started at once (in the background, after the first paint), so that it is
    // there when the connection drops before the next page load
    var firstVisit = "serviceWorker" in navigator && !navigator.serviceWorker.controller;
    state.loaded = load().catch(function () { return []; });
    state.loaded.then(function () {
      render();
      if (firstVisit || throughEngine()) needEngine();
    });
  });
})();
