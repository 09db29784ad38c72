// A menu button (the WAI-ARIA pattern): a button that opens a list of actions below it. Arrow
// keys move between the actions, Home and End jump, Escape closes and gives the focus back to
// the button, and a click anywhere else or Tab away closes it.

import { el } from "./dom.js";

let openMenu = null; // {button, list} of the one menu open

function close({ focusButton = false } = {}) {
  if (!openMenu) return;
  const { button, list } = openMenu;
  openMenu = null;
  list.hidden = true;
  button.setAttribute("aria-expanded", "false");
  if (focusButton) button.focus();
}

function items(list) {
  return [...list.querySelectorAll("[role=menuitem]:not([disabled])")];
}

function move(list, step) {
  const all = items(list);
  if (!all.length) return;
  const at = all.indexOf(document.activeElement);
  const next = step === "first" ? 0 : step === "last" ? all.length - 1 : (at + step + all.length) % all.length;
  all[next].focus();
}

// `label`: the button's accessible name ("Actions for report.pdf"); `actions`: [{label, run,
// danger, disabled}] (null entries are skipped). Returns the element to put in the page.
export function menuButton({ label, text = "Actions", actions }) {
  const list = el("ul", { class: "menu", role: "menu", "aria-label": label, hidden: true });
  const button = el(
    "button",
    {
      type: "button",
      class: "menu-button",
      "aria-haspopup": "menu",
      "aria-expanded": "false",
      "aria-label": label,
    },
    el("span", { text }),
    el("span", { class: "menu-caret", "aria-hidden": "true", text: "▾" }),
  );
  for (const action of actions.filter(Boolean)) {
    const item = el("button", {
      type: "button",
      role: "menuitem",
      tabindex: "-1",
      class: action.danger ? "danger" : null,
      disabled: action.disabled || null,
      text: action.label,
    });
    item.addEventListener("click", () => {
      close({ focusButton: true });
      action.run();
    });
    list.append(el("li", { role: "none" }, item));
  }
  const open = (focus) => {
    if (openMenu && openMenu.list !== list) close();
    openMenu = { button, list };
    list.hidden = false;
    button.setAttribute("aria-expanded", "true");
    move(list, focus);
  };
  button.addEventListener("click", () => (list.hidden ? open("first") : close()));
  button.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      open(event.key === "ArrowDown" ? "first" : "last");
    }
  });
  list.addEventListener("keydown", (event) => {
    const steps = { ArrowDown: 1, ArrowUp: -1, Home: "first", End: "last" };
    if (event.key in steps) {
      event.preventDefault();
      move(list, steps[event.key]);
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation(); // an open dialog around it stays open
      close({ focusButton: true });
    } else if (event.key === "Tab") {
      close();
    }
  });
  return el("div", { class: "menu-wrap" }, button, list);
}

document.addEventListener("click", (event) => {
  if (openMenu && !openMenu.button.parentElement.contains(event.target)) close();
});
