// "Your model": answer your own questions with your own OpenAI-compatible endpoint and key. The
// server keeps the key encrypted and never sends it back, so the page only ever says whether one
// is saved; an empty key field keeps it.

import { api } from "./api.js";
import { $, busy, confirmAction, showError, toast } from "./dom.js";

const dialog = $("#model-dialog");
const form = $("#model-form");
const baseUrl = $("#model-base-url");
const model = $("#model-name");
const key = $("#model-key");
const fallbacks = $("#model-fallbacks");
const forgetKey = $("#model-forget-key");
const removeButton = $("#model-remove");

function show(saved) {
  form.reset();
  baseUrl.value = saved ? saved.base_url : "";
  model.value = saved ? saved.model : "";
  fallbacks.value = saved ? saved.fallback_models.join(", ") : "";
  $("#model-state").textContent = saved
    ? `Your questions are answered by ${saved.model}.`
    : "You use the server's model. Set your own to answer your questions with it.";
  const hasKey = Boolean(saved && saved.has_api_key);
  $("#model-key-state").hidden = !hasKey;
  $("#model-forget-key-row").hidden = !hasKey;
  key.placeholder = hasKey ? "leave empty to keep the saved key" : "optional";
  removeButton.hidden = !saved;
}

export async function openModelSettings() {
  showError($("#model-error"), null);
  show(null);
  $("#model-state").textContent = "Loading…";
  dialog.showModal();
  baseUrl.focus();
  try {
    show(await api.get("/me/model"));
  } catch (error) {
    if (error.status === 404) show(null);
    else showError($("#model-error"), error);
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  for (const field of [baseUrl, model]) {
    if (!field.value.trim()) {
      showError($("#model-error"), new Error("A base URL and a model are both needed."));
      field.focus();
      return;
    }
  }
  if (!/^https?:\/\//i.test(baseUrl.value.trim())) {
    showError($("#model-error"), new Error("The base URL starts with https:// (or http://)."));
    baseUrl.focus();
    return;
  }
  const body = {
    base_url: baseUrl.value.trim(),
    model: model.value.trim(),
    fallback_models: fallbacks.value
      .split(",")
      .map((m) => m.trim())
      .filter(Boolean),
  };
  if (key.value) body.api_key = key.value;
  else body.keep_api_key = !forgetKey.checked;
  await busy(form.querySelector("button[type=submit]"), async () => {
    try {
      const saved = await api.put("/me/model", body);
      key.value = "";
      dialog.close();
      toast(`Your questions are now answered by ${saved.model}${saved.has_api_key ? " (a key is saved)" : ""}.`);
    } catch (error) {
      showError($("#model-error"), error);
    }
  });
});

removeButton.addEventListener("click", async () => {
  if (!(await confirmAction("Remove your model and its key? The server's model answers again.", "Remove"))) {
    return;
  }
  try {
    await api.delete("/me/model");
    dialog.close();
    toast("Your model is removed; the server's model answers again.");
  } catch (error) {
    if (error.status === 404) {
      dialog.close();
      return;
    }
    showError($("#model-error"), error);
  }
});
