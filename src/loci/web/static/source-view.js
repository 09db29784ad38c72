// The source at a cited passage, as the document is: a PDF's page drawn by the server with the
// passage's boxes marked over it (pages can be turned), an image with the region OCR read, a
// recording at the moment the passage was said, and anything read as text with the passage's
// characters marked in the text around it. The marked place is focused, so a screen reader
// starts there.

import { api, path } from "./api.js";
import { clear, el, where } from "./dom.js";

// Boxes are fractions of the page: placed in percent, so they hold at any size. Set through
// the CSSOM (the CSP allows no style attributes).
function box(region) {
  const [left, top, right, bottom] = region;
  const mark = el("span", { class: "passage-box", "aria-hidden": "true" });
  Object.assign(mark.style, {
    left: `${left * 100}%`,
    top: `${top * 100}%`,
    width: `${(right - left) * 100}%`,
    height: `${(bottom - top) * 100}%`,
  });
  return mark;
}

const fileUrl = (brain, doc, tail) =>
  `/api/v1/brains/${path(brain)}/files/${path(doc.id)}${tail}`;

function quote(chunk) {
  if (!chunk) return null;
  const place = where(chunk);
  return el(
    "figure",
    { class: "passage-quote" },
    el("figcaption", { class: "muted small", text: place ? `Cited passage · ${place}` : "Cited passage" }),
    el("blockquote", { class: "chunk-text", text: chunk.text }),
  );
}

// A picture (a PDF page or an image) with the passage's boxes over it.
function marked(src, alt, boxes) {
  const image = el("img", { src, alt, class: "page-image", decoding: "async" });
  const frame = el("div", { class: "page-frame", tabindex: "-1", role: "group", "aria-label": alt }, image);
  frame.append(...boxes.map(box));
  return { frame, image };
}

// How wide to draw a page: the space it has, in device pixels, in steps of 200 (for the cache).
function drawWidth(container) {
  const pixels = (container.clientWidth || 800) * (window.devicePixelRatio || 1);
  return Math.min(2400, Math.max(400, Math.ceil(pixels / 200) * 200));
}

function pdfView(container, brain, doc, passage) {
  const count = passage.page_count || 1;
  const cited = passage.chunk && passage.chunk.page ? passage.chunk.page : 1;
  let page = cited;
  const status = el("span", { class: "page-number", "aria-live": "polite" });
  const previous = el("button", { type: "button", text: "‹ Previous page" });
  const next = el("button", { type: "button", text: "Next page ›" });
  const holder = el("div", { class: "page-holder" });
  const width = drawWidth(container);
  const show = (focus) => {
    status.textContent = `Page ${page} of ${count}`;
    previous.disabled = page <= 1;
    next.disabled = page >= count;
    const boxes = page === cited ? passage.boxes : [];
    const alt = `Page ${page} of ${doc.name}${boxes.length ? ", with the cited passage marked" : ""}`;
    const src = fileUrl(brain, doc, `/page?number=${page}&width=${width}&v=${doc.content_hash.slice(0, 12)}`);
    const { frame, image } = marked(src, alt, boxes);
    clear(holder).append(frame);
    image.addEventListener("load", () => {
      frame.dataset.loaded = "true";
      const first = frame.querySelector(".passage-box");
      if (focus && first) first.scrollIntoView({ block: "center" });
    });
    if (focus) frame.focus({ preventScroll: true });
  };
  previous.addEventListener("click", () => {
    page -= 1;
    show(false);
  });
  next.addEventListener("click", () => {
    page += 1;
    show(false);
  });
  container.append(
    el("div", { class: "page-nav" }, previous, status, next),
    holder,
    quote(passage.chunk),
  );
  show(true);
}

function imageView(container, brain, doc, passage) {
  const alt = `${doc.name}${passage.boxes.length ? ", with the passage read from it marked" : ""}`;
  const { frame } = marked(fileUrl(brain, doc, "/download"), alt, passage.boxes);
  container.append(el("div", { class: "page-holder" }, frame), quote(passage.chunk));
  frame.focus({ preventScroll: true });
}

function audioView(container, brain, doc, passage) {
  const chunk = passage.chunk;
  const start = chunk && chunk.time_start !== null && chunk.time_start !== undefined ? chunk.time_start : 0;
  const player = el("audio", {
    controls: true,
    preload: "metadata",
    src: fileUrl(brain, doc, "/download"),
    "aria-label": `${doc.name}, from ${where({ time_start: start }) || "the start"}`,
  });
  // At the cited moment once the browser knows the recording's length.
  player.addEventListener("loadedmetadata", () => (player.currentTime = start), { once: true });
  container.append(player, quote(chunk));
  player.focus();
}

async function textView(container, brain, doc, passage) {
  const chunk = passage.chunk;
  const text = await api.get(`/brains/${path(brain)}/files/${path(doc.id)}/text`);
  if (!text.text) {
    container.append(el("p", { class: "muted", text: "No text yet: the document is not indexed." }));
    return;
  }
  const body = text.text;
  let start = chunk && Number.isInteger(chunk.char_start) ? chunk.char_start : -1;
  let end = chunk && Number.isInteger(chunk.char_end) ? chunk.char_end : -1;
  // A passage without offsets (indexed before they were kept) is found by its words.
  if (chunk && (start < 0 || end > body.length)) {
    start = body.indexOf(chunk.text);
    end = start < 0 ? -1 : start + chunk.text.length;
  }
  const pre = el("pre", { class: "extracted source-text", lang: doc.language || undefined });
  if (start >= 0 && end > start) {
    const place = where(chunk);
    const mark = el("mark", {
      class: "passage-mark",
      tabindex: "-1",
      "aria-label": `Cited passage${place ? `, ${place}` : ""}`,
      text: body.slice(start, end),
    });
    pre.append(body.slice(0, start), mark, body.slice(end));
    container.append(place ? el("p", { class: "muted small", text: `The cited passage · ${place}` }) : null, pre);
    mark.scrollIntoView({ block: "center" });
    mark.focus({ preventScroll: true });
  } else {
    pre.textContent = body;
    container.append(pre, quote(chunk));
  }
  if (text.truncated) container.append(el("p", { class: "muted small", text: "The text is longer; this shows the start." }));
}

// Fill `container` with `doc` (as GET …/files/{id} answers) at `passage` (GET …/passage).
export async function showSource(container, brain, doc, passage) {
  clear(container);
  if (doc.format === "pdf") pdfView(container, brain, doc, passage);
  else if (doc.format === "image") imageView(container, brain, doc, passage);
  else if (doc.format === "audio") audioView(container, brain, doc, passage);
  else await textView(container, brain, doc, passage);
}
