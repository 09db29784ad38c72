// Organizing a brain page from the web app, through the same routes (and so the same
// validation and conflict rules) as the API and the CLI: rename (its title), move (folder, id),
// link to another page with a typed relation, merge into another page. Each edit is made
// against the version the page was opened at (expected_hash); a page changed meanwhile is a
// 409, said as such. New pages come from the "New page" dialog.

import { api, path } from "./api.js";
import { $, busy, clear, confirmAction, el, showError, toast } from "./dom.js";

const errorBox = $("#graph-organize-error");
let current = null; // {brain, doc: the page's summary}
let after = () => {};
let opened = () => {};

// `changed(newId)`: the page was written (refresh it; a move or merge names the page to show).
// `open(id)`: show another page.
export function setupOrganize({ changed, open }) {
  after = changed;
  opened = open;
}

// The page shown now (its summary as the API returns it), and the brain's pages for the lists
// of targets ([{id, title}]).
export function showOrganize(brain, summary, pages, canWrite) {
  const form = $("#graph-organize");
  if (!current || current.doc.id !== summary.id) form.open = false; // another page: start closed
  current = { brain, doc: summary };
  form.hidden = !canWrite || summary.status === "merged";
  showError(errorBox, null);
  $("#graph-rename-title").value = summary.title;
  $("#graph-move-folder").value = summary.folder;
  $("#graph-move-id").value = summary.id;
  clear($("#graph-page-ids")).append(
    ...pages.filter((p) => p.id !== summary.id).map((p) => el("option", { value: p.id, label: p.title })),
  );
}

function failed(error) {
  const message =
    error.status === 409 && /changed|version|stale/i.test(error.message)
      ? `${error.message} Open the page again to see the latest version.`
      : error.message;
  showError(errorBox, new Error(message));
}

function page() {
  return `/brains/${path(current.brain.name)}/graph/documents/${path(current.doc.id)}`;
}

async function submit(event, work) {
  event.preventDefault();
  if (!current) return;
  await busy(event.target.querySelector("button[type=submit]"), async () => {
    try {
      await work();
      showError(errorBox, null);
    } catch (error) {
      failed(error);
    }
  });
}

$("#graph-rename-form").addEventListener("submit", (event) =>
  submit(event, async () => {
    const title = $("#graph-rename-title").value.trim();
    if (!title) throw new Error("A page needs a title.");
    if (title === current.doc.title) return;
    const written = await api.patch(`${page()}/fields`, {
      fields: { title },
      expected_hash: current.doc.content_hash,
    });
    toast(`Renamed to ${written.title}.`);
    after(written.id);
  }),
);

$("#graph-move-form").addEventListener("submit", (event) =>
  submit(event, async () => {
    const folder = $("#graph-move-folder").value.trim().replace(/\/+$/, "");
    const newId = $("#graph-move-id").value.trim();
    const body = { expected_hash: current.doc.content_hash };
    if (folder && folder !== current.doc.folder) body.folder = folder;
    if (newId && newId !== current.doc.id) body.new_id = newId;
    if (!body.folder && !body.new_id) throw new Error("Change the folder or the id first.");
    const moved = await api.post(`${page()}/move`, body);
    toast(`Moved to ${moved.path}.`);
    after(moved.id);
  }),
);

$("#graph-link-form").addEventListener("submit", (event) =>
  submit(event, async () => {
    const relation = $("#graph-link-relation").value.trim();
    const target = $("#graph-link-target").value.trim();
    if (!relation || !target) throw new Error("Name the relation and the page it goes to.");
    const written = await api.post(`${page()}/links`, { relation, target });
    toast(written.changed ? `Linked: ${relation} → ${target}.` : "That link is already there.");
    event.target.reset();
    after(current.doc.id);
  }),
);

$("#graph-merge-form").addEventListener("submit", (event) =>
  submit(event, async () => {
    const into = $("#graph-merge-into").value.trim();
    if (!into) throw new Error("Name the page to merge into.");
    const question = `Merge “${current.doc.title}” into ${into}? It becomes a pointer to that page.`;
    if (!(await confirmAction(question, "Merge"))) return;
    const survivor = await api.post(`${page()}/merge`, { into, alias_title: true });
    toast(`Merged into ${survivor.title}.`);
    opened(survivor.id);
  }),
);
