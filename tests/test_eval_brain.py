"""`loci eval --questions` on a brain of your own, and `--from-feedback` turning thumbs-down
answers into questions to re-run."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from loci.eval.metrics import wilson_interval
from loci.models import Brain
from loci.service import Loci
from tests.support.cli import run_cli

DOCS = {
    "garage.md": "# Garage\n\nThe garage door code is 4471.\n",
    "ferry.md": "# Ferry\n\nThe morning ferry to the island leaves at 7:15 from pier 3.\n",
}


def wilson(passed: int, n: int) -> tuple[float, float]:
    """The Wilson score interval, written out from its formula (z for 95 %)."""
    z = 1.959963984540054
    p = passed / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = (z / (1 + z * z / n)) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_wilson_interval_matches_published_values() -> None:
    # Newcombe (1998), Table I: 0/10 → 0 to 0.2775, 1/29 → 0.0061 to 0.1718
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(1, 29) == pytest.approx((0.0061, 0.1718), abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def _fill(loci: Loci, brain: Brain) -> dict[str, int]:
    ids = {
        name: loci.library.add_bytes(brain, name, text.encode()).document.id
        for name, text in DOCS.items()
    }
    loci.library.wait_for(brain, list(ids.values()))
    return ids


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def test_eval_judges_each_question_and_reports_the_band(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    ids = _fill(loci, brain)
    home = tmp_path / "home"
    questions = _write(
        tmp_path / "q.jsonl",
        [
            {"question": "What is the garage door code?",
             "expect": {"document": "garage.md", "text": "4471"}},
            {"question": "When does the morning ferry leave?", "expect": {"document": "Ferry"}},
            {"question": "Where does the ferry leave from?", "expect": {"text": "pier 9"}},
            "",  # blank lines are allowed
            {"question": "What is the wifi password?", "expect": {"document": "wifi.md"}},
            {"question": "Anything about boats?", "note": "no expectation: run, not judged"},
            {"question": "garage door code", "expect": {"document": ids["garage.md"]}},
        ],
    )  # fmt: skip
    done = run_cli("eval", "--questions", str(questions), "-k", "3", "--json", home=home)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    verdicts = {r["line"]: r["verdict"] for r in report["results"]}
    assert verdicts == {1: "pass", 2: "pass", 3: "fail", 5: "fail", 6: "unjudged", 7: "pass"}
    assert (report["brain"], report["k"], report["questions"]) == ("default", 3, 6)
    assert (report["judged"], report["passed"], report["failed"], report["unjudged"]) == (
        5,
        3,
        2,
        1,
    )
    assert report["pass_rate"] == pytest.approx(3 / 5)
    low, high = wilson(3, 5)
    assert (report["confidence"]["low"], report["confidence"]["high"]) == pytest.approx((low, high))
    assert report["confidence"]["level"] == 0.95
    # Recall@k and MRR over the four that name a document: the three found rank first.
    by_line = {r["line"]: r for r in report["results"]}
    assert [by_line[n]["rank"] for n in (1, 2, 5, 7)] == [1, 1, None, 1]
    assert report["with_document"] == 4
    assert report["recall_at_k"] == pytest.approx(3 / 4) and report["mrr"] == pytest.approx(3 / 4)
    assert by_line[5]["missing"] == ["wifi.md"]
    assert by_line[3]["text_found"] is False and by_line[3]["document_found"] is None
    assert by_line[1]["top"][0] == "garage.md" and len(by_line[1]["top"]) <= 3
    assert 0 < report["p50_ms"] <= report["p95_ms"]

    shown = run_cli("eval", "--questions", str(questions), "-k", "3", home=home)
    assert shown.returncode == 0, shown.stderr  # failing questions are a result, not an error
    assert f"passed 3 of 5: 60.0% (95% Wilson band {low:.1%} – {high:.1%})" in shown.stdout
    assert "not in this brain: wifi.md" in shown.stdout


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"question": "ok?"', "not JSON"),
        ('["a list"]', "expected an object"),
        ('{"question": "  "}', '"question" must be non-empty'),
        ('{"question": "q", "expect": {"documnet": "garage.md"}}', "unknown key 'documnet'"),
        ('{"question": "q", "expect": {"document": []}}', "empty list"),
        ('{"question": "q", "expect": {"text": 7}}', '"expect.text"'),
        ('{"question": "q", "expect": "garage.md"}', '"expect" must be an object'),
    ],
)
def test_a_bad_line_is_named(tmp_path: Path, line: str, says: str) -> None:
    good = json.dumps({"question": "What is the garage door code?"})
    questions = _write(tmp_path / "mine.jsonl", [good, "", line])
    done = run_cli("eval", "--questions", str(questions), home=tmp_path / "home")
    assert done.returncode == 1
    assert "mine.jsonl line 3:" in done.stderr and says in done.stderr
    assert done.stdout == ""


def test_eval_needs_exactly_one_source(tmp_path: Path) -> None:
    done = run_cli("eval", "--from-feedback", "--questions", "x.jsonl", home=tmp_path)
    assert done.returncode == 1 and "give one of" in done.stderr


def test_thumbs_down_answers_become_questions_to_rerun(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    _fill(loci, brain)
    asked = {}
    for question in ("What is the garage door code?", "When does the ferry leave?", "Pier?"):
        done = list(loci.answers.converse(brain, question))[-1].data
        asked[question] = (done["conversation_id"], done["message_id"])
    loci.answers.rate_answer(
        brain, *asked["What is the garage door code?"], "down", "it is 4471 now"
    )
    loci.answers.rate_answer(brain, *asked["When does the ferry leave?"], "up")
    loci.answers.rate_answer(brain, *asked["Pier?"], "down")
    home = tmp_path / "home"

    built = run_cli("eval", "--from-feedback", home=home)
    assert built.returncode == 0, built.stderr
    lines = [json.loads(line) for line in built.stdout.splitlines()]
    assert [(x["question"], x["reason"], x["expect"]) for x in lines] == [
        ("What is the garage door code?", "it is 4471 now", {}),
        ("Pier?", None, {}),
    ]
    first = lines[0]["from"]
    assert (first["conversation_id"], first["message_id"]) == asked["What is the garage door code?"]
    assert first["cited"] and first["cited"][0] in DOCS

    # As printed, the file runs (nothing judged yet); with an expectation filled in, it judges.
    lines[0]["expect"] = {"document": "garage.md", "text": "4471"}
    questions = _write(tmp_path / "feedback.jsonl", [built.stdout.splitlines()[1], lines[0]])
    again = run_cli("eval", "--questions", str(questions), "--json", home=home)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert [(r["question"], r["verdict"]) for r in report["results"]] == [
        ("Pier?", "unjudged"),
        ("What is the garage door code?", "pass"),
    ]
    assert (report["judged"], report["passed"]) == (1, 1)
