// The consent page: the application's authorization request is in this page's address; the
// API checks it, says who is asking, and turns the person's answer into the address to go to
// (the application's redirect URI, with a code or an error).
import { request, setCsrfToken } from "/static/api.js";
import { renderProviders, signInOptions } from "/static/sso.js";

const $ = (id) => document.getElementById(id);
const asked = Object.fromEntries(new URLSearchParams(location.search));
const query = location.search;

function show(id) {
  for (const section of ["consent-loading", "consent-signin", "consent-form"]) {
    $(section).hidden = section !== id;
  }
}

function fail(message) {
  $("consent-error").textContent = message;
  $("consent-error").hidden = false;
}

async function load() {
  $("consent-error").hidden = true;
  let found;
  try {
    found = await request("GET", `/oauth/consent${query}`, undefined, { quietUnauthenticated: true });
  } catch (error) {
    if (error.status === 401) return askToSignIn();
    show(null);
    return fail(error.message);
  }
  if (found.redirect) return location.replace(found.redirect);
  const me = await request("GET", "/me");
  setCsrfToken(me.csrf_token);
  render(found);
}

async function askToSignIn() {
  show("consent-signin");
  const options = await signInOptions();
  renderProviders($("consent-sso"), options.providers, location.pathname + location.search);
  $("consent-password-form").hidden = !options.password;
}

function render(found) {
  $("consent-client").textContent = found.client_name;
  $("consent-user").textContent = found.user;
  $("consent-host").textContent = found.redirect_host;
  $("consent-write").disabled = !found.scopes.includes("write");
  const list = $("consent-brain-list");
  list.replaceChildren();
  for (const brain of found.brains) {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.name = "brain";
    box.value = brain.name;
    label.append(box, ` ${brain.name} `);
    const role = document.createElement("span");
    role.className = "muted small";
    role.textContent = `(${brain.role})`;
    label.append(role);
    list.append(label);
  }
  list.hidden = $("consent-all").checked;
  show("consent-form");
}

async function answer(approve) {
  const form = $("consent-form");
  const access = form.querySelector("input[name=access]:checked").value;
  const brains = $("consent-all").checked
    ? null
    : [...form.querySelectorAll("input[name=brain]:checked")].map((box) => box.value);
  try {
    const { redirect } = await request("POST", "/oauth/consent", { ...asked, approve, access, brains });
    location.assign(redirect);
  } catch (error) {
    fail(error.message);
  }
}

$("consent-all").addEventListener("change", () => {
  $("consent-brain-list").hidden = $("consent-all").checked;
});
$("consent-form").addEventListener("submit", (event) => {
  event.preventDefault();
  answer(true);
});
$("consent-deny").addEventListener("click", () => answer(false));
$("consent-password-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await request("POST", "/session", { name: $("consent-name").value, password: $("consent-password").value });
    await load();
  } catch (error) {
    fail(error.message);
  }
});

load();
