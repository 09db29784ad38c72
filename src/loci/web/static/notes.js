// Notes: a list filtered by tag, a reader showing the server's sanitized HTML, and an editor
// that saves against the version it opened (expected_hash) and explains a conflict.

import { api, path } from "./api.js";
import { $, busy, clear, confirmAction, el, showError, toast, when } from "./dom.js";
import { canRecord, setupRecorder } from "./record.js";

// The fixed palette: colours are stored as hex, shown through classes (the CSP allows no inline
// styles).
export const PALETTE = [
  { name: "none", label: "No colour", hex: null },
  { name: "yellow", label: "Yellow", hex: "#fde68a" },
  { name: "green", label: "Green", hex: "#bbf7d0" },
  { name: "blue", label: "Blue", hex: "#bfdbfe" },
  { name: "pink", label: "Pink", hex: "#fbcfe8" },
  { name: "purple", label: "Purple", hex: "#ddd6fe" },
  { name: "orange", label: "Orange", hex: "#fed7aa" },
  { name: "grey", label: "Grey", hex: "#e5e7eb" },
];
const byHex = new Map(PALETTE.filter((c) => c.hex).map((c) => [c.hex, c]));
const colorClass = (hex) => `color-${(hex && byHex.get(hex.toLowerCase())?.name) || "none"}`;

const browser = $("#notes-browser");
const view = $("#note-view");
const editor = $("#note-editor");
const list = $("#note-list");
let brain = null;
let tagFilter = "";
let opened = null; // {document, text, html} of the note being read or edited
let generation = 0;
let pollTimer = null;

const canWrite = () => brain && brain.role !== "viewer";

export function showNotes(current) {
  if (!brain || brain.name !== current.name) {
    generation++;
    tagFilter = "";
    $("#tag-filter").value = "";
    showScreen("browser");
  }
  brain = current;
  $("#new-note-button").disabled = !canWrite();
  canRecord(canWrite());
  if (!browser.hidden) loadList();
}

function showScreen(which) {
  browser.hidden = which !== "browser";
  view.hidden = which !== "view";
  editor.hidden = which !== "editor";
}

// Whether the error shown is the list's own: a list that loads again clears only that, never the
// error of a note that would not open.
let listFailed = false;

async function loadList() {
  const mine = generation;
  const errorBox = $("#notes-error");
  const query = tagFilter ? `?tag=${encodeURIComponent(tagFilter)}` : "";
  try {
    const [notes, all] = await Promise.all([
      api.get(`/brains/${path(brain.name)}/notes${query}`),
      tagFilter ? api.get(`/brains/${path(brain.name)}/notes`) : null,
    ]);
    if (mine !== generation) return;
    if (listFailed) showError(errorBox, null);
    listFailed = false;
    renderTags(all || notes);
    renderList(notes);
    // A note just saved is indexed in a moment: its card follows, while the list is shown.
    clearTimeout(pollTimer);
    if (notes.some((n) => n.status === "processing")) {
      pollTimer = setTimeout(() => !browser.hidden && !$("#panel-notes").hidden && loadList(), 1500);
    }
  } catch (error) {
    if (mine !== generation) return;
    showError(errorBox, error);
    listFailed = true;
  }
}

function renderTags(notes) {
  const tags = [...new Set(notes.flatMap((n) => n.tags))].sort((a, b) => a.localeCompare(b));
  clear($("#known-tags")).append(...tags.map((t) => el("option", { value: t })));
  const chips = clear($("#tag-chips"));
  if (!tags.length) return;
  const chip = (label, tag) =>
    el("button", {
      type: "button",
      class: "chip",
      "aria-pressed": String(tagFilter === tag),
      text: label,
      onclick: () => setFilter(tag),
    });
  chips.append(chip("All", ""), ...tags.map((t) => chip(`#${t}`, t)));
}

function setFilter(tag) {
  tagFilter = tag.trim().replace(/^#/, "");
  $("#tag-filter").value = tagFilter;
  loadList();
}

function renderList(notes) {
  clear(list);
  const empty = $("#notes-empty");
  empty.hidden = notes.length > 0;
  empty.textContent = tagFilter ? `No notes match the tag ${tagFilter}.` : "No notes yet.";
  // The note changed last first: the one being worked on.
  const ordered = [...notes].sort((a, b) => b.updated_at.localeCompare(a.updated_at) || b.id - a.id);
  for (const note of ordered) {
    const title = note.title || note.name;
    list.append(
      el(
        "li",
        { class: `note-card ${colorClass(note.color)}` },
        el("button", {
          type: "button",
          class: "note-open",
          text: title,
          onclick: () => openNote(note.id),
        }),
        note.excerpt ? el("p", { class: "note-excerpt", text: note.excerpt }) : null,
        el("p", { class: "muted small" }, "updated ", el("time", { datetime: note.updated_at, text: when(note.updated_at) })),
        note.tags.length ? el("p", { class: "tags small", text: note.tags.map((t) => `#${t}`).join(" ") }) : null,
        note.status !== "ready"
          ? el("p", {
              class: `status status-${note.status} small`,
              text: note.status === "processing" ? "indexing…" : note.status,
            })
          : null,
      ),
    );
  }
}

async function openNote(id) {
  const mine = generation;
  try {
    const note = await api.get(`/brains/${path(brain.name)}/notes/${path(id)}`);
    if (mine !== generation) return;
    opened = note;
    showError($("#notes-error"), null);
    renderView(note);
    showScreen("view");
    $("#note-view-title").focus();
  } catch (error) {
    showError($("#notes-error"), error);
    listFailed = false;
  }
}

function renderView(note) {
  const doc = note.document;
  const title = $("#note-view-title");
  title.textContent = doc.title || doc.name;
  title.tabIndex = -1;
  const meta = [`updated ${when(doc.updated_at)}`];
  if (doc.tags.length) meta.push(doc.tags.map((t) => `#${t}`).join(" "));
  $("#note-view-meta").textContent = meta.join(" · ");
  view.className = `note-view card ${colorClass(doc.color)}`;
  // The server rendered the Markdown and sanitized it (nh3); it is the only HTML we insert.
  $("#note-view-body").innerHTML = note.html;
  $("#edit-note-button").disabled = !canWrite();
  $("#delete-note-button").disabled = !canWrite();
  showError($("#note-view-error"), null);
}

function openEditor(note) {
  opened = note;
  const doc = note ? note.document : null;
  $("#note-editor-heading").textContent = doc ? "Edit note" : "New note";
  // A title that is only the note's first line stays empty here, so it follows that line.
  const derived = note && doc.title === firstLine(note.text);
  $("#note-title").value = doc && !derived ? doc.title || "" : "";
  $("#note-tags").value = doc ? doc.tags.join(", ") : "";
  $("#note-text").value = note ? note.text : "";
  const wanted = colorClass(doc && doc.color);
  for (const radio of editor.querySelectorAll("input[name=note-color]")) {
    radio.checked = `color-${radio.value}` === wanted;
  }
  $("#note-conflict").hidden = true;
  showError($("#note-editor-error"), null);
  showScreen("editor");
  $("#note-title").focus();
}

// The first line of a note as it reads (loci.ingest.sources.note_title, in short).
function firstLine(text) {
  for (const line of text.split("\n")) {
    const plain = line
      .replace(/^(?:\s*(?:#{1,6}\s+|>\s*|[-*+]\s+(?:\[[ xX]\]\s+)?|\d{1,3}[.)]\s+))+/, "")
      .replace(/(\*\*|__|\*|`)/g, "")
      .split(/\s+/)
      .filter(Boolean)
      .join(" ");
    if (plain) return plain.length > 120 ? null : plain;
  }
  return null;
}

function editorValues() {
  const chosen = editor.querySelector("input[name=note-color]:checked");
  const color = PALETTE.find((c) => c.name === (chosen ? chosen.value : "none"));
  return {
    title: $("#note-title").value.trim() || null,
    tags: $("#note-tags").value.split(",").map((t) => t.trim().replace(/^#/, "")).filter(Boolean),
    color: color ? color.hex : null,
    text: $("#note-text").value,
  };
}

async function save(event) {
  event.preventDefault();
  const errorBox = $("#note-editor-error");
  const values = editorValues();
  if (!values.text.trim()) {
    showError(errorBox, new Error("Write something first: a note cannot be empty."));
    $("#note-text").focus();
    return;
  }
  await busy(editor.querySelector("button[type=submit]"), async () => {
    try {
      let id;
      if (opened) {
        const body = { ...values, expected_hash: opened.document.content_hash };
        id = (await api.put(`/brains/${path(brain.name)}/notes/${path(opened.document.id)}`, body)).id;
      } else {
        id = (await api.post(`/brains/${path(brain.name)}/notes`, values)).document.id;
      }
      toast("Note saved.");
      await openNote(id);
    } catch (error) {
      if (error.status === 409 && opened) await showConflict();
      else showError(errorBox, error);
    }
  });
}

// Someone saved the note after we opened it: keep the draft, show theirs, and take their
// version as the new base so saving again is a deliberate overwrite.
async function showConflict() {
  showError($("#note-editor-error"), null);
  try {
    const latest = await api.get(`/brains/${path(brain.name)}/notes/${path(opened.document.id)}`);
    opened = latest;
    $("#note-conflict-body").innerHTML = latest.html; // sanitized by the server
  } catch (error) {
    clear($("#note-conflict-body")).append(
      el("p", { class: "error-text", text: `Their version could not be loaded: ${error.message}` }),
    );
  }
  $("#note-conflict").hidden = false;
  $("#note-conflict").scrollIntoView({ block: "nearest" });
}

async function removeOpened() {
  const doc = opened.document;
  if (!(await confirmAction(`Delete the note “${doc.title || doc.name}”?`))) return;
  try {
    await api.delete(`/brains/${path(brain.name)}/notes/${path(doc.id)}`);
    toast("Note deleted.");
    backToList();
  } catch (error) {
    showError($("#note-view-error"), error);
  }
}

function backToList() {
  opened = null;
  showScreen("browser");
  loadList();
}

function setupPalette() {
  const box = $("#note-colors");
  for (const color of PALETTE) {
    const id = `note-color-${color.name}`;
    box.append(
      el(
        "span",
        { class: "swatch-option" },
        el("input", { type: "radio", name: "note-color", id, value: color.name }),
        el("label", { for: id, class: `swatch color-${color.name}`, title: color.label },
          el("span", { class: "visually-hidden", text: color.label })),
      ),
    );
  }
}

setupPalette();
setupRecorder(() => brain);
$("#new-note-button").addEventListener("click", () => openEditor(null));
$("#edit-note-button").addEventListener("click", () => openEditor(opened));
$("#delete-note-button").addEventListener("click", removeOpened);
$("#cancel-note-button").addEventListener("click", () =>
  opened ? (renderView(opened), showScreen("view")) : backToList(),
);
for (const button of document.querySelectorAll(".back-to-notes")) {
  button.addEventListener("click", backToList);
}
editor.addEventListener("submit", save);
$("#tag-filter-form").addEventListener("submit", (event) => {
  event.preventDefault();
  setFilter($("#tag-filter").value);
});
