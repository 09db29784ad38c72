// Smart extraction: the readable part of a page as Markdown, for saving into a Loci brain.
//
// Injected into the page by the extension (chrome.scripting.executeScript), where it defines
// `globalThis.LociExtract`; Node's tests `require()` it and hand it a DOM from linkedom. It only
// reads the DOM it is given: it works on a copy and never changes the page.
//
// How the text is found: known platforms' content containers first (Medium, Substack, WordPress,
// news sites, GitHub READMEs, documentation generators), then `article` / `main`, and within each
// group the candidate with the most text (after cleaning) wins; the whole body is the last resort.
// The winner is cleaned of scripts, navigation, headers and footers, ads, share bars, comments and
// forms, then written as Markdown: headings as `#`, lists as `-` / `1.`, code as fenced blocks,
// links as their text. Spaces collapse; line breaks never do (seed 001's "all on one line" bug).
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.LociExtract = api;
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  "use strict";

  // Where known platforms keep the article body; order does not matter (most text wins).
  const PLATFORM_SELECTORS = [
    // Medium
    "article[data-testid='post']",
    ".meteredContent",
    // Substack
    ".available-content",
    ".post-content",
    ".body.markup",
    // WordPress, Ghost, Blogger, dev.to and most blog themes
    ".entry-content",
    ".gh-content",
    "#article-body",
    ".post-body",
    ".article-body",
    ".article-content",
    // News sites
    "[itemprop='articleBody']",
    ".story-body",
    ".article__body",
    ".c-entry-content",
    // GitHub READMEs and rendered Markdown
    ".markdown-body",
    // Documentation generators: Docusaurus, MkDocs (Material), Sphinx / Read the Docs, VitePress
    ".theme-doc-markdown",
    ".md-content__inner",
    ".rst-content [itemprop='articleBody']",
    "div[role='main'].document",
    ".vp-doc",
    ".prose",
    // Wikipedia and other MediaWikis
    "#mw-content-text .mw-parser-output",
  ];
  const GENERIC_SELECTORS = ["article", "main", "[role='main']"];

  // Never part of what a person came to read.
  const JUNK_SELECTORS = [
    "script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas",
    "nav", "footer", "aside", "form", "button", "input", "select", "textarea", "dialog",
    "[role='navigation']", "[role='banner']", "[role='contentinfo']", "[role='complementary']",
    "[role='search']", "[role='dialog']", "[aria-hidden='true']", "[hidden]",
    "[style*='display:none']", "[style*='display: none']",
    ".sidebar", "#sidebar", ".comments", "#comments", ".comment", ".comment-list",
    ".comments-area", "#disqus_thread", ".advertisement", ".ad", ".ads", ".advert", ".adsbygoogle",
    "[id^='ad-']", "[class^='ad-']", ".sponsored", ".promo", ".social-share", ".share",
    ".share-bar", ".share-buttons", ".sharing", ".social", ".related-posts", ".related",
    ".newsletter", ".subscribe", ".subscription-widget", ".cookie-notice", ".cookie-banner",
    ".breadcrumbs", ".breadcrumb", ".skip-link", ".visually-hidden", ".sr-only",
    // MediaWiki's edit links, navigation boxes, footnote markers and print-hidden parts
    ".mw-editsection", ".navbox", "sup.reference", ".noprint", "#toc",
  ].join(",");
  // A candidate sitting inside one of these is not the article (e.g. a comment's .markdown-body).
  const OUTSIDE_ARTICLE = "nav, aside, footer, .comments, #comments, .comment, [role='complementary']";

  const BLOCK_TAGS = new Set([
    "P", "DIV", "SECTION", "ARTICLE", "MAIN", "HEADER", "FIGURE", "FIGCAPTION", "ADDRESS",
    "DETAILS", "SUMMARY", "DL", "DT", "DD", "CENTER", "HGROUP", "BODY", "FIELDSET",
  ]);
  const HEADINGS = { H1: 1, H2: 2, H3: 3, H4: 4, H5: 5, H6: 6 };
  const MIN_TEXT = 140; // a platform container with less than this is a teaser, not the article
  const ELEMENT = 1;
  const TEXT = 3;

  // HTML's own whitespace rule: runs of spaces, tabs and newlines in source text are one space.
  const collapse = (text) => text.replace(/[ \t\n\r\f\u00a0]+/g, " ");

  // In a browser, what CSS hides (a closed menu, a modal, a "read more" teaser's full copy kept
  // for scripts) is not what the person reads. The copy has no styles, so hidden elements are
  // found on the page and removed from the copy at the same place. A DOM without layout (the
  // tests' linkedom) has no checkVisibility and keeps them; inline `display: none` is caught by
  // the junk selectors either way.
  function dropHidden(element, copy) {
    if (typeof element.checkVisibility !== "function") return;
    const originals = Array.from(element.querySelectorAll("*"));
    const copies = Array.from(copy.querySelectorAll("*"));
    if (originals.length !== copies.length) return;
    const hidden = [];
    originals.forEach((original, i) => {
      // display: contents has no box of its own, so checkVisibility calls it hidden; its
      // children are what show.
      if (original.checkVisibility({ visibilityProperty: true })) return;
      const view = original.ownerDocument.defaultView;
      if (view && view.getComputedStyle(original).display === "contents") return;
      hidden.push(copies[i]);
    });
    for (const node of hidden) node.remove();
  }

  function cleaned(element) {
    const copy = element.cloneNode(true);
    dropHidden(element, copy);
    for (const junk of Array.from(copy.querySelectorAll(JUNK_SELECTORS))) {
      // Code is kept verbatim: a highlighter's <span class="token comment"> is part of it.
      if (junk.parentElement && junk.parentElement.closest("pre")) continue;
      junk.remove();
    }
    // A header holding the article's own heading (title, byline) is content, not site chrome.
    for (const header of Array.from(copy.querySelectorAll("header"))) {
      if (!header.querySelector("h1, h2")) header.remove();
    }
    return copy;
  }

  function textLength(element) {
    return collapse(element.textContent || "").trim().length;
  }

  // The best candidate of one group: [cleaned copy, selector] with the most text, or null.
  function best(doc, selectors) {
    let winner = null;
    for (const selector of selectors) {
      for (const element of Array.from(doc.querySelectorAll(selector))) {
        if (element.parentElement && element.parentElement.closest(OUTSIDE_ARTICLE)) continue;
        const copy = cleaned(element);
        const length = textLength(copy);
        if (!winner || length > winner.length) winner = { copy, selector, length };
      }
    }
    return winner;
  }

  function findContent(doc) {
    const platform = best(doc, PLATFORM_SELECTORS);
    if (platform && platform.length >= MIN_TEXT) return platform;
    const generic = best(doc, GENERIC_SELECTORS);
    const found = [platform, generic].filter(Boolean).sort((a, b) => b.length - a.length)[0];
    if (found && found.length > 0) return found;
    const body = doc.body || doc.documentElement;
    const copy = cleaned(body);
    return { copy, selector: "body", length: textLength(copy) };
  }

  // ---- Markdown ---------------------------------------------------------------------------

  function codeLanguage(pre) {
    const code = pre.querySelector("code");
    const classes = [pre, code, pre.parentElement]
      .filter(Boolean)
      .map((el) => el.getAttribute("class") || "")
      .join(" ");
    const match = classes.match(/(?:language|lang|highlight-source)-([\w+#-]+)/);
    return match ? match[1] : "";
  }

  function codeBlock(pre) {
    const text = (pre.textContent || "").replace(/\r\n?/g, "\n").replace(/^\n+|\s+$/g, "");
    const fence = text.includes("```") ? "~~~~" : "```";
    return `${fence}${codeLanguage(pre)}\n${text}\n${fence}`;
  }

  function hasBlock(element) {
    return Boolean(element.querySelector("p, div, ul, ol, pre, table, blockquote, h1, h2, h3, h4, h5, h6, section"));
  }

  // Inline text: collapsed spaces, `code`, link text, line breaks kept.
  function inline(node) {
    if (node.nodeType === TEXT) return collapse(node.nodeValue || "");
    if (node.nodeType !== ELEMENT) return "";
    const tag = node.tagName;
    if (tag === "BR") return "\n";
    if (tag === "IMG") return "";
    if (tag === "CODE" || tag === "KBD" || tag === "SAMP") {
      const text = collapse(node.textContent || "").trim();
      if (!text) return "";
      const tick = text.includes("`") ? "``" : "`";
      return `${tick}${text}${tick}`;
    }
    let out = "";
    for (const child of Array.from(node.childNodes)) out += inline(child);
    return out;
  }

  // Spaces collapsed and trimmed on every line; the lines themselves stay apart.
  function tidy(text) {
    return text
      .split("\n")
      .map((line) => line.replace(/ {2,}/g, " ").trim())
      .filter((line, i, lines) => line || (i > 0 && lines[i - 1]))
      .join("\n")
      .trim();
  }

  function list(element) {
    const ordered = element.tagName === "OL";
    let number = ordered ? parseInt(element.getAttribute("start") || "1", 10) || 1 : 0;
    const items = [];
    for (const item of Array.from(element.children)) {
      if (item.tagName !== "LI") continue;
      const parts = [];
      blocks(item, parts);
      if (!parts.length) continue;
      const marker = ordered ? `${number++}. ` : "- ";
      const pad = " ".repeat(marker.length);
      const lines = parts.join("\n").split("\n");
      items.push(marker + lines[0] + lines.slice(1).map((l) => "\n" + (l ? pad + l : l)).join(""));
    }
    return items.join("\n");
  }

  function table(element) {
    const rows = [];
    for (const row of Array.from(element.querySelectorAll("tr"))) {
      const cells = Array.from(row.children)
        .filter((c) => c.tagName === "TD" || c.tagName === "TH")
        .map((c) => tidy(inline(c)).replace(/\n/g, " ").replace(/\|/g, "\\|"));
      if (cells.some(Boolean)) rows.push(`| ${cells.join(" | ")} |`);
    }
    if (!rows.length) return "";
    const width = rows[0].split(" | ").length;
    rows.splice(1, 0, `|${" --- |".repeat(width)}`);
    return rows.join("\n");
  }

  // Append the Markdown blocks of `element`'s children to `out`.
  function blocks(element, out) {
    let text = "";
    const flush = () => {
      const done = tidy(text);
      if (done) out.push(done);
      text = "";
    };
    for (const child of Array.from(element.childNodes)) {
      if (child.nodeType !== ELEMENT) {
        text += inline(child);
        continue;
      }
      const tag = child.tagName;
      if (tag in HEADINGS) {
        flush();
        const heading = tidy(inline(child)).replace(/\n/g, " ");
        if (heading) out.push(`${"#".repeat(HEADINGS[tag])} ${heading}`);
      } else if (tag === "UL" || tag === "OL") {
        flush();
        const items = list(child);
        if (items) out.push(items);
      } else if (tag === "PRE") {
        flush();
        if ((child.textContent || "").trim()) out.push(codeBlock(child));
      } else if (tag === "BLOCKQUOTE") {
        flush();
        const inner = [];
        blocks(child, inner);
        if (inner.length) {
          out.push(inner.join("\n\n").split("\n").map((l) => (l ? `> ${l}` : ">")).join("\n"));
        }
      } else if (tag === "TABLE") {
        flush();
        const rows = table(child);
        if (rows) out.push(rows);
      } else if (tag === "HR") {
        flush();
        out.push("---");
      } else if (tag === "LI") {
        flush(); // a stray list item outside a list
        const inner = [];
        blocks(child, inner);
        if (inner.length) out.push(`- ${inner.join("\n")}`);
      } else if (BLOCK_TAGS.has(tag) || hasBlock(child)) {
        flush();
        blocks(child, out);
      } else {
        text += inline(child);
      }
    }
    flush();
  }

  function toMarkdown(element) {
    const out = [];
    blocks(element, out);
    return out.join("\n\n");
  }

  // ---- The page ---------------------------------------------------------------------------

  function meta(doc, selector) {
    const element = doc.querySelector(selector);
    const value = element && element.getAttribute("content");
    return value ? collapse(value).trim() : "";
  }

  // The page's own name for itself before the tab's title, which often carries the site's name.
  function pageTitle(doc, content) {
    const headings = doc.querySelectorAll("h1");
    const heading = content.querySelector("h1") || (headings.length === 1 ? headings[0] : null);
    return (
      meta(doc, "meta[property='og:title']") ||
      (heading ? collapse(heading.textContent || "").trim() : "") ||
      collapse(doc.title || "").trim()
    );
  }

  /**
   * The readable part of `doc` as {url, title, markdown, selector, length}: `selector` says
   * which candidate won, `length` is the characters of text kept.
   */
  function extractPage(doc, url) {
    const found = findContent(doc);
    const markdown = toMarkdown(found.copy);
    const title = pageTitle(doc, found.copy).slice(0, 300) || url || "";
    return { url: url || "", title, markdown, selector: found.selector, length: found.length };
  }

  return { extractPage, toMarkdown, findContent, PLATFORM_SELECTORS, GENERIC_SELECTORS };
});
