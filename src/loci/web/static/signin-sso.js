// The sign-in screen's single sign-on buttons (one per configured identity provider), and no
// password form when the administrator turned password sign-in off. On a server nobody has
// signed in to yet, the owner holds only the token its first start printed: the page leads
// with it, and says whose it is.
import { renderProviders, signInOptions } from "/static/sso.js";

const options = await signInOptions();
const here = location.pathname + location.search + location.hash;
renderProviders(document.getElementById("signin-sso"), options.providers, here);
if (!options.password) document.getElementById("password-form").hidden = true;
if (options.first_start) {
  const token = document.getElementById("signin-form");
  document.getElementById("signin-owner").textContent = options.first_start;
  document.getElementById("signin-first").hidden = false;
  document.getElementById("signin-or").hidden = true;
  document.getElementById("password-form").before(token);  // the token first
  document.getElementById("signin-token").focus();
}
