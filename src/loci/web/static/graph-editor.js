// The compiled-truth editor of a brain page: it saves 1.2 s after the last keystroke through the
// rewrite route, against the version it opened (expected_hash). A 409 means the page changed
// underneath: autosave pauses, their version is shown beside the draft, and saving again is a
// deliberate overwrite (as for notes).

import { api, path } from "./api.js";
import { $, showError } from "./dom.js";

const IDLE_MS = 1200;
const STATE_TEXT = {
  saved: "All changes saved.",
  dirty: "Unsaved changes…",
  saving: "Saving…",
  conflict: "Not saved: this page changed underneath.",
  failed: "Not saved.",
};

const box = $("#graph-editor");
const textarea = $("#graph-truth-text");
const stateLine = $("#graph-save-state");
const errorBox = $("#graph-editor-error");
const conflictBox = $("#graph-conflict");

// The editing session: `doc` is shared with the page view ({brain, id, hash}), so every write
// there (status, timeline) moves the version this editor saves against too.
let session = null;

export function startEditing(doc, truth) {
  session = { doc, saved: truth, timer: null, inFlight: null, again: false, conflict: false };
  textarea.value = truth;
  conflictBox.hidden = true;
  showError(errorBox, null);
  setState("saved");
  box.hidden = false;
  textarea.focus();
}

export const isEditing = () => session !== null;
const unsaved = (s) => textarea.value !== s.saved;

// Save what is pending now; resolves true when nothing is left unsaved.
export async function flush() {
  const s = session;
  if (!s) return true;
  clearTimeout(s.timer);
  if (s.inFlight) await s.inFlight;
  if (session === s && unsaved(s) && !s.conflict) await save(s);
  return session !== s || !unsaved(s);
}

// End the session (after a flush); the caller decides what to do with an unsaved draft.
export function stopEditing() {
  if (session) clearTimeout(session.timer);
  session = null;
  box.hidden = true;
}

function setState(state) {
  stateLine.dataset.state = state;
  stateLine.textContent = STATE_TEXT[state];
  stateLine.className = `save-state small save-${state}`;
}

function schedule() {
  const s = session;
  if (!s) return;
  clearTimeout(s.timer);
  if (s.conflict) return; // paused until the person chooses
  setState(unsaved(s) ? "dirty" : "saved");
  if (unsaved(s)) s.timer = setTimeout(() => save(s), IDLE_MS);
}

function save(s) {
  if (s.inFlight) {
    s.again = true;
    return s.inFlight;
  }
  const text = textarea.value;
  if (text === s.saved) {
    setState("saved");
    return Promise.resolve();
  }
  setState("saving");
  const url = `/brains/${path(s.doc.brain)}/graph/documents/${path(s.doc.id)}/truth`;
  s.inFlight = (async () => {
    try {
      const written = await api.put(url, { truth: text, expected_hash: s.doc.hash });
      s.doc.hash = written.content_hash;
      s.saved = text;
      if (session !== s) return;
      showError(errorBox, null);
      setState(unsaved(s) ? "dirty" : "saved");
    } catch (error) {
      if (session !== s) return;
      if (error.status === 409) await showConflict(s);
      else {
        showError(errorBox, error);
        setState("failed");
      }
    } finally {
      s.inFlight = null;
    }
    // Typed while the save was on its way: that text gets its own save.
    if (session === s && s.again) {
      s.again = false;
      schedule();
    }
  })();
  return s.inFlight;
}

async function showConflict(s) {
  s.conflict = true;
  setState("conflict");
  showError(errorBox, null);
  try {
    const latest = await api.get(`/brains/${path(s.doc.brain)}/graph/documents/${path(s.doc.id)}`);
    // Their version is the new base: saving again replaces it on purpose.
    s.doc.hash = latest.document.content_hash;
    s.theirs = latest.truth;
    $("#graph-conflict-body").innerHTML = latest.html; // rendered and sanitized by the server
  } catch (error) {
    $("#graph-conflict-body").textContent = `Their version could not be loaded: ${error.message}`;
  }
  conflictBox.hidden = false;
  conflictBox.scrollIntoView({ block: "nearest" });
}

function resolveConflict(keepMine) {
  const s = session;
  if (!s || !s.conflict) return;
  s.conflict = false;
  conflictBox.hidden = true;
  if (keepMine) {
    save(s);
    return;
  }
  if (typeof s.theirs === "string") {
    textarea.value = s.theirs;
    s.saved = s.theirs;
  }
  setState(unsaved(s) ? "dirty" : "saved");
  textarea.focus();
}

textarea.addEventListener("input", schedule);
$("#graph-keep-mine").addEventListener("click", () => resolveConflict(true));
$("#graph-take-theirs").addEventListener("click", () => resolveConflict(false));
// Leaving the app with an edit not yet saved asks first.
window.addEventListener("beforeunload", (event) => {
  if (session && unsaved(session)) event.preventDefault();
});
