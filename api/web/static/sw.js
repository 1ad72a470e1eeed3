// The pub form's service worker: the shell (styles, scripts, icons) and the pages last seen
// stay on the phone, so a reload in a cellar without signal still shows the game and its
// waiting entries (static/offline.js keeps those in IndexedDB and sends them later).
// Pages: network first, the stored copy only when the network fails. Assets (?v=<hash>):
// cache first, they never change under one name. POSTs and the API are never touched.
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

self.addEventListener("fetch", function (event) {
  var request = event.request;
  if (request.method !== "GET") return;
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname.indexOf("/assets/") === 0 && url.searchParams.get("v")) {
    event.respondWith(asset(request));
  } else if (request.mode === "navigate" && url.pathname.indexOf("/s/") === 0) {
    event.respondWith(page(request));
  }
});
