// Loci's service worker: the app's shell kept for offline use, and the share target for files.
//
// The server serves this file at /sw.js with the two constants below filled in: SHELL, every
// file of the web app, and VERSION, a digest of their contents — so a new version of the app is
// a new worker, which caches the new shell and drops the old one. Nothing the API answers is
// ever cached: a brain's content stays on the server.
//
// Offline, the shell still opens and says it is offline (app.js). A share from another app
// (the manifest's share_target, POST /share with files) is taken here: the files wait in a cache
// for the page, which uploads them with the person's session once signed in (share.js).

const SHELL = [];
const VERSION = "";
const SHELL_CACHE = `loci-shell-${VERSION}`;
const SHARE_CACHE = "loci-share";

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(SHELL_CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) =>
        Promise.all(names.filter((n) => n.startsWith("loci-shell-") && n !== SHELL_CACHE).map((n) => caches.delete(n))),
      )
      .then(() => self.clients.claim()),
  );
});

async function takeShare(request) {
  const form = await request.formData();
  const files = form.getAll("files").filter((f) => typeof f !== "string" && f.size > 0);
  const cache = await caches.open(SHARE_CACHE);
  for (const old of await cache.keys()) await cache.delete(old);
  await Promise.all(
    files.map((file, index) =>
      cache.put(
        `/shared-files/${index}`,
        new Response(file, {
          headers: {
            "Content-Type": file.type || "application/octet-stream",
            "X-File-Name": encodeURIComponent(file.name || `shared-${index + 1}`),
          },
        }),
      ),
    ),
  );
  const params = new URLSearchParams();
  for (const field of ["title", "text", "url"]) {
    const value = form.get(field);
    if (typeof value === "string" && value) params.set(field, value);
  }
  if (files.length) params.set("files", String(files.length));
  return Response.redirect(`/share?${params}`, 303);
}

// The page: from the network while there is one, else the shell (which says it is offline).
async function page(request) {
  try {
    return await fetch(request);
  } catch {
    const shell = await caches.match("/", { cacheName: SHELL_CACHE });
    return shell || Response.error();
  }
}

// The app's own files: from the shell, else the network.
async function asset(request) {
  const cached = await caches.match(request, { cacheName: SHELL_CACHE, ignoreSearch: true });
  return cached || fetch(request);
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method === "POST" && url.pathname === "/share") {
    event.respondWith(takeShare(request));
  } else if (request.method !== "GET" || url.pathname.startsWith("/api/") || url.pathname === "/mcp") {
    return; // the API and everything that writes: always the network, never a cache
  } else if (request.mode === "navigate") {
    event.respondWith(page(request));
  } else if (SHELL.includes(url.pathname)) {
    event.respondWith(asset(request));
  }
});
