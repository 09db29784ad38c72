// Thumbs under an answer: the conversation's owner rates it up or down, and rating again
// replaces the rating. A thumbs down then asks, optionally, what was wrong. The server keeps
// the rating on the message; thumbs-down answers become questions to re-run with
// `loci eval --from-feedback`.

import { api, path } from "./api.js";
import { el, toast } from "./dom.js";

const SAID = { up: "You found this helpful", down: "You found this unhelpful" };
// Drawn, not emoji: a machine without an emoji font would show empty boxes. (Feather icons, MIT.)
const THUMBS = {
  up: "M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.28a2 2 0 0 0 2-1.7l1.38-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3",
  down: "M10 15v4a3 3 0 0 0 3 3l4-9V2H5.72a2 2 0 0 0-2 1.7l-1.38 9a2 2 0 0 0 2 2.3zm7-13h2.67A2.31 2.31 0 0 1 22 4v7a2.31 2.31 0 0 1-2.33 2H17",
};

function icon(d) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [key, value] of Object.entries({
    viewBox: "0 0 24 24", width: "18", height: "18", fill: "none", stroke: "currentColor",
    "stroke-width": "2", "stroke-linecap": "round", "stroke-linejoin": "round", "aria-hidden": "true",
  })) {
    svg.setAttribute(key, value);
  }
  const shape = document.createElementNS(ns, "path");
  shape.setAttribute("d", d);
  svg.append(shape);
  return svg;
}

export function ratingControls(brainName, conversationId, messageId, feedback) {
  const url =
    `/brains/${path(brainName)}/conversations/${path(conversationId)}` +
    `/messages/${path(messageId)}/feedback`;
  const thumb = (label, d) =>
    el("button", { type: "button", class: "small thumb", "aria-label": label, title: label }, icon(d));
  const up = thumb("Good answer", THUMBS.up);
  const down = thumb("Bad answer", THUMBS.down);
  const status = el("span", { class: "msg-rated muted small", "aria-live": "polite" });
  const reason = el("input", {
    type: "text",
    class: "rate-reason-input",
    maxlength: "1000",
    placeholder: "What was wrong? (optional)",
    "aria-label": "What was wrong with this answer",
  });
  const form = el(
    "form",
    { class: "rate-reason", hidden: true },
    reason,
    el("button", { type: "submit", class: "small", text: "Send" }),
  );
  let current = feedback || null;

  function show() {
    up.setAttribute("aria-pressed", String(current?.rating === "up"));
    down.setAttribute("aria-pressed", String(current?.rating === "down"));
    status.textContent = current
      ? SAID[current.rating] + (current.reason ? `: ${current.reason}` : "")
      : "";
  }

  async function rate(rating, why) {
    for (const button of [up, down]) button.disabled = true;
    try {
      const message = await api.post(url, { rating, reason: why || null });
      current = message.feedback;
      show();
      return true;
    } catch (error) {
      toast(error.message || "The rating could not be saved.", "error");
      return false;
    } finally {
      for (const button of [up, down]) button.disabled = false;
    }
  }

  up.addEventListener("click", async () => {
    form.hidden = true;
    await rate("up");
  });
  down.addEventListener("click", async () => {
    const kept = current?.rating === "down" ? current.reason : null;
    if (!(await rate("down", kept))) return;
    reason.value = kept || "";
    form.hidden = false;
    reason.focus();
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (await rate("down", reason.value.trim())) form.hidden = true;
  });
  show();
  return el("span", { class: "rate" }, up, down, status, form);
}
