"""Recordings to feed Loci: a real WAV file of silence and the script the scripted speech-to-text
service says it heard (a household meeting where the plumber is mentioned once), and a
service that transcribes with it."""

from __future__ import annotations

import io
import wave
from pathlib import Path

from loci.embed.base import Embedder
from loci.service import Loci
from tests.support.scripted_stt import ScriptedSTT
from tests.support.services import make_service

SECONDS = 120

TOPICS = [
    "the garden shed roof needs new felt before the autumn rain arrives",
    "our daughter's school trip to the coast is on the third of October",
    "the car insurance renewal came in higher than last year by a wide margin",
    "grandmother would like the recipe for the lemon cake written down properly",
    "the plumber quoted eleven hundred euros to replace the boiler heat exchanger",
    "we agreed to check the attic insulation before buying any new radiators",
    "the neighbours offered to lend us their ladder for the gutter cleaning",
    "next month the library book club reads a novel about lighthouse keepers",
]

KEY = 4  # the line about the plumber


def script() -> list[tuple[float, float, str]]:
    """Twenty-four lines of five seconds each, cycling through the topics with more words so
    a meeting fills several passages; the plumber is said only once."""
    lines = []
    for i in range(SECONDS // 5):
        topic = TOPICS[i % len(TOPICS)] if i != KEY + 8 else "and then we talked it over"
        if i % len(TOPICS) == KEY and i != KEY:
            topic = "we spoke again about money matters for the house this winter"
        lines.append((i * 5.0, i * 5.0 + 4.6, f"Item {i + 1}: {topic}, so everyone agreed."))
    return lines


def wav(seconds: float = SECONDS, rate: int = 8000) -> bytes:
    """A real WAV file of silence (8 kHz, 8-bit mono): what the header says is what it holds."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        out.writeframes(b"\x80" * int(seconds * rate))
    return buffer.getvalue()


def service_with(
    tmp_path: Path, embedder: Embedder, stt: ScriptedSTT | None, **settings: object
) -> Loci:
    configured = {"stt_base_url": stt.base_url, "stt_api_key": "sk-test"} if stt else {}
    return make_service(
        tmp_path / "home",
        embedder,
        settings.pop("database_url", None),  # type: ignore[arg-type]
        job_retry_base_s=0.01,
        job_max_attempts=1,
        **configured,
        **settings,
    )
