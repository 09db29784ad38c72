// The Files panel: adding (drop or pick files, one request and one card per file, each followed
// to ready or failed — uploads.js; a web page by URL; another tool's export — imports.js), the
// list of what the brain holds (file-list.js) and the folders on the server it follows
// (sources.js).

import { api, path } from "./api.js";
import { $, busy, showError, toast } from "./dom.js";
import { hideList, refreshList, showFailedUnder, showList } from "./file-list.js";
import { setupImports, showImports } from "./imports.js";
import { setupSources, showSources } from "./sources.js";
import { clearUploads, setupUploads, uploadFiles } from "./uploads.js";

const errorBox = $("#files-error");
let brain = null; // {name, role}

const canWrite = () => brain && brain.role !== "viewer";

export function showFiles(current) {
  if (!brain || brain.name !== current.name) {
    clearUploads();
    showError(errorBox, null);
  }
  brain = current;
  for (const control of [$("#file-input"), $("#url-input"), $("#url-form button")]) {
    control.disabled = !canWrite();
  }
  $("#drop-zone").classList.toggle("disabled", !canWrite());
  showList(current);
  showSources(current);
  showImports(current);
}

export function hideFiles() {
  hideList();
}

function addFiles(files) {
  if (!canWrite()) {
    showError(errorBox, new Error("Your role in this brain is viewer: you cannot add files."));
    return;
  }
  showError(errorBox, null);
  uploadFiles(brain.name, files);
  refreshList();
}

function setupDropZone() {
  const zone = $("#drop-zone");
  const input = $("#file-input");
  input.addEventListener("change", () => {
    addFiles([...input.files]);
    input.value = "";
  });
  let depth = 0; // dragenter/leave fire for every child; count them
  zone.addEventListener("dragenter", (event) => {
    event.preventDefault();
    depth++;
    zone.classList.add("dragging");
  });
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = "copy";
  });
  zone.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (!depth) zone.classList.remove("dragging");
  });
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    depth = 0;
    zone.classList.remove("dragging");
    const files = event.dataTransfer ? [...event.dataTransfer.files] : [];
    if (files.length) addFiles(files);
  });
  // A file dropped beside the zone must not navigate away from the app.
  for (const type of ["dragover", "drop"]) {
    window.addEventListener(type, (event) => {
      if (!zone.contains(event.target)) event.preventDefault();
    });
  }
}

function setupUrlForm() {
  const form = $("#url-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = $("#url-input");
    const url = input.value.trim();
    if (!url) return;
    await busy(form.querySelector("button"), async () => {
      try {
        const added = await api.post(`/brains/${path(brain.name)}/urls`, { url, tags: [] });
        input.value = "";
        showError(errorBox, null);
        toast(added.deduped ? "That page is already in this brain." : `Added ${added.document.name}.`);
        refreshList();
      } catch (error) {
        showError(errorBox, error);
      }
    });
  });
}

setupDropZone();
setupUrlForm();
setupUploads({ settled: refreshList });
setupSources({ showFailed: showFailedUnder, synced: refreshList });
setupImports({ imported: refreshList });
