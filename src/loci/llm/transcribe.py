"""Speech to text through any server that speaks OpenAI's `POST /audio/transcriptions`.

OpenAI (whisper-1, gpt-4o-transcribe), Groq, faster-whisper-server/speaches, whisper.cpp's
server, LocalAI and vLLM all take the same multipart form:

    POST {base_url}/audio/transcriptions
    file=<the audio>  model=whisper-1  response_format=verbose_json  [language=en]

and answer `{"text": …, "language": …, "duration": …, "segments": [{"start": 0.0, "end": 3.2,
"text": …}, …]}`: the segments' seconds are what lets a citation point into a recording. A model
that refuses `verbose_json` (gpt-4o-transcribe answers 400) is asked once more for plain `json`,
which gives the words without times.

No speech model ships with Loci, so this is a seam to an external service. A 429, 5xx or a broken
connection is retried, honouring `Retry-After`; what is left is a `TranscriptionError`, which the
worker retries later. A file over the service's size limit (OpenAI's is 25 MB a request) is
refused before upload with `TranscriptionRefused`, as is a file the service rejects (4xx): cutting
compressed audio into byte ranges does not give playable pieces, and no decoder ships here to cut
it properly. The file goes as `audio.<format>`: services tell the format by the name's extension,
and a user's file name has no business leaving the machine.

The API key is sent as a bearer header and never appears in an error message or a log line.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from loci.errors import TranscriptionError, TranscriptionRefused
from loci.http_retry import (
    backoff_delay,
    describe_failure,
    describe_transport,
    is_retryable,
    retry_after_seconds,
)

if TYPE_CHECKING:  # imported where used: every command imports this module, few call out
    import httpx

log = logging.getLogger(__name__)

OPENAI_MAX_BYTES = 25 * 1024 * 1024


@dataclass(frozen=True)
class TranscriberSettings:
    base_url: str
    model: str = "whisper-1"
    api_key: str | None = None
    language: str | None = None  # ISO-639-1 ("en"); None: the service detects it
    timeout_s: float = 300.0  # one request: a long recording takes a while to transcribe
    max_bytes: int = OPENAI_MAX_BYTES
    max_retries: int = 3
    backoff_base_s: float = 1.0
    max_backoff_s: float = 60.0  # the longest `Retry-After` honoured before giving up waiting


@dataclass(frozen=True)
class Segment:
    start: float  # seconds from the beginning of the recording
    end: float
    text: str


@dataclass(frozen=True)
class Transcript:
    text: str
    segments: tuple[Segment, ...]  # empty when the service gave no times
    language: str | None
    duration_s: float | None
    model: str


class Transcriber(Protocol):
    """The seam to a speech-to-text service; the audio parser depends on this."""

    @property
    def model(self) -> str: ...

    @property
    def max_bytes(self) -> int: ...

    def transcribe(self, data: bytes, audio_format: str) -> Transcript: ...


class OpenAICompatibleTranscriber:
    def __init__(self, settings: TranscriberSettings, client: httpx.Client | None = None) -> None:
        import httpx

        self.settings = settings
        self._url = settings.base_url.rstrip("/") + "/audio/transcriptions"
        headers = {"Accept": "application/json"}
        if settings.api_key:
            headers["Authorization"] = f"Bearer {settings.api_key}"
        self._client = client or httpx.Client(headers=headers, timeout=settings.timeout_s)
        if client is not None:
            self._client.headers.update(headers)

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def max_bytes(self) -> int:
        return self.settings.max_bytes

    def close(self) -> None:
        self._client.close()

    def transcribe(self, data: bytes, audio_format: str) -> Transcript:
        """The words of the recording, with segment times when the service gives them."""
        check_size(len(data), self.max_bytes)  # refused before a byte is uploaded
        try:
            body = self._post(data, audio_format, "verbose_json")
        except _FormatRefused:
            log.info("%s refuses verbose_json; asking for plain json", self.model)
            body = self._post(data, audio_format, "json")
        return _transcript(body, self.model, self._url)

    def _post(self, data: bytes, audio_format: str, response_format: str) -> dict[str, Any]:
        form = {"model": self.model, "response_format": response_format}
        if self.settings.language:
            form["language"] = self.settings.language
        files = {"file": (f"audio.{audio_format}", data, f"audio/{audio_format}")}
        attempts = self.settings.max_retries + 1
        import httpx

        for attempt in range(attempts):
            try:
                response = self._client.post(self._url, data=form, files=files)
            except httpx.TransportError as error:
                reason, retry_after = describe_transport(error), None
            else:
                if response.is_success:
                    return _json_body(response, self._url)
                reason = describe_failure(response)
                if not is_retryable(response.status_code):
                    if _refuses_format(response) and response_format != "json":
                        raise _FormatRefused(reason)
                    raise TranscriptionRefused(
                        f"the transcription service at {self._url} refused this file: {reason}"
                    )
                retry_after = retry_after_seconds(response)
            if attempt + 1 < attempts:
                delay = backoff_delay(
                    attempt, retry_after, self.settings.backoff_base_s, self.settings.max_backoff_s
                )
                log.warning(
                    "transcription request failed (%s); retry %d/%d in %.2fs",
                    reason,
                    attempt + 1,
                    self.settings.max_retries,
                    delay,
                )
                time.sleep(delay)
        raise TranscriptionError(
            f"transcription request to {self._url} failed after {attempts} attempts: {reason}"
        )


class _FormatRefused(Exception):
    """The model will not answer verbose_json: ask for plain json."""


def _refuses_format(response: httpx.Response) -> bool:
    return response.status_code == 400 and "response_format" in response.text


def check_size(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise TranscriptionRefused(
            f"the recording is {size / 1048576:.1f} MB; the transcription service takes at most"
            f" {max_bytes / 1048576:g} MB a file (LOCI_STT_MAX_MB). Split it into shorter"
            " recordings, or compress it (e.g. mono Opus or MP3)"
        )


def _json_body(response: httpx.Response, url: str) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError as error:
        raise TranscriptionError(f"the transcription service at {url} answered no JSON") from error
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        raise TranscriptionError(f"the transcription service at {url} answered without `text`")
    return body


def _transcript(body: dict[str, Any], model: str, url: str) -> Transcript:
    segments: list[Segment] = []
    for raw in body.get("segments") or ():
        try:
            start, end = float(raw["start"]), float(raw["end"])
            text = " ".join(str(raw["text"]).split())
        except (KeyError, TypeError, ValueError) as error:
            raise TranscriptionError(
                f"the transcription service at {url} answered a malformed segment ({error!r})"
            ) from error
        if text:
            segments.append(Segment(max(start, 0.0), max(end, start, 0.0), text))
    duration = body.get("duration")
    language = body.get("language")
    return Transcript(
        text=" ".join(body["text"].split()),
        segments=tuple(segments),
        language=language if isinstance(language, str) and language else None,
        duration_s=float(duration) if isinstance(duration, int | float) else None,
        model=model,
    )
