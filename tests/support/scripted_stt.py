"""A scripted OpenAI-compatible speech-to-text server on 127.0.0.1, for tests.

It speaks the real protocol over real HTTP: `POST /v1/audio/transcriptions` with a multipart
form (`file`, `model`, `response_format`, optional `language`), answered as `verbose_json` (text,
language, duration, segments with start/end seconds) or `json` (text only). No speech model runs
here, so what was "said" is the test's script: `lines` of (start, end, text). What it can check,
it checks as a real service would: the model name, that `file` is there and is audio of a format
its name's extension claims; a WAV is opened with the stdlib `wave` module, its length read, and
a line said after the recording ends is a scripting error answered with 400.

`failures` is a queue of error replies served before the transcript (429 with `Retry-After`,
500, …); every request is recorded (form fields, file name, bytes, headers, arrival time).
`hold`, when given, keeps each answer back until it is set: a long recording being transcribed.
"""

from __future__ import annotations

import email
import email.policy
import io
import json
import threading
import time
import wave
from dataclasses import dataclass, field
from typing import Any

from tests.support.loopback import ApiHandler, Loopback

MODELS = frozenset({"whisper-1", "gpt-4o-transcribe"})
_EXTENSION_MAGIC = {
    "wav": lambda d: d[:4] == b"RIFF" and d[8:12] == b"WAVE",
    "mp3": lambda d: d[:3] == b"ID3" or d[:1] == b"\xff",
    "ogg": lambda d: d[:4] == b"OggS",
    "flac": lambda d: d[:4] == b"fLaC",
    "webm": lambda d: d[:4] == b"\x1a\x45\xdf\xa3",
    "m4a": lambda d: d[4:8] == b"ftyp",
}


@dataclass
class Failure:
    status: int
    retry_after: str | None = None
    message: str = "scripted failure"


@dataclass
class Request:
    at: float  # time.monotonic() when it arrived
    fields: dict[str, str]
    filename: str | None
    content_type: str | None
    data: bytes
    authorization: str | None


@dataclass
class ScriptedSTT:
    lines: list[tuple[float, float, str]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    always_fail: Failure | None = None
    verbose_json: bool = True  # False: refuses it as gpt-4o-transcribe does
    hold: threading.Event | None = None
    requests: list[Request] = field(default_factory=list)
    _web: Loopback | None = None

    @property
    def base_url(self) -> str:
        assert self._web is not None
        return self._web.url("/v1")

    def start(self) -> ScriptedSTT:
        owner = self

        class Handler(ApiHandler):
            def do_POST(self) -> None:  # noqa: N802 - stdlib's name
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.path != "/v1/audio/transcriptions":
                    self._json(404, {"error": {"message": "no such route"}})
                    return
                status, answer, headers = owner._answer(
                    self.headers.get("Content-Type") or "", body, self.headers.get("Authorization")
                )
                self._json(status, answer, headers)

            def _json(
                self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                self.send(status, json.dumps(body), "application/json", headers)

        self._web = Loopback(Handler).start()
        return self

    def stop(self) -> None:
        if self._web is not None:
            self._web.stop()

    def __enter__(self) -> ScriptedSTT:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(
        self, content_type: str, body: bytes, authorization: str | None
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        request = _form(content_type, body, authorization)
        self.requests.append(request)
        if self.hold is not None:
            self.hold.wait(60)
        failure = self.failures.pop(0) if self.failures else self.always_fail
        if failure is not None:
            headers = {"Retry-After": failure.retry_after} if failure.retry_after else {}
            return failure.status, _error(failure.message), headers
        if not content_type.startswith("multipart/form-data"):
            return 400, _error("expected a multipart/form-data body"), {}
        if request.fields.get("model") not in MODELS:
            return 404, _error(f"model {request.fields.get('model')!r} not found"), {}
        if not request.data or not request.filename:
            return 400, _error("`file` is required"), {}
        extension = request.filename.rsplit(".", 1)[-1].lower()
        check = _EXTENSION_MAGIC.get(extension)
        if check is None or not check(request.data):
            return 400, _error(f"Invalid file format: {request.filename}"), {}
        response_format = request.fields.get("response_format", "json")
        if response_format == "verbose_json" and not self.verbose_json:
            return 400, _error("response_format 'verbose_json' is not compatible"), {}
        duration = _wav_seconds(request.data) if extension == "wav" else None
        if duration is not None and any(end > duration + 0.01 for _, end, _ in self.lines):
            return 400, _error(f"the script outruns the {duration:.1f} s recording"), {}
        text = " ".join(line for _, _, line in self.lines)
        if duration is None:
            duration = self.lines[-1][1] if self.lines else 0.0
        if response_format == "json":
            return 200, {"text": text}, {}
        segments = [
            {"id": i, "start": start, "end": end, "text": " " + line}
            for i, (start, end, line) in enumerate(self.lines)
        ]
        answer = {
            "task": "transcribe",
            "language": request.fields.get("language") or "english",
            "duration": duration,
            "text": text,
            "segments": segments,
        }
        return 200, answer, {}


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def _form(content_type: str, body: bytes, authorization: str | None) -> Request:
    """The multipart form, parsed as a server would (the stdlib's MIME parser)."""
    message = email.message_from_bytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body, policy=email.policy.HTTP
    )
    fields: dict[str, str] = {}
    filename = part_type = None
    data = b""
    if message.is_multipart():
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            assert isinstance(payload, bytes)
            if name == "file":
                filename, part_type, data = part.get_filename(), part.get_content_type(), payload
            elif isinstance(name, str):
                fields[name] = payload.decode()
    return Request(time.monotonic(), fields, filename, part_type, data, authorization)


def _wav_seconds(data: bytes) -> float | None:
    try:
        with wave.open(io.BytesIO(data)) as audio:
            return float(audio.getnframes()) / float(audio.getframerate())
    except (wave.Error, EOFError):
        return None
