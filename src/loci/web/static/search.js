// Search with citations: each hit names its file, page, lines and heading path, shows a snippet
// with the matched terms highlighted, and opens the preview at the cited passage.

import { api, path } from "./api.js";
import { $, busy, clear, el, markedSnippet, plural, showError, where } from "./dom.js";
import { Filters } from "./filters.js";
import { openPreview } from "./preview.js";

const MATCHED = { text: "matched words", vector: "matched meaning", both: "matched words and meaning" };

const form = $("#search-form");
const results = $("#search-results");
let brain = null;
let searched = false; // a search ran: removing a filter runs it again

const filters = new Filters({
  details: $("#search-filters"),
  chips: $("#search-chips"),
  prefix: "search-filter",
  storageKey: "loci.search.filters",
  title: "Filters",
  onRemove: () => {
    if (searched && $("#search-input").value.trim()) form.requestSubmit();
  },
});

export function showSearch(current) {
  if (brain && brain.name !== current.name && !$("#search-all").checked) {
    clear(results);
    $("#search-summary").textContent = "";
  }
  brain = current;
}

function renderHit(hit, across) {
  const place = where(hit);
  const label = hit.title && hit.title !== hit.name ? `${hit.title} — ${hit.name}` : hit.name;
  const citation = el(
    "button",
    {
      type: "button",
      class: "citation",
      onclick: () =>
        openPreview({ brain: hit.brain, documentId: hit.document_id, chunkId: hit.chunk_id, name: hit.name }),
    },
    el("span", { class: "citation-name", text: label }),
    place ? el("span", { class: "citation-where", text: place }) : null,
  );
  const [legs, linked] = hit.matched_by.split("+");
  const matched = legs === "graph" ? "linked" : MATCHED[legs] || legs;
  const facts = [linked ? `${matched}, lifted by a link` : matched, `score ${hit.score.toFixed(3)}`];
  if (hit.graph_path && hit.graph_path.length) facts.push(`via ${hit.graph_path.join(" → ")}`);
  if (across) facts.unshift(`brain ${hit.brain}`);
  // Kept after its file was deleted from a followed folder: found, but no longer on disk.
  if (hit.gone_at) facts.push(`file deleted ${hit.gone_at.slice(0, 10)}`);
  // A hit is a document: its other passages that ranked are listed under its best one.
  const more = (hit.passages || []).map((passage) =>
    el(
      "li",
      {},
      el("button", {
        type: "button",
        class: "passage-where link-button",
        text: where(passage) || "another passage",
        onclick: () =>
          openPreview({ brain: hit.brain, documentId: hit.document_id, chunkId: passage.chunk_id, name: hit.name }),
      }),
      " ",
      el("span", { class: "snippet" }, markedSnippet(passage.snippet, passage.highlights)),
    ),
  );
  return el(
    "li",
    { class: "hit", dataset: { chunkId: hit.chunk_id } },
    citation,
    el("p", { class: "snippet" }, markedSnippet(hit.snippet, hit.highlights)),
    more.length ? el("ul", { class: "more-passages small" }, more) : null,
    el("p", { class: "muted small", text: facts.join(" · ") }),
    hit.source_url ? el("p", { class: "muted small source", text: hit.source_url }) : null,
  );
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const query = $("#search-input").value.trim();
  if (!query) {
    showError($("#search-error"), new Error("Type what you are looking for."));
    return;
  }
  const across = $("#search-all").checked;
  if (!across && !brain) {
    showError($("#search-error"), new Error("Create a brain first, or search all your brains."));
    return;
  }
  const chosen = filters.value();
  const filtered = Object.keys(chosen).length > 0;
  const body = { query, mode: $("#search-mode").value, limit: 20, filters: chosen };
  const url = across ? "/search" : `/brains/${path(brain.name)}/search`;
  await busy(form.querySelector("button[type=submit]"), async () => {
    try {
      const answer = await api.post(url, body);
      searched = true;
      showError($("#search-error"), null);
      clear(results).append(...answer.hits.map((hit) => renderHit(hit, across)));
      const scope = across ? "all your brains" : brain.name;
      const how = filtered ? " with these filters" : "";
      $("#search-summary").textContent = !answer.hits.length
        ? `Nothing in ${scope} matches “${query}”${how}.`
        : answer.weak
          ? `No close match in ${scope}${how} — the nearest passages:`
          : `${plural(answer.hits.length, "passage")} in ${scope}${how}.`;
    } catch (error) {
      // A refusal (an empty date range, a blank tag) says why; old results would mislead.
      clear(results);
      $("#search-summary").textContent = "";
      showError($("#search-error"), error);
    }
  });
});
