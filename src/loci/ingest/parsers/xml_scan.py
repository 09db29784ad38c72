"""How many nodes an XML part would become, and whether it declares a DOCTYPE, from its bytes.

A parsed element costs lxml (and python-docx above it) well over a hundred bytes however few
bytes it took in the file: 63 MB of `<w:p><w:r><w:t>a</w:t></w:r></w:p>` passed the size and
ratio budgets and took 1.4 GB to parse. So parts are counted before they are parsed, by bytes
alone, in one streaming pass that holds a megabyte at a time: every start tag (`<` not followed
by `/`) and every attribute (`="` or `='`) is a node. Comments, processing instructions and
markup inside CDATA count too, so the number is an upper bound, which is what a budget needs.

The same pass looks for `<!DOCTYPE` anywhere in the part, not only in its first bytes: a
DOCTYPE may follow any amount of comment or white space. Office and OpenDocument parts are
UTF-8 or UTF-16 (the standards allow nothing else); the scan reads both, and reports any other
encoding (UTF-32, EBCDIC), in which its byte patterns would not be seen.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class _Markers:
    open: bytes
    close: bytes
    attributes: tuple[bytes, ...]
    doctype: bytes


def _markers(codec: str) -> _Markers:
    return _Markers(
        open="<".encode(codec),
        close="</".encode(codec),
        attributes=('="'.encode(codec), "='".encode(codec)),
        doctype="<!DOCTYPE".encode(codec),
    )


_UTF8 = _markers("utf-8")
_UTF16_LE = _markers("utf-16-le")
_UTF16_BE = _markers("utf-16-be")
_OVERLAP = len(_UTF16_LE.doctype) - 1  # enough to see a marker cut by a chunk boundary
_UNREADABLE = (
    codecs.BOM_UTF32_LE,
    codecs.BOM_UTF32_BE,
    b"<\x00\x00\x00",
    b"\x00\x00\x00<",
    b"\x4c\x6f\xa7\x94",  # "<?xm" in EBCDIC
)


@dataclass(frozen=True)
class XmlScan:
    nodes: int  # elements and attributes, an upper bound
    doctype: bool
    readable: bool  # False: not UTF-8 or UTF-16, so the counts mean nothing


def scan_xml(chunks: Iterable[bytes]) -> XmlScan:
    """Scan a part given as consecutive chunks of its bytes (any sizes)."""
    markers: _Markers | None = None
    carry = b""
    nodes = 0
    doctype = False
    for chunk in chunks:
        if not chunk:
            continue
        if markers is None:
            head = chunk[:4]
            if head.startswith(_UNREADABLE):
                return XmlScan(nodes=0, doctype=False, readable=False)
            markers = _encoding_of(head)
        window = carry + chunk
        # A marker wholly inside the carried tail was counted with the previous chunk.
        nodes += _nodes(window, markers) - _nodes(carry, markers)
        doctype = doctype or markers.doctype in window
        carry = window[-_OVERLAP:]
    return XmlScan(nodes=max(nodes, 0), doctype=doctype, readable=True)


def _encoding_of(head: bytes) -> _Markers:
    if head.startswith((codecs.BOM_UTF16_LE, b"<\x00")):
        return _UTF16_LE
    if head.startswith((codecs.BOM_UTF16_BE, b"\x00<")):
        return _UTF16_BE
    return _UTF8


def _nodes(data: bytes, markers: _Markers) -> int:
    elements = data.count(markers.open) - data.count(markers.close)
    return elements + sum(data.count(marker) for marker in markers.attributes)
