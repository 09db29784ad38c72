// "People", for admins: everyone with an account, an invite link for someone new (shown once),
// and disabling (their tokens and sessions stop at once), enabling or removing a person. The
// server refuses what would lock a brain or the workspace out, and says why.

import { api, path } from "./api.js";
import { copyText } from "./account.js";
import { $, busy, clear, confirmAction, el, showError, toast, when } from "./dom.js";

const dialog = $("#people-dialog");
let me = null;

export function setPeopleContext(user) {
  me = user;
  $("#people-button").hidden = !user.is_admin;
}

export async function openPeople() {
  $("#account-dialog").close(); // People opens from the Account dialog
  showError($("#people-error"), null);
  forgetLink();
  $("#invite-create-form").reset();
  dialog.showModal();
  await loadPeople();
}

function forgetLink() {
  $("#invite-link-box").hidden = true;
  $("#invite-link").textContent = "";
}

dialog.addEventListener("close", forgetLink);

function state(person) {
  const parts = [];
  if (person.is_admin) parts.push("admin");
  if (person.disabled) parts.push("disabled");
  else if (person.invite_expires_at) parts.push(`invited, link valid until ${when(person.invite_expires_at)}`);
  else if (!person.has_password) parts.push("signs in with a token");
  if (person.email) parts.push(person.email);
  return parts.join(" · ");
}

async function loadPeople() {
  const list = clear($("#people-list"));
  let people;
  try {
    people = await api.get("/people");
  } catch (error) {
    showError($("#people-error"), error);
    return;
  }
  for (const person of people) {
    const self = me && person.id === me.id;
    const actions = self
      ? [el("span", { class: "badge", text: "you" })]
      : [
          el("button", {
            type: "button",
            text: person.disabled ? "Enable" : "Disable",
            "aria-label": `${person.disabled ? "Enable" : "Disable"} ${person.name}`,
            onclick: () => setDisabled(person, !person.disabled),
          }),
          el("button", {
            type: "button",
            class: "danger",
            text: "Remove",
            "aria-label": `Remove ${person.name}`,
            onclick: () => remove(person),
          }),
        ];
    list.append(
      el(
        "li",
        { class: "member person-row", dataset: { name: person.name, disabled: person.disabled } },
        el("span", { class: "member-name", text: person.name }),
        ...actions,
        el("span", { class: "member-detail muted small person-state", text: state(person) }),
      ),
    );
  }
}

async function setDisabled(person, disabled) {
  if (disabled) {
    const question = `Disable ${person.name}? Their tokens are revoked and their sessions end at once.`;
    if (!(await confirmAction(question, "Disable"))) return;
  }
  try {
    await api.patch(`/users/${path(person.name)}`, { disabled });
    showError($("#people-error"), null);
    toast(disabled ? `${person.name} is disabled.` : `${person.name} may sign in again.`);
  } catch (error) {
    showError($("#people-error"), error);
  }
  await loadPeople();
}

async function remove(person) {
  const question = `Remove ${person.name}? Their tokens, memberships and private conversations go; what they added to brains stays.`;
  if (!(await confirmAction(question, "Remove"))) return;
  try {
    await api.delete(`/users/${path(person.name)}`);
    showError($("#people-error"), null);
    toast(`${person.name} is removed.`);
  } catch (error) {
    showError($("#people-error"), error);
  }
  await loadPeople();
}

$("#invite-create-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = $("#invite-create-name");
  if (!name.value.trim() || !name.checkValidity()) {
    showError($("#people-error"), new Error("A name: letters, digits, dot, dash and underscore."));
    name.focus();
    return;
  }
  const body = { name: name.value.trim(), role: $("#invite-create-role").value };
  const email = $("#invite-create-email").value.trim();
  if (email) body.email = email;
  await busy(event.target.querySelector("button[type=submit]"), async () => {
    try {
      const made = await api.post("/invites", body);
      showError($("#people-error"), null);
      event.target.reset();
      $("#invite-link-name").textContent = made.user.name;
      $("#invite-link-expires").textContent = when(made.expires_at);
      $("#invite-link").textContent = location.origin + made.path;
      $("#invite-link-box").hidden = false;
      await loadPeople();
    } catch (error) {
      showError($("#people-error"), error);
    }
  });
});

$("#invite-link-copy").addEventListener("click", () => copyText($("#invite-link")));
