// "Share → Loci" on a phone. The installed app's share target (manifest.webmanifest) posts what
// was shared to /share; the service worker (sw.js) keeps any files in a cache and opens
// /share?title=…&text=…&url=…&files=N, a page load that writes nothing. The shared fields move
// from the address into this tab's storage — so they survive signing in and a reload cannot
// share them twice — and are saved once the person is signed in: a link or text with
// POST /brains/{brain}/share, files uploaded as any file is, each with the session's CSRF token.

import { api, path } from "./api.js";
import { toast } from "./dom.js";
import { upload } from "./uploads.js";

const PENDING = "loci.share";
const SHARE_CACHE = "loci-share";

export function hasPendingShare() {
  return sessionStorage.getItem(PENDING) !== null;
}

// Called before anything else: a share in the address becomes a pending share.
export function takeShareFromAddress() {
  if (location.pathname !== "/share") return;
  const params = new URLSearchParams(location.search);
  const field = (name) => params.get(name) || "";
  const count = (name) => Math.max(0, Math.min(100, Number.parseInt(field(name), 10) || 0));
  const shared = {
    title: field("title"),
    text: field("text"),
    url: field("url"),
    files: count("files"),
    dropped: count("dropped"), // shared before the service worker could keep them
  };
  if (shared.text.trim() || shared.url.trim() || shared.files || shared.dropped) {
    sessionStorage.setItem(PENDING, JSON.stringify(shared));
  }
  history.replaceState(null, "", "/");
}

// The brain last used in this app if the person may add to it, else "default", else the first
// one they may add to.
function targetBrain(brains, preferred) {
  const writable = brains.filter((b) => b.role !== "viewer");
  return (
    writable.find((b) => b.name === preferred) ||
    writable.find((b) => b.name === "default") ||
    writable[0] ||
    null
  );
}

// The files the service worker kept, as File objects (and the cache's keys, to forget them).
async function sharedFiles() {
  if (!("caches" in window)) return [];
  const cache = await caches.open(SHARE_CACHE);
  const found = [];
  for (const request of await cache.keys()) {
    const response = await cache.match(request);
    if (!response) continue;
    const name = decodeURIComponent(response.headers.get("X-File-Name") || "shared-file");
    const blob = await response.blob();
    found.push({ request, file: new File([blob], name, { type: blob.type }) });
  }
  return found;
}

async function saveFiles(brain) {
  const cache = "caches" in window ? await caches.open(SHARE_CACHE) : null;
  const files = await sharedFiles();
  const saved = [];
  const refused = [];
  for (const { request, file } of files) {
    try {
      await upload(brain.name, file);
      saved.push(file.name);
    } catch (error) {
      refused.push(`${file.name}: ${error.message}`);
    }
    if (cache) await cache.delete(request);
  }
  if (saved.length) toast(`Saved ${saved.length === 1 ? saved[0] : `${saved.length} files`} to ${brain.name}.`);
  for (const reason of refused) toast(`Not saved — ${reason}`, "error");
  return saved.length > 0;
}

// Save the pending share, if any; resolves with the brain's name it went to, or null.
export async function completeShare(brains, preferred) {
  const raw = sessionStorage.getItem(PENDING);
  if (raw === null) return null;
  let shared;
  try {
    shared = JSON.parse(raw);
  } catch {
    sessionStorage.removeItem(PENDING);
    return null;
  }
  const brain = targetBrain(brains, preferred);
  if (!brain) {
    toast("Nothing was saved: create a brain you can add to, then share again.", "error");
    sessionStorage.removeItem(PENDING);
    return null;
  }
  // Files first: they wait in the worker's cache, which the words below do not touch.
  sessionStorage.removeItem(PENDING);
  let savedSomething = shared.files ? await saveFiles(brain) : false;
  if (shared.dropped) {
    toast(
      `${shared.dropped === 1 ? "The shared file was" : `${shared.dropped} shared files were`} not ` +
        "kept: open Loci once while online so it can receive files, then share again.",
      "error",
    );
  }
  if (!(shared.text || "").trim() && !(shared.url || "").trim()) return savedSomething ? brain.name : null;
  try {
    const result = await api.post(`/brains/${path(brain.name)}/share`, {
      title: shared.title,
      text: shared.text,
      url: shared.url,
    });
    const how = result.fetch_error
      ? ` as a note — the page could not be fetched (${result.fetch_error})`
      : result.deduped
        ? " (it was there already)"
        : "";
    toast(`Saved to ${brain.name}${how}.`);
    savedSomething = true;
  } catch (error) {
    // Refused (bad input, no access): dropped. Unreachable or a server fault: kept, and tried
    // again on the next load of the app in this tab.
    if (!(error.status >= 400 && error.status < 500)) {
      sessionStorage.setItem(PENDING, JSON.stringify({ ...shared, files: 0, dropped: 0 }));
    }
    toast(`What you shared was not saved: ${error.message}`, "error");
  }
  return savedSomething ? brain.name : null;
}
