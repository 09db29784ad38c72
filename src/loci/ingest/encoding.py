"""Turn the bytes of a text-like file into `str`, or refuse them as binary.

Order of trust: a byte-order mark says exactly what the encoding is; then strict UTF-8, which
almost never decodes non-UTF-8 text by accident; then the charset a container declares; then
the common legacy code page whose reading is plausible letter by letter (`legacy_charsets`,
reliable on a short note, where statistics have too little to go on); only then
charset-normalizer's statistical guess. Binary data is refused before guessing, because a
guesser will happily "decode" a JPEG as cp1252 and the index would fill with junk.
"""

from __future__ import annotations

import codecs
import logging
import re

from charset_normalizer import from_bytes

from loci.errors import ParseError
from loci.ingest.legacy_charsets import plausible_decoding

logger = logging.getLogger(__name__)

# Longest BOMs first: the UTF-32-LE BOM starts with the UTF-16-LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Control characters that never occur in real text (tab, newlines and form feed are fine),
# plus U+FFFD, which a lossy decode leaves where bytes made no sense.
_JUNK = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")
_SAMPLE = 1 << 20  # judging the first MiB is enough and keeps a 20 MB file cheap
_MAX_JUNK_RATIO = 0.02
_DETECT_BYTES = 1 << 20
_CP1252_MARGIN = 0.1
_NEWLINES = re.compile(r"\r\n?")

BINARY_MESSAGE = "looks like binary data, not text"


def decode_text(data: bytes, declared: str | None = None) -> str:
    """Decode `data` and normalise line ends to `\\n` (so line numbers match any editor's).

    `declared` is a charset the container names (an HTML `<meta charset>`, an HTTP header): it
    is used when the bytes have no BOM and are not UTF-8, before any guessing.
    Raises ParseError("looks like binary data, not text") for data that is not text.
    """
    text = _decode(data, declared)
    if _looks_binary(text):
        raise ParseError(BINARY_MESSAGE)
    if "\r" in text:
        text = _NEWLINES.sub("\n", text)
    return text


def _decode(data: bytes, declared: str | None) -> str:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace")
    # Without a BOM, NUL bytes mean binary: BOM-less UTF-16 is too rare to risk mis-reading
    # every binary file as it.
    if b"\x00" in data[:_SAMPLE]:
        raise ParseError(BINARY_MESSAGE)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if declared:
        try:
            return data.decode(declared, errors="replace")
        except LookupError:
            logger.debug("unknown declared charset %r; guessing instead", declared)
    legacy = plausible_decoding(data)
    if legacy is not None:
        logger.debug("decoding as %s (its letters read plausibly)", legacy)
        return data.decode(legacy, errors="replace")  # judged on a sample: the rest may differ
    matches = from_bytes(data[:_DETECT_BYTES])
    best = matches.best()
    if best is None:
        raise ParseError(BINARY_MESSAGE)
    encoding = best.encoding
    # charset-normalizer often ranks a Baltic or Vietnamese code page first for plain French or
    # Portuguese; Western European text is by far the commonest legacy case, so cp1252 wins
    # whenever it decodes the bytes about as cleanly as the top guess.
    for match in matches:
        if match.encoding == "cp1252" and match.chaos <= best.chaos + _CP1252_MARGIN:
            encoding = "cp1252"
    logger.debug("decoding as %s (charset-normalizer guess)", encoding)
    try:
        return data.decode(encoding, errors="replace")
    except LookupError:  # a codec name Python does not know; cp1252 is the likeliest 8-bit one
        return data.decode("cp1252", errors="replace")


def _looks_binary(text: str) -> bool:
    sample = text[:_SAMPLE]
    if not sample:
        return False
    junk = len(_JUNK.findall(sample))
    return junk / len(sample) > _MAX_JUNK_RATIO
