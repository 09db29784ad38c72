// The Files list: a brain's files, web pages and notes, newest first unless another order is
// chosen (name, size, status, type); a filter box and filters by format and status, applied by
// the server (GET …/files with q, format, status, sort, order), 50 rows at a time. Rows are kept
// by id and updated in place while anything shown is still being indexed, so polling never
// moves the focus or the scroll. A row's actions sit in one menu.

import { api, path } from "./api.js";
import { $, bytes, clear, confirmAction, download, el, languageName, showError, toast, when } from "./dom.js";
import { FORMAT_LABEL, failureText, indexingStep, readyText } from "./doc-status.js";
import { menuButton } from "./menu.js";
import { openPreview } from "./preview.js";

const PAGE = 50;
const POLL_MS = 1500;
const VIEW_KEY = "loci.files.view";
// The Files tab holds what people add; graph pages and captures live in the Brain tab.
const KINDS = "file,web,note";
const SORTS = {
  newest: ["added", "desc"],
  oldest: ["added", "asc"],
  "name-asc": ["name", "asc"],
  "name-desc": ["name", "desc"],
  largest: ["size", "desc"],
  smallest: ["size", "asc"],
  status: ["status", "asc"],
  format: ["format", "asc"],
};

const listNode = $("#file-list");
// Its own box: a refresh that succeeds clears only what the list said, never the error of an add.
const errorBox = $("#file-list-error");
const summary = $("#files-summary");
const rows = new Map(); // document id → row
let brain = null;
let shown = PAGE; // how many rows the list asks for
let total = 0;
let active = false;
let timer = null;
let generation = 0; // bumps on every change of brain or view: late answers are dropped
let multilingual = false; // the brain holds documents in several languages

const canWrite = () => brain && brain.role !== "viewer";

function view() {
  return {
    q: $("#files-filter").value.trim(),
    format: $("#files-format").value,
    status: $("#files-status").value,
    sort: $("#files-sort").value,
  };
}

const filtered = (v = view()) => Boolean(v.q || v.format || v.status);

function keepView() {
  sessionStorage.setItem(VIEW_KEY, JSON.stringify(view()));
}

function restoreView() {
  let kept = {};
  try {
    kept = JSON.parse(sessionStorage.getItem(VIEW_KEY) || "{}") || {};
  } catch {
    // Unreadable: the default view.
  }
  $("#files-filter").value = typeof kept.q === "string" ? kept.q : "";
  $("#files-format").value = FORMAT_LABEL[kept.format] ? kept.format : "";
  $("#files-status").value = ["ready", "processing", "failed"].includes(kept.status) ? kept.status : "";
  $("#files-sort").value = SORTS[kept.sort] ? kept.sort : "newest";
}

export function showList(current) {
  if (!brain || brain.name !== current.name) {
    generation++;
    rows.clear();
    clear(listNode);
    shown = PAGE;
  }
  brain = current;
  active = true;
  refresh();
}

export function hideList() {
  active = false;
  clearTimeout(timer);
}

export function refreshList() {
  if (active) refresh();
}

function query() {
  const v = view();
  const [sort, order] = SORTS[v.sort] || SORTS.newest;
  const params = new URLSearchParams({ kind: KINDS, sort, order, limit: String(shown) });
  if (v.q) params.set("q", v.q);
  if (v.format) params.set("format", v.format);
  if (v.status) params.set("status", v.status);
  return params.toString();
}

async function refresh() {
  clearTimeout(timer);
  if (!brain) return;
  const mine = generation;
  try {
    const [page, status] = await Promise.all([
      api.get(`/brains/${path(brain.name)}/files?${query()}`, { withTotal: true }),
      api.get(`/brains/${path(brain.name)}/status`),
    ]);
    if (mine !== generation) return;
    total = page.total;
    showLanguages(status);
    render(page.items);
    showError(errorBox, null);
    if (active && page.items.some((d) => d.status === "processing")) timer = setTimeout(refresh, POLL_MS);
  } catch (error) {
    if (mine !== generation) return;
    showError(errorBox, error);
    if (active) timer = setTimeout(refresh, POLL_MS * 4);
  }
}

// The languages detected in the brain's documents, by name in the reader's own language.
function showLanguages(status) {
  const line = $("#brain-languages");
  const held = Object.entries(status.languages || {});
  // With more than one, each row says its document's.
  multilingual = held.length > 1;
  line.hidden = !held.length;
  line.textContent = `Languages: ${held.map(([code, n]) => `${languageName(code)} ${n}`).join(", ")}`;
}

// Two documents with the same title are told apart by where they came from.
function origin(doc) {
  if (doc.source_path) return doc.source_path.split("/").slice(-3).join("/");
  if (doc.source_url) return doc.source_url;
  return `${doc.name} · added ${when(doc.created_at)}`;
}

const label = (doc) => doc.title || doc.name;

function render(documents) {
  const seen = new Set();
  const byLabel = new Map();
  for (const doc of documents) byLabel.set(label(doc), (byLabel.get(label(doc)) || 0) + 1);
  documents.forEach((doc, position) => {
    seen.add(doc.id);
    let row = rows.get(doc.id);
    if (!row) {
      row = new Row(doc);
      rows.set(doc.id, row);
    }
    row.update(doc, byLabel.get(label(doc)) > 1);
    if (listNode.children[position] !== row.node) listNode.insertBefore(row.node, listNode.children[position] || null);
  });
  for (const [id, row] of rows) {
    if (!seen.has(id)) {
      row.node.remove();
      rows.delete(id);
    }
  }
  renderSummary(documents.length);
}

function renderSummary(count) {
  const empty = $("#files-empty");
  empty.hidden = count > 0;
  $("#files-clear-filter").hidden = !(count === 0 && filtered());
  $("#files-empty-text").textContent = filtered()
    ? "No documents match this filter."
    : "Nothing in this brain yet: add files or a web page above.";
  summary.textContent = !count
    ? ""
    : count < total
      ? `Showing ${count} of ${total}.`
      : filtered()
        ? `${total} ${total === 1 ? "document matches" : "documents match"}.`
        : `${total} ${total === 1 ? "document" : "documents"}.`;
  const more = $("#files-more");
  more.hidden = count >= total;
  more.textContent = `Show ${Math.min(PAGE, total - count)} more`;
}

class Row {
  constructor(doc) {
    this.name = el("span", { class: "doc-name" });
    this.format = el("span", { class: "badge" });
    this.origin = el("p", { class: "doc-origin muted small" });
    this.meta = el("p", { class: "doc-meta muted small" });
    this.status = el("span", { class: "status" });
    this.reason = el("span", { class: "reason" });
    this.help = el("p", { class: "doc-help small" });
    this.bar = el("progress", { max: "1", class: "doc-progress" });
    this.retry = el("button", { type: "button", class: "small", text: "Retry" });
    this.retry.addEventListener("click", () => this.reprocess());
    this.menu = el("div", { class: "row-actions" });
    this.node = el(
      "li",
      { class: "doc-row", dataset: { id: doc.id } },
      el("div", { class: "doc-head" }, this.name, this.format),
      this.origin,
      this.meta,
      el("div", { class: "doc-status" }, this.status, this.reason),
      this.bar,
      this.help,
      el("div", { class: "doc-fix" }, this.retry),
      this.menu,
    );
    this.menuFor = "";
  }

  update(doc, duplicate) {
    this.doc = doc;
    const { node } = this;
    node.dataset.status = doc.status;
    node.dataset.format = doc.format || "";
    this.name.textContent = doc.title && doc.title !== doc.name ? `${doc.title} (${doc.name})` : doc.name;
    this.format.textContent = FORMAT_LABEL[doc.format] || doc.kind;
    this.origin.textContent = duplicate ? `from ${origin(doc)}` : "";
    this.origin.hidden = !duplicate;
    const meta = [el("span", { text: bytes(doc.size_bytes) })];
    meta.push(" · added ", el("time", { datetime: doc.created_at, text: when(doc.created_at) }));
    if (multilingual && doc.language) meta.push(` · ${languageName(doc.language)}`);
    if (doc.source_url && !duplicate) meta.push(` · ${doc.source_url}`);
    // Kept after its file was deleted from a followed folder: found, but no longer on disk.
    if (doc.gone_at) meta.push(` · file deleted ${doc.gone_at.slice(0, 10)}`);
    clear(this.meta).append(...meta);
    this.status.className = `status status-${doc.status}`;
    this.reason.textContent = "";
    this.help.hidden = true;
    this.bar.hidden = true;
    this.retry.hidden = true;
    if (doc.status === "processing") {
      const step = indexingStep(doc);
      this.status.textContent = step.text;
      if (step.fraction !== null) {
        this.bar.value = step.fraction;
        this.bar.hidden = false;
        this.bar.setAttribute("aria-label", `Indexing ${doc.name}`);
      }
    } else if (doc.status === "ready") {
      this.status.textContent = readyText(doc);
    } else {
      const failed = failureText(doc);
      this.status.textContent = "Failed:";
      this.reason.textContent = failed.reason;
      this.help.textContent = failed.whatToDo;
      this.help.hidden = !failed.whatToDo;
      this.retry.hidden = !(failed.retry && canWrite());
      this.retry.setAttribute("aria-label", `Retry ${doc.name}`);
    }
    // The menu is rebuilt only when what it offers changes (a rebuild while open would close it).
    const offer = `${doc.name}|${doc.status}|${canWrite()}`;
    if (offer !== this.menuFor) {
      this.menuFor = offer;
      clear(this.menu).append(this.actions(doc));
    }
  }

  actions(doc) {
    const write = canWrite();
    const href = `/api/v1/brains/${path(brain.name)}/files/${path(doc.id)}/download`;
    return menuButton({
      label: `Actions for ${doc.name}`,
      actions: [
        { label: "Open", run: () => openPreview({ brain: brain.name, documentId: doc.id, name: label(doc) }) },
        {
          label: "Versions",
          run: () => openPreview({ brain: brain.name, documentId: doc.id, name: label(doc), view: "versions" }),
        },
        { label: "Download", run: () => download(href, doc.name) },
        write ? { label: "Reprocess", run: () => this.reprocess(), disabled: doc.status === "processing" } : null,
        write ? { label: "Delete", run: () => this.remove(), danger: true } : null,
      ],
    });
  }

  async reprocess() {
    try {
      const doc = await api.post(`/brains/${path(brain.name)}/files/${path(this.doc.id)}/reprocess`);
      this.update(doc, !this.origin.hidden);
      toast(`Indexing ${doc.name} again.`);
      refresh();
    } catch (error) {
      showError(errorBox, error);
    }
  }

  async remove() {
    const name = this.doc.name;
    if (!(await confirmAction(`Delete “${name}” and everything indexed from it?`))) return;
    try {
      await api.delete(`/brains/${path(brain.name)}/files/${path(this.doc.id)}`);
      this.node.remove();
      rows.delete(this.doc.id);
      total = Math.max(0, total - 1);
      renderSummary(rows.size);
      toast(`Deleted ${name}.`);
      $("#files-filter").focus();
    } catch (error) {
      showError(errorBox, error);
    }
  }
}

// The documents from one followed folder that failed to index (the Sources panel asks).
export function showFailedUnder(folder) {
  $("#files-filter").value = folder;
  $("#files-format").value = "";
  $("#files-status").value = "failed";
  changed();
  $("#files-list-heading").scrollIntoView({ block: "start" });
  $("#files-filter").focus({ preventScroll: true });
}

// The toolbar ---------------------------------------------------------------------------------
function changed() {
  generation++;
  shown = PAGE;
  keepView();
  refresh();
}

function setupToolbar() {
  const format = $("#files-format");
  for (const [value, text] of Object.entries(FORMAT_LABEL)) {
    if (value !== "page") format.append(el("option", { value, text }));
  }
  restoreView();
  let typing = null;
  $("#files-filter").addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(changed, 250);
  });
  for (const id of ["#files-format", "#files-status", "#files-sort"]) $(id).addEventListener("change", changed);
  $("#files-toolbar").addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(typing);
    changed();
  });
  $("#files-clear-filter").addEventListener("click", () => {
    $("#files-filter").value = "";
    $("#files-format").value = "";
    $("#files-status").value = "";
    changed();
    $("#files-filter").focus();
  });
  $("#files-more").addEventListener("click", () => {
    shown += PAGE;
    refresh();
  });
}

setupToolbar();
// A document changed elsewhere (a version restored in the preview): its row follows.
document.addEventListener("loci:document-changed", refreshList);
