// sw.js — the page offline after the first visit (issue 41, item 8; docs/web.md).
//
// Network first: while the site answers, every file comes from it (a rebuilt site is never hidden
// behind an old copy) and the answer is kept; when the network fails, the last good copy is served.
// Installing it copies the whole site once (index.html, the page's catalogues, the program and its
// data: the bundled models, fonts and golden cases), so the second visit works offline even for
// files the first visit fetched before this worker was in control.
const CACHE = "deberta-explorer-site";
const SITE = ["./", "index.html", "page_catalogues.js", "deberta-explorer.js", "deberta-explorer.wasm",
              "deberta-explorer.data"];

self.addEventListener("install", (event) => {
  self.skipWaiting();
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SITE)));
});

self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith(
    fetch(request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          caches.open(CACHE).then((cache) => cache.put(request, copy));
        }
        return response;
      })
      // Offline: the kept copy; index.html?text=… is the same file as index.html.
      .catch(() => caches.match(request, {ignoreSearch: true})
        .then((kept) => kept || Response.error())));
});
