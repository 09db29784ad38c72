// The sign-in screen's single sign-on buttons (one per configured identity provider), and no
// password form when the administrator turned password sign-in off.
import { renderProviders, signInOptions } from "/static/sso.js";

const options = await signInOptions();
const here = location.pathname + location.search + location.hash;
renderProviders(document.getElementById("signin-sso"), options.providers, here);
if (!options.password) document.getElementById("password-form").hidden = true;
