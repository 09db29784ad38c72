"""Sentences as a reader sees them: an answer without a model quotes whole sentences, never
"Next check-up with Dr. [1]", and never quotes a block of settings or a table as a sentence."""

from __future__ import annotations

import pytest

from loci.answer.events import final_answer
from loci.answer.extractive import sentences
from loci.answer.units import units
from loci.models import Brain
from loci.sentences import script_language, split_sentences
from loci.service import Loci


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Next check-up with Dr. Patel on 3 Feb. 2027 at 10.30 a.m. in room No. 4."
            " Bring the card.",
            ["Next check-up with Dr. Patel on 3 Feb. 2027 at 10.30 a.m. in room No. 4.",
             "Bring the card."],
        ),
        (
            "Prof. K. Osei leads the study, e.g. the pilot. Version 2.5.1 fixed it! Did it?",
            ["Prof. K. Osei leads the study, e.g. the pilot.", "Version 2.5.1 fixed it!",
             "Did it?"],
        ),
        ("明日は晴れです。買い物に行きます！", ["明日は晴れです。", "買い物に行きます！"]),
        ("我们明天去北京。你来吗？", ["我们明天去北京。", "你来吗？"]),
        ("Завтра приедет д-р Иванов. Встреча в 10 ч.", ["Завтра приедет д-р Иванов.",
                                                        "Встреча в 10 ч."]),
    ],
)  # fmt: skip
def test_abbreviations_initials_decimals_and_other_scripts(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_the_script_picks_the_rules() -> None:
    assert script_language("The boiler needs 1.5 bar.") == "en"
    assert script_language("特定の見出しにリンクする") == "ja"
    assert script_language("链接到特定标题") == "zh"
    assert script_language("Привет, мир") == "ru"
    assert script_language("Café Zürich, Dr. Müller") == "en"


def test_a_wrapped_sentence_is_one_and_a_list_item_starts_another() -> None:
    text = (
        "The boiler is serviced every October by Marsh Heating,\n"
        "who also keep the spare parts for it.\n"
        "- Check the pressure gauge every month\n"
        "- Bleed the radiators before the winter starts"
    )
    assert sentences(text) == [
        "The boiler is serviced every October by Marsh Heating, who also keep the spare parts"
        " for it.",
        "Check the pressure gauge every month",
        "Bleed the radiators before the winter starts",
    ]


def test_settings_and_tables_are_not_sentences() -> None:
    yaml = "homeassistant:\n  name: Home\n  unit_system: metric\n  time_zone: Europe/London"
    csv = "date,item,amount\n2026-03-01,Service,120.00\n2026-04-02,Tyres,310.50"
    prose = "We paid the garage on Monday, after the MOT, for the tyres,\nthe service, and a wash."
    assert sentences(f"{yaml}\n\n{csv}\n\n{prose}") == [" ".join(prose.split())]
    # An answer may quote a row, read with its header; settings never.
    found = [(u.kind, u.text) for u in units(f"{yaml}\n\n{csv}\n\n{prose}")]
    assert found == [
        ("row", "date: 2026-03-01; item: Service; amount: 120.00"),
        ("row", "date: 2026-04-02; item: Tyres; amount: 310.50"),
        ("sentence", " ".join(prose.split())),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "Open today's note from the terminal.\n\n```bash\nfoam daily --date 2024-01-10\n"
            "# prints the path of the note\n```\n\nThe note is created when it does not exist.",
            ["Open today's note from the terminal.", "The note is created when it does not exist."],
            id="a fenced code block",
        ),
        # A passage that begins inside a block: its first fence, without a language, closes it.
        pytest.param(
            "--path-only prints the path and opens nothing\n```\n\nThe note is plain text.",
            ["The note is plain text."],
            id="a passage begun inside a block",
        ),
        # One that ends inside a block: the fence names its language, so it opens one.
        pytest.param(
            "Run it once a day from cron.\n\n```sh\nfoam daily --path-only and more",
            ["Run it once a day from cron."],
            id="a passage ended inside a block",
        ),
        pytest.param(
            "* **Keeps the server dumb.** File-level sync needs only list, read and write.\n\n"
            "| `limit` | Maximum number of entries to return (default: 100) |",
            ["Keeps the server dumb.", "File-level sync needs only list, read and write."],
            id="bold marks and a table row",
        ),
        pytest.param(
            "::: tip IMPORTANT TIP\nChanging the directory changes the PWD variable.\n:::",
            ["Changing the directory changes the PWD variable."],
            id="a container's fences",
        ),
    ],
)
def test_code_tables_and_markup_are_not_sentences(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_the_answer_without_a_model_quotes_the_whole_sentence(loci: Loci, brain: Brain) -> None:
    note = (
        "# Dentist\n\nNext check-up with Dr. Patel on 3 Feb. 2027 at 10.30 a.m. at the Elm Street "
        "practice. The booking code is DX-4471."
    )
    loci.library.wait_for(brain, [loci.library.add_note(brain, note, title="Dentist").document.id])
    answer = final_answer(loci.answers.ask(brain, "When is my next dentist appointment?")).answer
    assert (
        "Next check-up with Dr. Patel on 3 Feb. 2027 at 10.30 a.m. at the Elm Street practice."
        in (answer)
    )
    assert "Dr. [" not in answer


@pytest.mark.parametrize(
    ("note", "question", "quoted"),
    [
        (
            "# エイリアス\n\nエイリアスを使うと、長いパイプラインに短い名前を付けられます。"
            "aliasコマンドで定義します。設定ファイルに書けば次回も使えます。",
            "長いパイプラインに短い名前を付けるには？",
            "エイリアスを使うと、長いパイプラインに短い名前を付けられます。",
        ),
        (
            "# 别名\n\n别名可以为很长的管道起一个简短的名字。使用 alias 命令来定义别名。"
            "写进配置文件后，下次启动也能使用。",
            "怎样为很长的管道起一个简短的名字？",
            "别名可以为很长的管道起一个简短的名字。",
        ),
    ],
)
def test_an_answer_in_japanese_or_chinese_quotes_their_sentences(
    loci: Loci, brain: Brain, note: str, question: str, quoted: str
) -> None:
    loci.library.wait_for(brain, [loci.library.add_note(brain, note).document.id])
    done = final_answer(loci.answers.ask(brain, question))
    lines = [line for line in done.answer.splitlines() if line.startswith("- ")]
    assert any(quoted in line for line in lines), done.answer
    assert all(len(line) < 80 for line in lines)  # sentences, not the whole passage
