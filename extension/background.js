// The service worker: saves a tab into the chosen brain. Saving happens here rather than in the
// popup because a popup closes the moment the person clicks elsewhere, and a save that was
// started must still finish. The keyboard shortcut (Alt+Shift+S) saves without the popup and
// answers with the toolbar badge.
importScripts("api.js");

const { createClient } = self.LociApi;
const BADGE_MS = 4000;

async function connection() {
  const { server, token, brain } = await chrome.storage.local.get(["server", "token", "brain"]);
  if (!server || !token || !brain) {
    throw new Error("Connect to your Loci server first: open the Loci popup.");
  }
  return { server, token, brain };
}

// Run the extractor in the tab (activeTab grants this after a click on the toolbar button or the
// shortcut) and bring back {url, title, markdown, selector, length}.
async function extract(tabId) {
  try {
    await chrome.scripting.executeScript({ target: { tabId }, files: ["extract.js"] });
    const [frame] = await chrome.scripting.executeScript({
      target: { tabId },
      func: () => globalThis.LociExtract.extractPage(document, location.href.split("#")[0]),
    });
    return frame && frame.result;
  } catch (error) {
    throw new Error(`This page cannot be read by an extension (${error.message}).`);
  }
}

async function saveTab(tabId) {
  const { server, token, brain } = await connection();
  const page = await extract(tabId);
  if (!page || !page.markdown.trim()) throw new Error("No readable text was found on this page.");
  const added = await createClient({ server, token }).savePage(brain, page);
  return {
    brain,
    title: page.title,
    url: page.url,
    selector: page.selector,
    length: page.length,
    document: added.document,
    deduped: added.deduped,
    refreshed: Boolean(added.refreshed),
  };
}

async function flash(tabId, text, color) {
  await chrome.action.setBadgeBackgroundColor({ tabId, color });
  await chrome.action.setBadgeText({ tabId, text });
  setTimeout(() => chrome.action.setBadgeText({ tabId, text: "" }).catch(() => {}), BADGE_MS);
}

chrome.runtime.onMessage.addListener((message, sender, reply) => {
  // Only this extension's own pages may ask for a save; web pages cannot message it at all
  // (no externally_connectable), and content scripts are never left running.
  if (sender.id !== chrome.runtime.id || !message || message.type !== "save-tab") return false;
  saveTab(message.tabId).then(
    (saved) => reply({ ok: true, saved }),
    (error) => reply({ ok: false, error: error.message }),
  );
  return true; // the reply comes later
});

chrome.commands.onCommand.addListener((command, tab) => {
  if (command !== "save-page" || !tab || tab.id === undefined) return;
  saveTab(tab.id).then(
    () => flash(tab.id, "✓", "#2e7d32"),
    (error) => {
      console.warn("Loci: saving the page failed:", error.message);
      return flash(tab.id, "!", "#c62828");
    },
  );
});
