// Sources: the folders on the server this brain follows (GET …/folders) — each with how many
// files its last sync found, when that was, whether the folder could be read at all and the
// files it could not take, with their reasons. Editors sync them now (POST …/sync, the same as
// `loci sync`); an admin also follows a new folder (a server path, inside the server's allowed
// roots). A folder's documents that failed to index are one click away in the Files list.

import { api, path } from "./api.js";
import { $, busy, clear, el, plural, showError, toast, when } from "./dom.js";

const section = $("#sources");
const listNode = $("#source-list");
const errorBox = $("#sources-error");
let brain = null;
let admin = false;
let generation = 0;
let onFilter = () => {};
let onSynced = () => {};

// `showFailed(folder)`: the Files list shows the folder's documents that failed to index;
// `synced()`: a sync changed what the brain holds.
export function setupSources({ showFailed, synced }) {
  onFilter = showFailed;
  onSynced = synced;
}

// Whether the person may follow a new folder (a server path: admins only).

export function setSourcesAdmin(isAdmin) {
  admin = Boolean(isAdmin);
}

export async function showSources(current) {
  brain = current;
  const mine = ++generation;
  $("#source-form").hidden = !admin;
  $("#sync-button").hidden = current.role === "viewer";
  try {
    const folders = await api.get(`/brains/${path(current.name)}/folders`);
    if (mine !== generation) return;
    render(folders);
    showError(errorBox, null);
  } catch (error) {
    if (mine === generation) showError(errorBox, error);
  }
}

function render(folders) {
  // Nothing to show a person who can neither see a folder nor follow one.
  section.hidden = !folders.length && !admin;
  $("#sources-empty").hidden = folders.length > 0;
  $("#sync-button").disabled = !folders.length;
  clear(listNode).append(...folders.map(folderItem));
}

// A file of the folder by its path inside it.
const inside = (folder, file) => (file.startsWith(`${folder}/`) ? file.slice(folder.length + 1) : file);

function folderItem(folder) {
  const state = folder.unreachable
    ? el("p", { class: "source-state error-text", text: `Could not be read: ${folder.unreachable}` })
    : folder.last_sync_at
      ? el(
          "p",
          { class: "source-state muted small" },
          `${plural(folder.files ?? 0, "file")} · last synced `,
          el("time", { datetime: folder.last_sync_at, text: when(folder.last_sync_at) }),
        )
      : el("p", { class: "source-state muted small", text: "Not synced yet." });
  const rules = [];
  if (folder.include.length) rules.push(`only ${folder.include.join(", ")}`);
  if (folder.exclude.length) rules.push(`not ${folder.exclude.join(", ")}`);
  if (folder.on_delete === "keep") rules.push("deleted files' documents are kept");
  const failures = folder.errors.length
    ? el(
        "details",
        { class: "source-failures" },
        el("summary", { text: `${plural(folder.errors.length, "file")} could not be taken` }),
        el(
          "ul",
          {},
          ...folder.errors.map((failure) =>
            el(
              "li",
              {},
              el("span", { class: "source-file", text: inside(folder.path, failure.path) }),
              el("span", { class: "reason", text: failure.reason }),
            ),
          ),
        ),
      )
    : null;
  return el(
    "li",
    { class: "source", dataset: { id: String(folder.id), state: folder.unreachable ? "unreachable" : "ok" } },
    el("p", { class: "source-path", text: folder.path }),
    state,
    rules.length ? el("p", { class: "muted small", text: rules.join(" · ") }) : null,
    failures,
    el("button", {
      type: "button",
      class: "link-button small",
      text: "Show its files that failed to index",
      onclick: () => onFilter(folder.path),
    }),
  );
}

// What one sync did, in a sentence: "2 added, 1 updated, 1 failed".
function syncSummary(report) {
  const sum = (field) => report.sources.reduce((n, s) => n + (Array.isArray(s[field]) ? s[field].length : s[field]), 0);
  const parts = [];
  for (const [field, word] of [
    ["added", "added"],
    ["updated", "updated"],
    ["renamed", "renamed"],
    ["removed", "removed"],
    ["gone", "gone (kept)"],
    ["failed", "failed"],
  ]) {
    const n = sum(field);
    if (n) parts.push(`${n} ${word}`);
  }
  const unreachable = report.sources.filter((s) => s.unreachable).length;
  if (unreachable) parts.push(`${plural(unreachable, "folder")} could not be read`);
  return parts.length ? `Synced: ${parts.join(", ")}.` : "Synced: nothing changed.";
}

$("#sync-button").addEventListener("click", async (event) => {
  if (!brain) return;
  const target = brain;
  await busy(event.currentTarget, async () => {
    try {
      const report = await api.post(`/brains/${path(target.name)}/sync`);
      toast(syncSummary(report), report.ok ? "info" : "error");
      $("#sync-result").textContent = syncSummary(report);
      onSynced();
      await showSources(target);
    } catch (error) {
      showError(errorBox, error);
    }
  });
});

$("#source-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = $("#source-path");
  const folder = input.value.trim();
  if (!folder) {
    showError(errorBox, new Error("Type the folder's path on the server first."));
    input.focus();
    return;
  }
  await busy(event.target.querySelector("button[type=submit]"), async () => {
    try {
      await api.post(`/brains/${path(brain.name)}/folders`, { path: folder });
      input.value = "";
      showError(errorBox, null);
      toast("Folder followed. Sync it to bring its files in.");
      await showSources(brain);
    } catch (error) {
      showError(errorBox, error);
    }
  });
});
