// A new page of the brain graph, from the web app: type, title, folder (empty: the type's own)
// and its compiled truth, created through the API's route, so its validation (a folder name, a
// type) and its conflict rule (an id already taken is a 409) are the API's, said as it says them.

import { api, path } from "./api.js";
import { $, busy, showError, toast } from "./dom.js";

const dialog = $("#page-dialog");
const form = $("#page-form");
let brain = null;
let created = () => {};

// `onCreated(summary)`: the page exists (open it).
export function setupNewPage({ onCreated }) {
  created = onCreated;
}

export function openNewPage(current) {
  brain = current;
  form.reset();
  showError($("#page-error"), null);
  dialog.showModal();
  $("#page-title").focus();
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const title = $("#page-title").value.trim();
  if (!title) {
    showError($("#page-error"), new Error("A page needs a title."));
    $("#page-title").focus();
    return;
  }
  const body = { type: $("#page-type").value, title, text: $("#page-text").value };
  const folder = $("#page-folder").value.trim().replace(/\/+$/, "");
  if (folder) body.folder = folder;
  await busy(form.querySelector("button[type=submit]"), async () => {
    try {
      const made = await api.post(`/brains/${path(brain.name)}/graph/documents`, body);
      dialog.close();
      toast(`Created ${made.path}.`);
      created(made);
    } catch (error) {
      showError($("#page-error"), error);
    }
  });
});
