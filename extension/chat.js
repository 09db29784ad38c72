// The popup's chat: ask the chosen brain, stream the answer, list its numbered citations.
//
// Answers and passages come from documents, which are untrusted: they only ever reach the page
// as text nodes, never as HTML, and only http(s) sources become links.

import { $, el } from "./dom.js";

function where(citation) {
  const parts = [];
  if (citation.page) parts.push(`p. ${citation.page}`);
  if (citation.line_start) {
    parts.push(
      citation.line_end && citation.line_end !== citation.line_start
        ? `lines ${citation.line_start}–${citation.line_end}`
        : `line ${citation.line_start}`,
    );
  }
  if (citation.heading_path && citation.heading_path.length) parts.push(citation.heading_path.join(" › "));
  return parts.join(" · ");
}

function sourceLink(citation, label) {
  const url = citation.source_url || "";
  // Only web addresses become links: a document could name any scheme as its source.
  if (/^https?:\/\//i.test(url)) {
    return el("a", { href: url, target: "_blank", rel: "noopener noreferrer", text: label });
  }
  return el("span", { text: label });
}

function citationList(citations) {
  const list = el("ol", { class: "citations" });
  for (const c of citations) {
    const place = where(c);
    list.append(
      el(
        "li",
        { class: "citation", "data-document-id": String(c.document_id) },
        `[${c.number}] `,
        sourceLink(c, c.title || c.name),
        place ? el("span", { class: "where", text: ` · ${place}` }) : null,
      ),
    );
  }
  return list;
}

function hitList(hits) {
  const list = el("ol", { class: "citations" });
  hits.forEach((hit, i) => {
    const snippet = (hit.snippet || "").replace(/\*\*/g, "");
    list.append(
      el(
        "li",
        { class: "citation", "data-document-id": String(hit.document_id) },
        `[${i + 1}] `,
        sourceLink(hit, hit.title || hit.name),
        el("div", { class: "where", text: snippet }),
      ),
    );
  });
  return list;
}

// When the answer cannot be had (the model or the server failed), the matching passages still
// help: the brain's search needs no model.
async function fallbackToSearch(state, bubble, text, question, problem) {
  const hits = await state.client.search(state.brain, question, 5).catch(() => null);
  if (!hits) throw problem;
  text.textContent = hits.length
    ? `No answer (${problem.message}). The closest passages:`
    : `No answer (${problem.message}), and nothing in ${state.brain} matches.`;
  if (hits.length) bubble.append(hitList(hits));
  bubble.dataset.state = "fallback";
}

async function onAsk(state, event) {
  event.preventDefault();
  const input = $("question");
  const question = input.value.trim();
  if (!question || state.asking) return;
  state.asking = true;
  $("ask-button").disabled = true;
  input.value = "";
  const messages = $("messages");
  messages.append(el("div", { class: "msg msg-user", text: question }));
  const text = el("div", { class: "answer-text" });
  const note = el("div", { class: "msg-note", text: "Searching…" });
  const bubble = el("div", { class: "msg msg-assistant", "data-state": "streaming" }, text, note);
  messages.append(bubble);
  let streamed = "";
  try {
    const done = await state.client.ask(state.brain, question, {
      conversationId: state.conversationId,
      onEvent(type, data) {
        if (type === "status" && data && data.message) note.textContent = data.message;
        if (type === "token" && data && typeof data.text === "string") {
          streamed += data.text;
          text.textContent = streamed;
          messages.scrollTop = messages.scrollHeight;
        }
      },
    });
    text.textContent = done.answer;
    note.textContent = done.model ? "" : "No model on the server: quoted from your sources.";
    note.hidden = !note.textContent;
    if (done.citations && done.citations.length) bubble.append(citationList(done.citations));
    bubble.dataset.state = "done";
    state.conversationId = done.conversation_id || null;
    $("new-chat").hidden = !state.conversationId;
  } catch (problem) {
    note.hidden = true;
    const final = [401, 403, 404].includes(problem.status);
    try {
      if (final) throw problem;
      await fallbackToSearch(state, bubble, text, question, problem);
    } catch (failed) {
      text.textContent = failed.message;
      bubble.dataset.state = "failed";
    }
  } finally {
    state.asking = false;
    $("ask-button").disabled = false;
    messages.scrollTop = messages.scrollHeight;
  }
}

export function resetChat(state) {
  state.conversationId = null;
  $("messages").replaceChildren();
  $("new-chat").hidden = true;
}

/** Wire the chat's form and "New chat" button to `state` (client, brain, conversationId). */
export function startChat(state) {
  $("ask-form").addEventListener("submit", (event) => onAsk(state, event));
  $("new-chat").addEventListener("click", () => resetChat(state));
}
