// A file dropped on the chat: uploaded to the current brain (uploads.js), followed in the
// chat as a system line until indexing settles (uploads.js's whenIndexed), saying each step, then "ask about it".
// Readers (viewers) get no drop target; the Files tab stays the way to add files by keyboard.

import { failureText, indexingStep } from "./doc-status.js";
import { el } from "./dom.js";
import { upload, whenIndexed } from "./uploads.js";

// `zone`: the element to drop on; `log`: the chat's list; `current()`: the brain shown now, or
// null; `onLine()`: a system line was added (the chat hides its empty-state text).
export function setupChatDrop({ zone, log, current, onLine }) {
  const canWrite = () => {
    const brain = current();
    return Boolean(brain && brain.role !== "viewer");
  };
  let depth = 0; // dragenter/leave fire for every child; count them
  const carriesFiles = (event) => event.dataTransfer && [...event.dataTransfer.types].includes("Files");
  zone.addEventListener("dragenter", (event) => {
    if (!carriesFiles(event) || !canWrite()) return;
    event.preventDefault();
    depth++;
    zone.classList.add("dragging");
  });
  zone.addEventListener("dragover", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault(); // never let the browser open the file instead of the app
    event.dataTransfer.dropEffect = canWrite() ? "copy" : "none";
  });
  zone.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (!depth) zone.classList.remove("dragging");
  });
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    depth = 0;
    zone.classList.remove("dragging");
    const brain = current();
    if (!brain || brain.role === "viewer" || !event.dataTransfer) return;
    for (const file of event.dataTransfer.files) addToChat(brain.name, file, log, onLine);
  });
}

async function addToChat(brainName, file, log, onLine) {
  const line = el("li", { class: "msg msg-system", role: "status", dataset: { state: "uploading" } });
  const say = (text, state) => {
    line.textContent = text;
    if (state) line.dataset.state = state;
  };
  say(`Uploading ${file.name}…`);
  log.append(line);
  onLine();
  line.scrollIntoView({ block: "nearest" });
  // The line leaves the log when the chat is replaced (another brain, a new conversation);
  // the upload itself still completes, and the Files tab shows it.
  const shown = () => line.isConnected;
  try {
    const result = await upload(brainName, file, (fraction) => {
      if (fraction < 1) say(`Uploading ${file.name}… ${Math.round(fraction * 100)}%`);
    });
    say(`Indexing ${file.name}…`, "indexing");
    const doc = await whenIndexed(brainName, result.document.id, shown, (step) =>
      say(`${file.name}: ${indexingStep(step).text}`),
    );
    if (!doc) return;
    if (doc.status === "failed") {
      const failed = failureText(doc);
      say(`Could not index ${file.name}: ${failed.reason} ${failed.whatToDo}`.trim(), "failed");
    } else if (result.deduped) {
      say(`${file.name} is already in this brain — ask about it.`, "done");
    } else {
      say(`Added ${file.name} — ask about it.`, "done");
    }
  } catch (error) {
    say(`Could not add ${file.name}: ${error.message}`, "failed");
  }
}
