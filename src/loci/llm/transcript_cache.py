"""Transcripts kept on disk, so a recording is sent to the speech service once per model.

Transcription is the one ingest step that costs money and minutes per call, and `loci reindex`,
`reprocess` or a retried job parse a recording again. A transcript depends only on the bytes, the
model and the language asked for, so it is cached under those. Like the saved search indexes it
is derived data: deleting the folder costs a new transcription, nothing else. Writes go to a
temporary name and are renamed into place; an unreadable entry is ignored and replaced.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict
from pathlib import Path

from loci.llm.transcribe import Segment, Transcriber, Transcript
from loci.private_files import write_json

log = logging.getLogger(__name__)

FORMAT = 1


class CachedTranscriber:
    """A `Transcriber` that asks `inner` only for recordings it has not transcribed before."""

    def __init__(self, inner: Transcriber, folder: Path, language: str | None = None) -> None:
        self.inner = inner
        self.folder = folder
        self.language = language  # part of the key: another language is another transcript

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def max_bytes(self) -> int:
        return self.inner.max_bytes

    def transcribe(self, data: bytes, audio_format: str) -> Transcript:
        path = self.path_for(data)
        cached = _read(path)
        if cached is not None:
            return cached
        transcript = self.inner.transcribe(data, audio_format)
        try:
            _write(path, transcript)
        except OSError:  # a full or read-only disk: the transcript still serves this time
            log.warning("could not keep the transcript in %s", path.parent, exc_info=True)
        return transcript

    def path_for(self, data: bytes) -> Path:
        key = f"{FORMAT}\0{self.model}\0{self.language or ''}\0".encode()
        digest = hashlib.sha256(key + hashlib.sha256(data).digest()).hexdigest()
        return self.folder / digest[:2] / f"{digest}.json"


def _read(path: Path) -> Transcript | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Transcript(
            text=str(raw["text"]),
            segments=tuple(
                Segment(float(s["start"]), float(s["end"]), str(s["text"])) for s in raw["segments"]
            ),
            language=raw["language"],
            duration_s=raw["duration_s"],
            model=str(raw["model"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        log.warning("ignoring the unreadable transcript %s", path.name)
        return None


def _write(path: Path, transcript: Transcript) -> None:
    write_json(path, asdict(transcript))
