"""Reading feeds as they are published: Atom (text, escaped HTML and XHTML content, the
alternate link), RSS 1.0, entries without an id known by their link, an entry listed twice kept
once, an edited entry's version changing; and XML that plays tricks — entities defined to
expand a billion times, an external entity naming a local file — is never expanded nor read."""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.errors import LociError, ParseError, UnsupportedSource
from loci.upstream.feed import looks_like_feed, parse_feed

ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Orchard</title>
  <entry>
    <id>tag:orchard.example,2026:pruning</id>
    <title>Pruning</title>
    <link rel="edit" href="https://orchard.example/edit/1"/>
    <link rel="alternate" href="https://orchard.example/pruning"/>
    <updated>2026-11-01T08:00:00Z</updated>
    <content type="html">&lt;p&gt;Prune apples in &lt;b&gt;winter&lt;/b&gt;.&lt;/p&gt;</content>
  </entry>
  <entry>
    <id>tag:orchard.example,2026:grafting</id>
    <title type="text">Grafting</title>
    <published>2026-10-01T08:00:00Z</published>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Whip and tongue.</p>
    </div></content>
  </entry>
  <entry>
    <id>tag:orchard.example,2026:pruning</id>
    <title>Pruning, listed twice</title>
  </entry>
  <entry><title>Plain</title><summary>Less than 3 &lt; 4, as text.</summary>
    <link href="https://orchard.example/plain"/></entry>
</feed>"""

RSS1 = b"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
  <channel rdf:about="https://bees.example/"><title>Bees</title></channel>
  <item rdf:about="https://bees.example/swarm"><title>Swarm</title>
    <link>https://bees.example/swarm</link><description>Catch it in a box.</description></item>
</rdf:RDF>"""


def test_atom_entries_their_links_content_and_ids() -> None:
    feed = parse_feed(ATOM, "application/atom+xml", "https://orchard.example/feed")
    assert feed.title == "Orchard"
    pruning, grafting, plain = feed.entries  # the second "pruning" is the same entry: kept once
    assert pruning.link == "https://orchard.example/pruning"  # the alternate, not the edit link
    assert pruning.content == "<p>Prune apples in <b>winter</b>.</p>"
    assert pruning.updated == "2026-11-01T08:00:00Z"
    assert grafting.content is not None and "Whip and tongue." in grafting.content
    assert grafting.updated == "2026-10-01T08:00:00Z" and grafting.link is None
    assert plain.key == "https://orchard.example/plain"  # no id: known by its link
    assert plain.summary == "<p>Less than 3 &lt; 4, as text.</p>"  # text, escaped as HTML


def test_an_edited_entry_has_a_new_version() -> None:
    before = parse_feed(ATOM, "application/atom+xml", "u").entries[0]
    edited = parse_feed(ATOM.replace(b"winter", b"late winter"), "application/atom+xml", "u")
    assert edited.entries[0].key == before.key and edited.entries[0].version != before.version


def test_rss_1_0() -> None:
    feed = parse_feed(RSS1, "application/rdf+xml", "https://bees.example/rss")
    (swarm,) = feed.entries
    assert (feed.title, swarm.key, swarm.title) == ("Bees", "https://bees.example/swarm", "Swarm")
    assert swarm.summary == "Catch it in a box."
    assert looks_like_feed("application/xml", RSS1)


def test_what_is_not_a_feed_says_so() -> None:
    with pytest.raises(UnsupportedSource, match="HTML page, not a feed"):
        parse_feed(b"<!doctype html><html><body>Parked</body></html>", "text/html", "u")
    with pytest.raises(ParseError, match="not RSS or Atom"):
        parse_feed(b"<?xml version='1.0'?><svg/>", "application/xml", "u")
    with pytest.raises(ParseError, match="not a JSON Feed"):
        parse_feed(b'{"items": []}', "application/json", "u")
    assert not looks_like_feed("text/html", b"<!doctype html><html></html>")


def test_entities_are_never_expanded_nor_files_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the safe code is 4512")
    levels = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    laughs = (
        f'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY l0 "ha">{levels}]>'
        "<rss><channel><item><guid>1</guid><title>&l9;</title></item></channel></rss>"
    )
    external = (
        f'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY e SYSTEM "file://{secret}">]>'
        "<rss><channel><item><guid>1</guid><title>&e;</title></item></channel></rss>"
    )
    for hostile in (laughs, external):
        try:
            feed = parse_feed(hostile.encode(), "application/rss+xml", "u")
        except LociError:
            continue  # refused whole: as good
        for entry in feed.entries:
            said = f"{entry.title} {entry.content} {entry.summary}"
            assert "4512" not in said and "hahaha" not in said
