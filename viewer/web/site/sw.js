// sw.js — the page offline after the first visit (issue 41, item 8) and cross-origin isolated, so
// that the threaded build can run (issue 41, item 7); docs/web.md "Offline" and "Speed".
//
// Network first: while the site answers, every file comes from it (a rebuilt site is never hidden
// behind an old copy) and the answer is kept; when the network fails, the last good copy is served.
// Installing it copies the whole site once (index.html, the page's catalogues, both builds of the
// program and their data: the bundled models, fonts and golden cases; the docs and the source), so
// the second visit works offline even for files the first visit fetched before this worker was in control.
//
// Cross-origin isolation: a static host cannot send the COOP / COEP headers that give a page
// SharedArrayBuffer (and so WebAssembly threads); a service worker can add them to every answer.
// One scope has one service worker, so this one does it, with coi-serviceworker's code (npm,
// viewer/web/site/coi; scripts/web.sh copies coi-serviceworker.js beside this file): importScripts runs
// its worker half, whose fetch listener answers each request with `fetch(request)` and the headers
// added. Its `fetch` is this worker's global, replaced below (before the import) by the network-first
// fetch with the kept copy, so the headers are added to the network's answer and to the offline copy
// alike. (Two fetch listeners could not share the work: the first to answer a request wins, and
// coi-serviceworker's alone answers from the network only.) index.html loads the threaded build
// only when the page is isolated, i.e. from the visit after this worker took control.
const CACHE = "deberta-explorer-site";
const SITE = ["./", "index.html", "page_catalogues.js", "deberta-explorer.js", "deberta-explorer.wasm",
              "deberta-explorer.data", "deberta-explorer-mt.js", "deberta-explorer-mt.wasm",
              "deberta-explorer-mt.worker.js"];

const networkFetch = self.fetch.bind(self);

// The site's files network first, kept; the kept copy when the network fails (index.html?text=… is
// the same file as index.html). Other requests go to the network as they are.
self.fetch = (request) => {
  if (!(request instanceof Request)) request = new Request(request);
  if (request.method !== "GET" || new URL(request.url).origin !== self.location.origin) return networkFetch(request);
  return networkFetch(request)
    .then((response) => {
      if (response.ok) {
        const copy = response.clone();
        caches.open(CACHE).then((cache) => cache.put(request, copy));
      }
      return response;
    })
    .catch(() => caches.match(request, {ignoreSearch: true}).then((kept) => kept || Response.error()));
};

// The bar's Docs and Source (issue 55, item 8): the source's .tar.xz and every page docs/index.html
// links to (scripts/site_docs.py writes them), so both open offline too.
async function docsAndSource() {
  const index = await networkFetch("docs/index.html").then((r) => (r.ok ? r.text() : ""));
  const pages = new Set(["docs/index.html"]);
  for (const m of index.matchAll(/href="([A-Za-z0-9_.-]+\.html)(#[^"]*)?"/g)) pages.add("docs/" + m[1]);
  return ["deberta-explorer-src.tar.xz", ...pages];
}

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then(async (cache) => {
    await cache.addAll(SITE);
    await cache.addAll(await docsAndSource());
  }));
});

// Its install and activate listeners take control at once (skipWaiting, clients.claim); its fetch
// listener adds the headers.
importScripts("coi-serviceworker.js");
