// One brain page: title, type, status, the compiled truth as the server's sanitized HTML (typed
// links already decorated), the timeline newest first, links and backlinks. Editors also get
// the truth editor (graph-editor.js), a status picker and a form for timeline entries; a viewer
// gets none of them (the API would refuse anyway).

import { api, path } from "./api.js";
import { $, busy, clear, confirmAction, el, showError, toast, when } from "./dom.js";
import { flush, isEditing, startEditing, stopEditing } from "./graph-editor.js";
import { showOrganize } from "./graph-organize.js";

const view = $("#graph-page");
const statusSelect = $("#graph-status");
// The grammar of loci.graph.links: [[page:id|Label]], [[evidence:ev-id|Label]], [[source:p:id|L]]
const TYPED_LINK = /\[\[(page|evidence|source):([^\]|]*)(?:\|([^\]]*))?\]\]/g;
// loci.graph.links.SLUG: letters of any script (lowercase where it has case), digits, marks, "-".
const SLUG = /^[\p{Ll}\p{Lo}\p{Lm}\p{Nd}](?:[\p{Ll}\p{Lo}\p{Lm}\p{Nd}\p{M}-]{0,126}[\p{Ll}\p{Lo}\p{Lm}\p{Nd}\p{M}])?$/u;

let opened = null; // the page as the API returned it
let doc = null; // {brain, id, hash}: the version every edit here is made against
let shownBrain = null;
let canWrite = false;
let titleOf = (id) => id;
let isTombstone = () => false;
let onChanged = () => {};
let pagesOf = () => [];

export const pageHref = (id) => `#brain/${encodeURIComponent(id)}`;

// A link to another document of the brain, page or evidence, as the truth's HTML has them.
export function docLink(id, label, kind = id.startsWith("ev-") ? "evidence" : "page") {
  return el("a", {
    class: `graph-link graph-${kind}`,
    href: pageHref(id),
    dataset: { graphId: id },
    text: label || titleOf(id),
  });
}

// Plain text with its typed links made into links (for timeline entries); all of it text nodes.
function linkedText(text) {
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(TYPED_LINK)) {
    const [whole, kind, rawTarget, label] = match;
    const target = rawTarget.trim();
    parts.push(text.slice(last, match.index));
    last = match.index + whole.length;
    const shown = (label || "").trim() || target;
    if (kind === "source") parts.push(el("span", { class: "graph-source", title: target, text: shown }));
    else if (SLUG.test(target)) parts.push(docLink(target, shown, kind));
    else parts.push(whole);
  }
  parts.push(text.slice(last));
  return parts.filter((p) => p !== "");
}

export function setupPage(options) {
  titleOf = options.titleOf;
  isTombstone = options.isTombstone;
  onChanged = options.onChanged;
  pagesOf = options.pages;
}

export async function openPage(brain, id) {
  const page = await api.get(`/brains/${path(brain.name)}/graph/documents/${path(id)}`);
  stopEditing();
  opened = page;
  doc = { brain: brain.name, id: page.document.id, hash: page.document.content_hash };
  shownBrain = brain;
  canWrite = brain.role !== "viewer";
  render(page);
  for (const box of ["#graph-status-error", "#graph-page-error", "#graph-timeline-error"]) {
    showError($(box), null);
  }
  $("#graph-title").focus();
}

export const openedId = () => (opened ? opened.document.id : null);

// Before another page or view replaces this one: save what is pending; an edit that could not
// be saved (a conflict, a refusal) is only dropped when the person says so.
export async function leavePage() {
  if (!isEditing()) return true;
  if (!(await flush())) {
    const title = opened ? opened.document.title : "this page";
    if (!(await confirmAction(`Your edit to “${title}” is not saved. Leave it anyway?`, "Leave"))) {
      return false;
    }
  }
  stopEditing();
  return true;
}

function render(page) {
  const summary = page.document;
  $("#graph-title").textContent = summary.title;
  const meta = clear($("#graph-meta"));
  meta.append(
    el("span", { class: "badge", text: summary.kind === "evidence" ? "evidence" : summary.type }),
    " ",
    el("span", { class: `graph-status status-${summary.status}`, text: summary.status }),
    ` · ${summary.path} · updated ${when(summary.updated)}`,
  );
  if (summary.aliases.length) meta.append(` · also “${summary.aliases.join("”, “")}”`);
  const merged = $("#graph-merged");
  merged.hidden = !(summary.status === "merged" && summary.merged_into);
  if (!merged.hidden) clear(merged).append("Merged into ", docLink(summary.merged_into));

  const tombstone = summary.status === "merged";
  $("#graph-controls").hidden = !canWrite || tombstone;
  $("#graph-timeline-form").hidden = !canWrite || tombstone;
  statusSelect.value = summary.status;
  $("#graph-truth").innerHTML = page.html; // rendered from Markdown and sanitized by the server
  $("#graph-truth").hidden = isEditing();
  $("#graph-edit-button").hidden = isEditing();
  renderTimeline(page.timeline);
  renderEdges(page);
  // Organizing edits the version shown; while the truth editor holds newer text, its own.
  showOrganize(shownBrain, { ...summary, content_hash: doc.hash }, pagesOf(), canWrite);
}

function renderTimeline(entries) {
  // Newest first; entries of one day in reverse order of writing.
  const ordered = entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => b.entry.at.localeCompare(a.entry.at) || b.index - a.index)
    .map((item) => item.entry);
  const list = clear($("#graph-timeline"));
  $("#graph-timeline-empty").hidden = ordered.length > 0;
  for (const entry of ordered) {
    list.append(
      el(
        "li",
        { class: "graph-entry", dataset: { entryId: entry.entry_id } },
        el("time", { class: "graph-entry-at", datetime: entry.at, text: entry.at }),
        el("span", { class: "graph-entry-text" }, ...linkedText(entry.text)),
        entry.source ? el("span", { class: "graph-entry-source muted small", text: `source: ${entry.source}` }) : null,
      ),
    );
  }
}

function renderEdges(page) {
  const edgeItem = (id, type, kind) =>
    el(
      "li",
      {},
      docLink(id, null, kind),
      type === "wiki_link" || type === "cites" ? null : el("span", { class: "muted small", text: ` ${type}` }),
    );
  const fill = (selector, items, empty) => {
    const list = clear($(selector));
    if (items.length) list.append(...items);
    else list.append(el("li", { class: "muted small", text: empty }));
  };
  // Each page once, with every way this one links to it ("works_at, wiki link").
  const byTarget = new Map();
  for (const edge of page.links.filter((e) => e.type !== "cites")) {
    if (!byTarget.has(edge.target)) byTarget.set(edge.target, []);
    byTarget.get(edge.target).push(edge.type);
  }
  fill(
    "#graph-links",
    [...byTarget].map(([target, types]) => {
      const named = [...new Set(types.filter((t) => t !== "wiki_link"))];
      return el(
        "li",
        { dataset: { target } },
        docLink(target, null, "page"),
        named.length ? el("span", { class: "muted small", text: ` ${named.join(", ")}` }) : null,
      );
    }),
    "None.",
  );
  fill(
    "#graph-cites",
    page.links.filter((e) => e.type === "cites").map((e) => edgeItem(e.target, e.type, "evidence")),
    "None.",
  );
  fill(
    "#graph-backlinks",
    // A merged tombstone still links to what it was merged into; the view hides tombstones.
    page.backlinks.filter((e) => !isTombstone(e.source)).map((e) => edgeItem(e.source, e.type, "page")),
    "Nothing links here yet.",
  );
}

// Fetch the page again and show it, the editor (if open) keeping its draft.
async function refresh() {
  const page = await api.get(`/brains/${path(doc.brain)}/graph/documents/${path(doc.id)}`);
  opened = page;
  if (!isEditing()) doc.hash = page.document.content_hash;
  render(page);
}

async function setStatus() {
  const errorBox = $("#graph-status-error");
  const wanted = statusSelect.value;
  const before = opened.document.status;
  if (wanted === before) return;
  statusSelect.disabled = true;
  try {
    await flush();
    const written = await api.patch(`/brains/${path(doc.brain)}/graph/documents/${path(doc.id)}/fields`, {
      fields: { status: wanted },
      expected_hash: doc.hash,
    });
    doc.hash = written.content_hash;
    showError(errorBox, null);
    toast(`Status set to ${wanted}.`);
    await refresh();
    onChanged();
  } catch (error) {
    statusSelect.value = before;
    const message =
      error.status === 409
        ? "This page changed since you opened it; open it again to see the latest version."
        : `Status not changed: ${error.message}`;
    showError(errorBox, new Error(message));
  } finally {
    statusSelect.disabled = false;
  }
}

async function addEntry(event) {
  event.preventDefault();
  const errorBox = $("#graph-timeline-error");
  const text = $("#graph-entry-text").value.trim();
  if (!text) {
    showError(errorBox, new Error("Write what happened first."));
    $("#graph-entry-text").focus();
    return;
  }
  const body = { text };
  const at = $("#graph-entry-at").value;
  const source = $("#graph-entry-source").value.trim();
  if (at) body.at = at;
  if (source) body.source = source;
  await busy(event.target.querySelector("button[type=submit]"), async () => {
    try {
      await flush();
      const written = await api.post(
        `/brains/${path(doc.brain)}/graph/documents/${path(doc.id)}/timeline`,
        body,
      );
      doc.hash = written.document.content_hash;
      showError(errorBox, null);
      event.target.reset();
      toast(written.changed ? "Timeline entry added." : "That entry is already on the timeline.");
      await refresh();
      onChanged();
    } catch (error) {
      showError(errorBox, error);
    }
  });
}

async function edit() {
  $("#graph-truth").hidden = true;
  $("#graph-edit-button").hidden = true;
  startEditing(doc, opened.truth);
}

async function doneEditing(button) {
  await busy(button, async () => {
    if (!(await leavePage())) return;
    try {
      await refresh();
    } catch (error) {
      showError($("#graph-page-error"), error);
    }
    $("#graph-edit-button").focus();
  });
}

statusSelect.addEventListener("change", setStatus);
$("#graph-timeline-form").addEventListener("submit", addEntry);
$("#graph-edit-button").addEventListener("click", edit);
$("#graph-done-button").addEventListener("click", (event) => doneEditing(event.currentTarget));
view.addEventListener("keydown", (event) => {
  // Escape in the editor is "done", as it closes a dialog.
  if (event.key === "Escape" && isEditing() && event.target.id === "graph-truth-text") {
    doneEditing($("#graph-done-button"));
  }
});
