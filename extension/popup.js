// The popup: connect to a Loci server with a token, pick a brain, save the page (the chat is in
// chat.js).
//
// The token lives in chrome.storage.local (this browser profile only) and is sent to nothing but
// the server it was entered for.
import { $, el, setStatus } from "./dom.js";
import { resetChat, startChat } from "./chat.js";

const { createClient, normalizeServer, originPattern } = globalThis.LociApi;

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
    // A page kept before that has changed is refreshed in place: the same document, new text.
    const verb = saved.refreshed ? `Updated “${name}” in` : `Saved “${name}” to`;
    setStatus(status, `${verb} ${saved.brain}; indexing…`, "indexing");
    const doc = await waitUntilSearchable(saved.brain, saved.document.id);
    if (doc.status === "ready") {
      setStatus(status, `${verb} ${saved.brain}. It is searchable now.`, "done");
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

async function onBrainChange() {
  state.brain = $("brain").value;
  await chrome.storage.local.set({ brain: state.brain });
  showSaveAllowed();
  resetChat(state);
}

// ---- start --------------------------------------------------------------------------------

async function start() {
  $("connect-form").addEventListener("submit", onConnect);
  $("disconnect").addEventListener("click", onDisconnect);
  $("save").addEventListener("click", onSave);
  startChat(state);
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
