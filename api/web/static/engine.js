// The rules engine in the phone's browser (api/web/engine.py): window.SchockenEngine.
//
//   SchockenEngine.start()           loads the engine in a Web Worker after the page's first
//                                    paint (idempotent; returns `ready`); after a failed start,
//                                    the next start() tries again with a new worker
//   SchockenEngine.ready             a Promise: resolves with the timings once the engine is
//                                    loaded, rejects with an Error in German if it cannot load:
//                                    a file of the engine that cannot be fetched (offline and
//                                    not kept by the service worker, or the server unreachable)
//                                    rejects at once, a start without an answer after
//                                    SchockenEngine.deadline ms (default DEADLINE_MS) too
//   SchockenEngine.call(name, arg)   a Promise of api.table.browser.<name>(arg) (arg and result
//                                    are JSON objects); rejects with the Python error's message
//   SchockenEngine.timings           ms: runtime (Pyodide loaded), fetch (the bundle arrived,
//                                    while the runtime starts), bundle (unpacked), import
//                                    (api.table.browser imported), total (inside the worker),
//                                    ready (from the worker's creation to ready, in the page)
//
// The URLs come from <meta name="schocken-engine" data-worker data-pyodide data-bundle
// data-files data-start> (templates/_engine.html); data-start="auto" starts the engine by
// itself (the benchmark); otherwise offline.js starts it when the phone needs it (offline, a
// slow link, entries waiting). The service worker (sw.js) is asked to keep the engine's files and, when it did not
// serve this page itself (the first visit, e.g. through an invite link), the page: so both
// work offline at once.
(function () {
  "use strict";

  var NOT_HERE = "Die Spiel-Engine ist auf dieser Seite nicht verfügbar.";
  var NO_WASM = "Dieser Browser kann die Spiel-Engine nicht laden (kein WebAssembly).";
  var FAILED = "Die Spiel-Engine konnte nicht geladen werden";
  var NOT_KEPT = "Die Spiel-Engine ist auf diesem Telefon noch nicht gespeichert. Ohne Netz " +
    "bitte die Würfe aufschreiben und später eintragen.";
  var SLOW = "Die Spiel-Engine lädt zu lange. Bitte die Seite neu laden; ohne Netz bitte die " +
    "Würfe aufschreiben und später eintragen.";
  // a slow phone on a slow mobile network loads the engine's 6 MB and compiles them in about
  // a minute; a start that has not answered after this has stalled
  var DEADLINE_MS = 150000;

  var meta = document.querySelector('meta[name="schocken-engine"]');
  var settle = {};
  var ready = null;
  var timings = {};
  var worker = null;
  var started = false;
  var loaded = false;
  var begun = 0;
  var deadline = null;
  var nextId = 1;
  var pending = {};

  function fresh() {
    ready = new Promise(function (resolve, reject) {
      settle.resolve = resolve;
      settle.reject = reject;
    });
    ready.catch(function () {}); // whoever waits on it sees the rejection; nobody else must
  }
  fresh();

  // every waiting call rejected; a start that failed also ends its worker, and the next
  // start() begins anew (e.g. back online, or with the engine's files kept meanwhile)
  function fail(message) {
    settle.reject(new Error(message));
    Object.keys(pending).forEach(function (id) {
      pending[id].reject(new Error(message));
      delete pending[id];
    });
    clearTimeout(deadline);
    if (loaded || !started) return;
    if (worker) worker.terminate();
    worker = null;
    started = false;
    fresh();
  }

  function tellServiceWorker(message) {
    if (!("serviceWorker" in navigator)) return;
    navigator.serviceWorker.ready.then(function (registration) {
      if (registration.active) registration.active.postMessage(message);
    }, function () {});
  }

  function files() {
    return meta ? meta.getAttribute("data-files").split(" ").filter(Boolean) : [];
  }

  function received(event) {
    var message = event.data || {};
    if (message.ready === true) {
      loaded = true;
      clearTimeout(deadline);
      Object.keys(message.timings).forEach(function (key) {
        timings[key] = message.timings[key];
      });
      timings.ready = Math.round(performance.now() - begun);
      settle.resolve(timings);
      tellServiceWorker({ engine: files() });
    } else if (message.ready === false) {
      fail(message.missing ? NOT_KEPT : FAILED + ": " + message.error);
    } else if (pending[message.id]) {
      var waiting = pending[message.id];
      delete pending[message.id];
      if ("error" in message) waiting.reject(new Error(message.error));
      else waiting.resolve(message.result);
    }
  }

  function boot() {
    if (typeof WebAssembly !== "object" || typeof Worker !== "function") return fail(NO_WASM);
    begun = performance.now();
    var own;
    try {
      own = worker = new Worker(meta.getAttribute("data-worker"), { type: "module" });
    } catch (error) {
      return fail(FAILED + ".");
    }
    own.addEventListener("message", function (event) {
      if (own === worker) received(event);
    });
    // before its first answer: the worker's own script could not be fetched (offline, not kept)
    var answered = false;
    own.addEventListener("message", function () { answered = true; }, { once: true });
    own.addEventListener("error", function (event) {
      event.preventDefault();
      if (own !== worker) return;
      var unfetched = !answered && !event.message; // an error in its code has a message
      fail(loaded ? FAILED + " (abgestürzt)." : unfetched ? NOT_KEPT : FAILED + ".");
    });
    var limit = window.SchockenEngine.deadline;
    deadline = window.setTimeout(function () {
      if (own === worker && !loaded) fail(navigator.onLine ? SLOW : NOT_KEPT);
    }, typeof limit === "number" && limit > 0 ? limit : DEADLINE_MS);
    own.postMessage({
      init: { pyodide: meta.getAttribute("data-pyodide"), bundle: meta.getAttribute("data-bundle") },
    });
  }

  // after the first paint, when the page is idle: loading never delays what the player sees
  function afterFirstPaint(run) {
    function idle() {
      if (window.requestIdleCallback) window.requestIdleCallback(run, { timeout: 1000 });
      else window.setTimeout(run, 0);
    }
    if (document.readyState === "complete") idle();
    else window.addEventListener("load", idle, { once: true });
  }

  function start() {
    if (started) return ready;
    started = true;
    var starting = ready; // a failure makes a fresh `ready` for the next start
    if (!meta) fail(NOT_HERE);
    else afterFirstPaint(boot);
    return starting;
  }

  function call(name, arg) {
    return start().then(function () {
      return new Promise(function (resolve, reject) {
        var id = nextId++;
        pending[id] = { resolve: resolve, reject: reject };
        worker.postMessage({ id: id, call: name, arg: arg === undefined ? null : arg });
      });
    });
  }

  window.SchockenEngine = { start: start, call: call, timings: timings, deadline: DEADLINE_MS };
  Object.defineProperty(window.SchockenEngine, "ready", {
    enumerable: true,
    get: function () { return ready; },
  });

  // a page the service worker did not serve is not stored yet, nor are its styles, scripts
  // and icons: ask it to keep them
  if ("serviceWorker" in navigator && !navigator.serviceWorker.controller) {
    var assets = Array.prototype.map.call(
      document.querySelectorAll("script[src], link[href]"),
      function (element) { return element.src || element.href; });
    tellServiceWorker({ pages: [location.href], assets: assets });
  }
  // the engine's files fetched and kept after the first paint, without starting it: so that
  // the phone has them when the connection drops (offline.js starts the engine when needed)
  if (meta) afterFirstPaint(function () { tellServiceWorker({ engine: files() }); });
  // and once more when the connection returns (a phone offline since the page came)
  if (meta) window.addEventListener("online", function () { tellServiceWorker({ engine: files() }); });
  if (meta && meta.getAttribute("data-start") === "auto") start();
})();
