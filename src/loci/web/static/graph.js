// The Brain panel: the brain's graph of pages and evidence grouped by folder, the inbox of
// captures waiting for curation, archived pages in a collapsed section (merged tombstones are
// not listed), a finder over the graph query route, and one page at a time (graph-page.js).
// A page's address is #brain/<id>, so links between pages are plain links and Back works.

import { api, path } from "./api.js";
import { $, clear, el, markedSnippet, plural, showError } from "./dom.js";
import { setupNewPage, openNewPage } from "./graph-new.js";
import { setupOrganize } from "./graph-organize.js";
import { leavePage, openPage, openedId, pageHref, setupPage } from "./graph-page.js";
import { isDrawn, showGraphView, stopGraphView } from "./graph-view.js";

const browser = $("#graph-browser");
const pageView = $("#graph-page");
const errorBox = $("#graph-error");
let brain = null;
let generation = 0; // bumps on every brain change, so late answers for another brain are dropped
let documents = []; // every document but merged tombstones, which the view never shows
let titles = new Map(); // id → title, for links shown by id (tombstones' too)
let tombstones = new Set(); // ids of merged documents: their links are not shown either
let view = "all"; // "all", "inbox" or "graph"
let finding = null; // the query shown instead of the folders, or null

const inInbox = (d) => (d.folder === "inbox" || d.folder.startsWith("inbox/")) && d.status === "draft";

setupPage({
  titleOf: (id) => titles.get(id) || id,
  isTombstone: (id) => tombstones.has(id),
  onChanged: () => loadList(),
  pages: () => documents.map((d) => ({ id: d.id, title: d.title })),
});
setupOrganize({
  // Written: the list learns the new title or place; a moved page is shown at its new id.
  changed: async (id) => {
    await loadList();
    if (id !== openedId()) location.hash = pageHref(id);
    else await openPage(brain, id);
  },
  open: async (id) => {
    await loadList();
    location.hash = pageHref(id);
  },
});
setupNewPage({
  onCreated: async (made) => {
    await loadList();
    location.hash = pageHref(made.id);
  },
});

export async function showGraph(current, docId) {
  if (!brain || brain.name !== current.name) {
    if (brain && !(await leavePage())) return;
    generation++;
    documents = [];
    titles = new Map();
    tombstones = new Set();
    finding = null;
    $("#graph-filter").value = "";
    showError(errorBox, null);
  }
  brain = current;
  if (docId) {
    if (docId !== openedId() || pageView.hidden) await showPage(docId);
    return;
  }
  if (!(await leavePage())) {
    history.replaceState(null, "", pageHref(openedId()));
    return;
  }
  showScreen("browser");
  loadList();
}

// The panel is being left: whatever the editor holds is saved on its way out.
export function hideGraph() {
  if (!pageView.hidden) leavePage();
  stopGraphView();
}

function showScreen(which) {
  browser.hidden = which !== "browser";
  pageView.hidden = which !== "page";
  if (which !== "browser") stopGraphView();
}

async function showPage(id) {
  const previous = openedId();
  if (!pageView.hidden && !(await leavePage())) {
    history.replaceState(null, "", pageHref(previous));
    return;
  }
  const mine = generation;
  try {
    if (!documents.length) await loadList(); // titles for the links on the page
    await openPage(brain, id);
    if (mine !== generation) return;
    showScreen("page");
    showError($("#graph-page-error"), null);
  } catch (error) {
    if (mine !== generation) return;
    showScreen("browser");
    showError(errorBox, error.status === 404 ? new Error(`There is no page “${id}” in this brain.`) : error);
    loadList();
  }
}

async function loadList() {
  const mine = generation;
  try {
    const found = await api.get(
      `/brains/${path(brain.name)}/graph/documents?include_archived=true&include_merged=true`,
    );
    if (mine !== generation) return;
    documents = found.filter((d) => d.status !== "merged");
    tombstones = new Set(found.filter((d) => d.status === "merged").map((d) => d.id));
    titles = new Map(found.map((d) => [d.id, d.title]));
    showError(errorBox, null);
    $("#new-page-button").hidden = brain.role === "viewer";
    if (view === "graph") stopGraphView(); // drawn again from what was just read
    if (!finding) renderFolders();
  } catch (error) {
    if (mine === generation) showError(errorBox, error);
  }
}

function folderOrder(a, b) {
  const rank = (f) => (f === "inbox" || f.startsWith("inbox/") ? 0 : f.startsWith("evidence") ? 2 : 1);
  return rank(a) - rank(b) || a.localeCompare(b);
}

function item(doc) {
  return el(
    "li",
    { class: "graph-item", dataset: { id: doc.id, status: doc.status } },
    el("a", { class: "graph-open", href: pageHref(doc.id), text: doc.title }),
    el("span", { class: "badge", text: doc.kind === "evidence" ? "evidence" : doc.type }),
    doc.status !== "active" ? el("span", { class: `graph-status status-${doc.status}`, text: doc.status }) : null,
  );
}

function renderFolders() {
  $("#graph-results").hidden = true;
  $("#graph-filter-clear").hidden = true;
  const inbox = documents.filter(inInbox);
  $("#graph-show-inbox").textContent = `Inbox (${inbox.length})`;
  for (const chip of document.querySelectorAll("#graph-views .chip")) {
    chip.setAttribute("aria-pressed", String(chip.id === `graph-show-${view}`));
  }
  const drawing = view === "graph";
  $("#graph-drawing").hidden = !drawing;
  $("#graph-groups").hidden = drawing;
  $("#graph-summary").hidden = drawing;
  if (drawing) {
    $("#graph-archived").hidden = true;
    if (!isDrawn(brain.name)) showGraphView(brain, documents).catch((error) => showError(errorBox, error));
    return;
  }
  stopGraphView();
  const live = view === "inbox" ? inbox : documents.filter((d) => d.status !== "archived");
  const archived = view === "inbox" ? [] : documents.filter((d) => d.status === "archived");
  const byFolder = new Map();
  for (const doc of live) {
    if (!byFolder.has(doc.folder)) byFolder.set(doc.folder, []);
    byFolder.get(doc.folder).push(doc);
  }
  const groups = clear($("#graph-groups"));
  for (const folder of [...byFolder.keys()].sort(folderOrder)) {
    const docs = byFolder.get(folder).sort((a, b) => a.title.localeCompare(b.title));
    groups.append(
      el(
        "section",
        { class: "graph-group", dataset: { folder } },
        el("h3", { class: "graph-folder", text: `${folder}/` }, el("span", { class: "muted small", text: ` ${docs.length}` })),
        el("ul", { class: "graph-list" }, ...docs.map(item)),
      ),
    );
  }
  const summary = $("#graph-summary");
  if (view === "inbox") {
    summary.textContent = inbox.length
      ? `${plural(inbox.length, "capture")} waiting for curation in inbox/.`
      : "The inbox is empty: every capture has found its home.";
  } else {
    summary.textContent = documents.length
      ? `${plural(live.length, "document")} in ${plural(byFolder.size, "folder")}.`
      : "No pages yet. Pages arrive from captures, curation, the CLI (loci brain create) and the API.";
  }
  const section = $("#graph-archived");
  section.hidden = archived.length === 0;
  $("#graph-archived-count").textContent = `(${archived.length})`;
  clear($("#graph-archived-list")).append(...archived.sort((a, b) => a.title.localeCompare(b.title)).map(item));
}

async function find(query) {
  const mine = generation;
  finding = query;
  try {
    const answer = await api.post(`/brains/${path(brain.name)}/graph/query`, { query, limit: 30 });
    if (mine !== generation || finding !== query) return;
    showError(errorBox, null);
    renderResults(answer.hits);
  } catch (error) {
    if (mine === generation) showError(errorBox, error);
  }
}

function renderResults(hits) {
  view = view === "graph" ? "all" : view;
  $("#graph-drawing").hidden = true;
  stopGraphView();
  $("#graph-summary").hidden = false;
  $("#graph-groups").hidden = false;
  clear($("#graph-groups"));
  $("#graph-archived").hidden = true;
  $("#graph-filter-clear").hidden = false;
  $("#graph-summary").textContent = hits.length
    ? `${hits.length} ${hits.length === 1 ? "match" : "matches"} for “${finding}”.`
    : `Nothing in this brain's graph matches “${finding}”. New pages take a few seconds to be found.`;
  const list = clear($("#graph-results"));
  list.hidden = false;
  for (const hit of hits) {
    const doc = hit.document;
    list.append(
      el(
        "li",
        { class: "hit graph-hit", dataset: { id: doc.id } },
        el("a", { class: "graph-open", href: pageHref(doc.id), text: doc.title }),
        el("p", { class: "muted small", text: `${doc.path} · ${doc.status} · found by ${hit.matched_by}` }),
        el("p", { class: "snippet" }, markedSnippet(hit.snippet, hit.highlights)),
      ),
    );
  }
}

function clearFinding() {
  finding = null;
  $("#graph-filter").value = "";
  renderFolders();
}

$("#graph-filter-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const query = $("#graph-filter").value.trim();
  if (query) find(query);
  else clearFinding();
});
$("#graph-filter-clear").addEventListener("click", clearFinding);
$("#new-page-button").addEventListener("click", () => brain && openNewPage(brain));
for (const chip of document.querySelectorAll("#graph-views .chip")) {
  chip.addEventListener("click", () => {
    view = chip.id.replace("graph-show-", "");
    finding = null;
    $("#graph-filter").value = "";
    renderFolders();
  });
}
