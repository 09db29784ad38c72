// Small DOM helpers. Everything a document or a person wrote goes in as text nodes; the only
// HTML the app inserts is a note's `html`, which the server sanitized.

export const $ = (selector, root = document) => root.querySelector(selector);

// el("button", {class: "primary", type: "button", onclick: fn}, "Label", childNode, …)
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

// A search snippet with its matched terms as <mark>, from the [start, end] offsets the search
// returns (`highlights`, in code points: an emoji is one, where a JS string counts two); the
// snippet itself is plain text, `**` included.
export function markedSnippet(snippet, highlights = []) {
  const fragment = document.createDocumentFragment();
  const chars = Array.from(snippet);
  const text = (start, end) => chars.slice(start, end).join("");
  let at = 0;
  for (const [start, end] of highlights) {
    if (start < at || end <= start) continue;
    if (start > at) fragment.append(document.createTextNode(text(at, start)));
    fragment.append(el("mark", { text: text(start, end) }));
    at = end;
  }
  if (at < chars.length) fragment.append(document.createTextNode(text(at)));
  return fragment;
}

// A moment of a recording as people write it: "0:07", "12:04", "1:02:09".
function clock(seconds) {
  const whole = Math.max(0, Math.floor(seconds));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

// "page 2 · lines 3–5 · Pressure › Gauge" from anything with page/line_start/line_end/heading_path,
// "12:04–12:37" for a passage of a transcribed recording (time_start/time_end, seconds)
export function where(item) {
  const parts = [];
  if (item.page) parts.push(`page ${item.page}`);
  if (item.time_start !== null && item.time_start !== undefined) {
    const start = clock(item.time_start);
    const end = item.time_end !== null && item.time_end !== undefined ? clock(item.time_end) : start;
    parts.push(end === start ? start : `${start}–${end}`);
  }
  if (item.line_start) {
    parts.push(
      item.line_end && item.line_end !== item.line_start
        ? `lines ${item.line_start}–${item.line_end}`
        : `line ${item.line_start}`,
    );
  }
  if (item.heading_path && item.heading_path.length) parts.push(item.heading_path.join(" › "));
  return parts.join(" · ");
}

export function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1048576).toFixed(1)} MB`;
}

// A moment in the browser's language and time zone: "4 Mar 2026, 14:05", "Mar 4, 2026, 2:05 PM".
const MOMENT = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

// A moment the server wrote: ISO 8601, or SQL's "2026-03-04 14:05:00" (UTC).
export const moment = (iso) => new Date(iso.includes("T") ? iso : `${iso.replace(" ", "T")}Z`);

export function when(iso) {
  const date = moment(iso);
  return Number.isNaN(date.getTime()) ? iso : MOMENT.format(date);
}

// A language by name in the reader's own language ("German", "Deutsch"), from its ISO code;
// the code itself where the browser has no name for it.
let languageNames = null;
try {
  languageNames = new Intl.DisplayNames([navigator.language, "en"], { type: "language" });
} catch {
  // an old browser: the codes themselves
}

export function languageName(code) {
  try {
    return (languageNames && languageNames.of(code)) || code;
  } catch {
    return code; // not a well-formed code
  }
}

// Download a file the server serves as an attachment, as a link the person clicked would.
export function download(href, name) {
  const link = el("a", { href, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
}

export function showError(node, error) {
  if (!error) {
    node.hidden = true;
    node.textContent = "";
    return;
  }
  node.textContent = error.message || String(error);
  node.hidden = false;
}

export function toast(message, kind = "info") {
  const box = $("#toasts");
  const item = el("p", { class: `toast ${kind}`, text: message });
  box.append(item);
  // Showing it again moves it above whatever dialog opened since.
  if (box.matches(":popover-open")) box.hidePopover();
  box.showPopover();
  setTimeout(() => {
    item.remove();
    if (!box.children.length && box.matches(":popover-open")) box.hidePopover();
  }, 3500);
}

export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

// A modal question answered with a button; resolves true when confirmed.
export function confirmAction(message, confirmLabel = "Delete") {
  const dialog = $("#confirm-dialog");
  $("#confirm-message").textContent = message;
  $("#confirm-yes").textContent = confirmLabel;
  dialog.returnValue = "";
  dialog.showModal();
  $("#confirm-no").focus();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
  });
}

// Busy state for a button while a request runs, so it cannot be sent twice.
export async function busy(button, work) {
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  try {
    return await work();
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}
