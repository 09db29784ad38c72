"""E-mail: a message (.eml) or a mailbox (.mbox) as headers and body; attachments set aside.

The standard library's parser (modern policy: RFC 2047 headers decoded, charsets honoured) reads
each message. The body is the text/plain part when there is one, else the HTML part through the
HTML parser (so no markup survives). Attachments are returned in `ParsedDocument.attachments`; the
service adds each to the brain as a document of its own, linked to the message.

Locations: the header block spans the header lines of the message in the file; a body sent as
plain, unencoded text keeps its line numbers in the file too (an encoded body, base64 or
quoted-printable, has none that a reader could find). In a mailbox every message is a section
whose heading is its subject and date, and all its lines are lines of the mailbox file.

Budgets: at most `_MAX_ATTACHMENTS` attachments and `max_decompressed_bytes` of decoded attachment
data per file, `_MAX_MESSAGES` messages per mailbox, and the time budget checked per message.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import mimetypes
import re
from email.message import EmailMessage, Message
from typing import Any

from loci.errors import BudgetExceeded, ParseError
from loci.ingest.encoding import decode_text
from loci.ingest.parsers import Deadline, ParseBudgets
from loci.ingest.parsers.text import paragraph_blocks
from loci.ingest.reasons import with_detail
from loci.models import Attachment, Block, Location, ParsedDocument

_MAX_ATTACHMENTS = 100
_MAX_MESSAGES = 20_000
_SHOWN_HEADERS = ("From", "To", "Cc", "Date", "Subject")
_PLAIN_ENCODINGS = frozenset({"", "7bit", "8bit", "binary"})
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_FROM_LINE = re.compile(rb"(?:\A|\n\n)(From [^\n]*\n)")
_ESCAPED_FROM = re.compile(rb"^>(>*From )", re.M)


def parse_eml(data: bytes, budgets: ParseBudgets) -> ParsedDocument:
    deadline = Deadline(budgets, "e-mail")
    reader = _Reader(budgets)
    message = _parse_message(data)
    deadline.check()
    blocks = reader.message(message, data, first_line=1)
    metadata = _headers_metadata(message)
    if reader.attachments:
        metadata["attachment_names"] = [a.name for a in reader.attachments]
    warnings = () if blocks else ("no text found",)
    return ParsedDocument(
        title=metadata.get("subject"),
        blocks=tuple(blocks),
        metadata=metadata,
        warnings=warnings,
        attachments=tuple(reader.attachments),
    )


def parse_mbox(data: bytes, budgets: ParseBudgets) -> ParsedDocument:
    deadline = Deadline(budgets, "mailbox")
    reader = _Reader(budgets)
    blocks: list[Block] = []
    starts = [m.start(1) for m in _FROM_LINE.finditer(data)]
    if not starts:
        raise ParseError("not a mailbox: no message starts with a 'From ' line")
    if len(starts) > _MAX_MESSAGES:
        raise BudgetExceeded(
            f"mailbox has {len(starts)} messages, over the {_MAX_MESSAGES}-message budget"
        )
    line = 1 + data.count(b"\n", 0, starts[0])
    previous = starts[0]
    for index, start in enumerate(starts):
        deadline.check()
        end = starts[index + 1] if index + 1 < len(starts) else len(data)
        line += data.count(b"\n", previous, start)
        previous = start
        chunk = data[start:end]
        from_line, _, raw = chunk.partition(b"\n")
        raw = _ESCAPED_FROM.sub(rb"\1", raw)
        message = _parse_message(raw)
        subject = _header(message, "Subject") or "(no subject)"
        date = _header(message, "Date")
        heading = f"{subject} — {date}" if date else subject
        blocks.append(
            Block("heading", heading, level=1, location=Location(line_start=line, line_end=line))
        )
        blocks.extend(reader.message(message, raw, first_line=line + 1))
    metadata: dict[str, Any] = {"messages": len(starts)}
    if reader.attachments:
        metadata["attachment_names"] = [a.name for a in reader.attachments]
    return ParsedDocument(
        title=None,
        blocks=tuple(blocks),
        metadata=metadata,
        attachments=tuple(reader.attachments),
    )


def _parse_message(data: bytes) -> EmailMessage:
    try:
        message = email.message_from_bytes(data, policy=email.policy.default)
    except Exception as exc:  # the parser is lenient; anything raised here is a broken file
        raise ParseError(with_detail("unreadable e-mail: its headers are malformed", exc)) from None
    if not isinstance(message, EmailMessage) or not message.keys():
        raise ParseError("not an e-mail message: no headers found")
    return message


class _Reader:
    """Turns messages into blocks and collects their attachments within the budgets."""

    def __init__(self, budgets: ParseBudgets) -> None:
        self.budgets = budgets
        self.attachments: list[Attachment] = []
        self._attachment_bytes = 0

    def message(self, message: EmailMessage, raw: bytes, first_line: int) -> list[Block]:
        header_end = _HEADER_END.search(raw)
        header_lines = raw.count(b"\n", 0, header_end.start()) + 1 if header_end else 1
        lines = [f"{name}: {value}" for name in _SHOWN_HEADERS if (value := _header(message, name))]
        blocks = []
        if lines:
            end = first_line + header_lines - 1
            blocks.append(
                Block(
                    "paragraph",
                    "\n".join(lines),
                    location=Location(line_start=first_line, line_end=end),
                )
            )
        body_line = None
        if header_end is not None and not message.is_multipart():
            encoding = str(message.get("Content-Transfer-Encoding", "")).strip().lower()
            if encoding in _PLAIN_ENCODINGS and message.get_content_type() == "text/plain":
                body_line = first_line + raw.count(b"\n", 0, header_end.end())
        blocks.extend(_body_blocks(message, body_line))
        self._collect(message)
        return blocks

    def _collect(self, message: EmailMessage) -> None:
        if message.is_multipart():
            parts = list(message.iter_attachments())
        elif message.get_content_disposition() == "attachment":
            parts = [message]  # a message that is nothing but one attached file
        else:
            return
        for part in parts:
            if len(self.attachments) >= _MAX_ATTACHMENTS:
                raise BudgetExceeded(
                    f"e-mail has more than {_MAX_ATTACHMENTS} attachments, over the budget"
                )
            attachment = _attachment(part, len(self.attachments) + 1)
            if attachment is None:
                continue
            self._attachment_bytes += len(attachment.data)
            if self._attachment_bytes > self.budgets.max_decompressed_bytes:
                raise BudgetExceeded(
                    "e-mail attachments decode past the "
                    f"{self.budgets.max_decompressed_bytes // (1024 * 1024)} MB budget"
                )
            self.attachments.append(attachment)


def _attachment(part: Message, number: int) -> Attachment | None:
    content_type = part.get_content_type()
    if content_type.startswith("multipart/"):
        return None
    if content_type == "message/rfc822":
        inner = part.get_payload(0) if part.is_multipart() else None
        if not isinstance(inner, Message):
            return None
        data = inner.as_bytes()
        default = f"message-{number}.eml"
    else:
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes):
            return None
        data = payload
        default = f"attachment-{number}{mimetypes.guess_extension(content_type) or '.bin'}"
    if not data.strip():
        return None
    name = (part.get_filename() or "").strip() or default
    return Attachment(name=name, data=data, mime_type=content_type)


def _body_blocks(message: EmailMessage, first_line: int | None) -> list[Block]:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return []
    text = _part_text(part)
    if not text.strip():
        return []
    if part.get_content_type() == "text/html":
        from loci.ingest.parsers.html import parse_html

        return list(parse_html(text).blocks)
    if first_line is None:
        return [Block(b.kind, b.text) for b in paragraph_blocks(text)]
    return list(paragraph_blocks(text, first_line=first_line))


def _part_text(part: Message) -> str:
    try:
        content = part.get_content()  # type: ignore[attr-defined]
        if isinstance(content, str):
            return content.replace("\r\n", "\n")
    except (LookupError, ValueError, UnicodeError, AttributeError):
        pass  # an unknown or lying charset: guess from the bytes instead
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes) or not payload.strip():
        return ""
    try:
        return decode_text(payload)
    except ParseError:
        return ""


def _header(message: Message, name: str) -> str:
    try:
        value = message.get(name)
    except Exception:  # a malformed header the modern policy cannot even represent
        return ""
    return " ".join(str(value).split()) if value is not None else ""


def _headers_metadata(message: Message) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for name in ("From", "To", "Cc", "Subject", "Message-ID"):
        value = _header(message, name)
        if value:
            metadata[name.lower().replace("-", "_")] = value[:1000]
    date = _header(message, "Date")
    if date:
        try:
            metadata["date"] = email.utils.parsedate_to_datetime(date).isoformat()
        except (TypeError, ValueError, IndexError):
            metadata["date"] = date[:200]
    return metadata
