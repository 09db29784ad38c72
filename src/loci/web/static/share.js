// "Share → Loci" on a phone. The installed app's share target (manifest.webmanifest) opens
// /share?title=…&text=…&url=…, a page load that writes nothing. The shared fields move from the
// address into this tab's storage — so they survive signing in and a reload cannot share them
// twice — and are saved once the person is signed in, with POST /brains/{brain}/share carrying
// the session's CSRF token like every other write.

import { api, path } from "./api.js";
import { toast } from "./dom.js";

const PENDING = "loci.share";

export function hasPendingShare() {
  return sessionStorage.getItem(PENDING) !== null;
}

// Called before anything else: a share in the address becomes a pending share.
export function takeShareFromAddress() {
  if (location.pathname !== "/share") return;
  const params = new URLSearchParams(location.search);
  const field = (name) => params.get(name) || "";
  const shared = { title: field("title"), text: field("text"), url: field("url") };
  if (shared.text.trim() || shared.url.trim()) sessionStorage.setItem(PENDING, JSON.stringify(shared));
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
  try {
    const result = await api.post(`/brains/${path(brain.name)}/share`, shared);
    sessionStorage.removeItem(PENDING);
    const how = result.fetch_error
      ? ` as a note — the page could not be fetched (${result.fetch_error})`
      : result.deduped
        ? " (it was there already)"
        : "";
    toast(`Saved to ${brain.name}${how}.`);
    return brain.name;
  } catch (error) {
    // Refused (bad input, no access): dropped. Unreachable or a server fault: kept, and tried
    // again on the next load of the app in this tab.
    if (error.status >= 400 && error.status < 500) sessionStorage.removeItem(PENDING);
    toast(`What you shared was not saved: ${error.message}`, "error");
    return null;
  }
}
