// Small DOM helpers shared by the popup's modules.

export const $ = (id) => document.getElementById(id);

export function setStatus(element, text, stateName) {
  element.hidden = !text;
  element.textContent = text || "";
  element.dataset.state = stateName || "";
}

export function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}
