// Import from another tool (the Files panel): what another tool exported — browser bookmarks,
// Kindle clippings, … (GET /imports/kinds) — uploaded into the brain (POST …/imports, as `loci
// import`). "Check first" is the dry run: it writes and fetches nothing and lists what the
// import would add, update, skip and fail; "Import" does it and lists what it did, each failed
// or skipped item with its reason. Editors and owners only: a viewer does not see it.

import { api, path } from "./api.js";
import { $, busy, clear, el, plural, showError } from "./dom.js";

const box = $("#import-box");
const form = $("#import-form");
const kindSelect = $("#import-kind");
const fileInput = $("#import-file");
const statusLine = $("#import-status");
const errorBox = $("#import-error");
const report = $("#import-report");
let brain = null;
let kindsLoaded = false;
let onImported = () => {};

const DONE = { add: "added", update: "updated", unchanged: "unchanged", fail: "failed", skip: "skipped" };
const WOULD = { add: "would be added", update: "would be updated", unchanged: "unchanged", fail: "would fail", skip: "skipped" };
const ORDER = ["fail", "skip", "add", "update", "unchanged"]; // what needs a look comes first

// `imported()`: an import changed what the brain holds (the list refreshes).
export function setupImports({ imported }) {
  onImported = imported;
  box.addEventListener("toggle", () => {
    if (box.open) loadKinds();
  });
  fileInput.addEventListener("change", () => reset());
  kindSelect.addEventListener("change", () => reset());
  $("#import-check").addEventListener("click", () => send(true));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send(false);
  });
}

export function showImports(current) {
  if (!brain || brain.name !== current.name) {
    form.reset();
    reset();
  }
  brain = current;
  box.hidden = current.role === "viewer";
}

function reset() {
  report.hidden = true;
  statusLine.textContent = "";
  showError(errorBox, null);
}

async function loadKinds() {
  if (kindsLoaded) return;
  try {
    const kinds = await api.get("/imports/kinds");
    clear(kindSelect).append(...kinds.map((k) => el("option", { value: k.name, text: k.what })));
    kindsLoaded = true;
  } catch (error) {
    showError(errorBox, error);
  }
}

async function send(dryRun) {
  const file = fileInput.files[0];
  if (!file) {
    showError(errorBox, new Error("Choose the export file first."));
    fileInput.focus();
    return;
  }
  if (!kindSelect.value) {
    showError(errorBox, new Error("Choose which tool the export is from."));
    kindSelect.focus();
    return;
  }
  const body = new FormData();
  body.append("kind", kindSelect.value);
  body.append("dry_run", dryRun ? "true" : "false");
  body.append("tags", $("#import-tags").value);
  body.append("file", file, file.name);
  const button = dryRun ? $("#import-check") : $("#import-run");
  const target = brain.name;
  reset();
  statusLine.textContent = dryRun
    ? `Reading ${file.name}…`
    : `Importing ${file.name}… bookmarks are fetched one by one, so this can take a while.`;
  await busy(button, async () => {
    try {
      const done = await api.post(`/brains/${path(target)}/imports`, body);
      if (!brain || brain.name !== target) return; // another brain is shown now
      statusLine.textContent = "";
      render(done);
      if (!done.dry_run) onImported();
    } catch (error) {
      statusLine.textContent = "";
      showError(errorBox, error);
    }
  });
}

function render(done) {
  const counts = [
    ["add", done.added],
    ["update", done.updated],
    ["unchanged", done.unchanged],
    ["fail", done.failed],
    ["skip", done.skipped],
  ].filter(([action, n]) => n || action === "add");
  const words = done.dry_run ? WOULD : DONE;
  const summary = counts.map(([action, n]) => `${plural(n, "item")} ${words[action]}`).join(", ");
  const heading = $("#import-report-heading");
  heading.textContent = done.dry_run ? `Check: ${summary}. Nothing was imported yet.` : `Imported: ${summary}.`;
  const items = [...done.items].sort((a, b) => ORDER.indexOf(a.action) - ORDER.indexOf(b.action));
  clear($("#import-items")).append(
    ...items.map((item) =>
      el(
        "li",
        { class: "import-item", dataset: { action: item.action } },
        el("span", { class: "action", text: words[item.action] }),
        el("span", { class: "import-name", text: item.name }),
        item.reason ? el("span", { class: "reason", text: item.reason }) : null,
      ),
    ),
  );
  report.hidden = false;
  heading.focus();
}
