"""Recordings (voice memos, meetings): the words, from a speech-to-text service, with their times.

The format is read from the header and must be on the allowlist (WAV, MP3, M4A/MP4, Ogg/Opus,
WebM, FLAC: what OpenAI-compatible transcription services take). Each segment the service
returns becomes one paragraph block with the seconds it was spoken between, so the chunker packs
consecutive segments into passages and every citation says where in the recording to listen
("12:04–12:37"). Without a configured service the file is kept and marked failed, with the
setting that fixes it in the reason.
"""

from __future__ import annotations

import io
import logging
import wave
from typing import TYPE_CHECKING

from loci.errors import TranscriptionRefused
from loci.models import Block, Location, ParsedDocument

if TYPE_CHECKING:
    from loci.llm.transcribe import Transcriber

log = logging.getLogger(__name__)

NOT_CONFIGURED = "no transcription service configured (set LOCI_STT_BASE_URL)"

AUDIO_EXTENSIONS = frozenset(
    {".wav", ".mp3", ".mpga", ".m4a", ".m4b", ".mp4", ".ogg", ".oga", ".opus", ".webm",
     ".weba", ".flac"}
)  # fmt: skip
MP3_EXTENSIONS = frozenset({".mp3", ".mpga"})

# ISO base media brands of audio (and audio-bearing video) files; HEIC's brands are images.
_MP4_BRANDS = frozenset(
    {b"M4A ", b"M4B ", b"M4P ", b"mp41", b"mp42", b"isom", b"iso2", b"iso5", b"iso6", b"dash",
     b"avc1", b"3gp4", b"3gp5", b"3g2a", b"qt  "}
)  # fmt: skip


def sniff_audio(data: bytes) -> str | None:
    """The audio format the bytes start with, as the file extension a transcription service
    expects ("wav", "mp3", "m4a", "ogg", "webm", "flac"), or None.

    A bare MPEG frame header (an MP3 without an ID3 tag) is not sniffed here: two bytes of frame
    sync also start UTF-16 text, so such a file is taken as MP3 only by its name (`mp3_frame`).
    """
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "wav"
    if data[:3] == b"ID3":
        return "mp3"
    if data[:4] == b"OggS":
        return "ogg"
    if data[:4] == b"fLaC":
        return "flac"
    if data[:4] == b"\x1a\x45\xdf\xa3":  # EBML: WebM (or Matroska, which services read alike)
        return "webm"
    if data[4:8] == b"ftyp" and data[8:12] in _MP4_BRANDS:
        return "m4a"
    return None


def mp3_frame(data: bytes) -> bool:
    """An MPEG audio frame header: 11 sync bits, a layer, a bitrate and a sample rate that
    are not the reserved values."""
    if len(data) < 4 or data[0] != 0xFF or data[1] & 0xE0 != 0xE0:
        return False
    version, layer = (data[1] >> 3) & 3, (data[1] >> 1) & 3
    bitrate, rate = data[2] >> 4, (data[2] >> 2) & 3
    return version != 1 and layer != 0 and bitrate not in (0, 15) and rate != 3


def parse_audio(data: bytes, audio_format: str, transcriber: Transcriber | None) -> ParsedDocument:
    if transcriber is None:
        raise TranscriptionRefused(NOT_CONFIGURED)
    transcript = transcriber.transcribe(data, audio_format)
    duration = transcript.duration_s or wav_seconds(data)
    blocks = tuple(
        Block("paragraph", s.text, location=Location(time_start=s.start, time_end=s.end))
        for s in transcript.segments
    )
    warnings: list[str] = []
    if not blocks and transcript.text:
        # A model that gives no segment times (plain `json`): the words are still searchable,
        # cited as the whole recording.
        blocks = (
            Block(
                "paragraph", transcript.text, location=Location(time_start=0.0, time_end=duration)
            ),
        )
        warnings.append("the transcription service gave no timestamps for this recording")
    if not blocks:
        warnings.append("no speech found in this recording")
    metadata = {
        "audio": {
            "format": audio_format,
            "duration_s": round(duration, 2) if duration is not None else None,
            "language": transcript.language,
            "transcribed_by": transcript.model,
            "segments": len(transcript.segments),
        }
    }
    return ParsedDocument(title=None, blocks=blocks, metadata=metadata, warnings=tuple(warnings))


def wav_seconds(data: bytes) -> float | None:
    """A WAV file's length from its header (other formats need a decoder to know it)."""
    if sniff_audio(data) != "wav":
        return None
    try:
        with wave.open(io.BytesIO(data)) as audio:
            rate = audio.getframerate()
            return audio.getnframes() / rate if rate else None
    except (wave.Error, EOFError):
        return None
