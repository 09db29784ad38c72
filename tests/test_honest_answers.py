"""An answer says what is true: nothing on boilers in a brain means a refusal with the nearest
passages offered as not an answer, with a chat model as without one; "how much" is answered by
the amount, "what shortcut" by the key; settings and code are never quoted; a refusal names the
question's words the brain never mentions."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from loci.answer.answer_type import holds, wanted
from loci.answer.events import Done, Graded, final_answer
from loci.answer.grading import coverage
from loci.answer.quoting import unknown_words
from loci.llm.client import ChatSettings, OpenAICompatibleChat
from loci.models import Brain
from loci.service import Loci
from tests.support.scripted_llm import Reply, ScriptedLLM, step_of

HOUSEHOLD = {
    "configuration.yaml": "homeassistant:\n  name: Home\n  unit_system: metric\nsensor:\n"
    "  - platform: template\n    sensors:\n      living_room_temperature:\n"
    "        value_template: '{{ states.sensor.t.state }}'\n",
    "car-invoice.txt": "Invoice 2291 from Kwik Garage. Full service of the Golf, oil and filters "
    "replaced, brake fluid topped up. Labour 2 hours. Total 310.50 GBP, paid by card on 2 April "
    "2026.",
    "tarte.md": "# Tarte aux pommes\n\nÉplucher les pommes, les couper en lamelles et les disposer "
    "sur la pâte. Cuire 35 minutes à 180 degrés.",
}


@pytest.fixture
def household(loci: Loci, brain: Brain) -> Brain:
    ids = [loci.library.add_bytes(brain, n, t.encode()).document.id for n, t in HOUSEHOLD.items()]
    loci.library.wait_for(brain, ids)
    return brain


def _note(loci: Loci, brain: Brain, text: str) -> None:
    loci.library.wait_for(brain, [loci.library.add_note(brain, text).document.id])


def _ask(loci: Loci, brain: Brain, question: str) -> tuple[Done, Graded]:
    events = list(loci.answers.ask(brain, question))
    graded = next(e for e in events if isinstance(e, Graded))
    return final_answer(iter(events)), graded


def test_a_brain_with_nothing_on_the_question_refuses_and_names_the_nearest(
    loci: Loci, household: Brain
) -> None:
    done, graded = _ask(loci, household, "Who services the boiler?")
    assert graded.relevant == 0 and done.decision == "no_relevant_sources"
    assert done.answer.startswith("I couldn't find anything in this brain that answers that.")
    assert "From your documents" not in done.answer and done.citations == ()
    # the nearest passages are shown for what they are, uncited
    assert "The closest passages, which do not answer it:" in done.answer
    assert "car-invoice.txt" in done.answer and "[1]" not in done.answer


def test_how_much_is_answered_by_the_amount(loci: Loci, household: Brain) -> None:
    done, _ = _ask(loci, household, "How much did the car service cost?")
    assert "Total 310.50 GBP" in done.answer
    assert [c.name for c in done.citations] == ["car-invoice.txt"]


def test_settings_are_never_quoted(loci: Loci, household: Brain) -> None:
    done, _ = _ask(loci, household, "What temperature sensor do I have?")
    quoted = [line for line in done.answer.splitlines() if re.search(r"\[\d+\]$", line)]
    assert not any("value_template" in line or "homeassistant:" in line for line in quoted)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How much did the car service cost?", "amount"),
        ("How many radiators are there?", "amount"),
        ("When is my next dentist appointment?", "when"),
        ("Who services the boiler?", "name"),
        ("What is the booking code?", None),
        ("Which release of the Contributor Covenant is the policy based on?", "amount"),
        ("In what year was federation removed?", "when"),
        # "when" that only sets the scene does not ask for a date
        ("What does lint report when it finds broken links?", None),
        ("Which VS Code extension do I need to export a PDF?", "name"),
        ("What is the most popular spelling extension?", "name"),
        ("What key do I press to rename a block?", "key"),
        ("Which setting do I turn off so links stop updating?", "typed"),
        ("Wann ist mein nächster Zahnarzttermin?", "when"),
        ("Wie viel hat die Reparatur gekostet?", "amount"),
        ("Welcher Befehl setzt eine Umgebungsvariable?", "typed"),
        ("いつリリースされましたか？", "when"),
        ("環境変数を設定するコマンドは？", "typed"),
        ("这个需要多少内存？", "amount"),
        ("谁负责维修锅炉？", "name"),
    ],
)
def test_the_kind_of_answer_a_question_wants(question: str, kind: str | None) -> None:
    assert wanted(question) == kind


def test_a_sentence_holds_the_kind_asked_for() -> None:
    assert holds("Total 310.50 GBP, paid by card.", "amount")
    assert not holds("Full service of the Golf, oil replaced.", "amount")
    assert holds("Next check-up on 3 Feb. 2027 at 10.30 a.m.", "when")
    assert holds("The boiler is serviced by Marsh Heating.", "name")
    assert not holds("The boiler is old and loud.", "name")
    assert holds("Place the cursor on the anchor and press `F2`.", "key")
    assert holds("Paste it with cmd+alt+v.", "key")
    assert not holds("Paste it from the clipboard.", "key")
    assert holds('Run the "Editor: Toggle Vim Mode" command.', "typed")
    assert holds("Start it with --allow-writes to let it edit.", "typed")
    assert holds("2024年3月にリリースされました。", "when")
    assert holds("Die Version erschien im März.", "when")


def test_what_a_sentence_holds_must_be_new_to_the_question() -> None:
    question = "Which service receives the usage events that Foam sends?"
    assert not holds("Foam collects anonymous usage data.", "name", question)
    assert holds("All events go to Azure Application Insights.", "name", question)
    assert not holds("Version 2 of the app is out.", "amount", "What changed in version 2?")


class _Grader:
    """A scripted chat model that finds nothing relevant, as a careful grader would in a
    brain with nothing about boilers; it would happily answer if asked to."""

    def __init__(self) -> None:
        self.steps: list[str] = []

    def reply(self, request: dict[str, Any]) -> Reply:
        step = step_of(request)
        self.steps.append(step)
        if step == "grade":
            user = request["messages"][-1]["content"]
            numbers = [int(n) for n in re.findall(r'number="(\d+)"', user)]
            grades = [{"source": n, "relevance": "irrelevant", "score": 0.05,
                       "reasoning": "about something else"} for n in numbers]  # fmt: skip
            return Reply(json.dumps({"grades": grades}))
        if step == "route":
            return Reply(json.dumps({"intent": "simple_lookup", "confidence": 0.9}))
        if step == "expand":
            return Reply(json.dumps({"queries": ["boiler maintenance company"]}))
        return Reply("Kwik Garage services it [1].")


def test_with_a_model_nothing_relevant_is_an_honest_refusal(loci: Loci, household: Brain) -> None:
    grader = _Grader()
    llm = ScriptedLLM(responder=grader.reply).start()
    try:
        chat = OpenAICompatibleChat(
            ChatSettings(base_url=llm.base_url, model="scripted", timeout_s=5.0,
                         backoff_base_s=0.01)
        )  # fmt: skip
        events = list(loci.answers.ask(household, "Who services the boiler?", chat=chat))
    finally:
        llm.stop()
    graded = next(e for e in events if isinstance(e, Graded))
    done = final_answer(iter(events))
    assert graded.by == "model" and graded.relevant == 0
    assert done.decision == "no_relevant_sources" and done.citations == ()
    assert done.answer.startswith("I couldn't find anything in this brain that answers that.")
    assert "The closest passages, which do not answer it:" in done.answer
    assert "car-invoice.txt" in done.answer and "Kwik Garage services it" not in done.answer
    assert "answer" not in grader.steps  # the model is never asked to answer from nothing


def test_a_note_whose_vectors_are_pending_is_answered_from_its_words(
    loci: Loci, brain: Brain
) -> None:
    """Between its text stage and its vectors a note is found by its words alone; "fire" in
    the question is the "fires" of the note, and the answer quotes it rather than refuse."""
    added = loci.library.add_note(brain, "# Kiln\n\nThe kiln fires at 1240 degrees.")
    [doc] = loci.library.wait_for(brain, [added.document.id], until="searchable")
    assert doc.vectors_pending
    done, graded = _ask(loci, brain, "How hot does the kiln fire?")
    assert graded.relevant == 1 and done.decision == "sufficient"
    assert "The kiln fires at 1240 degrees. [1]" in done.answer


TOOL_DOCS = {
    "telemetry.md": "# Telemetry\n\nFoam collects anonymous usage data to understand how Foam is "
    "used and which features matter. Aggregated usage data may be shared with the Foam "
    "community. All events are sent to a single Azure Application Insights resource.",
    "daily-notes.md": "# Daily notes\n\nOpen a daily note in one of these ways:\n\n```bash\n"
    "# open the daily note of another day\nfoam daily --date 2024-01-10 --path-only\n```\n\n"
    "Press `Alt+D` for today's daily note, or `Alt+H` to open the daily note of another day.",
}


@pytest.mark.parametrize(
    ("question", "first_line"),
    [
        ("What shortcut opens the daily note of another day?", "`Alt+H`"),
        ("How do I open the daily note of another day?", "`Alt+H`"),
    ],
)
def test_the_answer_leads_with_the_sentence_that_holds_what_was_asked(
    loci: Loci, brain: Brain, question: str, first_line: str
) -> None:
    ids = [loci.library.add_bytes(brain, n, t.encode()).document.id for n, t in TOOL_DOCS.items()]
    loci.library.wait_for(brain, ids)
    answer = final_answer(loci.answers.ask(brain, question)).answer
    lines = [line for line in answer.splitlines() if line.startswith("- ")]
    assert first_line in lines[0], answer
    # code is cited, never quoted; a lead-in ("… these ways:") is not the answer
    assert "--path-only" not in answer and not lines[0].rstrip(" []0123456789").endswith(":")


def test_a_refusal_names_what_the_brain_never_mentions(loci: Loci, brain: Brain) -> None:
    notes = {
        "sync.md": "# Syncing\n\nYour notes sync between devices through a git repository. Push "
        "and pull from the editor, or let the extension sync your notes every ten minutes.",
        "import.md": "# Importing\n\nNotes from another app are imported as Markdown files: copy "
        "them into the workspace folder and the extension indexes them.",
    }
    ids = [loci.library.add_bytes(brain, n, t.encode()).document.id for n, t in notes.items()]
    loci.library.wait_for(brain, ids)
    done, graded = _ask(loci, brain, "What is my passport number?")
    assert done.decision == "no_relevant_sources" and done.citations == ()
    assert graded.relevant == 0
    assert "Nothing in this brain mentions passport" in done.answer
    # A question the notes answer is answered from the note on syncing.
    done, _ = _ask(loci, brain, "How often does the extension sync my notes?")
    assert done.decision == "sufficient"
    assert [c.name for c in done.citations][0] == "sync.md"
    assert "every ten minutes" in done.answer


def test_the_words_a_refusal_names_are_the_questions_own() -> None:
    in_the_brain = {"foam", "notes"}
    found = unknown_words(
        "Can my Foam notes sync with Notion?", mentions=lambda word: word in in_the_brain
    )
    assert found == ["sync", "Notion"]  # as the question spells them; "Can": a stopword
    # In a Chinese question, its words in Latin letters; never a pair of characters
    assert unknown_words("能否通过 termux 安装？", mentions=lambda word: False) == ["termux"]


def test_a_chinese_question_is_read_by_its_characters_not_its_pairs() -> None:
    # Half the character pairs of a Chinese question straddle two words ("个命" in "哪个命令"):
    # no passage holds them, and counting pairs found a third of this question in the passage
    # that answers it. Its asking characters (哪个, 可以, 的) are not what it is about.
    passage = (
        "处理表格 我们首先按大小对表进行排序，然后用 first 5 返回表的前 5 行。"
        "你也可以用 skip 跳过不需要的行，比如跳过上面所得 5 行中的前两行。"
    )
    assert coverage("用哪个命令可以跳过表格开头不需要的几行？", passage) >= 0.5


def test_a_chinese_question_naming_what_the_brain_never_mentions_is_refused(
    loci: Loci, brain: Brain
) -> None:
    note = (
        "# 安装\n\n在 Linux 和 macOS 上可以用包管理器安装 Nushell。"
        "在 Windows 上可以用 winget install nushell 命令来安装。"
    )
    _note(loci, brain, note)
    # Any word in Latin letters names something here, capitalised or not.
    done, _ = _ask(loci, brain, "能否通过 termux 在手机上安装 Nushell？")
    assert done.decision == "no_relevant_sources", done.answer
    assert "Nothing in this brain mentions termux." in done.answer
    # the same brain answers what it holds
    done, _ = _ask(loci, brain, "在 Windows 上用什么命令安装 Nushell？")
    assert done.decision == "sufficient" and "winget install nushell" in done.answer
