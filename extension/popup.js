// The popup: connect to a Loci server with a token, pick a brain, save the page, ask the brain.
//
// The token lives in chrome.storage.local (this browser profile only) and is sent to nothing but
// the server it was entered for. Answers and passages come from documents, which are untrusted:
// they are only ever put on the page as text, never as HTML.
"use strict";

const { createClient, normalizeServer, originPattern } = globalThis.LociApi;

const $ = (id) => document.getElementById(id);
const POLL_MS = 400;
const READY_TIMEOUT_MS = 120_000;

const state = {
  client: null,
  server: "",
  brain: "",
  roles: {}, // brain name → the person's role in it
  readOnlyToken: false,
  conversationId: null,
  asking: false,
};

function show(section) {
  $("connect").hidden = section !== "connect";
  $("connected").hidden = section !== "connected";
}

function setStatus(element, text, stateName) {
  element.hidden = !text;
  element.textContent = text || "";
  element.dataset.state = stateName || "";
}

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

// ---- connecting ---------------------------------------------------------------------------

// A brain this connection may save into: the token can write and the person is not a viewer.
function writable(brain) {
  return !state.readOnlyToken && state.roles[brain] !== "viewer";
}

function showSaveAllowed() {
  const allowed = writable(state.brain);
  $("save").disabled = !allowed;
  setStatus(
    $("save-status"),
    allowed ? "" : state.readOnlyToken
      ? "This token is read-only: it can ask, not save."
      : `You can read ${state.brain} but not add to it.`,
    allowed ? "" : "read-only",
  );
}

async function useConnection(server, token, preferredBrain) {
  const client = createClient({ server, token });
  const [me, brains] = await Promise.all([client.me(), client.brains()]);
  if (!brains.length) throw new Error("This token cannot see any brain yet: create one with `loci brains create`.");
  state.readOnlyToken = me.token.scope === "read";
  state.roles = Object.fromEntries(brains.map((b) => [b.name, b.role]));
  $("brain").replaceChildren(
    ...brains.map((b) =>
      el("option", { value: b.name, text: writable(b.name) ? b.name : `${b.name} (read only)` }),
    ),
  );
  const names = brains.map((b) => b.name);
  const brain = names.includes(preferredBrain) ? preferredBrain : names[0];
  $("brain").value = brain;
  Object.assign(state, { client, server, brain, conversationId: null });
  await chrome.storage.local.set({ server, token, brain });
  $("server-label").textContent = new URL(server).host;
  showSaveAllowed();
  show("connected");
}

async function onConnect(event) {
  event.preventDefault();
  const error = $("connect-error");
  setStatus(error, "");
  let server;
  try {
    server = normalizeServer($("server").value);
  } catch (problem) {
    setStatus(error, problem.message);
    return;
  }
  const token = $("token").value.trim();
  if (!token) {
    setStatus(error, "Paste an API token (it starts with loci_).");
    return;
  }
  // Asked for here, inside the click, as Chrome requires: the right to talk to this server and
  // no other. Loopback servers are granted at install; anything else asks the person once.
  const granted = await chrome.permissions
    .request({ origins: [originPattern(server)] })
    .catch(() => false);
  if (!granted) {
    setStatus(error, `Loci needs your permission to reach ${new URL(server).host}.`);
    return;
  }
  $("connect-button").disabled = true;
  try {
    await useConnection(server, token, "");
    $("token").value = "";
  } catch (problem) {
    setStatus(error, problem.message);
  } finally {
    $("connect-button").disabled = false;
  }
}

async function onDisconnect() {
  await chrome.storage.local.remove(["token"]);
  state.client = null;
  $("messages").replaceChildren();
  $("server-label").textContent = "";
  show("connect");
}

// ---- saving -------------------------------------------------------------------------------

// The page to save: the active tab behind the popup — or, when this page was opened in a tab of
// its own, the web page looked at most recently before it.
async function targetTab() {
  const own = await chrome.tabs.getCurrent();
  if (!own) {
    const [active] = await chrome.tabs.query({ active: true, currentWindow: true });
    return active;
  }
  const tabs = await chrome.tabs.query({});
  return tabs
    .filter((t) => t.id !== own.id && (!t.url || /^https?:/.test(t.url)))
    .sort((a, b) => (b.lastAccessed || 0) - (a.lastAccessed || 0))[0];
}

async function waitUntilSearchable(brain, id) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const doc = await state.client.document(brain, id);
    if (doc.status !== "processing" || Date.now() > deadline) return doc;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function onSave() {
  const status = $("save-status");
  const button = $("save");
  button.disabled = true;
  setStatus(status, "Reading the page…", "working");
  try {
    const tab = await targetTab();
    if (!tab) throw new Error("There is no page to save.");
    const answer = await chrome.runtime.sendMessage({ type: "save-tab", tabId: tab.id });
    if (!answer || !answer.ok) throw new Error((answer && answer.error) || "Saving failed.");
    const { saved } = answer;
    const name = saved.title || saved.url;
    if (saved.deduped) {
      setStatus(status, `Already in ${saved.brain}: “${name}”.`, "done");
      return;
    }
    setStatus(status, `Saved “${name}” to ${saved.brain}; indexing…`, "indexing");
    const doc = await waitUntilSearchable(saved.brain, saved.document.id);
    if (doc.status === "ready") {
      setStatus(status, `Saved “${name}” to ${saved.brain}. It is searchable now.`, "done");
    } else if (doc.status === "failed") {
      setStatus(status, `Saved, but indexing failed: ${doc.status_reason || "unknown reason"}.`, "failed");
    } else {
      setStatus(status, `Saved “${name}” to ${saved.brain}; still indexing.`, "indexing");
    }
  } catch (problem) {
    setStatus(status, problem.message, "failed");
  } finally {
    button.disabled = false;
  }
}

// ---- asking -------------------------------------------------------------------------------

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
async function fallbackToSearch(bubble, text, question, problem) {
  const hits = await state.client.search(state.brain, question, 5).catch(() => null);
  if (!hits) throw problem;
  text.textContent = hits.length
    ? `No answer (${problem.message}). The closest passages:`
    : `No answer (${problem.message}), and nothing in ${state.brain} matches.`;
  if (hits.length) bubble.append(hitList(hits));
  bubble.dataset.state = "fallback";
}

async function onAsk(event) {
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
      await fallbackToSearch(bubble, text, question, problem);
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

function onNewChat() {
  state.conversationId = null;
  $("messages").replaceChildren();
  $("new-chat").hidden = true;
}

async function onBrainChange() {
  state.brain = $("brain").value;
  await chrome.storage.local.set({ brain: state.brain });
  showSaveAllowed();
  onNewChat();
}

// ---- start --------------------------------------------------------------------------------

async function start() {
  $("connect-form").addEventListener("submit", onConnect);
  $("disconnect").addEventListener("click", onDisconnect);
  $("save").addEventListener("click", onSave);
  $("ask-form").addEventListener("submit", onAsk);
  $("new-chat").addEventListener("click", onNewChat);
  $("brain").addEventListener("change", onBrainChange);

  const { server, token, brain } = await chrome.storage.local.get(["server", "token", "brain"]);
  if (server) $("server").value = server;
  if (!server || !token) {
    show("connect");
    return;
  }
  try {
    await useConnection(server, token, brain);
  } catch (problem) {
    show("connect");
    setStatus($("connect-error"), problem.message);
  }
}

start();
