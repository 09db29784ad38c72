// Uploads: one request per file, each with its own card that follows it to the end — the bytes
// sent, then indexing step by step (reading page n of m, OCR, passages embedded k of n), then
// ready, or failed with the reason and what to do, with "Retry" only when a retry can help.

import { api, path, uploadFile } from "./api.js";
import { $, bytes, el } from "./dom.js";
import { failureText, indexingStep, readyText } from "./doc-status.js";
import { openPreview } from "./preview.js";

const POLL_MS = 1000;
const list = $("#upload-list");
const followed = new Map(); // document id → {card, brain}
let timer = null;
let onSettled = () => {};

// Upload one file to a brain; `onProgress(fraction)` follows the bytes sent. Resolves with the
// server's result ({name, document, deduped}); a refused file rejects with the reason. The chat
// (ask-drop.js) uploads through this too.
export async function upload(brainName, file, onProgress = () => {}) {
  const result = await uploadFile(`/brains/${path(brainName)}/files`, file, onProgress);
  if (result.error) throw new Error(result.error.message || "The file was refused.");
  return result;
}

// Poll a document until indexing settles it: resolves with it, ready or failed; `onStep(doc)`
// sees each state on the way. `stillWanted()` returning false stops the polling (resolves null).
export async function whenIndexed(brainName, documentId, stillWanted = () => true, onStep = () => {}) {
  for (;;) {
    const doc = await api.get(`/brains/${path(brainName)}/files/${path(documentId)}`);
    if (doc.status !== "processing") return doc;
    onStep(doc);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    if (!stillWanted()) return null;
  }
}

// `settled()`: a file was stored, or a followed document became ready or failed (the list
// refreshes).
export function setupUploads({ settled }) {
  onSettled = settled;
  $("#clear-uploads").addEventListener("click", () => {
    for (const card of [...list.children]) {
      if (card.dataset.state === "ready" || card.dataset.state === "failed") forget(card);
    }
    $("#clear-uploads").hidden = true;
    $("#file-input").focus();
  });
}

// Another brain: its uploads are not this one's.
export function clearUploads() {
  followed.clear();
  clearTimeout(timer);
  list.replaceChildren();
  $("#clear-uploads").hidden = true;
}

function forget(card) {
  for (const [id, entry] of followed) if (entry.card === card) followed.delete(id);
  card.remove();
}

class UploadCard {
  constructor(file) {
    this.bar = el("progress", { max: "1", value: "0", "aria-label": `Progress of ${file.name}` });
    this.state = el("p", { class: "upload-state small", role: "status" });
    this.help = el("p", { class: "upload-help small", hidden: true });
    this.actions = el("div", { class: "upload-actions", hidden: true });
    this.node = el(
      "li",
      { class: "upload", dataset: { state: "uploading" } },
      el("span", { class: "doc-name", text: file.name }),
      el("span", { class: "muted small", text: bytes(file.size) }),
      this.bar,
      this.state,
      this.help,
      this.actions,
    );
    this.name = file.name;
    this.note = ""; // said under the state whatever it becomes
    this.say("Uploading…", "uploading");
  }

  say(text, state) {
    this.state.textContent = text;
    this.node.dataset.state = state;
  }

  // Indeterminate (a moving bar) while the step has no count.
  progress(fraction) {
    if (fraction === null) this.bar.removeAttribute("value");
    else this.bar.value = fraction;
    this.bar.hidden = false;
  }

  show(doc, brainName) {
    this.help.textContent = this.note;
    this.help.hidden = !this.note;
    this.actions.replaceChildren();
    this.actions.hidden = true;
    if (doc.status === "processing") {
      const step = indexingStep(doc);
      this.say(step.text, "indexing");
      this.progress(step.fraction);
      return;
    }
    this.bar.hidden = true;
    if (doc.status === "ready") {
      this.say(readyText(doc), "ready");
      this.offer("Open", () => openPreview({ brain: brainName, documentId: doc.id, name: doc.title || doc.name }));
      return;
    }
    const failed = failureText(doc);
    this.say(`Failed: ${failed.reason}`, "failed");
    if (failed.whatToDo) {
      this.help.textContent = failed.whatToDo;
      this.help.hidden = false;
    }
    if (failed.retry) this.offer("Retry", () => retry(this, brainName, doc));
  }

  offer(label, run) {
    this.actions.append(
      el("button", { type: "button", text: label, "aria-label": `${label} ${this.name}`, onclick: run }),
    );
    this.actions.hidden = false;
  }
}

export async function uploadFiles(brainName, files) {
  for (const file of files) uploadOne(brainName, file);
}

async function uploadOne(brainName, file) {
  const card = new UploadCard(file);
  list.append(card.node);
  $("#clear-uploads").hidden = false;
  let result;
  try {
    result = await upload(brainName, file, (fraction) => {
      card.progress(fraction);
      card.say(fraction < 1 ? `Uploading… ${Math.round(fraction * 100)}%` : "Storing…", "uploading");
    });
  } catch (error) {
    card.bar.hidden = true;
    card.say(`Not uploaded: ${error.message}`, "failed");
    return;
  }
  if (!card.node.isConnected) return; // another brain was chosen meanwhile
  onSettled(); // stored: the list shows it, indexing or not
  const doc = result.document;
  if (result.deduped) card.note = "Already in this brain: the copy it has is kept.";
  card.show(doc, brainName);
  if (doc.status === "processing") follow(doc.id, card, brainName);
}

function follow(documentId, card, brainName) {
  followed.set(documentId, { card, brainName });
  if (!timer) timer = setTimeout(poll, POLL_MS);
}

// One pass over the followed documents: each asked for once; the settled ones leave.
async function poll() {
  timer = null;
  const pending = [...followed.entries()];
  let settled = false;
  await Promise.all(
    pending.map(async ([id, { card, brainName }]) => {
      try {
        const doc = await api.get(`/brains/${path(brainName)}/files/${path(id)}`);
        if (!followed.has(id)) return;
        card.show(doc, brainName);
        if (doc.status !== "processing") {
          followed.delete(id);
          settled = true;
        }
      } catch (error) {
        if (error.status === 404) {
          followed.delete(id);
          card.say("Deleted while it was indexed.", "failed");
        }
        // Unreachable for a moment: the next pass asks again.
      }
    }),
  );
  if (settled) onSettled();
  if (followed.size && !timer) timer = setTimeout(poll, POLL_MS);
}

async function retry(card, brainName, doc) {
  try {
    const again = await api.post(`/brains/${path(brainName)}/files/${path(doc.id)}/reprocess`);
    card.show(again, brainName);
    follow(again.id, card, brainName);
  } catch (error) {
    card.say(`Not retried: ${error.message}`, "failed");
  }
}
