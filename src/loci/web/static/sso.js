// Single sign-on buttons: one per identity provider the administrator configured, shown
// wherever a person signs in. A button leaves for the provider and comes back signed in,
// to `next` (a path of this site).
import { request } from "/static/api.js";

export async function signInOptions() {
  try {
    return await request("GET", "/sign-in/options", undefined, { quietUnauthenticated: true });
  } catch {
    return { password: true, providers: [] };
  }
}

export function renderProviders(container, providers, next) {
  container.replaceChildren();
  for (const provider of providers) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "primary sso-button";
    button.textContent = `Sign in with ${provider.label}`;
    button.addEventListener("click", () => {
      const target = `/sso/${encodeURIComponent(provider.name)}/start`;
      location.assign(`${target}?next=${encodeURIComponent(next)}`);
    });
    container.append(button);
  }
  container.hidden = providers.length === 0;
}
