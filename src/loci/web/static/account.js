// "Account": your API tokens (list, create, revoke) and your password. A new token's secret is
// shown once, with what to paste where (the browser extension, an MCP client); the server keeps
// only its hash, so closing the dialog loses it for good.

import { api, path } from "./api.js";
import { $, busy, clear, confirmAction, el, showError, toast, when } from "./dom.js";

const dialog = $("#account-dialog");
let brains = []; // [{id, name}] of the brains the signed-in person can read
let userName = "";

export function setAccountContext(name, readable) {
  userName = name;
  brains = readable;
}

export async function openAccount() {
  showError($("#tokens-error"), null);
  showError($("#password-error"), null);
  forgetSecret();
  $("#token-form").reset();
  $("#password-change-form").reset();
  $("#password-change-user").value = userName;
  $("#account-user").textContent = userName;
  renderBrainChoices();
  dialog.showModal();
  await loadTokens();
}

// Once the dialog closes, the secret is gone from the page as well as from the server.
function forgetSecret() {
  $("#token-secret-box").hidden = true;
  $("#token-secret").textContent = "";
  $("#token-mcp").textContent = "";
}

dialog.addEventListener("close", forgetSecret);

function renderBrainChoices() {
  const box = $("#token-brains");
  for (const label of box.querySelectorAll("label")) label.remove();
  for (const brain of brains) {
    box.append(
      el(
        "label",
        { class: "checkbox" },
        el("input", { type: "checkbox", value: brain.name, "data-brain-id": brain.id }),
        brain.name,
      ),
    );
  }
}

function describe(token) {
  const names = new Map(brains.map((b) => [b.id, b.name]));
  const reach =
    token.brain_ids === null
      ? "every brain"
      : token.brain_ids.map((id) => names.get(id) || `brain ${id}`).join(", ") || "no brain";
  const parts = [
    token.scope === "read" ? "read only" : "read and write",
    reach,
    `created ${when(token.created_at)}`,
    token.last_used_at ? `last used ${when(token.last_used_at)}` : "never used",
  ];
  if (token.expires_at) parts.push(`expires ${when(token.expires_at)}`);
  return parts.join(" · ");
}

async function loadTokens() {
  const list = clear($("#token-list"));
  let tokens;
  try {
    tokens = await api.get("/tokens");
  } catch (error) {
    showError($("#tokens-error"), error);
    return;
  }
  const live = tokens.filter((t) => !t.revoked);
  $("#tokens-empty").hidden = live.length > 0;
  for (const token of live) {
    list.append(
      el(
        "li",
        { class: "member token-row", dataset: { tokenId: token.id } },
        el("span", { class: "member-name", text: token.name }),
        el("code", { class: "muted small", text: `${token.prefix}…` }),
        el("button", {
          type: "button",
          class: "danger",
          text: "Revoke",
          "aria-label": `Revoke ${token.name}`,
          onclick: () => revoke(token),
        }),
        el("span", { class: "member-detail muted small", text: describe(token) }),
      ),
    );
  }
}

async function revoke(token) {
  const question = `Revoke “${token.name}”? Whatever uses it stops working at once.`;
  if (!(await confirmAction(question, "Revoke"))) return;
  try {
    await api.delete(`/tokens/${path(token.id)}`);
    toast(`“${token.name}” is revoked.`);
  } catch (error) {
    showError($("#tokens-error"), error);
  }
  await loadTokens();
}

function showSecret(secret) {
  const origin = location.origin;
  $("#token-secret").textContent = secret;
  $("#token-server").textContent = origin;
  const config = {
    mcpServers: {
      loci: { type: "http", url: `${origin}/mcp`, headers: { Authorization: `Bearer ${secret}` } },
    },
  };
  $("#token-mcp").textContent = JSON.stringify(config, null, 2);
  $("#token-secret-box").hidden = false;
  $("#token-secret-box").scrollIntoView({ block: "nearest" });
}

$("#token-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = $("#token-name").value.trim();
  if (!name) {
    showError($("#tokens-error"), new Error("Say what the token is for: it helps you revoke the right one later."));
    $("#token-name").focus();
    return;
  }
  const chosen = [...$("#token-brains").querySelectorAll("input:checked")].map((box) => box.value);
  const body = { name, scope: $("#token-scope").value };
  if (chosen.length) body.brains = chosen;
  const days = $("#token-expiry").value;
  if (days) body.expires_in_days = Number(days);
  await busy(event.target.querySelector("button[type=submit]"), async () => {
    try {
      const issued = await api.post("/tokens", body);
      showError($("#tokens-error"), null);
      event.target.reset();
      showSecret(issued.secret);
      await loadTokens();
    } catch (error) {
      showError($("#tokens-error"), error);
    }
  });
});

// Copy a secret shown once; where the clipboard is not allowed, select it for the person to copy.
export async function copyText(node) {
  try {
    await navigator.clipboard.writeText(node.textContent);
    toast("Copied.");
  } catch {
    getSelection().selectAllChildren(node);
    toast("Selected: copy it with Ctrl+C (⌘C).");
  }
}

$("#token-copy").addEventListener("click", () => copyText($("#token-secret")));

$("#password-change-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const current = $("#password-current").value;
  const fresh = $("#password-new").value;
  if (fresh.length < 10) {
    showError($("#password-error"), new Error("The new password needs at least 10 characters."));
    $("#password-new").focus();
    return;
  }
  const body = { new_password: fresh };
  if (current) body.current_password = current;
  await busy(event.target.querySelector("button[type=submit]"), async () => {
    try {
      await api.put("/me/password", body);
      event.target.reset();
      showError($("#password-error"), null);
      toast("Your password is changed. Other browsers signed in with it are signed out.");
    } catch (error) {
      showError($("#password-error"), error);
    }
  });
});
