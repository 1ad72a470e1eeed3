// The pub form's service worker: the shell (styles, scripts, icons) and the pages last seen
// stay on the phone, so a reload in a cellar without signal still shows the game and its
// waiting entries (static/offline.js keeps those in IndexedDB and sends them later).
// Pages: network first, the stored copy only when the network fails. Assets (?v=<hash>):
// cache first, they never change under one name. A turn or penalty form posted while the
// phone believes it is online but the server cannot be reached is put into offline.js's
// queue (same IndexedDB store) instead of being lost, and the game page is shown again.
// Logging out forgets the stored pages. Other POSTs and the API are never touched.
"use strict";

var PAGES = "schocken-pages-v1";
var ASSETS = "schocken-assets-v1";

self.addEventListener("install", function () {
  self.skipWaiting();
});

self.addEventListener("activate", function (event) {
  event.waitUntil(self.clients.claim());
});

function offlinePage() {
  var body = "<!doctype html><html lang=\"de\"><meta charset=\"utf-8\">" +
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">" +
    "<title>Offline · Schocken</title><h1>Offline</h1>" +
    "<p>Diese Seite war noch nicht auf diesem Handy. Sobald wieder Verbindung besteht, " +
    "bitte neu laden.</p></html>";
  return new Response(body, {
    status: 503,
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" },
  });
}

function page(request) {
  return fetch(request).then(function (response) {
    if (response.ok && response.type === "basic" && !response.redirected) {
      var copy = response.clone();
      caches.open(PAGES).then(function (cache) { cache.put(request.url.split("?")[0], copy); });
    }
    return response;
  }, function () {
    return caches.open(PAGES).then(function (cache) {
      return cache.match(request.url.split("?")[0]);
    }).then(function (stored) { return stored || offlinePage(); });
  });
}

function asset(request) {
  return caches.open(ASSETS).then(function (cache) {
    return cache.match(request).then(function (stored) {
      if (stored) return stored;
      return fetch(request).then(function (response) {
        if (response.ok) cache.put(request, response.clone());
        return response;
      });
    });
  });
}

function openDb() {
  return new Promise(function (resolve, reject) {
    var req = indexedDB.open("schocken-offline", 1);
    req.onupgradeneeded = function () {
      var store = req.result.createObjectStore("entries", { keyPath: "id", autoIncrement: true });
      store.createIndex("game", "game");
    };
    req.onsuccess = function () { resolve(req.result); };
    req.onerror = function () { reject(req.error); };
  });
}

function newKey() {
  var bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
}

// the entry of a form that did not reach the server, queued after the ones already waiting
function queue(game, kind, form) {
  var fields = {};
  form.forEach(function (v, k) { fields[k] = String(v); });
  var label;
  if (kind === "turn") {
    delete fields.player;
    var dice = (fields.wurf || "").replace(/[^1-6]/g, "") || [fields.d1, fields.d2, fields.d3].join("");
    label = "Zug: " + dice.split("").join("-") + ", Würfe: " + (fields.throws || "?");
  } else {
    label = "Strafe für " + fields.player + " (" + (fields.reason || "").trim() + ")";
  }
  return openDb().then(function (db) {
    return new Promise(function (resolve, reject) {
      var t = db.transaction("entries", "readwrite");
      var store = t.objectStore("entries");
      store.index("game").getAll(game).onsuccess = function (event) {
        var rows = event.target.result.sort(function (a, b) { return a.id - b.id; });
        var last = rows[rows.length - 1];
        store.add({
          game: game, key: newKey(), kind: kind, fields: fields, label: label, at: Date.now(),
          seq: last ? last.seq + 1 : parseInt(fields.seq || "0", 10),
        });
      };
      t.oncomplete = function () { db.close(); resolve(); };
      t.onerror = function () { db.close(); reject(t.error); };
    });
  });
}

function post(request, game, kind) {
  var copy = request.clone();
  return fetch(request).catch(function (error) {
    return copy.formData().then(function (form) {
      return queue(game, kind, form);
    }).then(function () {
      return Response.redirect(game, 303);
    }, function () { throw error; });
  });
}

self.addEventListener("fetch", function (event) {
  var request = event.request;
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method === "POST") {
    var entry = url.pathname.match(/^(\/s\/[^/]+\/spiel\/\d+)\/(zug|strafe)$/);
    if (entry) event.respondWith(post(request, entry[1], entry[2] === "zug" ? "turn" : "penalty"));
    if (/^\/s\/[^/]+\/abmelden$/.test(url.pathname)) event.waitUntil(caches.delete(PAGES));
    return;
  }
  if (request.method !== "GET") return;
  if (url.pathname.indexOf("/assets/") === 0 && url.searchParams.get("v")) {
    event.respondWith(asset(request));
  } else if (request.mode === "navigate" && url.pathname.indexOf("/s/") === 0) {
    event.respondWith(page(request));
  }
});
