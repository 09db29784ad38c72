// Loci's web app: the session, the brain switcher and the sections. Plain modules, no build step.
//
// The session is an HttpOnly cookie the page cannot read; what the page keeps is the CSRF token
// every write must carry, and after a reload it gets that back from GET /me.

import { openAccount, setAccountContext } from "./account.js";
import { api, setCsrfToken, whenSignedOut } from "./api.js";
import { resetAsk, showAsk } from "./ask.js";
import { openNewBrain, openShare, setupBrains } from "./brains.js";
import { $, busy, clear, el, showError } from "./dom.js";
import { menuButton } from "./menu.js";
import { hideFiles, showFiles } from "./files.js";
import { hideGraph, showGraph } from "./graph.js";
import { openModelSettings } from "./model.js";
import { showNotes } from "./notes.js";
import { openPeople, setPeopleContext } from "./people.js";
import { showSearch } from "./search.js";
import { completeShare, hasPendingShare, takeShareFromAddress } from "./share.js";
import { setSourcesAdmin } from "./sources.js";
import { setVersionsContext } from "./versions.js";

const PANELS = ["files", "notes", "brain", "search", "ask"];
const LAST_BRAIN = "loci.brain";

// `page`: the brain page the address names (#brain/<id>), if any.
const state = { user: null, brains: [], brain: null, panel: "files", page: null };

function showScreen(which) {
  $("#booting").hidden = true;
  $("#signin").hidden = which !== "signin";
  $("#invite").hidden = which !== "invite";
  $("#workspace").hidden = which !== "workspace";
}

// Session ---------------------------------------------------------------------------------------
async function start() {
  if (location.hash.startsWith("#invite/")) {
    await showInvite(location.hash.slice("#invite/".length));
    return;
  }
  try {
    const me = await api.get("/me", { quietUnauthenticated: true });
    showOffline(false);
    await enter(me);
  } catch (error) {
    if (error.code === "network") {
      // The shell came from the service worker's cache: say so, and wait for the network.
      showOffline(true);
      showScreen("none");
      return;
    }
    showSignIn(error.status === 401 ? null : error);
  }
}

// Offline ----------------------------------------------------------------------------------------
function showOffline(offline) {
  $("#offline").hidden = !offline;
  document.body.classList.toggle("is-offline", offline);
}

window.addEventListener("offline", () => showOffline(true));
window.addEventListener("online", () => {
  showOffline(false);
  if (!state.user) start(); // opened offline: now the app can start
});

// The service worker keeps the app's shell for offline use and takes shared files (sw.js).
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js").catch(() => {
    // Not available (a private window, an http origin other than localhost): the app works
    // without it, only not offline.
  });
}

function showSignIn(error = null, message = null) {
  state.user = null;
  setCsrfToken(null);
  hideFiles();
  resetAsk();
  for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close();
  showScreen("signin");
  $("#signin-share").hidden = !hasPendingShare();
  showError($("#signin-error"), error || (message ? new Error(message) : null));
  $("#signin-name").focus();
}

// Someone is in: the first start's hint (signin-sso.js) has said what it had to.
function firstStartOver() {
  if ($("#signin-first").hidden) return;
  $("#signin-first").hidden = true;
  $("#signin-or").hidden = false;
  $("#signin-or").after($("#signin-form"));  // back below the password form
}

async function enter(me) {
  firstStartOver();
  state.user = me.user;
  setCsrfToken(me.csrf_token);
  $("#user-name").textContent = me.user.name;
  setPeopleContext(me.user);
  setSourcesAdmin(me.user.is_admin);
  showScreen("workspace");
  const last = localStorage.getItem(LAST_BRAIN);
  await loadBrains(last);
  // A link or text shared from another app (share.js); the list shows it once it is saved.
  const sharedTo = await completeShare(state.brains, last);
  if (sharedTo) selectBrain(state.brains.find((b) => b.name === sharedTo) || state.brain);
}

$("#password-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = $("#signin-name");
  const password = $("#signin-password");
  if (!name.value.trim() || !password.value) {
    showError($("#signin-error"), new Error("Enter your name and password."));
    (name.value.trim() ? password : name).focus();
    return;
  }
  await busy(event.target.querySelector("button[type=submit]"), async () => {
    try {
      const body = { name: name.value.trim(), password: password.value };
      const me = await api.post("/session", body, { quietUnauthenticated: true });
      event.target.reset();
      showError($("#signin-error"), null);
      await enter(me);
    } catch (error) {
      password.value = "";
      showError($("#signin-error"), error);
      password.focus();
    }
  });
});

// An invitation link: the secret is in the address only until it is read, so it stays out of
// the history and of any later copy of the address.
let inviteSecret = null;

async function showInvite(secret) {
  inviteSecret = secret;
  history.replaceState(null, "", location.pathname);
  showScreen("invite");
  const form = $("#invite-form");
  try {
    const invited = await api.post("/invites/check", { secret }, { quietUnauthenticated: true });
    $("#invite-intro").textContent = `Welcome, ${invited.name}. Choose a password to sign in with.`;
    $("#invite-name").value = invited.name;
    form.querySelector("button[type=submit]").disabled = false;
    $("#invite-password").focus();
  } catch (error) {
    $("#invite-intro").textContent = "This invitation cannot be used.";
    form.querySelector("button[type=submit]").disabled = true;
    showError($("#invite-error"), error);
  }
}

$("#invite-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const password = $("#invite-password").value;
  if (password.length < 10) {
    showError($("#invite-error"), new Error("The password needs at least 10 characters."));
    $("#invite-password").focus();
    return;
  }
  if (password !== $("#invite-password-again").value) {
    showError($("#invite-error"), new Error("The two passwords differ."));
    $("#invite-password-again").focus();
    return;
  }
  await busy(event.target.querySelector("button[type=submit]"), async () => {
    try {
      const me = await api.post(
        "/invites/accept",
        { secret: inviteSecret, password },
        { quietUnauthenticated: true },
      );
      inviteSecret = null;
      event.target.reset();
      showError($("#invite-error"), null);
      await enter(me);
    } catch (error) {
      showError($("#invite-error"), error);
    }
  });
});

$("#signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = $("#signin-token");
  const token = input.value.trim();
  if (!token) {
    showError($("#signin-error"), new Error("Paste your API token first."));
    input.focus();
    return;
  }
  await busy(event.target.querySelector("button[type=submit]"), async () => {
    try {
      const me = await api.post("/session", { token }, { quietUnauthenticated: true });
      input.value = "";
      showError($("#signin-error"), null);
      await enter(me);
    } catch (error) {
      const message =
        error.status === 401 ? "That token was not accepted: it is unknown, revoked or expired." : null;
      showError($("#signin-error"), message ? new Error(message) : error);
    }
  });
});

$("#signout-button").addEventListener("click", async () => {
  try {
    await api.delete("/session");
  } catch {
    // Signed out on the server already, or unreachable: the page forgets the session either way.
  }
  showSignIn();
});

// The header's buttons, in one menu on a phone (CSS shows one or the other).
$("#header-menu").append(
  menuButton({
    label: "Menu",
    text: "Menu",
    actions: [
      { label: "New brain", run: () => $("#new-brain-button").click() },
      { label: "Share this brain", run: () => $("#share-button").click() },
      { label: "Account", run: () => $("#account-button").click() },
      { label: "Your model", run: () => $("#model-button").click() },
      { label: "Sign out", run: () => $("#signout-button").click() },
    ],
  }),
);

$("#model-button").addEventListener("click", openModelSettings);
$("#account-button").addEventListener("click", openAccount);
$("#people-button").addEventListener("click", openPeople);

whenSignedOut(() => {
  if (state.user) showSignIn(null, "Your session has ended. Sign in again.");
});

// Brains ----------------------------------------------------------------------------------------
async function loadBrains(preferred) {
  try {
    state.brains = await api.get("/brains");
  } catch (error) {
    showError($("#files-error"), error);
    state.brains = [];
  }
  setAccountContext(state.user.name, state.brains);
  setVersionsContext(state.brains);
  const select = clear($("#brain-select"));
  for (const brain of state.brains) {
    select.append(el("option", { value: brain.name, text: `${brain.name} (${brain.role})` }));
  }
  const chosen =
    state.brains.find((b) => b.name === preferred) ||
    state.brains.find((b) => b.name === state.brain?.name) ||
    state.brains[0] ||
    null;
  selectBrain(chosen);
}

function selectBrain(brain) {
  state.brain = brain;
  const none = !brain;
  $("#no-brain").hidden = !none;
  $("#brain-select").disabled = none;
  $("#share-button").disabled = none;
  if (brain) {
    $("#brain-select").value = brain.name;
    localStorage.setItem(LAST_BRAIN, brain.name);
  }
  showPanel(state.panel);
}

$("#brain-select").addEventListener("change", (event) => {
  // A page id names a page of one brain only.
  state.page = null;
  if (location.hash.startsWith("#brain/")) history.replaceState(null, "", "#brain");
  selectBrain(state.brains.find((b) => b.name === event.target.value) || null);
});
$("#new-brain-button").addEventListener("click", openNewBrain);
$("#first-brain-button").addEventListener("click", openNewBrain);
$("#share-button").addEventListener("click", () => state.brain && openShare(state.brain));
setupBrains({
  onCreated: (name) => loadBrains(name),
  onChanged: () => loadBrains(state.brain?.name),
});

// Sections --------------------------------------------------------------------------------------
function showPanel(panel) {
  state.panel = PANELS.includes(panel) ? panel : "files";
  for (const tab of document.querySelectorAll(".tab")) {
    const on = tab.dataset.panel === state.panel;
    tab.classList.toggle("active", on);
    if (on) tab.setAttribute("aria-current", "page");
    else tab.removeAttribute("aria-current");
  }
  for (const name of PANELS) {
    // Search can look across all brains; the rest need a current one.
    const needsBrain = name !== "search";
    $(`#panel-${name}`).hidden = name !== state.panel || (needsBrain && !state.brain);
  }
  if (state.panel !== "files") hideFiles();
  if (state.panel !== "brain") hideGraph();
  if (!state.brain) return;
  if (state.panel === "files") showFiles(state.brain);
  if (state.panel === "notes") showNotes(state.brain);
  if (state.panel === "brain") showGraph(state.brain, state.page);
  if (state.panel === "search") showSearch(state.brain);
  if (state.panel === "ask") showAsk(state.brain);
}

// "#ask", "#brain", "#brain/<page id>": the section (and brain page) the address names.
function fromAddress() {
  const [panel, ...rest] = location.hash.slice(1).split("/");
  let page = null;
  try {
    page = panel === "brain" && rest.length ? decodeURIComponent(rest.join("/")) : null;
  } catch {
    // A malformed address opens the list instead.
  }
  state.page = page;
  return PANELS.includes(panel) ? panel : "files";
}

// A link to a brain page (or Back) changes the address; the app follows it.
window.addEventListener("hashchange", () => {
  if (location.hash.startsWith("#invite/")) {
    showInvite(location.hash.slice("#invite/".length));
    return;
  }
  const panel = fromAddress();
  if (state.user) showPanel(panel);
});

for (const tab of document.querySelectorAll(".tab")) {
  tab.addEventListener("click", () => {
    state.page = null;
    showPanel(tab.dataset.panel);
    if (location.hash !== `#${tab.dataset.panel}`) history.replaceState(null, "", `#${tab.dataset.panel}`);
  });
}

// Dialogs close with their ✕ button as with Escape.
for (const button of document.querySelectorAll(".close-dialog")) {
  button.addEventListener("click", () => button.closest("dialog").close());
}

// An error nobody caught still reaches the person, not only the console.
window.addEventListener("unhandledrejection", (event) => {
  const message = event.reason && event.reason.message ? event.reason.message : String(event.reason);
  const box = !$("#invite").hidden
    ? $("#invite-error")
    : $("#workspace").hidden
      ? $("#signin-error")
      : $(`#panel-${state.panel} .error`);
  if (box) showError(box, new Error(message));
});

takeShareFromAddress();
state.panel = fromAddress();
start();
