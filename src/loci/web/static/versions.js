// A document's versions, in the preview: the current content and the earlier ones kept, newest
// first (GET …/files/{id}/versions), each with when it was saved and replaced — in the browser's
// language — and its size; any one downloaded (…/versions/{n}/download); two compared
// (…/versions/diff: a unified diff of their extracted text, drawn line by line with what was
// added and removed marked — a format without text says so, in the API's words); and, for
// editors, an earlier one restored after a confirmation (…/restore): the same document, indexed
// again, followed here until its restored text is what search finds.

import { api, path } from "./api.js";
import { $, busy, bytes, clear, confirmAction, download, el, showError, toast, when } from "./dom.js";
import { menuButton } from "./menu.js";

const POLL_MS = 1500;
const roles = new Map(); // brain name → the caller's role in it

// The caller's brains with their roles (GET /brains): who may restore where.
export function setVersionsContext(brains) {
  roles.clear();
  for (const brain of brains) roles.set(brain.name, brain.role);
}

// Files, web pages and notes are restored in place; a graph page's history is its own.
const RESTORABLE = new Set(["file", "web", "note"]);
const canRestore = (brain, doc) => ["owner", "editor"].includes(roles.get(brain)) && RESTORABLE.has(doc.kind);

const sentence = (text) => (text ? text[0].toUpperCase() + text.slice(1) : text);

// Fill `container` with the versions of one document. `isCurrent()` says whether the view is
// still the one shown (the person may have moved on while a request ran); `onChanged(doc)` is
// told of the document after a restore, and again when it is indexed.
export async function showVersions(
  container,
  { brain, documentId, errorBox, isCurrent, onChanged, restored = false },
) {
  const base = `/brains/${path(brain)}/files/${path(documentId)}/versions`;
  const listed = await api.get(base);
  if (!isCurrent()) return;
  const doc = listed.document;
  const current = listed.current.number;
  const all = [
    { ...listed.current, name: doc.name, current: true },
    ...listed.versions.map((v) => ({ ...v, current: false })),
  ];
  const state = el("p", { class: "versions-state", role: "status" });
  const diffArea = el("section", { class: "version-diff", "aria-label": "Changes", hidden: true });

  const compare = async (old, neu) => {
    showError(errorBox, null);
    clear(diffArea).append(el("p", { class: "muted", text: "Comparing…" }));
    diffArea.hidden = false;
    try {
      const query = new URLSearchParams({ old: String(old), new: String(neu) });
      const result = await api.get(`${base}/diff?${query}`);
      if (!isCurrent()) return;
      renderDiff(diffArea, result);
    } catch (error) {
      if (!isCurrent()) return;
      diffArea.hidden = true;
      showError(errorBox, error);
    }
  };

  const restore = async (version) => {
    const question =
      `Make version ${version.number} of “${doc.name}” current again? What it holds now is kept ` +
      `as version ${current}, and the document is indexed again.`;
    if (!(await confirmAction(question, `Restore version ${version.number}`))) return;
    try {
      const outcome = await api.post(`${base}/${version.number}/restore`);
      if (!isCurrent()) return;
      toast(
        outcome.changed
          ? `Version ${version.number} is current again.`
          : `Version ${version.number} was the current content already.`,
      );
      onChanged(outcome.document);
      await showVersions(container, { brain, documentId, errorBox, isCurrent, onChanged, restored: true });
      if (isCurrent()) $(".versions-heading", container).focus();
    } catch (error) {
      if (isCurrent()) showError(errorBox, error);
    }
  };

  const list = el("ol", { class: "version-list", "aria-labelledby": "versions-heading" });
  for (const version of all) list.append(versionItem(brain, doc, version, current, { compare, restore }));

  const parts = [
    el("h3", { id: "versions-heading", class: "versions-heading", tabindex: "-1", text: "Versions" }),
    state,
    listed.versions.length
      ? null
      : el("p", {
          class: "muted",
          text:
            "No earlier versions: this is the content it was added with. When the file, note " +
            "or web page changes, what it held is kept here.",
        }),
    list,
    listed.versions.length ? compareForm(all, compare) : null,
    diffArea,
  ];
  clear(container).append(...parts.filter(Boolean));
  follow(state, brain, doc, isCurrent, onChanged, restored);
}

// One version: its number, when it was saved (and replaced), its size, and its actions.
function versionItem(brain, doc, version, currentNumber, { compare, restore }) {
  const n = version.number;
  const href = `/api/v1/brains/${path(brain)}/files/${path(doc.id)}/versions/${n}/download`;
  const moment = (iso) => el("time", { datetime: iso, text: when(iso) });
  const dates = [" · saved ", moment(version.saved_at)];
  if (!version.current && version.replaced_at) dates.push(" · replaced ", moment(version.replaced_at));
  const label = version.current ? `Version ${n} (current)` : `Version ${n}`;
  const renamed = version.name && version.name !== doc.name ? ` · as ${version.name}` : "";
  const actions = [
    version.current ? null : { label: "Compare with current", run: () => compare(n, currentNumber) },
    { label: "Download", run: () => download(href, version.name || doc.name) },
    !version.current && canRestore(brain, doc)
      ? { label: "Restore this version", run: () => restore(version) }
      : null,
  ];
  return el(
    "li",
    { class: version.current ? "version current" : "version", dataset: { number: String(n) } },
    el("div", { class: "version-head" }, el("span", { class: "version-number", text: label })),
    el("p", { class: "version-meta muted small" }, bytes(version.size_bytes), ...dates, renamed),
    el("div", { class: "row-actions" }, menuButton({ label: `Actions for version ${n}`, actions })),
  );
}

// "Compare version [a] with version [b]": any two, the newest earlier one and the current one
// chosen first.
function compareForm(all, compare) {
  const option = (v) =>
    el("option", { value: String(v.number), text: v.current ? `${v.number} (current)` : String(v.number) });
  const old = el("select", { id: "version-old" }, ...all.map(option));
  const neu = el("select", { id: "version-new" }, ...all.map(option));
  old.value = String(all[1].number);
  neu.value = String(all[0].number);
  const form = el(
    "form",
    { class: "version-compare" },
    el("label", { for: "version-old", text: "Compare version" }),
    old,
    el("label", { for: "version-new", text: "with version" }),
    neu,
    el("button", { type: "submit", text: "Show changes" }),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const [a, b] = [Number(old.value), Number(neu.value)];
    await busy(form.querySelector("button"), () => compare(Math.min(a, b), Math.max(a, b)));
  });
  return form;
}

// The document's state under the list: indexing (after a restore, until its text is searchable),
// ready, or failed with why. Just after a restore the worker may have indexed the restored text
// before this first looks (a note takes a few milliseconds): that is said too.
async function follow(state, brain, doc, isCurrent, onChanged, restored) {
  let current = doc;
  let announce = restored; // "Indexed" is news only after a restore or an indexing seen here
  for (;;) {
    if (current.status === "processing") state.textContent = "Indexing the current version…";
    else if (current.status === "failed") {
      state.textContent = `The current version could not be indexed: ${current.status_reason || "no reason given"}`;
    } else if (announce) state.textContent = "Indexed: search finds the current version's text.";
    else state.textContent = "";
    state.hidden = !state.textContent;
    if (current.status !== "processing") return;
    announce = true;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    if (!isCurrent() || !state.isConnected) return;
    try {
      current = await api.get(`/brains/${path(brain)}/files/${path(doc.id)}`);
    } catch {
      return; // the list still shows; the preview's own error box reports real failures
    }
    if (!isCurrent() || !state.isConnected) return;
    if (current.status !== "processing") onChanged(current);
  }
}

// A unified diff drawn as lines: each hunk under "Lines a–b", removed lines struck through and
// marked "−", added ones marked "+", and the words "removed" and "added" said to a screen reader
// (colour alone tells nothing to some readers).
function renderDiff(area, result) {
  const title = `Changes from version ${result.old} to version ${result.new}`;
  const heading = el("h4", { class: "diff-heading", tabindex: "-1", text: title });
  clear(area).append(heading);
  area.setAttribute("aria-label", title);
  if (result.diff === null) {
    const reason = sentence(result.reason || "these versions have no text to compare");
    area.append(el("p", { class: "diff-none", text: reason.endsWith(".") ? reason : `${reason}.` }));
  } else if (!result.diff) {
    area.append(el("p", { class: "diff-none", text: "The two versions have the same text." }));
  } else {
    const { lines, added, removed } = parseDiff(result.diff);
    const summary = `${added} ${added === 1 ? "line" : "lines"} added, ${removed} removed.`;
    area.append(el("p", { class: "muted small diff-summary", text: summary }), el("div", { class: "diff" }, ...lines));
  }
  heading.focus();
}

function parseDiff(diff) {
  const lines = [];
  let added = 0;
  let removed = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("---") || line.startsWith("+++") || line.startsWith("\\") || !line) continue;
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      const start = Number(hunk[3]);
      const count = hunk[4] === undefined ? 1 : Number(hunk[4]);
      const end = start + Math.max(count, 1) - 1;
      lines.push(el("p", { class: "diff-hunk", text: end > start ? `Lines ${start}–${end}` : `Line ${start}` }));
      continue;
    }
    const text = line.slice(1);
    if (line[0] === "+" || line[0] === "-") {
      const adds = line[0] === "+";
      if (adds) added++;
      else removed++;
      const said = el("span", { class: "visually-hidden", text: adds ? "added: " : "removed: " });
      lines.push(el(adds ? "ins" : "del", { class: `diff-line ${adds ? "diff-added" : "diff-removed"}` }, said, text));
    } else {
      lines.push(el("span", { class: "diff-line diff-same", text }));
    }
  }
  return { lines, added, removed };
}
