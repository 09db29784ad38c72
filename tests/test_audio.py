"""Recordings: voice memos and meetings are kept, transcribed by the configured speech-to-text
service, and found by what was said, cited by when it was said ("1:05–1:32").

The recordings are real WAV files the test writes with the stdlib `wave` module; the service is
tests/support/scripted_stt.py, a loopback server speaking OpenAI's `/audio/transcriptions` protocol
(multipart form in, verbose_json out) whose "speech" is the test's script. Everything else is
the real service: add → worker → transcribe → chunk → embed → search, on SQLite and (where it
touches the chunk columns) PostgreSQL.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.embed.base import Embedder
from loci.errors import ParseError, TranscriptionRefused
from loci.ingest.parsers import ParseBudgets, parse, supported_extensions
from loci.ingest.parsers.audio import mp3_frame, sniff_audio
from loci.models import Hit, time_span_text
from loci.search.engine import SearchRequest
from loci.service import Loci
from tests.support.audio_files import KEY, SECONDS, script, service_with, wav
from tests.support.cli import run_cli
from tests.support.scripted_stt import Failure, ScriptedSTT


@pytest.fixture
def stt() -> Iterator[ScriptedSTT]:
    with ScriptedSTT(lines=script()) as service:
        yield service


def hit_for(loci: Loci, query: str, name: str) -> Hit:
    hits = loci.searching.search(loci.brain(), SearchRequest(query, limit=10))
    return next(h for h in hits if h.citation.name == name)


# --- sniffing -------------------------------------------------------------------------------


def test_each_format_is_known_by_its_header() -> None:
    headers = {
        "wav": wav(0.1),
        "mp3": b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x64" + b"\x00" * 64,
        "ogg": b"OggS\x00\x02" + b"\x00" * 64,  # Vorbis and Opus both live in Ogg pages
        "flac": b"fLaC\x00\x00\x00\x22" + b"\x00" * 64,
        "webm": b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01" + b"\x00" * 64,
        "m4a": b"\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00" + b"\x00" * 64,
    }
    for expected, data in headers.items():
        assert sniff_audio(data) == expected
    assert {".wav", ".mp3", ".m4a", ".mp4", ".ogg", ".opus", ".webm", ".flac"} <= set(
        supported_extensions()
    )
    # Not audio: a HEIC photo is ISO media too, and a UTF-16 text starts with frame-sync bits.
    assert sniff_audio(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic") is None
    utf16 = "a few notes about the meeting".encode("utf-16")
    assert sniff_audio(utf16) is None
    assert parse(utf16, "notes.txt", ParseBudgets()).text.startswith("a few notes")
    # A bare MPEG frame (no ID3 tag) is an MP3 only when the name says so: frame sync alone
    # matches that UTF-16 text's first bytes too.
    frame = b"\xff\xfb\x90\x64" + b"\x00" * 64
    assert mp3_frame(frame) and mp3_frame(utf16) and not mp3_frame(b"\xff\xfb\xf0\x00")
    with pytest.raises(TranscriptionRefused, match="no transcription service configured"):
        parse(frame, "song.mp3", ParseBudgets())  # taken as a recording


def test_junk_with_an_audio_name_is_refused_by_its_header() -> None:
    for name in ("memo.wav", "memo.mp3", "memo.m4a", "memo.ogg", "memo.flac", "memo.webm"):
        with pytest.raises(ParseError, match=r"not a .* recording: its first bytes"):
            parse(b"<html>this is an error page, not a recording</html>", name, ParseBudgets())


def test_a_recording_under_another_name_is_still_a_recording(
    tmp_path: Path, embedder: Embedder, stt: ScriptedSTT
) -> None:
    loci = service_with(tmp_path, embedder, stt)
    added = loci.library.add_bytes(loci.brain(), "memo.dat", wav())
    (done,) = loci.library.wait_for(loci.brain(), [added.document.id])
    assert done.status == "ready", done.status_reason
    assert stt.requests[0].filename == "audio.wav"  # the format, not the user's file name


# --- ingest, search, citations --------------------------------------------------------------


@pytest.mark.both_backends
def test_a_meeting_is_found_by_what_was_said_and_cited_by_when(
    tmp_path: Path, embedder: Embedder, stt: ScriptedSTT, database_url: str | None
) -> None:
    loci = service_with(tmp_path, embedder, stt, stt_language="en", database_url=database_url)
    recording = wav()
    added = loci.library.add_bytes(loci.brain(), "tuesday-meeting.wav", recording)
    (done,) = loci.library.wait_for(loci.brain(), [added.document.id])
    assert done.status == "ready", done.status_reason
    assert done.chunk_count > 1  # two minutes of talk is more than one passage

    (request,) = stt.requests
    assert request.fields == {
        "model": "whisper-1",
        "response_format": "verbose_json",
        "language": "en",
    }
    assert request.data == recording and request.filename == "audio.wav"
    assert request.authorization == "Bearer sk-test"
    audio = loci.store.get_document(loci.brain().id, done.id).metadata["extracted"]["audio"]
    assert audio["duration_s"] == SECONDS and audio["transcribed_by"] == "whisper-1"

    hit = hit_for(loci, "plumber quote boiler heat exchanger", "tuesday-meeting.wav")
    said = script()[KEY]
    c = hit.citation
    assert "plumber quoted eleven hundred euros" in hit.text
    assert c.location.time_start is not None and c.location.time_end is not None
    assert (
        c.location.time_start <= said[0] and c.location.time_end >= said[1]
    )  # the passage holds the line
    assert (
        c.location.time_end - c.location.time_start < SECONDS
    )  # and points into the recording, not at all of it
    assert c.location.page is None and c.location.line_start is None

    # Every passage's span is where its own lines were said.
    by_line = {text: (start, end) for start, end, text in script()}
    for chunk in loci.store.list_chunks(loci.brain().id, done.id):
        assert chunk.location.time_start is not None and chunk.location.time_end is not None
        inside = [span for text, span in by_line.items() if text in chunk.text]
        assert inside, chunk.text
        assert chunk.location.time_start <= min(s for s, _ in inside)
        assert chunk.location.time_end == max(e for _, e in inside)


def test_time_spans_read_as_clock_times() -> None:
    assert time_span_text(724.2, 757.9) == "12:04–12:37"
    assert time_span_text(7, 7.4) == "0:07"
    assert time_span_text(3729, 3750) == "1:02:09–1:02:30"


# --- failures -------------------------------------------------------------------------------


def test_a_rate_limit_is_waited_out_as_the_service_asks(
    tmp_path: Path, embedder: Embedder, stt: ScriptedSTT
) -> None:
    stt.failures = [Failure(429, retry_after="1", message="Rate limit reached for whisper-1")]
    loci = service_with(tmp_path, embedder, stt)
    added = loci.library.add_bytes(loci.brain(), "memo.wav", wav())
    (done,) = loci.library.wait_for(loci.brain(), [added.document.id])
    assert done.status == "ready", done.status_reason
    first, second = stt.requests
    assert second.at - first.at >= 1.0  # Retry-After: 1 was honoured
    assert second.data == first.data


def test_a_service_that_keeps_failing_fails_that_file_alone(
    tmp_path: Path, embedder: Embedder, stt: ScriptedSTT
) -> None:
    stt.always_fail = Failure(500, retry_after="0", message="the GPU fell over")
    loci = service_with(tmp_path, embedder, stt)
    brain = loci.brain()
    memo = loci.library.add_bytes(brain, "memo.wav", wav())
    notes = loci.library.add_bytes(brain, "notes.md", b"# Notes\n\nThe gutter needs clearing.\n")
    memo_done, notes_done = loci.library.wait_for(brain, [memo.document.id, notes.document.id])
    assert memo_done.status == "failed"
    assert memo_done.status_reason is not None
    assert "failed after 4 attempts" in memo_done.status_reason
    assert "HTTP 500" in memo_done.status_reason and "the GPU fell over" in memo_done.status_reason
    assert "sk-test" not in memo_done.status_reason
    assert len(stt.requests) == 4  # the first try and three retries
    assert notes_done.status == "ready"
    # The recording is kept: reprocessing once the service is back indexes it.
    stt.always_fail = None
    loci.library.reprocess(brain, memo.document.id)
    (again,) = loci.library.wait_for(brain, [memo.document.id])
    assert again.status == "ready", again.status_reason


def test_a_recording_over_the_service_limit_is_refused_before_upload(
    tmp_path: Path, embedder: Embedder, stt: ScriptedSTT
) -> None:
    loci = service_with(tmp_path, embedder, stt, stt_max_mb=0.5)
    added = loci.library.add_bytes(loci.brain(), "long-meeting.wav", wav())  # 0.9 MB
    (done,) = loci.library.wait_for(loci.brain(), [added.document.id])
    assert done.status == "failed"
    assert done.status_reason is not None
    assert "the recording is 0.9 MB" in done.status_reason
    assert "at most 0.5 MB a file (LOCI_STT_MAX_MB)" in done.status_reason
    assert stt.requests == []


def test_without_a_service_a_recording_is_kept_and_marked_failed(
    tmp_path: Path, embedder: Embedder
) -> None:
    loci = service_with(tmp_path, embedder, None)
    brain = loci.brain()
    memo = loci.library.add_bytes(brain, "memo.wav", wav(3))
    notes = loci.library.add_bytes(brain, "notes.md", b"# Notes\n\nBuy felt for the shed roof.\n")
    memo_done, notes_done = loci.library.wait_for(brain, [memo.document.id, notes.document.id])
    assert memo_done.status == "failed"
    assert memo_done.status_reason == "no transcription service configured (set LOCI_STT_BASE_URL)"
    assert loci.blobs.get(memo_done.content_hash) == wav(3)  # kept, to transcribe later
    assert notes_done.status == "ready"


def test_junk_named_like_a_recording_fails_without_reaching_the_service(
    tmp_path: Path, embedder: Embedder, stt: ScriptedSTT
) -> None:
    loci = service_with(tmp_path, embedder, stt)
    added = loci.library.add_bytes(loci.brain(), "memo.m4a", b"this is not audio at all" * 10)
    (done,) = loci.library.wait_for(loci.brain(), [added.document.id])
    assert done.status == "failed"
    assert done.status_reason == (
        "not a M4A recording: its first bytes are not an audio header"
        " (corrupt, or another kind of file)"
    )
    assert stt.requests == []


def test_a_model_without_timestamps_still_makes_the_words_searchable(
    tmp_path: Path, embedder: Embedder, stt: ScriptedSTT
) -> None:
    stt.verbose_json = False  # gpt-4o-transcribe answers only json or text
    loci = service_with(tmp_path, embedder, stt, stt_model="gpt-4o-transcribe")
    added = loci.library.add_bytes(loci.brain(), "memo.wav", wav())
    (done,) = loci.library.wait_for(loci.brain(), [added.document.id])
    assert done.status == "ready", done.status_reason
    assert done.status_reason == "the transcription service gave no timestamps for this recording"
    assert [r.fields["response_format"] for r in stt.requests] == ["verbose_json", "json"]
    hit = hit_for(loci, "plumber heat exchanger", "memo.wav")
    assert (hit.citation.location.time_start, hit.citation.location.time_end) == (0.0, SECONDS)


# --- preflight ------------------------------------------------------------------------------


def test_preflight_says_a_recording_needs_transcription_and_whether_it_is_configured(
    tmp_path: Path, embedder: Embedder, stt: ScriptedSTT
) -> None:
    memo = tmp_path / "memo.wav"
    memo.write_bytes(wav())
    configured = service_with(tmp_path / "a", embedder, stt)
    (item,) = configured.library.preflight(None, paths=[memo]).items
    assert item.outcome == "add" and item.parser == "audio"
    assert item.transcription == "whisper-1"
    assert not item.chunks_exact and item.chunks >= 1
    (warning,) = item.warnings
    assert warning.startswith("a recording (2.0 min): its words come from the transcription")

    small = service_with(tmp_path / "b", embedder, stt, stt_max_mb=0.5)
    (item,) = small.library.preflight(None, paths=[memo]).items
    assert item.outcome == "fail" and item.error is not None and "at most 0.5 MB" in item.error

    missing = service_with(tmp_path / "c", embedder, None)
    flight = missing.library.preflight(None, paths=[memo])
    assert flight.items[0].outcome == "fail"
    assert flight.errors == [f"{memo}: no transcription service configured (set LOCI_STT_BASE_URL)"]
    assert stt.requests == []  # a dry run never uploads a recording


# --- the command line -----------------------------------------------------------------------


def test_cli_adds_a_voice_memo_and_finds_it_by_when_it_was_said(
    tmp_path: Path, stt: ScriptedSTT
) -> None:
    home = tmp_path / "home"
    memo = tmp_path / "memo.wav"
    memo.write_bytes(wav())
    env = {"LOCI_STT_BASE_URL": stt.base_url, "LOCI_STT_API_KEY": "sk-cli"}

    dry = run_cli("add", "--dry-run", str(memo), home=home, env=env)
    assert dry.returncode == 0, dry.stderr
    assert "memo.wav (937.5 KB, audio) — ~2 chunks" in dry.stdout
    assert "speech to text by whisper-1" in dry.stdout
    assert "its words come from the transcription service (whisper-1)" in dry.stdout
    assert stt.requests == []

    added = run_cli("add", str(memo), home=home, env=env)
    assert added.returncode == 0, added.stdout + added.stderr
    assert stt.requests[0].authorization == "Bearer sk-cli"

    found = run_cli("search", "plumber heat exchanger", "--json", home=home, env=env)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    cited = next(h for h in hits if "plumber quoted" in h["text"])
    assert cited["name"] == "memo.wav"
    span = time_span_text(cited["time_start"], cited["time_end"])
    assert "–" in span
    shown = run_cli("search", "plumber heat exchanger", home=home, env=env)
    assert f"memo.wav · {span}" in shown.stdout

    unconfigured = run_cli("add", str(tmp_path / "memo.wav"), home=tmp_path / "other")
    assert unconfigured.returncode != 0
    assert "no transcription service configured (set LOCI_STT_BASE_URL)" in (
        unconfigured.stdout + unconfigured.stderr
    )


# --- the web app ----------------------------------------------------------------------------


def test_the_notes_view_records_a_voice_memo_that_is_transcribed(
    tmp_path: Path, embedder: Embedder, stt: ScriptedSTT
) -> None:
    """Chromium's fake microphone (a beeping tone) stands in for a person talking: Record, wait,
    Stop, and the memo is uploaded as a WebM/Ogg file that the server transcribes."""
    from playwright.sync_api import expect, sync_playwright

    from tests.support.browser import CHROMIUM_ARGS, require_chromium
    from tests.support.live_server import LiveServer

    stt.lines = [(0.0, 1.5, "Remember to call the plumber about the boiler.")]
    loci = service_with(tmp_path, embedder, stt)
    server = LiveServer(loci).start()
    fake_microphone = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"]
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(require_chromium()), args=[*CHROMIUM_ARGS, *fake_microphone]
            )
            context = browser.new_context()
            context.set_default_timeout(15_000)
            page = context.new_page()
            errors: list[str] = []
            # (The page's first session check is a 401 before signing in: not an error here.)
            page.on(
                "console",
                lambda m: (
                    errors.append(m.text)
                    if m.type == "error" and not m.text.startswith("Failed to load resource")
                    else None
                ),
            )
            page.goto(server.url + "/")
            page.fill("#signin-token", server.owner_token)
            page.click("#signin-form button[type=submit]")
            page.click("#first-brain-button")
            page.fill("#brain-name", "memos")
            page.click("#brain-form button[type=submit]")
            expect(page.locator("#brain-select")).to_have_value("memos")
            page.click(".tab[data-panel=notes]")
            record = page.locator("#record-button")
            expect(record).to_be_visible()
            record.click()
            expect(record).to_have_text("Stop")
            expect(page.locator("#record-status")).to_have_text("Recording…")
            page.wait_for_timeout(1500)
            record.click()
            expect(page.locator("#toasts")).to_contain_text("voice-memo-")
            expect(record).to_have_text("Record")
            browser.close()
        assert errors == []
        brain = loci.brain("memos")
        (memo,) = loci.store.list_documents(brain.id)
        assert memo.name.startswith("voice-memo-") and memo.name.endswith((".webm", ".ogg"))
        deadline = time.monotonic() + 30
        while loci.store.get_document(brain.id, memo.id).status == "processing":
            assert time.monotonic() < deadline, "the memo was never transcribed"
            time.sleep(0.2)
        done = loci.store.get_document(brain.id, memo.id)
        assert done.status == "ready", done.status_reason
        (request,) = stt.requests
        assert request.filename in ("audio.webm", "audio.ogg") and len(request.data) > 1000
        hits = loci.searching.search(brain, SearchRequest("call the plumber", limit=3))
        hit = next(h for h in hits if h.citation.name == memo.name)
        assert (hit.citation.location.time_start, hit.citation.location.time_end) == (0.0, 1.5)
    finally:
        server.stop()


def test_reindexing_reads_the_kept_transcript_instead_of_asking_again(
    tmp_path: Path, embedder: Embedder, stt: ScriptedSTT
) -> None:
    loci = service_with(tmp_path, embedder, stt)
    memo = loci.library.add_bytes(loci.brain(), "memo.wav", wav())
    loci.library.wait_for(loci.brain(), [memo.document.id])
    assert len(stt.requests) == 1
    loci.library.reindex(loci.brain())
    (again,) = loci.library.wait_for(loci.brain(), [memo.document.id])
    assert again.status == "ready" and len(stt.requests) == 1  # not sent a second time
    assert "plumber" in hit_for(loci, "plumber boiler heat exchanger", "memo.wav").text

    # A damaged entry is ignored and replaced; another model is another transcript.
    (kept,) = (tmp_path / "home" / "cache" / "transcripts").glob("*/*.json")
    kept.write_text("{not json")
    loci.library.reprocess(loci.brain(), memo.document.id)
    loci.library.wait_for(loci.brain(), [memo.document.id])
    assert len(stt.requests) == 2 and json.loads(kept.read_text())["model"] == "whisper-1"
    other = service_with(tmp_path, embedder, stt, stt_model="whisper-large-v3")
    other.library.reprocess(other.brain(), memo.document.id)
    other.library.wait_for(other.brain(), [memo.document.id])
    assert len(stt.requests) == 3 and stt.requests[-1].fields["model"] == "whisper-large-v3"
