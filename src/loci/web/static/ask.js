// Ask: a chat over one brain. The answer streams in as Server-Sent Events (progress, sources,
// tokens, then `done`), its `[n]` markers become chips that open the cited passage, and the
// question and answer are kept in a conversation that follow-ups continue.

import { api, path, streamEvents } from "./api.js";
import { setupChatDrop } from "./ask-drop.js";
import { sourceList, renderAnswer } from "./citations.js";
import { $, clear, confirmAction, el, plural, showError, toast, when } from "./dom.js";
import { ratingControls } from "./feedback.js";
import { Filters } from "./filters.js";
import { resetStudy, showStudy } from "./study.js";

const log = $("#chat-log");
const form = $("#ask-form");
const input = $("#ask-input");
const askButton = $("#ask-button");
const stopButton = $("#stop-button");
const list = $("#conversation-list");

let brain = null;
let conversation = null; // {id, title} once the server made one
let running = null; // the AbortController of the answer being written
let generation = 0; // bumps when the chat is replaced, so late answers are dropped

// "Search only in…": every question's searches keep to these (the API's `filters`).
const filters = new Filters({
  details: $("#ask-filters"),
  chips: $("#ask-chips"),
  prefix: "ask-filter",
  storageKey: "loci.ask.filters",
  title: "Search only in…",
});

export function showAsk(current) {
  if (!brain || brain.name !== current.name) {
    brain = current;
    startNew();
    resetStudy();
  }
  brain = current;
  $("#ask-drop-help").hidden = brain.role === "viewer";
  showStudy(current);
  loadConversations();
}

// Forget the chat (signing out, or the brain is gone).
export function resetAsk() {
  brain = null;
  startNew();
  clear(list);
  resetStudy();
}

function startNew() {
  stop();
  generation++;
  conversation = null;
  clear(log);
  $("#chat-empty").hidden = false;
  $("#chat-title").textContent = "New conversation";
  showError($("#ask-error"), null);
  markCurrent();
}

function stop() {
  if (running) running.abort();
}

// The conversation list --------------------------------------------------------------------------
async function loadConversations() {
  if (!brain) return;
  const asked = brain.name;
  try {
    const found = await api.get(`/brains/${path(asked)}/conversations`);
    if (!brain || brain.name !== asked) return;
    clear(list).append(...found.map(conversationItem));
    $("#conversations-empty").hidden = found.length > 0;
    const mine = conversation && found.find((c) => c.id === conversation.id);
    if (mine) {
      conversation = mine;
      $("#chat-title").textContent = mine.title;
    }
    markCurrent();
  } catch (error) {
    showError($("#ask-error"), error);
  }
}

function markCurrent() {
  for (const item of list.children) {
    const on = conversation !== null && item.dataset.id === String(conversation.id);
    item.classList.toggle("current", on);
    const button = item.querySelector(".conversation-open");
    if (!button) continue;
    if (on) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
}

// Where a conversation was started, when not here: the command line, an agent, Slack.
const ORIGIN = { cli: "command line", mcp: "agent (MCP)", slack: "Slack", api: "API" };

function origin(found) {
  const label = ORIGIN[found.origin] || (found.local ? "command line" : null);
  return label ? el("span", { class: "badge conversation-origin", text: `from ${label}` }) : null;
}

function conversationItem(found) {
  const item = el("li", { class: "conversation", dataset: { id: String(found.id), origin: found.origin || "" } });
  const show = () =>
    clear(item).append(
      el(
        "button",
        { type: "button", class: "conversation-open", onclick: () => openConversation(found.id) },
        el("span", { class: "conversation-title", text: found.title }),
        el("span", { class: "muted small" }, el("time", { datetime: found.updated_at, text: when(found.updated_at) })),
        origin(found),
      ),
      el(
        "div",
        { class: "conversation-actions" },
        el("button", {
          type: "button",
          class: "link-button",
          text: "Rename",
          "aria-label": `Rename ${found.title}`,
          onclick: rename,
        }),
        el("button", {
          type: "button",
          class: "link-button danger",
          text: "Delete",
          "aria-label": `Delete ${found.title}`,
          onclick: () => remove(found),
        }),
      ),
    );
  const rename = () => {
    const field = el("input", {
      class: "rename-input",
      value: found.title,
      maxlength: "200",
      required: true,
      "aria-label": "New title",
    });
    const error = el("p", { class: "error small", role: "alert", hidden: true });
    const renameForm = el(
      "form",
      { class: "rename-form" },
      field,
      el(
        "div",
        { class: "row" },
        el("button", { type: "submit", class: "primary", text: "Save" }),
        el("button", { type: "button", text: "Cancel", onclick: () => (show(), markCurrent()) }),
      ),
      error,
    );
    renameForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const title = field.value.trim();
      if (!title) {
        showError(error, new Error("A title cannot be empty."));
        return;
      }
      try {
        const renamed = await api.patch(
          `/brains/${path(brain.name)}/conversations/${path(found.id)}`,
          { title },
        );
        if (conversation && conversation.id === renamed.id) {
          conversation = renamed;
          $("#chat-title").textContent = renamed.title;
        }
        await loadConversations();
      } catch (failure) {
        showError(error, failure);
      }
    });
    clear(item).append(renameForm);
    field.focus();
    field.select();
  };
  show();
  return item;
}

async function remove(found) {
  if (!(await confirmAction(`Delete the conversation “${found.title}”?`))) return;
  try {
    await api.delete(`/brains/${path(brain.name)}/conversations/${path(found.id)}`);
    if (conversation && conversation.id === found.id) startNew();
    toast("Conversation deleted.");
    await loadConversations();
  } catch (error) {
    showError($("#ask-error"), error);
  }
}

async function openConversation(id) {
  stop();
  const mine = ++generation;
  showError($("#ask-error"), null);
  try {
    const detail = await api.get(`/brains/${path(brain.name)}/conversations/${path(id)}`);
    if (mine !== generation) return;
    conversation = detail.conversation;
    $("#chat-title").textContent = conversation.title;
    clear(log);
    $("#chat-empty").hidden = detail.messages.length > 0;
    for (const message of detail.messages) {
      if (message.role === "user") log.append(userMessage(message.content));
      else new AnswerView().finishFromHistory(message);
    }
    markCurrent();
    log.lastElementChild?.scrollIntoView({ block: "nearest" });
    input.focus();
  } catch (error) {
    if (mine === generation) showError($("#ask-error"), error);
  }
}

// Messages ---------------------------------------------------------------------------------------
function userMessage(text) {
  return el("li", { class: "msg msg-user" }, el("p", { class: "msg-text", text }));
}

const INTENT = (intent) => String(intent).replaceAll("_", " ");

function duration(ms) {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

// One answer in the log, as it is written and when it is done.
class AnswerView {
  constructor() {
    this.text = "";
    this.citations = new Map();
    this.status = "";
    this.facts = {};
    this.frame = 0;
    this.progress = el("p", { class: "msg-progress muted small", "aria-live": "polite" });
    this.body = el("div", { class: "answer" });
    this.error = el("p", { class: "error", role: "alert", hidden: true });
    this.model = el("p", { class: "msg-model muted small", hidden: true });
    this.sources = el("div", { class: "msg-sources", hidden: true });
    this.saveButton = el("button", { type: "button", class: "small", text: "Save answer" });
    this.saved = el("span", { class: "msg-saved muted small", "aria-live": "polite" });
    this.actions = el("div", { class: "msg-actions", hidden: true }, this.saveButton, this.saved);
    this.node = el(
      "li",
      { class: "msg msg-assistant", dataset: { state: "streaming" }, "aria-busy": "true" },
      this.progress,
      this.body,
      this.error,
      this.model,
      this.sources,
      this.actions,
    );
    log.append(this.node);
  }

  // "Save answer": keep it as an analysis page in the brain graph's research/ folder; and the
  // thumbs that rate it (see feedback.js).
  offerSave(conversationId, messageId, intent, feedback = null) {
    if (!conversationId || !messageId || intent === "save") return;
    this.actions.hidden = false;
    this.actions.append(ratingControls(brain.name, conversationId, messageId, feedback));
    this.saveButton.onclick = async () => {
      this.saveButton.disabled = true;
      try {
        const saved = await api.post(
          `/brains/${path(brain.name)}/conversations/${path(conversationId)}` +
            `/messages/${path(messageId)}/save`,
        );
        const where = saved.document.path;
        this.saved.textContent = saved.created ? `Saved as ${where}` : `Already saved as ${where}`;
        this.saveButton.hidden = true;
      } catch (error) {
        this.saveButton.disabled = false;
        toast(error.message || "The answer could not be saved.", "error");
      }
    };
  }

  cite = (number) => this.citations.get(number);

  addCitations(citations) {
    for (const citation of citations) this.citations.set(citation.number, citation);
  }

  showProgress(extra = []) {
    const { route, scope, rewrite, queries, grading } = this.facts;
    const facts = [route, scope, rewrite, queries, grading];
    this.progress.textContent = [this.status, ...facts, ...extra].filter(Boolean).join(" · ");
  }

  // Re-rendering the whole answer is simplest; once per frame keeps it cheap while tokens pour in.
  render() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      clear(this.body).append(renderAnswer(this.text, this.cite));
    });
  }

  renderNow() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    clear(this.body).append(renderAnswer(this.text, this.cite));
  }

  listSources(citations) {
    clear(this.sources);
    if (!citations.length) {
      this.sources.hidden = true;
      return;
    }
    this.sources.append(el("p", { class: "sources-heading", text: "Sources" }), sourceList(citations));
    this.sources.hidden = false;
  }

  on(type, data) {
    switch (type) {
      case "status":
        this.status = data.message;
        break;
      case "route":
        this.facts.route = INTENT(data.intent);
        break;
      case "scope":
        this.facts.scope = `searched ${data.description}`;
        break;
      case "rewrite":
        this.facts.rewrite = `read as “${data.rewritten}”`;
        break;
      case "queries":
        this.facts.queries =
          data.queries.length === 1 ? "1 query" : `${data.queries.length} queries`;
        break;
      case "grading": {
        const partly = data.partially_relevant ? `, ${data.partially_relevant} partly` : "";
        this.facts.grading = `${data.relevant} of ${plural(data.total, "passage")} relevant${partly}`;
        break;
      }
      case "sources":
        this.addCitations(data.sources);
        this.listSources(data.sources);
        break;
      case "token":
        this.text += data.text;
        this.render();
        break;
      case "revise":
        // The model answers again (its first answer said what its sources do not): start over.
        this.text = "";
        this.render();
        this.status = `Answering again: ${data.reason}.`;
        break;
      case "done":
        this.finish(data);
        return;
      case "error":
        this.fail(new Error(data.message || "The answer failed."));
        return;
      default:
        return;
    }
    this.showProgress();
  }

  settle(state) {
    this.node.dataset.state = state;
    this.node.removeAttribute("aria-busy");
    this.progress.removeAttribute("aria-live");
  }

  finish(done) {
    this.text = done.answer;
    this.addCitations(done.citations);
    this.renderNow();
    if (done.citations.length) this.listSources(done.citations);
    this.status = "";
    this.showProgress(done.timings && done.timings.total ? [duration(done.timings.total)] : []);
    this.model.textContent = done.model
      ? `Answered by ${done.model}`
      : "From your documents (no model)";
    if (done.model && done.fallbacks && done.fallbacks.length) {
      this.model.textContent += ` · without the model for: ${done.fallbacks.join(", ")}`;
    }
    this.model.hidden = false;
    this.settle("done");
    this.offerSave(done.conversation_id, done.message_id, done.intent);
  }

  finishFromHistory(message) {
    this.text = message.content;
    this.addCitations(message.citations);
    this.renderNow();
    this.listSources(message.citations);
    this.progress.hidden = true;
    this.settle("done");
    this.offerSave(message.conversation_id, message.id, message.intent, message.feedback);
  }

  fail(error) {
    this.renderNow();
    this.status = "";
    this.showProgress();
    showError(this.error, error);
    this.settle("error");
  }

  stopped() {
    this.renderNow();
    this.status = "Stopped.";
    this.showProgress();
    this.settle("stopped");
  }
}

// Asking -----------------------------------------------------------------------------------------
async function ask(question) {
  const mine = generation;
  const controller = new AbortController();
  running = controller;
  askButton.hidden = true;
  stopButton.hidden = false;
  showError($("#ask-error"), null);
  $("#chat-empty").hidden = true;
  const asked = userMessage(question);
  log.append(asked);
  const view = new AnswerView();
  view.status = "Sending…";
  view.showProgress();
  view.node.scrollIntoView({ block: "nearest" });

  const body = { question };
  if (conversation) body.conversation_id = conversation.id;
  const only = filters.value();
  if (Object.keys(only).length) body.filters = only;
  let ended = false;
  try {
    await streamEvents(`/brains/${path(brain.name)}/ask`, body, {
      signal: controller.signal,
      onEvent: (type, data) => {
        if (mine !== generation || ended) return;
        view.on(type, data);
        if (type === "done") {
          ended = true;
          if (data.conversation_id && (!conversation || conversation.id !== data.conversation_id)) {
            conversation = { id: data.conversation_id, title: question };
          }
        } else if (type === "error") {
          ended = true;
        }
      },
    });
    if (!ended && mine === generation) view.fail(new Error("The answer was cut off. Ask again."));
  } catch (error) {
    if (mine === generation && !ended) {
      if (error.code === "aborted") view.stopped();
      else if (error.status === 400 || error.status === 422) {
        // Refused before any answer began (filters that cannot match): say why above the
        // form and give the question back, so nothing typed is lost.
        view.node.remove();
        asked.remove();
        $("#chat-empty").hidden = log.children.length > 0;
        if (!input.value) input.value = question;
        showError($("#ask-error"), error);
      }
      else if (error.status === 404 && body.conversation_id) {
        // Deleted elsewhere (another tab, another device): the next question starts anew.
        conversation = null;
        $("#chat-title").textContent = "New conversation";
        view.fail(new Error("This conversation no longer exists. Ask again to start a new one."));
      } else view.fail(error);
    }
  } finally {
    if (running === controller) running = null;
    askButton.hidden = false;
    stopButton.hidden = true;
  }
  if (mine === generation) await loadConversations();
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const question = input.value.trim();
  if (!question) {
    showError($("#ask-error"), new Error("Type a question first."));
    input.focus();
    return;
  }
  if (!brain || running) return;
  input.value = "";
  ask(question);
});

// Enter asks; Shift+Enter starts a new line.
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    form.requestSubmit();
  }
});

stopButton.addEventListener("click", stop);
setupChatDrop({
  zone: $("#chat-view"),
  log,
  current: () => brain,
  onLine: () => ($("#chat-empty").hidden = true),
});
$("#new-conversation-button").addEventListener("click", () => {
  startNew();
  input.focus();
});

// Chat or study -----------------------------------------------------------------------------------
function showView(view) {
  $("#ask-show-chat").setAttribute("aria-pressed", String(view === "chat"));
  $("#ask-show-study").setAttribute("aria-pressed", String(view === "study"));
  $("#chat-view").hidden = view !== "chat";
  $("#study-view").hidden = view !== "study";
}
$("#ask-show-chat").addEventListener("click", () => showView("chat"));
$("#ask-show-study").addEventListener("click", () => showView("study"));
