// A document's state in words, the same in the upload cards, the Files list and the chat: where
// indexing is (the API's `progress`: parse, OCR page n of m, chunking, embedding k of n), ready
// (and whether meaning search has caught up), or failed with its reason and what to do.
//
// `progress` and `vectors_pending` may be absent (a server that does not report them): the
// words then fall back to "Indexing…" and plain "Ready".

import { plural } from "./dom.js";

export const FORMAT_LABEL = {
  pdf: "PDF",
  word: "Word",
  slides: "Slides",
  spreadsheet: "Spreadsheet",
  ebook: "E-book",
  image: "Image",
  audio: "Recording",
  web: "Web page",
  email: "Email",
  text: "Text",
  note: "Note",
  page: "Brain page",
  other: "Other",
};

// What the indexer is doing now: {text, fraction} (fraction null when unknown).
export function indexingStep(doc) {
  const p = doc.progress;
  if (!p || !p.stage) return { text: "Indexing…", fraction: null };
  const known = Number.isFinite(p.total) && p.total > 0;
  const fraction = known ? Math.min(1, Math.max(0, p.done / p.total)) : null;
  const of = known ? ` ${p.done} of ${p.total}` : "";
  switch (p.stage) {
    case "parse":
      return { text: known ? `Reading page${of}` : "Reading the file…", fraction };
    case "ocr":
      return { text: known ? `Reading text in images (OCR): page${of}` : "Reading text in images (OCR)…", fraction };
    case "chunk":
      return { text: "Splitting into passages…", fraction };
    case "embed":
      return { text: known ? `Indexing passages${of}` : "Indexing passages…", fraction };
    default:
      return { text: "Indexing…", fraction };
  }
}

// One line for a ready document: "Ready · 12 passages", and whether meaning search waits.
export function readyText(doc) {
  const parts = ["Ready", plural(doc.chunk_count, "passage")];
  if (doc.vectors_pending) parts.push("found by its words now, by meaning in a moment");
  return parts.join(" · ");
}

// Why it failed and what to do; `retry` true when a retry may help. A server that reports no
// `failure` gets the reason alone, and no retry offered.
export function failureText(doc) {
  const failure = doc.failure || null;
  return {
    reason: doc.status_reason || "It could not be read.",
    whatToDo: failure ? failure.what_to_do : "",
    retry: Boolean(failure && failure.retry_helps),
  };
}
