// Sources followed on a schedule — a feed, web pages, a mailbox folder, a git repository, a
// WebDAV folder — as cards of the Sources panel (sources.js lists them with the folders, from
// GET …/folders): each with its kind and address, how often it is checked, when it last ran and
// runs next, what the last run did, why it failed in plain words, and the entries it could not
// take. Editors check one now (POST …/followed/{id}/sync); an admin follows a new feed or page
// (POST …/followed: the server refuses hosts outside LOCI_SOURCES_ALLOWED_HOSTS and says so).

import { api, path } from "./api.js";
import { $, busy, el, moment, plural, showError, toast, when } from "./dom.js";

const KIND = {
  feed: "Feed",
  page: "Web page",
  imap: "Mailbox (IMAP)",
  git: "Git repository",
  webdav: "WebDAV folder",
};

// Spans of time as a person says them: "15 min", "1 h", "1 day".
function span(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const minutes = Math.round(s / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.round(s / 3600);
  if (hours < 24 || hours % 24) return `${hours} h`;
  return plural(hours / 24, "day");
}

const entries = (n) => (n === 1 ? "1 entry" : `${n} entries`);

export const period = (seconds) => `every ${span(seconds)}`;

// "5 min ago", "in 55 min", "due now": a moment against the clock of this browser.
export function relative(iso) {
  const at = moment(iso).getTime();
  if (Number.isNaN(at)) return iso;
  const seconds = (at - Date.now()) / 1000;
  if (Math.abs(seconds) < 45) return seconds > 0 ? "in a moment" : "just now";
  return seconds > 0 ? `in ${span(seconds)}` : `${span(-seconds)} ago`;
}

// A <time> saying a moment relative to now, kept current by `refreshTimes`; its title is the
// moment itself.
function relativeTime(iso) {
  return el("time", { class: "relative", datetime: iso, title: when(iso), text: relative(iso) });
}

export function refreshTimes(root) {
  for (const node of root.querySelectorAll("time.relative")) {
    node.textContent = relative(node.getAttribute("datetime"));
  }
}

// Why a run failed, in a person's words, from the server's message (which names the address
// and the exact answer, and is shown beneath): null when there is nothing plainer to say.
const PLAIN = [
  [/HTTP (404|410)\b/, "nothing is at this address any more: it may have moved or closed."],
  [/HTTP (401|403)\b/, "the site refuses to let Loci read it."],
  [/HTTP 429\b/, "the site asked Loci to come back later."],
  [/HTTP 5\d\d\b/, "the site had a problem of its own."],
  [/too many redirects/i, "the address sends Loci round in circles (too many redirects)."],
  [/HTML page, not a feed/, "the address now answers a web page, not a feed: it may have moved or closed."],
  [/not a feed Loci can read|is XML but not RSS|but not a JSON Feed/, "what the address answers is not a feed Loci can read."],
  [/timed out/i, "the site took too long to answer."],
  [/could not fetch|could not connect|connection|not resolve|name or service/i, "the site could not be reached."],
  [/login|authenticat|password/i, "the sign-in to it was refused."],
  [/not allowed|blocked|private address|forbidden network/i, "this server's rules do not let Loci reach it."],
];

export function plainError(message) {
  for (const [pattern, words] of PLAIN) if (pattern.test(message)) return words;
  return null;
}

// What the last run did: "2 added · 0 updated · 0 removed · 5 unchanged · 1 failed".
function countsLine(source) {
  const counts = source.counts || {};
  const parts = ["added", "updated", "removed", "unchanged"].map((k) => `${counts[k] ?? 0} ${k}`);
  parts.push(`${source.errors.length} failed`);
  if (counts.gone) parts.push(`${counts.gone} gone (kept)`);
  if (counts.returned) parts.push(`${counts.returned} back`);
  return parts.join(" · ");
}

function lastRun(source) {
  if (source.running) return el("p", { class: "source-state small", text: "Being checked right now…" });
  if (!source.last_sync_at) return el("p", { class: "source-state muted small", text: "Not checked yet." });
  if (source.last_error) {
    const plain = plainError(source.last_error);
    return el(
      "div",
      { class: "source-error" },
      el(
        "p",
        { class: "source-state error-text" },
        "The last check failed ",
        relativeTime(source.last_sync_at),
        `: ${plain || source.last_error}`,
      ),
      plain ? el("p", { class: "source-error-detail muted small", text: source.last_error }) : null,
      source.failures > 1
        ? el("p", {
            class: "muted small",
            text: `Failed ${source.failures} times in a row: each try waits longer before the next.`,
          })
        : null,
    );
  }
  return el(
    "p",
    { class: "source-state small" },
    "Last checked ",
    relativeTime(source.last_sync_at),
    ": ",
    el("span", { class: "source-counts", text: countsLine(source) }),
  );
}

function nextRun(source) {
  if (source.running || !source.next_run_at) return null;
  const due = moment(source.next_run_at).getTime() <= Date.now();
  return el(
    "p",
    { class: "source-next muted small" },
    "Next check ",
    due ? "due now" : relativeTime(source.next_run_at),
  );
}

function failures(source) {
  if (!source.errors.length) return null;
  return el(
    "details",
    { class: "source-failures" },
    el("summary", { text: `${entries(source.errors.length)} could not be taken` }),
    el(
      "ul",
      {},
      ...source.errors.map((failure) =>
        el(
          "li",
          {},
          el("span", { class: "source-file", text: failure.path }),
          el("span", { class: "reason", text: failure.reason }),
        ),
      ),
    ),
  );
}

// The card of one scheduled source. `role`: the person's role in the brain; `unfollow(source)`
// stops following it (the dialog of sources.js); `checked(source)` refreshes the panel after a
// check now; `errorBox` shows what a check could not do; `target`: the brain shown.
export function followedItem(source, { role, unfollow, checked, errorBox, target }) {
  const kind = KIND[source.kind] || source.kind;
  return el(
    "li",
    {
      class: "source followed-source",
      dataset: { id: String(source.id), kind: source.kind, state: source.last_error ? "failing" : "ok" },
    },
    el(
      "p",
      { class: "source-title" },
      el("span", { class: "source-kind", text: kind }),
      el("span", { class: "source-path", tabindex: "-1", text: source.path }),
    ),
    el("p", { class: "source-schedule muted small", text: `Checked ${period(source.every_s)}` }),
    lastRun(source),
    nextRun(source),
    source.moved_to ? el("p", { class: "muted small", text: `It moved for good to ${source.moved_to}` }) : null,
    source.on_delete === "keep" ? el("p", { class: "muted small", text: "Entries gone upstream are kept" }) : null,
    failures(source),
    el(
      "div",
      { class: "source-actions" },
      role !== "viewer"
        ? el("button", {
            type: "button",
            class: "small",
            text: "Check now",
            "aria-label": `Check now: ${source.path}`,
            disabled: source.running, // the panel shows that run's end by itself
            onclick: (event) => checkNow(source, event.currentTarget, { checked, errorBox, target }),
          })
        : null,
      role === "owner"
        ? el("button", {
            type: "button",
            class: "small danger",
            text: "Stop following",
            "aria-label": `Stop following ${source.path}`,
            onclick: () => unfollow(source),
          })
        : null,
    ),
  );
}

// What a check did, in a sentence: "Checked: 2 added, 1 unchanged."
function checkSummary(result) {
  if (result.unreachable) return `The check failed: ${plainError(result.unreachable) || result.unreachable}`;
  const parts = [];
  for (const field of ["added", "updated", "removed", "unchanged"]) {
    if (result[field]) parts.push(`${result[field]} ${field}`);
  }
  if (result.gone) parts.push(`${result.gone} gone (kept)`);
  if (result.failed.length) parts.push(`${result.failed.length} failed`);
  return parts.length ? `Checked: ${parts.join(", ")}.` : "Checked: nothing there yet.";
}

async function checkNow(source, button, { checked, errorBox, target }) {
  await busy(button, async () => {
    try {
      const result = await api.post(`/brains/${path(target.name)}/followed/${path(source.id)}/sync`);
      const summary = checkSummary(result);
      $("#sync-result").textContent = summary;
      toast(summary, result.unreachable || result.failed.length ? "error" : "info");
      showError(errorBox, null);
    } catch (error) {
      if (error.status === 409) {
        // The worker runs it at this moment: the panel follows the run to its end.
        $("#sync-result").textContent = `${source.path} is being checked right now; its card shows the result when done.`;
      } else {
        showError(errorBox, error);
      }
    }
  });
  await checked(source);
}

// The form to follow a feed or page: admins only (the server says so with `is_admin`, and
// refuses anyone else and any host it does not allow, with the reason shown as it says it).
export function setupFollowForm({ current, followed, errorBox }) {
  const form = $("#follow-form");
  const input = $("#follow-url");
  const formError = $("#follow-error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const url = input.value.trim();
    if (!/^https?:\/\/\S+$/i.test(url)) {
      showError(formError, new Error("Type the whole address of the feed or page, starting with https://"));
      input.setAttribute("aria-invalid", "true");
      input.focus();
      return;
    }
    const body = { url, every_s: Number($("#follow-every").value) };
    if ($("#follow-kind").value) body.kind = $("#follow-kind").value;
    const target = current();
    await busy(form.querySelector("button[type=submit]"), async () => {
      try {
        const source = await api.post(`/brains/${path(target.name)}/followed`, body);
        input.value = "";
        input.removeAttribute("aria-invalid");
        showError(formError, null);
        showError(errorBox, null);
        toast(`Following ${source.path} as a ${KIND[source.kind]?.toLowerCase() || source.kind}: its first check starts now.`);
        await followed(source);
      } catch (error) {
        showError(formError, error);
        input.setAttribute("aria-invalid", "true");
        input.focus();
      }
    });
  });
}
