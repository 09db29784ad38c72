"""A note saved without a title reads as its first line, not as a slug, and keeps following that
line when it is edited; a list of notes carries each note's first lines for its card."""

from __future__ import annotations

from loci.ingest.sources import note_excerpt, note_title
from tests.support.live_server import LiveServer


def test_an_untitled_note_is_titled_by_its_first_line(server: LiveServer) -> None:
    text = (
        "# Call the plumber on Monday\n\nThe boiler loses pressure every night.\n"
        "- ask about the flue"
    )
    with server.client() as api:
        assert api.post("/brains", json={"name": "home"}).status_code == 201
        added = api.post("/brains/home/notes", json={"text": text}).json()["document"]
        assert added["title"] == "Call the plumber on Monday"
        assert added["name"] == "call-the-plumber-on-monday.md"  # the file name stays a slug
        server.wait_ready(api, "home", added["id"])
        (listed,) = api.get("/brains/home/notes").json()
        assert listed["title"] == "Call the plumber on Monday"
        assert listed["excerpt"] == "The boiler loses pressure every night. ask about the flue"

        # Edited without a title: the title follows the new first line.
        edited = api.put(
            f"/brains/home/notes/{added['id']}",
            json={
                "text": "Plumber booked for Tuesday\n\nBring the manual.",
                "expected_hash": added["content_hash"],
            },
        )
        assert edited.status_code == 200 and edited.json()["title"] == "Plumber booked for Tuesday"
        done = server.wait_ready(api, "home", added["id"])
        assert done["title"] == "Plumber booked for Tuesday"

        # A title given is kept, and the excerpt starts at the first line then.
        titled = api.post(
            "/brains/home/notes", json={"text": "Milk, eggs\nBread", "title": "Shopping"}
        )
        assert titled.json()["document"]["title"] == "Shopping"
        excerpts = {n["title"]: n["excerpt"] for n in api.get("/brains/home/notes").json()}
        assert excerpts["Shopping"] == "Milk, eggs Bread"


def test_titles_and_excerpts_read_as_text() -> None:
    assert note_title("\n\n> - [ ] *water* the `ferns`\n") == "water the ferns"
    assert note_title("   \n") is None
    long = "word " * 60
    title = note_title(long)
    assert title is not None and len(title) <= 121 and title.endswith("…")
    assert note_excerpt("Title line\n" + "more words " * 60, "Title line").endswith("…")
