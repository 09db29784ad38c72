// The document preview: its passages as search sees them (page, lines, heading path), with a
// cited passage scrolled to and highlighted, and the full extracted text.

import { api, path } from "./api.js";
import { $, clear, el, plural, showError, where } from "./dom.js";

const dialog = $("#preview-dialog");
const body = $("#preview-body");
const chunksButton = $("#preview-show-chunks");
const textButton = $("#preview-show-text");
const relatedButton = $("#preview-show-related");
let current = null; // {brain, documentId, chunkId}
let generation = 0;

function setView(view) {
  chunksButton.setAttribute("aria-pressed", String(view === "chunks"));
  textButton.setAttribute("aria-pressed", String(view === "text"));
  relatedButton.setAttribute("aria-pressed", String(view === "related"));
}

async function showChunks() {
  setView("chunks");
  const mine = ++generation;
  const { brain, documentId, chunkId } = current;
  clear(body).append(el("p", { class: "muted", text: "Loading passages…" }));
  try {
    const chunks = await api.get(`/brains/${path(brain)}/files/${path(documentId)}/chunks`);
    if (mine !== generation) return;
    clear(body);
    if (!chunks.length) {
      body.append(el("p", { class: "muted", text: "No passages yet: the document is not indexed." }));
      return;
    }
    const list = el("ol", { class: "chunk-list" });
    let cited = null;
    for (const chunk of chunks) {
      const isCited = chunk.id === chunkId;
      const item = el(
        "li",
        {
          class: isCited ? "chunk cited" : "chunk",
          id: `chunk-${chunk.id}`,
          dataset: { chunkId: chunk.id },
          tabindex: isCited ? "-1" : undefined,
          "aria-current": isCited ? "true" : undefined,
        },
        el("p", { class: "chunk-where", text: where(chunk) || `passage ${chunk.index + 1}` }),
        el("p", { class: "chunk-text", text: chunk.text }),
      );
      if (isCited) cited = item;
      list.append(item);
    }
    body.append(list);
    if (cited) {
      cited.scrollIntoView({ block: "center" });
      cited.focus({ preventScroll: true });
    }
  } catch (error) {
    if (mine === generation) showError($("#preview-error"), error);
  }
}

async function showText() {
  setView("text");
  const mine = ++generation;
  const { brain, documentId } = current;
  clear(body).append(el("p", { class: "muted", text: "Loading text…" }));
  try {
    const text = await api.get(`/brains/${path(brain)}/files/${path(documentId)}/text`);
    if (mine !== generation) return;
    clear(body);
    if (!text.text) {
      body.append(el("p", { class: "muted", text: "No text yet: the document is not indexed." }));
      return;
    }
    body.append(el("pre", { class: "extracted", text: text.text }));
    if (text.truncated) {
      body.append(el("p", { class: "muted small", text: "The text is longer; this shows the start." }));
    }
  } catch (error) {
    if (mine === generation) showError($("#preview-error"), error);
  }
}

// Other documents about the same thing, each opening its own preview.
async function showRelated() {
  setView("related");
  const mine = ++generation;
  const { brain, documentId } = current;
  clear(body).append(el("p", { class: "muted", text: "Looking for related documents…" }));
  try {
    const related = await api.get(
      `/brains/${path(brain)}/files/${path(documentId)}/related?limit=8`,
    );
    if (mine !== generation) return;
    clear(body);
    if (!related.length) {
      body.append(el("p", { class: "muted", text: "Nothing related yet." }));
      return;
    }
    const list = el("ol", { class: "related-list" });
    for (const item of related) {
      const doc = item.document;
      const open = el("button", { type: "button", class: "link-button", text: doc.title || doc.name });
      open.addEventListener("click", () =>
        openPreview({ brain, documentId: doc.id, chunkId: item.passage.id, name: doc.title || doc.name }),
      );
      list.append(
        el(
          "li",
          { class: "related" },
          open,
          el("span", { class: "muted small", text: ` · ${doc.kind} · ${Math.round(item.score * 100)}% alike` }),
          el("p", { class: "chunk-text", text: item.passage.text.slice(0, 280) }),
        ),
      );
    }
    body.append(list);
  } catch (error) {
    if (mine === generation) showError($("#preview-error"), error);
  }
}

// Open the preview of one document; with `chunkId`, the passages view centred on that chunk.
export async function openPreview({ brain, documentId, chunkId = null, name = "" }) {
  current = { brain, documentId, chunkId };
  showError($("#preview-error"), null);
  $("#preview-title").textContent = name || "Preview";
  $("#preview-meta").textContent = "";
  if (!dialog.open) dialog.showModal();
  api
    .get(`/brains/${path(brain)}/files/${path(documentId)}`)
    .then((doc) => {
      $("#preview-title").textContent = doc.title || doc.name;
      const bits = [doc.name, plural(doc.chunk_count, "passage"), doc.status];
      if (brain) bits.unshift(`brain ${brain}`);
      $("#preview-meta").textContent = bits.join(" · ");
    })
    .catch((error) => showError($("#preview-error"), error));
  await showChunks();
}

chunksButton.addEventListener("click", () => current && showChunks());
textButton.addEventListener("click", () => current && showText());
relatedButton.addEventListener("click", () => current && showRelated());
dialog.addEventListener("close", () => {
  generation++;
  clear(body);
});
