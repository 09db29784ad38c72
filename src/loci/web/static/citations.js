// Citations in answers and study items: a numbered chip for each `[n]` marker, a list of the
// numbered sources, and a source button; each opens the preview at the cited passage.
//
// Answers are written by a model from untrusted passages, so they are never parsed as HTML: the
// little structure they get (paragraphs, line breaks, bullet lists, **bold**) is built from text
// nodes, and anything else in them stays literal text.

import { el, where } from "./dom.js";
import { openPreview } from "./preview.js";

// `[3]`, `[2][3]` (two matches) and `[2, 3]`; or **bold**.
const INLINE = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]|\*\*([^*\n]+?)\*\*/g;
const BULLET = /^\s*(?:([-*•])|(\d{1,3})[.)])\s+(.*)$/;
const HEADING = /^\s*#{1,6}\s+(.*)$/;

export function open(citation) {
  openPreview({
    brain: citation.brain,
    documentId: citation.document_id,
    chunkId: citation.chunk_id,
    name: citation.name,
  });
}

function label(citation) {
  return citation.title && citation.title !== citation.name
    ? `${citation.title} — ${citation.name}`
    : citation.name;
}

export function chip(number, citation) {
  const place = where(citation);
  return el("button", {
    type: "button",
    class: "cite-chip",
    text: String(number),
    title: `${label(citation)}${place ? ` · ${place}` : ""}`,
    "aria-label": `Source ${number}: ${citation.name}${place ? `, ${place}` : ""}`,
    dataset: { number: String(number) },
    onclick: () => open(citation),
  });
}

// A button naming the file (and title), page, lines and heading path of a passage.
export function sourceButton(citation) {
  const place = where(citation);
  return el(
    "button",
    {
      type: "button",
      class: "citation",
      // Its name is what it shows (the file and where in it), as a person sees it.
      onclick: () => open(citation),
    },
    el("span", { class: "citation-name", text: label(citation) }),
    place ? el("span", { class: "citation-where", text: place }) : null,
  );
}

export function sourceList(citations) {
  const sorted = [...citations].sort((a, b) => a.number - b.number);
  return el(
    "ol",
    { class: "sources" },
    sorted.map((citation) =>
      el(
        "li",
        { class: "source-item", dataset: { number: String(citation.number) } },
        el("span", { class: "source-number", "aria-hidden": "true", text: String(citation.number) }),
        sourceButton(citation),
      ),
    ),
  );
}

// Text with citation markers turned into chips (`cite(n)` finds citation n; an unknown number
// stays as written) and **bold** into <strong>.
function inline(text, cite) {
  const fragment = document.createDocumentFragment();
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) fragment.append(text.slice(last, match.index));
    if (match[2] !== undefined) {
      fragment.append(el("strong", {}, inline(match[2], cite)));
    } else {
      const numbers = match[1].split(",").map((n) => Number(n.trim()));
      if (numbers.every((n) => cite(n))) {
        fragment.append(...numbers.map((n) => chip(n, cite(n))));
      } else {
        fragment.append(match[0]);
      }
    }
    last = match.index + match[0].length;
  }
  if (last < text.length) fragment.append(text.slice(last));
  return fragment;
}

// An answer as paragraphs, line breaks, lists and headings, all from text nodes.
export function renderAnswer(text, cite) {
  const fragment = document.createDocumentFragment();
  let paragraph = null;
  let list = null;
  for (const line of text.split("\n")) {
    const bullet = BULLET.exec(line);
    const heading = bullet ? null : HEADING.exec(line);
    if (bullet) {
      paragraph = null;
      const ordered = bullet[2] !== undefined;
      if (!list || (list.tagName === "OL") !== ordered) {
        list = el(ordered ? "ol" : "ul", { start: ordered && bullet[2] !== "1" ? bullet[2] : null });
        fragment.append(list);
      }
      list.append(el("li", {}, inline(bullet[3], cite)));
    } else if (heading) {
      paragraph = list = null;
      fragment.append(el("p", { class: "answer-heading" }, el("strong", {}, inline(heading[1], cite))));
    } else if (!line.trim()) {
      paragraph = list = null;
    } else {
      list = null;
      if (paragraph) paragraph.append(el("br"));
      else fragment.append((paragraph = el("p")));
      paragraph.append(inline(line, cite));
    }
  }
  return fragment;
}
