// Search filters (the API's FiltersIn): kinds, tags, a file name and the dates documents were
// added. One set of fields inside a <details> disclosure, the active filters as removable chips,
// kept in sessionStorage so a reload keeps them. Search and Ask each have their own set.

import { clear, el } from "./dom.js";

const KINDS = [
  ["file", "Files"],
  ["web", "Web pages"],
  ["note", "Notes"],
  ["page", "Brain pages"],
  ["evidence", "Evidence"],
];
const KIND_LABEL = Object.fromEntries(KINDS);

// "house, garden ,," → ["house", "garden"]: the API refuses a blank tag.
const splitTags = (text) =>
  text
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);

export class Filters {
  // `details`: the <details> to fill (its <summary> is kept); `chips`: where the chips go;
  // `prefix`: for element ids; `title`: the summary's words; `onRemove`: after a chip removed one.
  constructor({ details, chips, prefix, storageKey, title, onRemove = () => {} }) {
    this.details = details;
    this.chips = chips;
    this.storageKey = storageKey;
    this.title = title;
    this.onRemove = onRemove;
    this.summary = details.querySelector("summary");
    const box = (kind) => el("input", { type: "checkbox", id: `${prefix}-kind-${kind}`, value: kind });
    this.kinds = new Map(KINDS.map(([kind]) => [kind, box(kind)]));
    this.tags = el("input", {
      id: `${prefix}-tags`,
      maxlength: "500",
      placeholder: "e.g. house, garden",
      autocomplete: "off",
    });
    this.name = el("input", {
      id: `${prefix}-name`,
      maxlength: "300",
      placeholder: "e.g. *.pdf",
      autocomplete: "off",
    });
    this.after = el("input", { id: `${prefix}-after`, type: "date" });
    this.before = el("input", { id: `${prefix}-before`, type: "date" });
    const field = (input, label, hint) =>
      el(
        "div",
        { class: "filter-field" },
        el(
          "label",
          { for: input.id },
          label,
          hint ? el("span", { class: "muted small", text: ` ${hint}` }) : null,
        ),
        input,
      );
    details.append(
      el(
        "div",
        { class: "filter-fields" },
        el(
          "fieldset",
          { class: "filter-kinds" },
          el("legend", { text: "Kinds" }),
          ...KINDS.map(([kind, label]) =>
            el("label", { class: "checkbox" }, this.kinds.get(kind), label),
          ),
        ),
        field(this.tags, "Tags", "(all of them, comma-separated)"),
        field(this.name, "File name", "(* and ? match any letters)"),
        field(this.after, "Added on or after"),
        field(this.before, "Added before"),
        el("button", {
          type: "button",
          class: "link-button",
          text: "Clear filters",
          onclick: () => this.reset(),
        }),
      ),
    );
    details.addEventListener("input", () => this.changed());
    details.addEventListener("change", () => this.changed());
    this.restore();
    this.changed();
  }

  // The filters as the API takes them; only what is set.
  value() {
    const filters = {};
    const kinds = [...this.kinds.values()].filter((box) => box.checked).map((box) => box.value);
    if (kinds.length) filters.kinds = kinds;
    const tags = splitTags(this.tags.value);
    if (tags.length) filters.tags = tags;
    if (this.name.value.trim()) filters.name = this.name.value.trim();
    if (this.after.value) filters.created_after = this.after.value;
    if (this.before.value) filters.created_before = this.before.value;
    return filters;
  }

  get active() {
    return Object.keys(this.value()).length > 0;
  }

  set(filters) {
    for (const [kind, box] of this.kinds) box.checked = (filters.kinds || []).includes(kind);
    this.tags.value = (filters.tags || []).join(", ");
    this.name.value = filters.name || "";
    this.after.value = filters.created_after || "";
    this.before.value = filters.created_before || "";
  }

  reset() {
    this.set({});
    this.changed();
    this.onRemove();
  }

  restore() {
    try {
      const kept = JSON.parse(sessionStorage.getItem(this.storageKey) || "{}");
      if (kept && typeof kept === "object") this.set(kept);
    } catch {
      // Unreadable (edited by hand, an older shape): start without filters.
    }
  }

  changed() {
    const filters = this.value();
    if (Object.keys(filters).length) sessionStorage.setItem(this.storageKey, JSON.stringify(filters));
    else sessionStorage.removeItem(this.storageKey);
    const chips = this.chipsFor(filters);
    this.summary.textContent = chips.length ? `${this.title} (${chips.length})` : this.title;
    clear(this.chips).append(...chips);
    this.chips.hidden = chips.length === 0;
  }

  // One chip per kind, tag, name and date, each removing only itself.
  chipsFor(filters) {
    const chip = (label, drop) =>
      el(
        "button",
        {
          type: "button",
          class: "chip filter-chip",
          "aria-label": `Remove filter: ${label}`,
          onclick: () => {
            drop();
            this.changed();
            this.onRemove();
          },
        },
        label,
        el("span", { "aria-hidden": "true", text: "×" }),
      );
    const chips = [];
    for (const kind of filters.kinds || []) {
      chips.push(chip(KIND_LABEL[kind], () => (this.kinds.get(kind).checked = false)));
    }
    for (const tag of filters.tags || []) {
      chips.push(
        chip(`Tag: ${tag}`, () => {
          this.tags.value = splitTags(this.tags.value)
            .filter((t) => t !== tag)
            .join(", ");
        }),
      );
    }
    if (filters.name) chips.push(chip(`Name: ${filters.name}`, () => (this.name.value = "")));
    if (filters.created_after) {
      chips.push(chip(`Added on or after ${filters.created_after}`, () => (this.after.value = "")));
    }
    if (filters.created_before) {
      chips.push(chip(`Added before ${filters.created_before}`, () => (this.before.value = "")));
    }
    return chips;
  }
}
