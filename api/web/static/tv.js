// The pub TV: follows the Stammtisch's event stream and re-reads the board on every event.
// The page works without this file (it shows the board as it was when loaded).
//
// * every event: its German sentence goes to the ticker at once, then the board is re-read
//   (/tv/<slug>/tafel?spiel=<id>, the server-rendered fragment) and swapped in;
// * which game: <body data-pinned="<id>"> (the page was opened as /tv/<slug>?spiel=<id>): that
//   game only, whatever else is played. Otherwise the game with the latest entry, as the
//   server chooses it: an entry (a turn, a penalty, an undo) of another game: follow it; a
//   game_started: follow it only while no game is running here (a second table's start is no
//   entry yet; an imported game is never followed);
// * the stream drops (server restart, Wi-Fi): EventSource reconnects by itself (sending
//   Last-Event-ID); if it gives up, a new one resumes after the last position seen; every
//   (re)connect re-reads the board; a board read every `data-refresh` seconds catches what a
//   silently dead connection misses, and reconnects when the board is ahead of the stream;
// * the board names the version of this script and its CSS: a new one reloads the page;
// * <body data-stream="open|lost">: the state of the stream (for a look from outside).
(function () {
  "use strict";

  var body = document.body;
  var EVENTS = body.getAttribute("data-events");
  var BOARD = body.getAttribute("data-board");
  var REFRESH = (parseInt(body.getAttribute("data-refresh"), 10) || 60) * 1000;
  var PINNED = body.getAttribute("data-pinned") || ""; // the one game shown, or "" (follow)
  var KINDS = [
    "game_started", "turn_recorded", "throw_recorded", "round_lost", "round_repeated",
    "player_out", "penalty", "half_lost", "finale_started", "blattschuss", "game_lost",
    "undone", "message"
  ];
  var TURN = { turn_recorded: true, throw_recorded: true };
  var BIG = {
    half_lost: true, finale_started: true, blattschuss: true, game_lost: true, game_started: true
  };

  var source = null;
  var position = shown().position; // the last stream position seen (resume after it)
  var wanted = PINNED || (shown().state === "running" ? shown().game : ""); // the game followed
  var ticker = null; // the sentences of the newest stored entry: {position, game, items}
  var readTimer = null;
  var reads = 0; // board reads started
  var applied = 0; // the newest board read swapped in
  var retryTimer = null;
  var retryDelay = 3000;
  var offlineTimer = null;
  var behind = 0; // board reads in a row that were ahead of the stream

  function screen() {
    return document.getElementById("screen");
  }

  function shown() {
    var s = screen();
    return {
      state: s.getAttribute("data-state"),
      game: s.getAttribute("data-game") || "",
      position: parseInt(s.getAttribute("data-position"), 10) || 0,
      version: s.getAttribute("data-version")
    };
  }

  // ------------------------------------------------------------------ connection line
  function offline(on) {
    var line = document.getElementById("verbindung");
    if (!on) {
      clearTimeout(offlineTimer);
      offlineTimer = null;
      line.hidden = true;
      return;
    }
    // a normal reconnect takes a few seconds: say nothing unless it lasts (the first
    // failure starts the clock; further ones do not reset it)
    if (offlineTimer === null && line.hidden) {
      offlineTimer = setTimeout(function () { line.hidden = false; }, 5000);
    }
  }

  // ------------------------------------------------------------------ the board
  function read() {
    clearTimeout(readTimer);
    readTimer = setTimeout(fetchBoard, 150); // one read for the events of one entry
  }

  function fetchBoard() {
    var no = ++reads;
    var url = BOARD + (wanted ? "?spiel=" + encodeURIComponent(wanted) : "");
    fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (r.status === 403 || r.status === 404) {
          window.location.reload(); // logged out, or gone: the page says what to do
          return null;
        }
        if (!r.ok) throw new Error("board " + r.status);
        return r.text();
      })
      .then(function (html) {
        if (html === null || no < applied) return;
        applied = no;
        swap(html);
        // the statistics are being refreshed (a request never computes them): ask again soon
        if (html.indexOf("data-stats-stale") >= 0) readTimer = setTimeout(fetchBoard, 3000);
      })
      .catch(function () {
        offline(true);
      });
  }

  function swap(html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html;
    var next = tpl.content.getElementById("screen");
    if (!next) return;
    if (next.getAttribute("data-version") !== shown().version) {
      reloadOnce(); // a new version of the TV page
      return;
    }
    screen().replaceWith(next);
    var now = shown();
    wanted = PINNED || (now.state === "running" ? now.game : "");
    if (source && source.readyState === 1) offline(false);
    behind = now.position > position ? behind + 1 : 0;
    if (behind >= 2) connect(); // the stream missed what the board shows: start it anew
    showTicker(false);
  }

  // a new version: reload, but not again within a minute (servers of two versions)
  function reloadOnce() {
    var last = 0;
    try {
      last = parseInt(window.sessionStorage.getItem("tv-reloaded") || "0", 10);
      window.sessionStorage.setItem("tv-reloaded", String(Date.now()));
    } catch (err) { /* no storage: reload all the same */ }
    if (Date.now() - last > 60000) window.location.reload();
  }

  // the screen stays on while the page is shown (where the browser allows it)
  function keepAwake() {
    if (!navigator.wakeLock || document.visibilityState !== "visible") return;
    navigator.wakeLock.request("screen").catch(function () { /* not allowed: never mind */ });
  }

  // ------------------------------------------------------------------ the ticker
  function remember(data, lastId) {
    if (!ticker || ticker.position !== data.position) {
      ticker = { position: data.position, game: String(data.game_id), items: [] };
    }
    ticker.items.push({ kind: data.kind, message: data.message });
    if (lastId) position = Math.max(position, lastId);
  }

  // like the server's headline(): the entry's outcome if it had one, else its turn
  function headline() {
    var outcome = ticker.items.filter(function (e) { return !TURN[e.kind]; });
    if (!outcome.length) outcome = ticker.items;
    var big = outcome.filter(function (e) { return BIG[e.kind]; });
    var kind = (big.length ? big[big.length - 1] : outcome[outcome.length - 1]).kind;
    return { kind: kind, message: outcome.map(function (e) { return e.message; }).join(" ") };
  }

  function showTicker(fresh) {
    var now = shown();
    var line = document.getElementById("ticker");
    if (!ticker || !line) return;
    // after a board read: only while the board is not newer than the sentence
    if (!fresh && (now.state !== "running" || now.game !== ticker.game ||
        now.position > ticker.position)) return;
    var h = headline();
    line.querySelector(".msg").textContent = h.message;
    line.className = "ticker kind-" + h.kind;
    if (fresh) {
      void line.offsetWidth; // restart the flash
      line.classList.add("fresh");
    }
  }

  // ------------------------------------------------------------------ the stream
  function onEvent(e) {
    var data;
    try {
      data = JSON.parse(e.data);
    } catch (err) {
      return;
    }
    var game = String(data.game_id);
    var now = shown();
    var lastId = parseInt(e.lastEventId, 10) || 0;
    if (data.kind === "game_started" && data.data && data.data.source === "import") {
      // an old game entered afterwards: the year's numbers may change, nothing else
      position = Math.max(position, lastId);
      if (now.state !== "running") read();
      return;
    }
    if (game !== now.game && game !== wanted) {
      if (PINNED || (data.kind === "game_started" && now.state === "running")) {
        // not ours (pinned), or a second table's start: ours goes on; resume after it
        position = Math.max(position, lastId);
        return;
      }
      wanted = game; // the latest entry, or a start while nothing runs here: follow it
    }
    remember(data, lastId);
    showTicker(true);
    read();
  }

  function connect() {
    clearTimeout(retryTimer);
    if (source) source.close();
    behind = 0;
    source = new EventSource(EVENTS + "?last_event_id=" + position);
    KINDS.forEach(function (kind) { source.addEventListener(kind, onEvent); });
    source.onopen = function () {
      body.setAttribute("data-stream", "open");
      retryDelay = 3000;
      offline(false);
      read(); // what happened while we were away
    };
    source.onerror = function () {
      body.setAttribute("data-stream", "lost");
      offline(true);
      if (source.readyState === 2) { // closed for good (an HTTP error): start anew later
        retryTimer = setTimeout(connect, retryDelay);
        retryDelay = Math.min(retryDelay * 2, 30000);
      }
    };
  }

  window.addEventListener("online", function () {
    connect();
  });
  document.addEventListener("visibilitychange", keepAwake);
  keepAwake();
  setInterval(read, REFRESH);
  connect();
})();
