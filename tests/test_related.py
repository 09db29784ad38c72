"""Related documents: what else the brain keeps about what one document is about."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.errors import InvalidInput, NotFound
from loci.models import Brain
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer

NOTES = {
    "Descaling the kettle": "Limescale builds up inside the kettle in hard-water areas; boil "
    "a mix of vinegar and water, leave it an hour, then rinse twice before making tea again.",
    "Hard water": "Our tap water is hard: limescale coats the shower head, the kettle element "
    "and the washing machine unless we use a descaler every month.",
    "Raised beds": "The raised beds need compost in March and a mulch of straw in June; the "
    "courgettes go in the sunniest bed.",
    "Tomato blight": "Blight spread through the greenhouse tomatoes in August; next year we "
    "water the soil, not the leaves, and space the plants wider.",
}


def fill(loci: Loci, brain: Brain) -> dict[str, int]:
    ids = {t: loci.library.add_note(brain, text, title=t).document.id for t, text in NOTES.items()}
    assert all(d.status == "ready" for d in loci.library.wait_for(brain, list(ids.values())))
    return ids


@pytest.mark.both_backends
def test_related_documents_share_the_subject(loci: Loci, brain: Brain) -> None:
    ids = fill(loci, brain)
    found = loci.searching.related(brain, ids["Descaling the kettle"], limit=3)
    titles = [r.document.title for r in found]
    assert titles[0] == "Hard water"  # about limescale too, in other words
    assert "Descaling the kettle" not in titles and len(titles) == 3
    assert found[0].score > found[-1].score
    assert "limescale" in found[0].passage.text
    garden = [r.document.title for r in loci.searching.related(brain, ids["Raised beds"], limit=1)]
    assert garden == ["Tomato blight"]


@pytest.mark.both_backends
def test_related_stays_in_its_brain_and_refuses_bad_input(loci: Loci, brain: Brain) -> None:
    ids = fill(loci, brain)
    other = loci.brain("other")
    elsewhere = loci.library.add_note(
        other, NOTES["Hard water"], title="Hard water (copy)"
    ).document.id
    loci.library.wait_for(other, [elsewhere])
    titles = {
        r.document.title for r in loci.searching.related(brain, ids["Descaling the kettle"], 20)
    }
    assert titles == set(NOTES) - {"Descaling the kettle"}  # never the other brain's copy
    with pytest.raises(NotFound):
        loci.searching.related(brain, elsewhere)
    for limit in (0, 21):
        with pytest.raises(InvalidInput, match="limit"):
            loci.searching.related(brain, ids["Raised beds"], limit)


def test_a_document_not_indexed_yet_has_no_relatives(loci: Loci, brain: Brain) -> None:
    fill(loci, brain)
    pending = loci.library.add_note(brain, "Kettle limescale again.", title="Draft").document
    assert pending.status == "processing"
    assert loci.searching.related(brain, pending.id) == []


def test_related_over_http_and_the_cli(server: LiveServer, loci: Loci, tmp_path: Path) -> None:
    brain = loci.brain("default")
    ids = fill(loci, brain)
    kettle = ids["Descaling the kettle"]
    with server.client() as api:
        answer = api.get(f"/brains/default/files/{kettle}/related", params={"limit": 2})
        assert answer.status_code == 200
        body = answer.json()
        assert [r["document"]["title"] for r in body][0] == "Hard water"
        assert len(body) == 2 and body[0]["passage"]["text"] and 0 < body[0]["score"] <= 1
        assert api.get(f"/brains/default/files/{kettle}/related?limit=21").status_code == 422
        assert api.get("/brains/default/files/999999/related").status_code == 404
    done = run_cli("related", str(kettle), "--json", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["related"][0]["document"]["title"] == "Hard water"
