"""How long the browser extension's extractor takes on a large page, in Chromium.

    .venv/bin/python bench/extension_extract.py [--paragraphs 5000] [--runs 7]

A long article is generated (paragraphs with links and inline code, a list every tenth
paragraph, a comment thread and navigation around it), loaded into Debian's Chromium through
Playwright, and `extension/extract.js` is run on it as the extension runs it: `extractPage` over
the live document, which copies the best candidate, drops what CSS hides and what is page
chrome, and writes Markdown. Prints the page's size, the element count, the Markdown's length
and the median and range of the wall time of `extractPage` (measured in the page with
`performance.now()`). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
EXTRACT = ROOT / "extension" / "extract.js"
CHROMIUM = "/usr/bin/chromium"

MEASURE = """() => {
  const started = performance.now();
  const page = LociExtract.extractPage(document, location.href);
  return [performance.now() - started, page.markdown.length, document.querySelectorAll("*").length];
}"""


def article(paragraphs: int) -> str:
    parts = []
    for i in range(paragraphs):
        parts.append(
            f"<p>Paragraph {i} with <a href='#p{i}'>a link</a> and <code>call({i})</code>, "
            "and enough words after them to read like a real paragraph of an article.</p>"
        )
        if i % 10 == 0:
            parts.append("<ul>" + "".join(f"<li>point {j}</li>" for j in range(5)) + "</ul>")
    comments = "".join(f"<div class='comment'><p>comment {i}</p></div>" for i in range(500))
    return (
        "<!doctype html><html><head><title>A long article</title></head><body>"
        "<nav><a>Home</a><a>Archive</a></nav><main><article class='entry-content'>"
        f"<h1>A long article</h1>{''.join(parts)}</article>"
        f"<section class='comments'>{comments}</section></main><footer>site</footer></body></html>"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        page_file = Path(folder) / "article.html"
        page_file.write_text(article(args.paragraphs))
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(page_file.as_uri())
            page.add_script_tag(path=str(EXTRACT))
            runs = [page.evaluate(MEASURE) for _ in range(args.runs)]
            browser.close()
        times = [r[0] for r in runs]
        size_kb = page_file.stat().st_size / 1024
    print(f"page: {size_kb:.0f} KB, {runs[0][2]} elements; markdown: {runs[0][1]} characters")
    print(
        f"extractPage: median {statistics.median(times):.0f} ms "
        f"(range {min(times):.0f}–{max(times):.0f} ms over {args.runs} runs)"
    )


if __name__ == "__main__":
    main()
