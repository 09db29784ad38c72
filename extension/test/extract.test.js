// The extractor against saved-page fixtures, in a DOM from linkedom (no browser needed).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { parseHTML } = require("linkedom");
const { extractPage } = require("../extract.js");

const FIXTURES = path.join(__dirname, "fixtures");

function page(name) {
  return parseHTML(fs.readFileSync(path.join(FIXTURES, name), "utf8")).document;
}

function extract(name) {
  return extractPage(page(name), `https://example.test/${name}`);
}

function html(body, head = "") {
  return parseHTML(`<!doctype html><html><head>${head}</head><body>${body}</body></html>`).document;
}

// Lines outside fenced code blocks.
function proseLines(markdown) {
  let inCode = false;
  return markdown.split("\n").filter((line) => {
    if (/^(```|~~~~)/.test(line)) {
      inCode = !inCode;
      return false;
    }
    return !inCode;
  });
}

function assertClean(markdown) {
  for (const line of proseLines(markdown)) {
    // leading spaces are list nesting; anywhere else two spaces mean a run was not collapsed
    assert.doesNotMatch(line.trimStart(), / {2}/, `double space in ${JSON.stringify(line)}`);
    assert.equal(line, line.trimEnd(), `trailing space in ${JSON.stringify(line)}`);
  }
  assert.doesNotMatch(markdown, /\n{3,}/);
}

function assertAbsent(markdown, phrases) {
  for (const phrase of phrases) assert.ok(!markdown.includes(phrase), `kept junk: ${phrase}`);
}

test("WordPress: the entry content, with lists, nesting and quotes as Markdown", () => {
  const result = extract("wordpress.html");
  assert.equal(result.selector, ".entry-content");
  assert.equal(result.title, "Bleeding a radiator without the mess");
  const md = result.markdown;
  assert.ok(md.startsWith("A radiator that is cold at the top and warm at the bottom has air in it."));
  assert.match(md, /Bleeding it takes five minutes and a radiator key\./); // link kept as text
  assert.match(md, /^## What you need$/m);
  assert.match(md, /^## Step by step$/m);
  assert.ok(
    md.includes("- A radiator key (brass, 5 mm square)\n- An old towel\n  - folded twice\n  - under the valve\n- A small cup"),
    md,
  );
  assert.ok(md.includes("1. Turn the heating off and let the radiators cool.\n2. Open the bleed valve"));
  assert.match(md, /^3\. Close it when water spits out/m);
  assert.match(md, /^> If the pressure drops below 1 bar, top it up with the filling loop\.$/m);
  // a <br> is a line break, never joined into one line
  assert.match(md, /^Line one of the address\nLine two of the address$/m);
  assertAbsent(md, [
    "BUY CHEAP BOILERS", "Subscribe to our newsletter", "Sign up", "Share on Twitter",
    "casino", "Leave a reply", "Recent posts", "We use cookies", "Filed under", "trackerSecret",
    "analytics", "Skip to content", "About us", "RADIATOR10",
  ]);
  assert.match(md, /^Keep the towel there until the valve stops dripping\.$/m);
  assertClean(md);
});

test("Medium: the post, without the metabar, claps, paywall or related stories", () => {
  const result = extract("medium.html");
  assert.equal(result.selector, "article[data-testid='post']");
  assert.equal(result.title, "Why sourdough needs time");
  const md = result.markdown;
  assert.match(md, /^# Why sourdough needs time$/m);
  assert.match(md, /^Wild yeast is slow\. A starter fed at breakfast/m);
  assert.match(md, /^## A schedule that works$/m);
  assert.ok(md.includes("1. Feed the starter at 8:00.\n2. Mix the dough at 13:00.\n3. Shape at 18:00"));
  assertAbsent(md, ["Write", "Follow", "1.2K", "Create an account", "Ten knives", "Sign up"]);
  assertClean(md);
});

test("Substack: the available content without the subscribe widget, share bar or comments", () => {
  const result = extract("substack.html");
  assert.equal(result.selector, ".available-content");
  assert.equal(result.title, "The quiet cost of notifications"); // the page's one h1, not the tab
  const md = result.markdown;
  assert.match(md, /^Every notification costs about twenty minutes of focus/m);
  assert.match(md, /^## Three rules I kept\n\n- Batch email twice a day\.\n- Phone in another room/m);
  assertAbsent(md, ["reader-supported", "Subscribe", "Restack", "Loved this", "Archive", "Collection notice"]);
  assertClean(md);
});

test("news site: the article body, without ads, related stories, share bar or sidebar", () => {
  const result = extract("news.html");
  assert.equal(result.selector, "[itemprop='articleBody']");
  assert.equal(result.title, "Harbour wall repairs to start in May");
  const md = result.markdown;
  const paragraphs = md.split("\n\n");
  assert.equal(paragraphs.length, 4, md);
  assert.match(paragraphs[0], /^Repairs to the storm-damaged harbour wall will start on 4 May/);
  assert.match(paragraphs[3], /^Residents can see the plans at the library/);
  assertAbsent(md, ["Win a cruise", "Sponsored", "Related stories", "kayakers", "WhatsApp", "Most read", "Seal pup", "All rights reserved"]);
  assertClean(md);
});

test("GitHub README: the rendered Markdown with fenced code kept verbatim, not the issue comment", () => {
  const result = extract("github-readme.html");
  assert.match(result.selector, /markdown-body|entry-content/);
  const md = result.markdown;
  assert.match(md, /^# tidewater$/m);
  assert.ok(md.includes('```shell\npip install tidewater\ntidewater --harbour "St Ives"   --days 7\n```'), md);
  assert.ok(
    md.includes(
      "```python\nfrom tidewater import predict\n\ndef high_water(harbour):\n    # two spaces of indent are kept\n    return max(predict(harbour, t) for t in range(24))\n```",
    ),
    md,
  );
  assert.match(md, /Call `predict\(harbour, when\)` to get the height in metres:/);
  assert.ok(md.includes("| Harbour | Datum |\n| --- | --- |\n| St Ives | Chart datum |\n| Padstow | Chart datum |"));
  assertAbsent(md, ["tidal rivers", "Pull requests", "Latest commit", "Copy", "Pricing", "GitHub, Inc."]);
  assertClean(md);
});

test("docs site: the page's Markdown, without the sidebar menu, breadcrumbs, pager or table of contents", () => {
  const result = extract("docs-site.html");
  assert.equal(result.selector, ".theme-doc-markdown");
  assert.equal(result.title, "Configuration");
  const md = result.markdown;
  assert.match(md, /^# Configuration\n\nKiln reads `kiln\.toml` from the project root\./);
  // the highlighter's comment span is code, not a page comment
  assert.ok(md.includes('```toml\n# where the site is written\n[build]\nout_dir = "dist"\nminify  = true\n```'), md);
  assert.match(md, /^### Environment variables$/m);
  assert.match(md, /`KILN_<TABLE>_<KEY>`/);
  assertAbsent(md, ["Introduction", "Plugins", "Built with Docusaurus", "Blog"]);
  assertClean(md);
});

test("no platform container: the article element, not the comments or sidebar", () => {
  const result = extract("plain-article.html");
  assert.equal(result.selector, "article");
  const md = result.markdown;
  assert.match(md, /^# Notes on composting\n\nGreens and browns/);
  assert.match(md, /^- Greens: grass clippings, peelings\n- Browns: cardboard, dry leaves$/m);
  assertAbsent(md, ["never gets warm", "Archive", "Written in a shed", "Garden"]);
  assertClean(md);
});

test("no article at all: the cleaned body, with its table", () => {
  const result = extract("no-article.html");
  assert.equal(result.selector, "body");
  assert.equal(result.title, "Bus timetable changes");
  const md = result.markdown;
  assert.match(md, /^From 1 June the number 7 bus runs every 20 minutes on weekdays\.\n\nSunday services/);
  assert.match(md, /\| Market square \| 6:52 \|/);
  assertAbsent(md, ["Routes", "Town transport office"]);
});

test("among several candidates the one with the most text wins", () => {
  const doc = html(`
    <div class="markdown-body"><p>A short note that is only a teaser, linking to the real thing elsewhere on this very page, honestly not much.</p></div>
    <div class="markdown-body"><p>${"The long README explains everything in detail. ".repeat(8)}</p></div>`);
  const result = extractPage(doc, "https://example.test/");
  assert.match(result.markdown, /^The long README explains everything/);
  assert.ok(!result.markdown.includes("teaser"));
});

test("a platform container with almost no text loses to the article around it", () => {
  const doc = html(`
    <article><h1>Real story</h1><div class="prose"><p>Tiny.</p></div>
      <p>${"The story goes on at length outside the prose wrapper. ".repeat(6)}</p></article>`);
  const result = extractPage(doc, "https://example.test/");
  assert.equal(result.selector, "article");
  assert.match(result.markdown, /^# Real story\n\nTiny\.\n\nThe story goes on/);
});

test("ordered lists keep their start number; code containing backticks gets a longer fence", () => {
  const doc = html(`<main>
    <ol start="4"><li>fourth</li><li>fifth</li></ol>
    <pre>echo \`\`\`</pre></main>`);
  const { markdown } = extractPage(doc, "https://example.test/");
  assert.ok(markdown.includes("4. fourth\n5. fifth"));
  assert.ok(markdown.includes("~~~~\necho ```\n~~~~"));
});

test("extraction reads a copy: the page itself is left exactly as it was", () => {
  const doc = page("wordpress.html");
  const before = doc.documentElement.outerHTML;
  extractPage(doc, "https://example.test/");
  assert.equal(doc.documentElement.outerHTML, before);
});

test("MediaWiki: the article text, without edit links, footnote markers, contents box or navbox", () => {
  const result = extract("wiki.html");
  assert.equal(result.selector, "#mw-content-text .mw-parser-output");
  assert.equal(result.title, "Lighthouse");
  const md = result.markdown;
  assert.match(md, /^A lighthouse is a tower that emits light to serve as a navigational aid for maritime pilots at sea\.$/m);
  assert.match(md, /^## History\n\nBefore lighthouses, fires were lit on hilltops to guide ships\. The Pharos/m);
  assert.match(md, /^## Construction$/m);
  assertAbsent(md, ["[edit]", "edit", "[1]", "[2]", "Contents", "Navigational aids", "free encyclopedia", "Creative Commons", "Random article"]);
  assertClean(md);
});
