// The files panel: uploads (drop or pick; one request per file, each with its progress bar),
// web pages by URL, and the brain's documents with their status, polled while any is processing.

import { api, path, uploadFile } from "./api.js";
import { $, busy, bytes, clear, confirmAction, el, plural, showError, toast, when } from "./dom.js";
import { openPreview } from "./preview.js";

const POLL_MS = 1500;
const STATUS_LABEL = { processing: "Processing…", ready: "Ready", failed: "Failed" };
const KIND_LABEL = { file: "File", web: "Web page", note: "Note" };

const list = $("#file-list");
const uploads = $("#upload-list");
const errorBox = $("#files-error");
const rows = new Map(); // document id → {item, refs}
let brain = null; // {name, role}
let active = false;
let pollTimer = null;
let generation = 0; // bumps on every brain change, so late answers for another brain are dropped

const canWrite = () => brain && brain.role !== "viewer";

export function showFiles(current) {
  if (!brain || brain.name !== current.name) {
    generation++;
    rows.clear();
    clear(list);
    clear(uploads);
    $("#clear-uploads").hidden = true;
    showError(errorBox, null);
  }
  brain = current;
  active = true;
  for (const control of [$("#file-input"), $("#url-input"), $("#url-form button")]) {
    control.disabled = !canWrite();
  }
  $("#drop-zone").classList.toggle("disabled", !canWrite());
  refresh();
}

export function hideFiles() {
  active = false;
  clearTimeout(pollTimer);
}

async function refresh() {
  clearTimeout(pollTimer);
  if (!brain) return;
  const mine = generation;
  try {
    const documents = await api.get(`/brains/${path(brain.name)}/files`);
    if (mine !== generation) return;
    // Notes have their own tab; graph pages, evidence and captured items have the Brain tab.
    render(documents.filter((d) => d.kind === "file" || d.kind === "web"));
    showError(errorBox, null);
    if (active && documents.some((d) => d.status === "processing")) {
      pollTimer = setTimeout(refresh, POLL_MS);
    }
  } catch (error) {
    if (mine !== generation) return;
    showError(errorBox, error);
    if (active) pollTimer = setTimeout(refresh, POLL_MS * 4);
  }
}

// Rows are updated in place (keyed by id) so polling never steals focus or scroll position.
function render(documents) {
  const seen = new Set();
  documents.forEach((doc, position) => {
    seen.add(doc.id);
    let row = rows.get(doc.id);
    if (!row) {
      row = makeRow(doc);
      rows.set(doc.id, row);
    }
    update(row, doc);
    if (list.children[position] !== row.item) list.insertBefore(row.item, list.children[position] || null);
  });
  for (const [id, row] of rows) {
    if (!seen.has(id)) {
      row.item.remove();
      rows.delete(id);
    }
  }
  $("#files-empty").hidden = documents.length > 0;
}

function makeRow(doc) {
  const refs = {
    name: el("span", { class: "doc-name" }),
    kind: el("span", { class: "badge" }),
    meta: el("span", { class: "doc-meta muted small" }),
    status: el("span", { class: "status" }),
    reason: el("span", { class: "reason" }),
    preview: el("button", { type: "button", text: "Preview" }),
    retry: el("button", { type: "button", text: "Retry" }),
    download: el("a", { class: "button", text: "Download" }),
    remove: el("button", { type: "button", class: "danger", text: "Delete" }),
  };
  const item = el(
    "li",
    { class: "doc-row", dataset: { id: doc.id } },
    el("div", { class: "doc-head" }, refs.name, refs.kind),
    refs.meta,
    el("div", { class: "doc-status", role: "status" }, refs.status, refs.reason),
    el("div", { class: "actions" }, refs.preview, refs.retry, refs.download, refs.remove),
  );
  const row = { item, refs, doc };
  refs.preview.addEventListener("click", () =>
    openPreview({ brain: brain.name, documentId: row.doc.id, name: row.doc.name }),
  );
  refs.retry.addEventListener("click", () => reprocess(row));
  refs.remove.addEventListener("click", () => remove(row));
  return row;
}

function update(row, doc) {
  const { refs, item } = row;
  row.doc = doc;
  const label = doc.title && doc.title !== doc.name ? `${doc.title} (${doc.name})` : doc.name;
  refs.name.textContent = label;
  refs.kind.textContent = KIND_LABEL[doc.kind] || doc.kind;
  const meta = [bytes(doc.size_bytes), `added ${when(doc.created_at)}`];
  if (doc.status === "ready") meta.splice(1, 0, plural(doc.chunk_count, "passage"));
  if (doc.source_url) meta.push(doc.source_url);
  if (doc.gone_at) meta.push(`file deleted ${doc.gone_at.slice(0, 10)}`);
  refs.meta.textContent = meta.join(" · ");
  refs.status.textContent = STATUS_LABEL[doc.status] || doc.status;
  refs.status.className = `status status-${doc.status}`;
  refs.reason.textContent = doc.status === "failed" && doc.status_reason ? doc.status_reason : "";
  item.dataset.status = doc.status;
  refs.retry.textContent = doc.status === "failed" ? "Retry" : "Reprocess";
  refs.retry.disabled = doc.status === "processing" || !canWrite();
  refs.retry.setAttribute("aria-label", `${refs.retry.textContent} ${doc.name}`);
  refs.preview.setAttribute("aria-label", `Preview ${doc.name}`);
  refs.remove.setAttribute("aria-label", `Delete ${doc.name}`);
  refs.remove.disabled = !canWrite();
  refs.download.href = `/api/v1/brains/${path(brain.name)}/files/${path(doc.id)}/download`;
  refs.download.setAttribute("download", doc.name);
  refs.download.setAttribute("aria-label", `Download ${doc.name}`);
}

async function reprocess(row) {
  await busy(row.refs.retry, async () => {
    try {
      const doc = await api.post(`/brains/${path(brain.name)}/files/${path(row.doc.id)}/reprocess`);
      update(row, doc);
      toast(`Processing ${doc.name} again.`);
      refresh();
    } catch (error) {
      showError(errorBox, error);
    }
  });
}

async function remove(row) {
  const name = row.doc.name;
  if (!(await confirmAction(`Delete “${name}” and everything indexed from it?`))) return;
  try {
    await api.delete(`/brains/${path(brain.name)}/files/${path(row.doc.id)}`);
    row.item.remove();
    rows.delete(row.doc.id);
    $("#files-empty").hidden = rows.size > 0;
    toast(`Deleted ${name}.`);
  } catch (error) {
    showError(errorBox, error);
  }
}

// Uploads -------------------------------------------------------------------------------------
// Upload one file to a brain; `onProgress(fraction)` follows the bytes sent. Resolves with the
// server's result ({name, document, deduped}); a refused file rejects with the reason. The chat
// (ask-drop.js) uploads through this too.
export async function upload(brainName, file, onProgress = () => {}) {
  const result = await uploadFile(`/brains/${path(brainName)}/files`, file, onProgress);
  if (result.error) throw new Error(result.error.message || "The file was refused.");
  return result;
}

// Poll a document, as the list does, until indexing settles it: resolves with it, ready or
// failed. `stillWanted()` returning false stops the polling (resolves null).
export async function whenIndexed(brainName, documentId, stillWanted = () => true) {
  for (;;) {
    const doc = await api.get(`/brains/${path(brainName)}/files/${path(documentId)}`);
    if (doc.status !== "processing") return doc;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    if (!stillWanted()) return null;
  }
}

function addFiles(fileList) {
  if (!canWrite()) {
    showError(errorBox, new Error("Your role in this brain is viewer: you cannot add files."));
    return;
  }
  showError(errorBox, null);
  for (const file of fileList) uploadOne(file);
}

async function uploadOne(file) {
  const target = brain.name;
  const mine = generation;
  const bar = el("progress", { max: "1", value: "0", "aria-label": `Uploading ${file.name}` });
  const state = el("span", { class: "upload-state small", text: "Uploading…" });
  const item = el(
    "li",
    { class: "upload", dataset: { state: "uploading" } },
    el("span", { class: "doc-name", text: file.name }),
    el("span", { class: "muted small", text: bytes(file.size) }),
    bar,
    state,
  );
  uploads.append(item);
  try {
    const result = await upload(target, file, (fraction) => {
      bar.value = fraction;
      state.textContent = fraction < 1 ? `Uploading… ${Math.round(fraction * 100)}%` : "Storing…";
    });
    bar.value = 1;
    item.dataset.state = "done";
    state.textContent = result.deduped
      ? "Already in this brain — kept the existing copy."
      : "Uploaded. Indexing below.";
  } catch (error) {
    item.dataset.state = "failed";
    state.textContent = `Not uploaded: ${error.message}`;
    state.classList.add("error-text");
  }
  $("#clear-uploads").hidden = false;
  if (mine === generation) refresh();
}

function setupDropZone() {
  const zone = $("#drop-zone");
  const input = $("#file-input");
  input.addEventListener("change", () => {
    addFiles([...input.files]);
    input.value = "";
  });
  let depth = 0; // dragenter/leave fire for every child; count them
  zone.addEventListener("dragenter", (event) => {
    event.preventDefault();
    depth++;
    zone.classList.add("dragging");
  });
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = "copy";
  });
  zone.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (!depth) zone.classList.remove("dragging");
  });
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    depth = 0;
    zone.classList.remove("dragging");
    const files = event.dataTransfer ? [...event.dataTransfer.files] : [];
    if (files.length) addFiles(files);
  });
  // A file dropped beside the zone must not navigate away from the app.
  for (const type of ["dragover", "drop"]) {
    window.addEventListener(type, (event) => {
      if (!zone.contains(event.target)) event.preventDefault();
    });
  }
  $("#clear-uploads").addEventListener("click", () => {
    for (const item of [...uploads.children]) {
      if (item.dataset.state !== "uploading") item.remove();
    }
    $("#clear-uploads").hidden = true;
  });
}

function setupUrlForm() {
  const form = $("#url-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = $("#url-input");
    const url = input.value.trim();
    if (!url) return;
    await busy(form.querySelector("button"), async () => {
      try {
        const added = await api.post(`/brains/${path(brain.name)}/urls`, { url, tags: [] });
        input.value = "";
        showError(errorBox, null);
        toast(added.deduped ? "That page is already in this brain." : `Added ${added.document.name}.`);
        refresh();
      } catch (error) {
        showError(errorBox, error);
      }
    });
  });
}

setupDropZone();
setupUrlForm();
