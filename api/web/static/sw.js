// The pub form's service worker: the shell (styles, scripts, icons), the pages last seen and
// the rules engine (Pyodide and the engine bundle, api/web/engine.py) stay on the phone, so a
// reload in a cellar without signal still shows the game, and the engine in the page
// (engine.js) still checks every entry.
// Pages: network first, the stored copy only when the network fails. A page this worker did
// not serve (the first visit, before it was in control, e.g. through an invite link) is
// stored when the page asks ({pages: [url], assets: [url…]}, engine.js), with its assets. Assets (?v=<hash>) and the engine's
// files (/engine/…, a version or hash in every name): cache first, they never change under one
// name; the engine's files are stored as they pass and once more when the page's engine is
// ready ({engine: [url…]}, which also forgets the files of earlier engines).
// A form of a game posted while the server cannot be reached answers with the stored game page
// (303 to it): nothing unchecked is ever queued here (offline.js queues only what the engine
// in the page accepted). Logging out forgets the stored pages. The API is never touched.
"use strict";

var PAGES = "schocken-pages-v2";
var ASSETS = "schocken-assets-v2";
var ENGINE = "schocken-engine-v1";
var CURRENT = [PAGES, ASSETS, ENGINE];

self.addEventListener("install", function () {
  self.skipWaiting();
});

self.addEventListener("activate", function (event) {
  event.waitUntil(caches.keys().then(function (names) {
    return Promise.all(names.filter(function (name) {
      return name.indexOf("schocken-") === 0 && CURRENT.indexOf(name) < 0;
    }).map(function (name) { return caches.delete(name); }));
  }).then(function () { return self.clients.claim(); }));
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

function pageKey(url) {
  return url.split("#")[0].split("?")[0];
}

function keep(url, response) {
  if (response.ok && response.type === "basic" && !response.redirected) {
    var copy = response.clone();
    return caches.open(PAGES).then(function (cache) { return cache.put(pageKey(url), copy); });
  }
  return Promise.resolve();
}

function page(request) {
  return fetch(request).then(function (response) {
    keep(request.url, response);
    return response;
  }, function () {
    return caches.open(PAGES).then(function (cache) {
      return cache.match(pageKey(request.url));
    }).then(function (stored) { return stored || offlinePage(); });
  });
}

// a page of the form shown before this worker was in control: fetched once more and kept
function keepPage(url) {
  var target = new URL(url, self.location.href);
  if (target.origin !== self.location.origin || target.pathname.indexOf("/s/") !== 0) {
    return Promise.resolve();
  }
  return fetch(target.href, { credentials: "same-origin" }).then(function (response) {
    return keep(target.href, response);
  }, function () {});
}

function cacheFirst(name, request) {
  return caches.open(name).then(function (cache) {
    return cache.match(request).then(function (stored) {
      if (stored) return stored;
      return fetch(request).then(function (response) {
        if (response.ok) cache.put(request, response.clone());
        return response;
      });
    });
  });
}

// the engine's current files: each one stored (from the browser's HTTP cache, where the
// engine's start just put it), the files of earlier engines forgotten
function keepEngine(urls) {
  var wanted = urls.map(function (url) { return new URL(url, self.location.href).href; })
    .filter(function (url) { return new URL(url).origin === self.location.origin; });
  return caches.open(ENGINE).then(function (cache) {
    return cache.keys().then(function (stored) {
      var old = stored.filter(function (request) { return wanted.indexOf(request.url) < 0; });
      return Promise.all(old.map(function (request) { return cache.delete(request); }));
    }).then(function () {
      return Promise.all(wanted.map(function (url) {
        return cache.match(url).then(function (hit) {
          if (hit) return;
          return fetch(url).then(function (response) {
            if (response.ok) return cache.put(url, response);
          }, function () {});
        });
      }));
    });
  });
}

// the versioned assets of a page shown before this worker was in control
function keepAssets(urls) {
  return caches.open(ASSETS).then(function (cache) {
    return Promise.all(urls.map(function (href) {
      var url = new URL(href, self.location.href);
      if (url.origin !== self.location.origin || url.pathname.indexOf("/assets/") !== 0 ||
          !url.searchParams.get("v")) return;
      return cache.match(url.href).then(function (hit) {
        if (hit) return;
        return fetch(url.href).then(function (response) {
          if (response.ok) return cache.put(url.href, response);
        }, function () {});
      });
    }));
  });
}

self.addEventListener("message", function (event) {
  var data = event.data || {};
  if (Array.isArray(data.pages)) event.waitUntil(Promise.all(data.pages.map(keepPage)));
  if (Array.isArray(data.assets)) event.waitUntil(keepAssets(data.assets));
  if (Array.isArray(data.engine)) event.waitUntil(keepEngine(data.engine));
});

// a game's form (a turn, a penalty, undo …) posted without a connection: the game page again
function post(request, game) {
  return fetch(request).catch(function () {
    return Response.redirect(game, 303);
  });
}

self.addEventListener("fetch", function (event) {
  var request = event.request;
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method === "POST") {
    var game = url.pathname.match(/^\/s\/[^/]+\/spiel\/\d+(?=\/[^/]+$)/);
    if (game && request.mode === "navigate") event.respondWith(post(request, game[0]));
    if (/^\/s\/[^/]+\/abmelden$/.test(url.pathname)) event.waitUntil(caches.delete(PAGES));
    return;
  }
  if (request.method !== "GET") return;
  if (url.pathname.indexOf("/engine/") === 0) {
    event.respondWith(cacheFirst(ENGINE, request));
  } else if (url.pathname.indexOf("/assets/") === 0 && url.searchParams.get("v")) {
    event.respondWith(cacheFirst(ASSETS, request));
  } else if (request.mode === "navigate" && url.pathname.indexOf("/s/") === 0) {
    event.respondWith(page(request));
  }
});
