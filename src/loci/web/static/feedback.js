// Thumbs under an answer: the conversation's owner rates it up or down, and rating again
// replaces the rating. A thumbs down then asks, optionally, what was wrong. The server keeps
// the rating on the message; thumbs-down answers become questions to re-run with
// `loci eval --from-feedback`.

import { api, path } from "./api.js";
import { el, toast } from "./dom.js";

const SAID = { up: "You found this helpful", down: "You found this unhelpful" };

export function ratingControls(brainName, conversationId, messageId, feedback) {
  const url =
    `/brains/${path(brainName)}/conversations/${path(conversationId)}` +
    `/messages/${path(messageId)}/feedback`;
  const thumb = (label, face) =>
    el("button", { type: "button", class: "small thumb", "aria-label": label, title: label, text: face });
  const up = thumb("Good answer", "👍");
  const down = thumb("Bad answer", "👎");
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
