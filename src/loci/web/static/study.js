// Study: a quiz (choose, check, reveal) or flashcards (flip) made from a brain, or a topic in it.
// Every item names the passage it comes from and opens it.

import { api, path } from "./api.js";
import { sourceButton } from "./citations.js";
import { $, busy, clear, el, plural, showError } from "./dom.js";

const form = $("#study-form");
const items = $("#study-items");
let brain = null;
let made = 0; // radio groups of different quizzes never share a name

export function showStudy(current) {
  brain = current;
}

export function resetStudy() {
  clear(items);
  $("#study-summary").textContent = "";
  showError($("#study-error"), null);
}

function source(item) {
  return el("div", { class: "study-source" }, el("span", { class: "muted small", text: "From " }), sourceButton(item.source));
}

function quizItem(question, index) {
  const group = `quiz-${made}-${index}`;
  const verdict = el("p", { class: "verdict", role: "status", hidden: true });
  const choices = question.choices.map((choice, i) =>
    el(
      "label",
      { class: "choice", dataset: { index: String(i) } },
      el("input", { type: "radio", name: group, value: String(i) }),
      el("span", { text: choice }),
    ),
  );
  const item = el(
    "li",
    { class: "study-item quiz-item" },
    el(
      "fieldset",
      {},
      el("legend", { text: `${index + 1}. ${question.question}` }),
      el("div", { class: "choices" }, choices),
    ),
  );
  const explain = (lead) => {
    verdict.replaceChildren(el("strong", { text: lead }));
    if (question.explanation) verdict.append(" ", question.explanation);
    verdict.hidden = false;
  };
  const mark = (i, kind) => choices[i]?.classList.add(kind);
  const check = () => {
    const chosen = item.querySelector(`input[name="${group}"]:checked`);
    for (const choice of choices) choice.classList.remove("right", "wrong");
    if (!chosen) {
      verdict.replaceChildren("Choose an answer first.");
      verdict.hidden = false;
      return;
    }
    const picked = Number(chosen.value);
    if (picked === question.answer) {
      mark(picked, "right");
      explain("Right.");
    } else {
      mark(picked, "wrong");
      verdict.replaceChildren(el("strong", { text: "Not quite." }), " Try again, or reveal the answer.");
      verdict.hidden = false;
    }
    item.dataset.result = picked === question.answer ? "right" : "wrong";
  };
  const reveal = () => {
    for (const choice of choices) choice.classList.remove("wrong");
    mark(question.answer, "right");
    explain(`The answer is “${question.choices[question.answer]}”.`);
    item.dataset.result = "revealed";
  };
  item.append(
    el(
      "div",
      { class: "actions" },
      el("button", { type: "button", class: "primary", text: "Check", onclick: check }),
      el("button", { type: "button", text: "Reveal answer", onclick: reveal }),
    ),
    verdict,
    source(question),
  );
  return item;
}

function flashcard(card, index) {
  const side = el("span", { class: "card-side", text: "Question" });
  const text = el("span", { class: "card-text", text: card.front });
  const face = el(
    "button",
    { type: "button", class: "card-face", "aria-pressed": "false", "aria-describedby": `card-hint-${made}-${index}` },
    side,
    text,
  );
  face.addEventListener("click", () => {
    const flipped = face.getAttribute("aria-pressed") !== "true";
    face.setAttribute("aria-pressed", String(flipped));
    side.textContent = flipped ? "Answer" : "Question";
    text.textContent = flipped ? card.back : card.front;
  });
  return el(
    "li",
    { class: "study-item flashcard" },
    face,
    el("p", { class: "muted small", id: `card-hint-${made}-${index}`, text: "Select the card to flip it." }),
    source(card),
  );
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!brain) return;
  const kind = event.submitter && event.submitter.value === "flashcards" ? "flashcards" : "quiz";
  const topic = $("#study-topic").value.trim();
  const body = { count: Number($("#study-count").value) };
  if (topic) body.topic = topic;
  await busy(event.submitter || form.querySelector("button[type=submit]"), async () => {
    try {
      const found = await api.post(`/brains/${path(brain.name)}/${kind}`, body);
      showError($("#study-error"), null);
      made++;
      clear(items).dataset.kind = kind;
      items.append(...found.map(kind === "quiz" ? quizItem : flashcard));
      const about = topic ? ` on “${topic}”` : "";
      $("#study-summary").textContent = found.length
        ? `${plural(found.length, kind === "quiz" ? "question" : "card")}${about}.`
        : `Not enough in ${brain.name}${about} to make ${kind === "quiz" ? "a quiz" : "flashcards"} from yet.`;
    } catch (error) {
      showError($("#study-error"), error);
    }
  });
});
