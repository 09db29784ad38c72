// Brains: creating one, and sharing it (visibility, members with their roles).

import { api, path } from "./api.js";
import { $, busy, clear, confirmAction, el, showError, toast } from "./dom.js";

const ROLE_LABEL = { owner: "Owner", editor: "Editor", viewer: "Viewer" };
let created = () => {};
let changed = () => {};
let shared = null; // the brain the share dialog shows

// `onCreated(name)` after a new brain exists; `onChanged()` after a brain's settings change.
export function setupBrains({ onCreated, onChanged }) {
  created = onCreated;
  changed = onChanged;
}

export function openNewBrain() {
  const dialog = $("#brain-dialog");
  $("#brain-form").reset();
  showError($("#brain-error"), null);
  dialog.showModal();
  $("#brain-name").focus();
}

$("#brain-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = $("#brain-name");
  if (!name.checkValidity()) {
    showError(
      $("#brain-error"),
      new Error("A name starts with a letter or digit, then letters, digits, dot, dash or underscore."),
    );
    name.focus();
    return;
  }
  await busy(event.target.querySelector("button[type=submit]"), async () => {
    try {
      const brain = await api.post("/brains", {
        name: name.value.trim(),
        visibility: $("#brain-visibility").value,
      });
      $("#brain-dialog").close();
      toast(`Brain ${brain.name} created.`);
      await created(brain.name);
    } catch (error) {
      showError($("#brain-error"), error);
    }
  });
});

export async function openShare(brain) {
  shared = brain;
  const owner = brain.role === "owner";
  $("#share-title").textContent = `Share ${brain.name}`;
  $("#member-form").hidden = !owner;
  $("#share-readonly").hidden = owner;
  $("#share-visibility").value = brain.visibility;
  $("#share-visibility").disabled = !owner;
  showError($("#share-error"), null);
  $("#share-dialog").showModal();
  await Promise.all([loadMembers(), owner ? loadPeople() : null]);
}

async function loadMembers() {
  const listNode = $("#member-list");
  try {
    const members = await api.get(`/brains/${path(shared.name)}/members`);
    clear(listNode);
    if (!members.length) {
      listNode.append(el("li", { class: "muted", text: "No members yet: the workspace admins own it." }));
    }
    for (const member of members) {
      listNode.append(
        el(
          "li",
          { class: "member" },
          el("span", { class: "member-name", text: member.user }),
          el("span", { class: "badge", text: ROLE_LABEL[member.role] || member.role }),
          shared.role === "owner"
            ? el("button", {
                type: "button",
                class: "danger",
                text: "Remove",
                "aria-label": `Remove ${member.user}`,
                onclick: () => removeMember(member.user),
              })
            : null,
        ),
      );
    }
  } catch (error) {
    showError($("#share-error"), error);
  }
}

async function loadPeople() {
  try {
    const users = await api.get("/users");
    clear($("#member-user")).append(...users.map((u) => el("option", { value: u.name, text: u.name })));
  } catch (error) {
    showError($("#share-error"), error);
  }
}

async function removeMember(user) {
  if (!(await confirmAction(`Remove ${user} from ${shared.name}?`, "Remove"))) return;
  try {
    await api.delete(`/brains/${path(shared.name)}/members/${path(user)}`);
    showError($("#share-error"), null);
    toast(`${user} removed.`);
    await loadMembers();
    await changed();
  } catch (error) {
    showError($("#share-error"), error);
  }
}

$("#member-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const user = $("#member-user").value;
  if (!user) return;
  await busy(event.target.querySelector("button[type=submit]"), async () => {
    try {
      const member = await api.put(`/brains/${path(shared.name)}/members/${path(user)}`, {
        role: $("#member-role").value,
      });
      showError($("#share-error"), null);
      toast(`${member.user} is now ${member.role} of ${shared.name}.`);
      await loadMembers();
      await changed();
    } catch (error) {
      showError($("#share-error"), error);
    }
  });
});

$("#share-visibility").addEventListener("change", async (event) => {
  const visibility = event.target.value;
  try {
    const brain = await api.patch(`/brains/${path(shared.name)}`, { visibility });
    shared = { ...shared, visibility: brain.visibility };
    showError($("#share-error"), null);
    toast(visibility === "workspace" ? "Everyone in the workspace can read it." : "Only members can read it.");
    await changed();
  } catch (error) {
    event.target.value = shared.visibility;
    showError($("#share-error"), error);
  }
});
