// The document preview: the source at the cited passage (source-view.js: a PDF's page with the
// passage marked, the lines of a text, the moment of a recording), its passages as search sees
// them (page, lines, heading path) with the cited one highlighted, the full extracted text,
// related documents, and its versions (versions.js). Text is marked with its language (`lang`),
// so a screen reader reads it in that language's voice.

import { api, path } from "./api.js";
import { $, clear, el, languageName, plural, showError, where } from "./dom.js";
import { showSource } from "./source-view.js";
import { showVersions } from "./versions.js";

const dialog = $("#preview-dialog");
const body = $("#preview-body");
const sourceButton = $("#preview-show-source");
const chunksButton = $("#preview-show-chunks");
const textButton = $("#preview-show-text");
const relatedButton = $("#preview-show-related");
const versionsButton = $("#preview-show-versions");
let current = null; // {brain, documentId, chunkId, doc: a promise of the document}
let generation = 0;

function setView(view) {
  sourceButton.setAttribute("aria-pressed", String(view === "source"));
  chunksButton.setAttribute("aria-pressed", String(view === "chunks"));
  textButton.setAttribute("aria-pressed", String(view === "text"));
  relatedButton.setAttribute("aria-pressed", String(view === "related"));
  versionsButton.setAttribute("aria-pressed", String(view === "versions"));
}

async function showSourceView() {
  setView("source");
  const mine = ++generation;
  const { brain, documentId, chunkId } = current;
  clear(body).append(el("p", { class: "muted", text: "Opening the source…" }));
  try {
    const query = chunkId ? `?chunk_id=${encodeURIComponent(chunkId)}` : "";
    const [doc, passage] = await Promise.all([
      current.doc,
      api.get(`/brains/${path(brain)}/files/${path(documentId)}/passage${query}`),
    ]);
    if (mine !== generation) return;
    await showSource(body, brain, doc, passage);
  } catch (error) {
    if (mine !== generation) return;
    clear(body);
    showError($("#preview-error"), error);
  }
}

async function showChunks() {
  setView("chunks");
  const mine = ++generation;
  const { brain, documentId, chunkId } = current;
  clear(body).append(el("p", { class: "muted", text: "Loading passages…" }));
  try {
    const [doc, chunks] = await Promise.all([
      current.doc,
      api.get(`/brains/${path(brain)}/files/${path(documentId)}/chunks`),
    ]);
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
      const language = chunk.language || doc.language;
      // A passage in another language than its document's says which.
      const other = chunk.language && doc.language && chunk.language !== doc.language;
      const place = [where(chunk) || `passage ${chunk.index + 1}`, other ? languageName(chunk.language) : ""];
      const item = el(
        "li",
        {
          class: isCited ? "chunk cited" : "chunk",
          id: `chunk-${chunk.id}`,
          dataset: { chunkId: chunk.id },
          tabindex: isCited ? "-1" : undefined,
          "aria-current": isCited ? "true" : undefined,
        },
        el("p", { class: "chunk-where", text: place.filter(Boolean).join(" · ") }),
        el("p", { class: "chunk-text", lang: language || undefined, text: chunk.text }),
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
    const [doc, text] = await Promise.all([
      current.doc,
      api.get(`/brains/${path(brain)}/files/${path(documentId)}/text`),
    ]);
    if (mine !== generation) return;
    clear(body);
    if (!text.text) {
      body.append(el("p", { class: "muted", text: "No text yet: the document is not indexed." }));
      return;
    }
    body.append(el("pre", { class: "extracted", lang: doc.language || undefined, text: text.text }));
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

// The earlier contents kept, and what changed between them; an editor restores one.
async function showVersionsView() {
  setView("versions");
  const mine = ++generation;
  const { brain, documentId } = current;
  clear(body).append(el("p", { class: "muted", text: "Loading versions…" }));
  try {
    await showVersions(body, {
      brain,
      documentId,
      errorBox: $("#preview-error"),
      isCurrent: () => mine === generation,
      onChanged: (doc) => {
        current.doc = Promise.resolve(doc);
        describe(doc);
        document.dispatchEvent(new CustomEvent("loci:document-changed", { detail: doc }));
      },
    });
  } catch (error) {
    if (mine !== generation) return;
    clear(body);
    showError($("#preview-error"), error);
  }
}

const VIEWS = {
  source: showSourceView,
  chunks: showChunks,
  text: showText,
  related: showRelated,
  versions: showVersionsView,
};

// The title and one line about the document: its brain, name, language, passages and state.
function describe(doc) {
  $("#preview-title").textContent = doc.title || doc.name;
  const bits = [doc.name, plural(doc.chunk_count, "passage"), doc.status];
  if (doc.language) bits.splice(1, 0, languageName(doc.language));
  if (current.brain) bits.unshift(`brain ${current.brain}`);
  $("#preview-meta").textContent = bits.join(" · ");
}

// Open the preview of one document at its source; with `chunkId`, at that passage; with
// `view`, at another view ("versions", …).
export async function openPreview({ brain, documentId, chunkId = null, name = "", view = "source" }) {
  // The document is asked for once: the title and the source view both wait for it.
  const doc = api.get(`/brains/${path(brain)}/files/${path(documentId)}`);
  const opened = { brain, documentId, chunkId, doc };
  current = opened;
  showError($("#preview-error"), null);
  $("#preview-title").textContent = name || "Preview";
  $("#preview-meta").textContent = "";
  if (!dialog.open) dialog.showModal();
  doc
    .then((doc) => current === opened && describe(doc))
    .catch((error) => current === opened && showError($("#preview-error"), error));
  await (VIEWS[view] || showSourceView)();
}

sourceButton.addEventListener("click", () => current && showSourceView());
chunksButton.addEventListener("click", () => current && showChunks());
textButton.addEventListener("click", () => current && showText());
relatedButton.addEventListener("click", () => current && showRelated());
versionsButton.addEventListener("click", () => current && showVersionsView());
dialog.addEventListener("close", () => {
  generation++;
  clear(body);
});
