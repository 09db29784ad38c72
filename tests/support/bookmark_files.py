# ruff: noqa: E501 - the exports are written line for line as the tools write them
"""Bookmark exports as browsers and Pocket write them, pointing at a loopback site that serves
a few pages and a 404, for `loci import bookmarks` tests on every surface."""

from __future__ import annotations

from pathlib import Path

from tests.support.loopback import Loopback, QuietHandler

PAGES = {
    "/sourdough": (
        "text/html; charset=utf-8",
        "<html><head><title>Sourdough starter guide</title></head><body><h1>Sourdough</h1>"
        "<p>Feed the starter with equal weights of rye flour and water every twelve hours.</p>"
        "</body></html>",
    ),
    "/ciabatta": (
        "text/html; charset=utf-8",
        "<html><head><title>Ciabatta at home</title></head><body><h1>Ciabatta</h1>"
        "<p>A wet dough of eighty percent hydration makes the open crumb.</p></body></html>",
    ),
    "/tides.txt": ("text/plain; charset=utf-8", "Spring tides follow the full and new moon.\n"),
}


class BookmarkedSite(QuietHandler):
    """The pages the bookmarks point at; anything else is a 404."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib's name
        found = PAGES.get(self.path)
        if found is None:
            self.send(404, "<html><body>Not here</body></html>")
            return
        content_type, body = found
        self.send(200, body, content_type)


def site() -> Loopback:
    return Loopback(BookmarkedSite)


def chrome_bookmarks(base: str) -> str:
    """What Chrome's "Export bookmarks" writes (Firefox and Safari write the same shape): the
    toolbar folder, nested folders, tags and a description as Firefox keeps them, a dead link,
    a link to a private address, one to a host that no longer exists (`.invalid` never
    resolves), a bookmarklet and a Firefox smart folder."""
    return f"""<!DOCTYPE NETSCAPE-Bookmark-file-1>
<!-- This is an automatically generated file.
     It will be read and overwritten.
     DO NOT EDIT! -->
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
<TITLE>Bookmarks</TITLE>
<H1>Bookmarks</H1>
<DL><p>
    <DT><H3 ADD_DATE="1700000000" LAST_MODIFIED="1700000500" PERSONAL_TOOLBAR_FOLDER="true">Bookmarks bar</H3>
    <DL><p>
        <DT><H3 ADD_DATE="1700000000" LAST_MODIFIED="1700000000">Baking</H3>
        <DL><p>
            <DT><A HREF="{base}/sourdough" ADD_DATE="1680307200" TAGS="bread,fermentation">Sourdough &amp; starters</A>
            <DD>The starter schedule that finally worked
            <DT><H3 ADD_DATE="1700000000">Italian</H3>
            <DL><p>
                <DT><A HREF="{base}/ciabatta" ADD_DATE="1680393600">Ciabatta</A>
            </DL><p>
        </DL><p>
        <DT><A HREF="{base}/gone" ADD_DATE="1680480000">A page that is gone</A>
        <DT><A HREF="javascript:alert(document.title)" ADD_DATE="1680480000">Show title</A>
    </DL><p>
    <DT><H3 ADD_DATE="1700000000">Sea</H3>
    <DL><p>
        <DT><A HREF="{base}/tides.txt" ADD_DATE="1680566400">Tide notes</A>
        <DT><A HREF="http://10.11.12.13/router" ADD_DATE="1680566400">Router admin</A>
        <DT><A HREF="http://old-blog.invalid/tides" ADD_DATE="1680566400">Old tide blog</A>
        <DT><A HREF="place:sort=8&amp;maxResults=10" ADD_DATE="1680566400">Recent tags</A>
        <DT><A HREF="{base}/sourdough#feeding">Starter again</A>
    </DL><p>
</DL><p>
"""


def pocket_export(base: str) -> str:
    """What Pocket's export (getpocket.com/export) wrote: sections as headings over lists."""
    return f"""<!DOCTYPE html>
<html>
<head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8"><title>Pocket Export</title></head>
<body>
<h1>Unread</h1>
<ul>
<li><a href="{base}/ciabatta" time_added="1690000000" tags="baking">Ciabatta at home</a></li>
</ul>
<h1>Read Archive</h1>
<ul>
<li><a href="{base}/tides.txt" time_added="1690000100" tags="">Tides</a></li>
</ul>
</body>
</html>
"""


def write(folder: Path, text: str, name: str = "bookmarks.html") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path
