// Sources: the folders on the server this brain follows (GET …/folders) — each with how many
// files its last sync found, when that was, whether the folder could be read at all and the
// files it could not take, with their reasons; whether it is kept as files or as brain pages,
// and whether a running server watches it. Editors sync them now (POST …/sync, the same as
// `loci sync`) and settle a conflict of a vault kept as pages by keeping one side (POST
// …/folders/{id}/resolve); an admin also follows a new folder (a server path, inside the
// server's allowed roots), and the brain's owner stops following one, choosing whether its
// documents stay (DELETE …/folders/{id}, as `loci sources rm`). A folder's documents that
// failed to index are one click away in the Files list. The same list holds the feeds, pages,
// mailboxes, repositories and WebDAV folders followed on a schedule: their cards, the form to
// follow a feed or page and "Check now" are followed.js's; while one of them is being checked
// or falls due, the panel looks again every few seconds until the run has ended.

import { api, path } from "./api.js";
import { $, busy, clear, confirmAction, el, moment, plural, showError, toast, when } from "./dom.js";
import { followedItem, refreshTimes, setupFollowForm } from "./followed.js";

const section = $("#sources");
const listNode = $("#source-list");
const errorBox = $("#sources-error");
let brain = null;
let admin = false;
let generation = 0;
let onFilter = () => {};
let onSynced = () => {};
let lookAgain = null; // the timer of the next look while a scheduled run is under way
let lastRuns = new Map(); // scheduled source id → when its last run ended, as last seen
// The first look again comes soon (a worker takes a due source within seconds); each next
// one waits half as long again, so a server without a worker is not asked every few seconds forever.
const LOOK_AGAIN_MS = 3000;
const LOOK_AGAIN_MAX_MS = 60_000;
let lookAgainMs = LOOK_AGAIN_MS;

// `showFailed(folder)`: the Files list shows the folder's documents that failed to index;
// `synced()`: a sync changed what the brain holds.
export function setupSources({ showFailed, synced }) {
  onFilter = showFailed;
  onSynced = synced;
}

// Whether the person may follow a new folder (a server path) or a feed or page (fetched by
// the server on its own): admins only, as the server's account says.
export function setSourcesAdmin(isAdmin) {
  admin = Boolean(isAdmin);
}

export async function showSources(current, { again = false } = {}) {
  if (!again) lookAgainMs = LOOK_AGAIN_MS;
  if (brain?.name !== current.name) lastRuns = new Map();
  brain = current;
  const mine = ++generation;
  clearTimeout(lookAgain);
  $("#source-form").hidden = !admin;
  $("#follow-details").hidden = !admin;
  try {
    const sources = await api.get(`/brains/${path(current.name)}/folders`);
    if (mine !== generation) return;
    render(sources);
    showError(errorBox, null);
    noticeRuns(sources);
    if (sources.some(underWay)) {
      lookAgain = setTimeout(() => showAgain(mine), lookAgainMs);
      lookAgainMs = Math.min(lookAgainMs * 1.5, LOOK_AGAIN_MAX_MS);
    }
  } catch (error) {
    if (mine === generation) showError(errorBox, error);
  }
}

// A scheduled source being run, or due (the worker looks for due ones every few seconds).
function underWay(source) {
  if (source.kind === "folder") return false;
  return source.running || (source.next_run_at !== null && moment(source.next_run_at).getTime() <= Date.now());
}

// Look again, unless the person moved to another brain or the panel was shown anew meanwhile;
// while the panel is out of sight (another tab of the app, or of the browser), when it is back.
function showAgain(mine) {
  if (mine !== generation || !brain) return;
  if (document.hidden || !section.checkVisibility()) {
    lookAgain = setTimeout(() => showAgain(mine), LOOK_AGAIN_MS);
    return;
  }
  showSources(brain, { again: true });
}

// A run that ended since the last look (the worker's, or a check now) changed what the brain
// holds: the Files list shows it.
function noticeRuns(sources) {
  let ended = false;
  for (const source of sources) {
    if (source.kind === "folder") continue;
    const seen = lastRuns.get(source.id);
    if (seen !== undefined && seen !== source.last_sync_at) ended = true;
    lastRuns.set(source.id, source.last_sync_at);
  }
  if (ended) onSynced();
}

function render(sources) {
  const folders = sources.filter((s) => s.kind === "folder");
  // Nothing to show a person who can neither see a source nor follow one.
  section.hidden = !sources.length && !admin;
  $("#sources-empty").hidden = sources.length > 0;
  // Sync now brings the folders in; a scheduled source has its own Check now.
  $("#sync-button").hidden = brain.role === "viewer" || (!folders.length && sources.length > 0);
  $("#sync-button").disabled = !folders.length;
  const context = { role: brain.role, unfollow, checked: rechecked, errorBox, target: brain };
  clear(listNode).append(
    ...sources.map((source) => (source.kind === "folder" ? folderItem(source) : followedItem(source, context))),
  );
}

// After a check now: the panel anew, the card's address focused (the button was replaced).
async function rechecked(source) {
  onSynced();
  await showSources(brain);
  focusFolder(source.id);
}

// The relative times of the cards ("5 min ago") stay true while the panel is open.
setInterval(() => {
  if (!document.hidden && section.checkVisibility()) refreshTimes(listNode);
}, 30_000);

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
  const owner = brain.role === "owner";
  return el(
    "li",
    { class: "source", dataset: { id: String(folder.id), state: folder.unreachable ? "unreachable" : "ok" } },
    el(
      "p",
      { class: "source-title" },
      el("span", { class: "source-kind", text: "Folder" }),
      el("span", { class: "source-path", tabindex: "-1", text: folder.path }),
    ),
    state,
    el("p", { class: "source-mode muted small", text: `${MODE[folder.mode] || folder.mode} · ${watching(folder)}` }),
    rules.length ? el("p", { class: "muted small", text: rules.join(" · ") }) : null,
    failures,
    conflictList(folder),
    el(
      "div",
      { class: "source-actions" },
      el("button", {
        type: "button",
        class: "link-button small",
        text: "Show its files that failed to index",
        onclick: () => onFilter(folder.path),
      }),
      owner
        ? el("button", {
            type: "button",
            class: "small danger",
            text: "Stop following",
            "aria-label": `Stop following ${folder.path}`,
            onclick: () => unfollow(folder),
          })
        : null,
    ),
  );
}

const MODE = {
  files: "Each file is a document",
  pages: "Kept as brain pages: edits made in Loci are written to its files",
};

function watching(folder) {
  if (folder.watching === "events") return "watched: changes come in by themselves";
  if (folder.watching === "poll") return "watched by looking every few seconds (a network drive or WSL)";
  return "not watched now: Sync now brings its changes in";
}

// Files of a vault kept as pages changed both in the folder and in Loci since the last sync:
// nothing was written until the person keeps one side.
function conflictList(folder) {
  const conflicts = folder.conflicts || [];
  if (!conflicts.length) return null;
  const write = brain.role !== "viewer";
  return el(
    "details",
    { class: "source-conflicts", open: true },
    el("summary", { text: `${plural(conflicts.length, "file")} changed both in the folder and in Loci` }),
    el(
      "ul",
      {},
      ...conflicts.map((conflict) => {
        const file = inside(folder.path, conflict.path);
        const keep = (side, text) =>
          el("button", {
            type: "button",
            class: "small",
            text,
            "aria-label": `${text}: ${file}`,
            onclick: (event) => resolve(folder, conflict.path, file, side, event.currentTarget),
          });
        return el(
          "li",
          { class: "source-conflict" },
          el("span", { class: "source-file", text: file }),
          el("span", { class: "reason", text: conflict.reason }),
          write
            ? el("div", { class: "row" }, keep("file", "Keep the file's text"), keep("loci", "Keep Loci's text"))
            : null,
        );
      }),
    ),
  );
}

// Keep one side of a conflict: the file's text goes into the page (Loci's stays in its
// history), or Loci's page is written over the file.
async function resolve(folder, conflictPath, file, keep, button) {
  const question =
    keep === "file"
      ? `Put the text of ${file} into its page? The page's text in Loci stays in its history.`
      : `Write the page from Loci over ${file}? The changes made to the file itself are replaced.`;
  if (!(await confirmAction(question, keep === "file" ? "Keep the file's text" : "Keep Loci's text"))) return;
  const target = brain;
  await busy(button, async () => {
    try {
      const result = await api.post(`/brains/${path(target.name)}/folders/${path(folder.id)}/resolve`, {
        path: conflictPath,
        keep,
      });
      const left = result.conflicts.length;
      toast(
        left ? `Settled ${file}; ${plural(left, "conflict")} left.` : `Settled ${file}: the page and the file agree.`,
      );
      onSynced();
      await showSources(target);
      focusFolder(folder.id);
    } catch (error) {
      showError(errorBox, error);
    }
  });
}

function focusFolder(id) {
  const node = listNode.querySelector(`.source[data-id="${id}"] .source-path`);
  if (node) node.focus();
  else $("#sources-heading").focus();
}

// What a person calls each kind of source in "Stop following this …?".
const NOUN = { folder: "folder", feed: "feed", page: "page", imap: "mailbox", git: "repository", webdav: "folder" };

// Stop following a source, keeping its documents or removing them: the person chooses.
async function unfollow(folder) {
  const dialog = $("#unfollow-dialog");
  const things = folder.mode === "pages" ? "pages" : "documents";
  const noun = NOUN[folder.kind] || "source";
  $("#unfollow-title").textContent = `Stop following this ${noun}?`;
  $("#unfollow-message").textContent =
    folder.kind === "folder"
      ? `${folder.path} will no longer be kept in step; nothing in the folder itself is touched. ` +
        `Its ${things} in this brain can stay, or be removed with it.`
      : `${folder.path} will no longer be checked; nothing there is touched. ` +
        `The ${things} it brought into this brain can stay, or be removed with it.`;
  $("#unfollow-keep").textContent = `Stop following, keep its ${things}`;
  $("#unfollow-remove").textContent = `Stop following and remove its ${things}`;
  dialog.returnValue = "";
  dialog.showModal();
  $("#unfollow-cancel").focus();
  const choice = await new Promise((resolve) =>
    dialog.addEventListener("close", () => resolve(dialog.returnValue), { once: true }),
  );
  if (choice !== "keep" && choice !== "remove") return;
  const target = brain;
  try {
    const query = choice === "keep" ? "?keep_documents=true" : "";
    const removed = await api.delete(`/brains/${path(target.name)}/folders/${path(folder.id)}${query}`);
    toast(
      removed.documents_kept
        ? `Stopped following ${folder.path}; its ${things} stay in the brain.`
        : `Stopped following ${folder.path}; ${plural(removed.documents_removed, "document")} removed.`,
    );
    onSynced();
    await showSources(target);
    $("#sources-heading").focus();
  } catch (error) {
    showError(errorBox, error);
  }
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

setupFollowForm({
  current: () => brain,
  errorBox,
  followed: async (source) => {
    await showSources(brain);
    focusFolder(source.id);
  },
});
